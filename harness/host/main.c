/* main.c - cbh, the host harness: the JSON-Lines protocol loop of docs/protocol.md.
 *
 * Requests come on stdin, one per line; replies go to stdout, flushed after every line. Nothing
 * else is ever written to stdout: diagnostics go to stderr. Every number printed is a
 * non-negative integer, so that the same orchestrator can drive a microcontroller harness.
 *
 * Timing: one sample is one call to engine->run(slot, k), bracketed as tightly as possible by
 * reads of CLOCK_MONOTONIC_RAW (ns) and of the CPU's cycle counter (ticks).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <errno.h>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

#include "engine.h"
#include "util.h"

#define CBH_VERSION "0.1.0"
#define CBH_PROTO 1
#define MAX_SLOTS 4096         /* a run keeps every cell of a process set up at once (rounds) */
#define K_MAX (1ull << 40)      /* largest batch calibrate or sample accepts */
#define WINDOW_NS_MAX 600000000000ull   /* longest energy window or idle period: 10 minutes */

#ifndef CBH_CFLAGS
#define CBH_CFLAGS "unknown"
#endif

#if defined(__clang__)
#define CBH_COMPILER "clang " __clang_version__
#elif defined(__GNUC__)
#define CBH_COMPILER "gcc " __VERSION__
#else
#define CBH_COMPILER "unknown"
#endif

#if defined(__x86_64__)
#define CBH_ARCH "x86_64"
#elif defined(__aarch64__)
#define CBH_ARCH "aarch64"
#elif defined(__i386__)
#define CBH_ARCH "i386"
#elif defined(__arm__)
#define CBH_ARCH "arm"
#else
#define CBH_ARCH "unknown"
#endif

static const cb_engine *const engines[] = {
    &cb_engine_openssl,
#if defined(CBH_PSA)
    &cb_engine_psa,         /* cbh-psa: Mbed TLS 3.5 (PSA) stands where the system Mbed TLS 2.28 is */
#else
    &cb_engine_mbedtls,
#endif
    &cb_engine_libsodium,
    &cb_engine_system,
    &cb_engine_pkcs11,
    &cb_engine_tpm,
#if defined(CBH_PQCLEAN)
    &cb_engine_pqclean,     /* cbh-pqclean: the ML-KEM / ML-DSA engine, beside the usual ones */
#endif
};
#define N_ENGINES (sizeof engines / sizeof engines[0])

/* The operation ids are the catalog's (cb_ops.h, generated from catalog/ops.py). req_params resolves a
 * request's id once into cb_params.op, a cb_op_id the engines switch on. An id outside the catalog
 * is a request error; an id in it that an engine lacks is "unsupported", which is the engine's to
 * say. A missing payload length is checked here too (payload_missing), for every engine. */

/* Where each catalog parameter is kept in cb_params; `size` is 0 for an integer (a long). */
#define INT_FIELD(f) { offsetof(cb_params, f), 0 }
#define TEXT_FIELD(f) { offsetof(cb_params, f), sizeof ((cb_params *)0)->f }
static const struct { size_t off, size; } param_field[CB_N_PARAMS] = {
    [CB_PARAM_KEY_BITS] = INT_FIELD(key_bits),
    [CB_PARAM_BYTES] = INT_FIELD(bytes),
    [CB_PARAM_AAD_BYTES] = INT_FIELD(aad_bytes),
    [CB_PARAM_TAG_BYTES] = INT_FIELD(tag_bytes),
    [CB_PARAM_NONCE_BYTES] = INT_FIELD(nonce_bytes),
    [CB_PARAM_REKEY] = INT_FIELD(rekey),
    [CB_PARAM_RSA_BITS] = INT_FIELD(rsa_bits),
    [CB_PARAM_CURVE] = TEXT_FIELD(curve),
    [CB_PARAM_SOURCE] = TEXT_FIELD(source),
    [CB_PARAM_LEVEL] = INT_FIELD(level),
};
_Static_assert(CB_N_PARAMS == 10, "catalog/ops.py's parameters changed: give each one a field in "
               "cb_params (engine.h) and a line in param_field");

typedef struct {
    int used;
    uint64_t id;
    const cb_engine *eng;
    void *state;
} slot_t;

static slot_t slots[MAX_SLOTS];
static cb_buf out;              /* the reply being built */

/* ================================================================ clock and counter */

static const char *counter_name = "none";
static uint64_t counter_hz, clock_res_ns, clock_overhead_ns, counter_overhead;

static inline uint64_t clock_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static inline uint64_t counter_read(void)
{
#if defined(__x86_64__) || defined(__i386__)
    return __rdtsc();
#elif defined(__aarch64__)
    uint64_t v;
    __asm__ __volatile__("mrs %0, cntvct_el0" : "=r"(v));
    return v;
#else
    return 0;
#endif
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Median cost of one read: the gap between two back-to-back reads, over many tries. A macro
 * rather than a function taking a reader, so that no call is measured along with the read. */
#define OVERHEAD_TRIES 1001
static uint64_t gap[OVERHEAD_TRIES];

static uint64_t median_gap(void)
{
    qsort(gap, OVERHEAD_TRIES, sizeof gap[0], cmp_u64);
    return gap[OVERHEAD_TRIES / 2];
}

#define MEASURE_GAP(read_expr)                          \
    do {                                                \
        for (int i_ = 0; i_ < OVERHEAD_TRIES; i_++) {   \
            uint64_t a_ = (read_expr);                  \
            uint64_t b_ = (read_expr);                  \
            gap[i_] = b_ - a_;                          \
        }                                               \
    } while (0)

static void timing_init(void)
{
    struct timespec res;
    clock_res_ns = clock_getres(CLOCK_MONOTONIC_RAW, &res) == 0
                   ? (uint64_t)res.tv_sec * 1000000000u + (uint64_t)res.tv_nsec : 0;
#if defined(__x86_64__) || defined(__i386__)
    counter_name = "tsc";
#elif defined(__aarch64__)
    counter_name = "cntvct";
#endif
    MEASURE_GAP(clock_ns());
    clock_overhead_ns = median_gap();
    if (strcmp(counter_name, "none") == 0)
        return;
    MEASURE_GAP(counter_read());
    counter_overhead = median_gap();

    /* Counter frequency against the clock over ~50 ms of spinning (sleeping could let the CPU
     * change state, which does not matter for an invariant TSC but costs nothing to avoid). */
    uint64_t t0 = clock_ns(), c0 = counter_read(), t1, c1;
    do {
        t1 = clock_ns();
        c1 = counter_read();
    } while (t1 - t0 < 50000000u);
    uint64_t dt = t1 - t0, dc = c1 - c0;
    /* dc * 1e9 / dt in integers without overflow (dc * 1e6 stays below 2^64 for any counter
     * under ~300 THz over these ~50 ms) */
    counter_hz = (dc * 1000000u / dt) * 1000u + (dc * 1000000u % dt) * 1000u / dt;
}

/* ================================================================ output */

static void send_reply(void)
{
    if (out.oom) {
        /* the reply did not fit in memory: say so rather than print half a line */
        fputs("{\"t\":\"error\",\"msg\":\"out of memory building the reply\"}\n", stdout);
    } else {
        fwrite(out.p, 1, out.len, stdout);
    }
    fflush(stdout);
}

/* {"t":"error"[,"slot":N],"msg":"..."[,"unsupported":1]} */
static void send_error(const uint64_t *slot, int unsupported, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    cb_obj_begin(&out, "error");
    if (slot)
        cb_obj_u64(&out, "slot", *slot);
    cb_obj_str(&out, "msg", msg);
    if (unsupported)
        cb_obj_u64(&out, "unsupported", 1);
    cb_obj_end(&out);
    send_reply();
}

/* ================================================================ request fields */

/* A top-level string member; NULL (and err filled) when missing or not a string. */
static const char *req_str(const cb_json *doc, const char *key, char *err)
{
    const cb_jmember *m = cb_json_get(doc, -1, key);
    if (m == NULL) {
        snprintf(err, CB_ERRLEN, "missing \"%s\"", key);
        return NULL;
    }
    if (m->type != CB_JSTR) {
        snprintf(err, CB_ERRLEN, "\"%s\" must be a string", key);
        return NULL;
    }
    return m->str;
}

static int req_u64(const cb_json *doc, const char *key, uint64_t *v, char *err)
{
    const cb_jmember *m = cb_json_get(doc, -1, key);
    if (m == NULL) {
        snprintf(err, CB_ERRLEN, "missing \"%s\"", key);
        return -1;
    }
    if (m->type != CB_JINT) {
        snprintf(err, CB_ERRLEN, "\"%s\" must be a non-negative integer", key);
        return -1;
    }
    *v = m->num;
    return 0;
}

static const cb_engine *find_engine(const char *name)
{
    for (size_t i = 0; i < N_ENGINES; i++)
        if (strcmp(engines[i]->name, name) == 0)
            return engines[i];
    return NULL;
}

static void engine_list(char *buf, size_t len)
{
    buf[0] = '\0';
    for (size_t i = 0; i < N_ENGINES; i++) {
        if (i)
            strncat(buf, ",", len - strlen(buf) - 1);
        strncat(buf, engines[i]->name, len - strlen(buf) - 1);
    }
}

/* The request's "engine", or NULL with err filled. */
static const cb_engine *req_engine(const cb_json *doc, char *err)
{
    const char *name = req_str(doc, "engine", err);
    if (name == NULL)
        return NULL;
    const cb_engine *e = find_engine(name);
    if (e == NULL) {
        char list[128];
        engine_list(list, sizeof list);
        snprintf(err, CB_ERRLEN, "unknown engine '%.40s'; valid: %s", name, list);
    }
    return e;
}

/* Every parameter as a request that leaves it out reads it (cb_param()->absent). */
static void params_absent(cb_params *p)
{
    memset(p, 0, sizeof *p);
    for (int i = 0; i < CB_N_PARAMS; i++) {
        const cb_param_info *info = cb_param((cb_param_id)i);
        char *field = (char *)p + param_field[i].off;
        if (info->text)
            snprintf(field, param_field[i].size, "%s", info->absent_text);
        else
            *(long *)field = info->absent;
    }
}

/* One member of "params" into p: a catalog parameter of the right type and size. */
static int param_set(cb_params *p, const cb_jmember *m, char *err)
{
    int id = cb_param_find(m->key);
    if (id < 0) {
        snprintf(err, CB_ERRLEN, "unknown param '%.40s'", m->key);
        return -1;
    }
    char *field = (char *)p + param_field[id].off;
    if (!cb_param((cb_param_id)id)->text) {
        if (m->type != CB_JINT) {
            snprintf(err, CB_ERRLEN, "param '%s' must be a non-negative integer", m->key);
            return -1;
        }
        if (m->num > 0x7fffffff) {   /* engines size buffers from these: keep them sane */
            snprintf(err, CB_ERRLEN, "param '%s' is too large", m->key);
            return -1;
        }
        *(long *)field = (long)m->num;
        return 0;
    }
    if (m->type != CB_JSTR) {
        snprintf(err, CB_ERRLEN, "param '%s' must be a string", m->key);
        return -1;
    }
    if (m->len >= param_field[id].size) {
        snprintf(err, CB_ERRLEN, "param '%s' is too long", m->key);
        return -1;
    }
    memcpy(field, m->str, m->len + 1);
    return 0;
}

/* "params" (and "op") into p: what a left-out parameter reads first, then every given key,
 * unknown keys refused. */
static int req_params(const cb_json *doc, cb_params *p, char *err)
{
    params_absent(p);
    const char *op = req_str(doc, "op", err);
    if (op == NULL)
        return -1;
    int id = cb_op_find(op);
    if (id < 0) {
        snprintf(err, CB_ERRLEN, "unknown op '%.40s'", op);
        return -1;
    }
    p->op = (cb_op_id)id;

    const cb_jmember *pm = cb_json_get(doc, -1, "params");
    if (pm == NULL)
        return 0;
    if (pm->type != CB_JOBJ) {
        snprintf(err, CB_ERRLEN, "\"params\" must be an object");
        return -1;
    }
    int parent = (int)(pm - doc->m);
    for (int j = 0; j < doc->n; j++)
        if (doc->m[j].parent == parent && param_set(p, &doc->m[j], err) != 0)
            return -1;
    return 0;
}

/* Whether the request lacks the `bytes` its op needs: every op with a payload to set up a slot,
 * `random` to compute as well (it has no input that gives the length). */
static int payload_missing(const cb_params *p, int computing)
{
    if (p->bytes >= 0)
        return 0;
    return computing ? cb_op(p->op)->family == CB_FAMILY_RANDOM : cb_op(p->op)->payload;
}

/* "in": every member a hex string, decoded into kv. */
static int req_inputs(const cb_json *doc, cb_kv *kv, char *err)
{
    const cb_jmember *im = cb_json_get(doc, -1, "in");
    if (im == NULL)
        return 0;
    if (im->type != CB_JOBJ) {
        snprintf(err, CB_ERRLEN, "\"in\" must be an object");
        return -1;
    }
    int parent = (int)(im - doc->m);
    for (int j = 0; j < doc->n; j++) {
        const cb_jmember *m = &doc->m[j];
        if (m->parent != parent)
            continue;
        if (m->type != CB_JSTR) {
            snprintf(err, CB_ERRLEN, "input '%.40s' must be a hex string", m->key);
            return -1;
        }
        if (strlen(m->key) >= sizeof kv->name[0]) {
            snprintf(err, CB_ERRLEN, "input name '%.40s' is too long", m->key);
            return -1;
        }
        uint8_t *bytes = malloc(m->len / 2 + 1);
        if (bytes == NULL) {
            snprintf(err, CB_ERRLEN, "out of memory");
            return -1;
        }
        if (cb_hex_decode(bytes, m->str, m->len) != 0) {
            free(bytes);
            snprintf(err, CB_ERRLEN, "input '%.40s' is not valid hex", m->key);
            return -1;
        }
        int rc = cb_kv_put(kv, m->key, bytes, m->len / 2);
        free(bytes);
        if (rc != 0) {
            snprintf(err, CB_ERRLEN, "too many inputs (at most %d)", CB_MAXKV);
            return -1;
        }
    }
    return 0;
}

static slot_t *find_slot(uint64_t id)
{
    for (int i = 0; i < MAX_SLOTS; i++)
        if (slots[i].used && slots[i].id == id)
            return &slots[i];
    return NULL;
}

/* ================================================================ commands */

static void cmd_hello(void)
{
    char list[128];
    engine_list(list, sizeof list);
    cb_obj_begin(&out, "hello");
    cb_obj_u64(&out, "proto", CBH_PROTO);
    cb_obj_str(&out, "harness", "cbh-host");
    cb_obj_str(&out, "version", CBH_VERSION);
    cb_obj_str(&out, "arch", CBH_ARCH);
    cb_obj_str(&out, "clock", "CLOCK_MONOTONIC_RAW");
    cb_obj_u64(&out, "clock_res_ns", clock_res_ns);
    cb_obj_str(&out, "counter", counter_name);
    cb_obj_u64(&out, "counter_hz", counter_hz);
    cb_obj_u64(&out, "counter_overhead", counter_overhead);
    cb_obj_u64(&out, "clock_overhead_ns", clock_overhead_ns);
    cb_obj_str(&out, "compiler", CBH_COMPILER);
    cb_obj_str(&out, "cflags", CBH_CFLAGS);
    cb_obj_str(&out, "engines", list);
    cb_obj_u64(&out, "max_slots", MAX_SLOTS);   /* the orchestrator spreads a bigger plan over processes */
    cb_obj_end(&out);
    send_reply();
}

static void cmd_engine(const cb_json *doc)
{
    char err[CB_ERRLEN];
    const cb_engine *e = req_engine(doc, err);
    if (e == NULL) {
        send_error(NULL, 0, "%s", err);
        return;
    }
    char facts[4096] = "";
    e->describe(facts, sizeof facts);
    cb_obj_begin(&out, "engine");
    cb_obj_str(&out, "engine", e->name);
    cb_obj_str(&out, "library", e->library);
    if (facts[0]) {
        cb_buf_raw(&out, ",");
        cb_buf_raw(&out, facts);    /* already JSON members, written by the engine */
    }
    cb_obj_end(&out);
    send_reply();
}

static void cmd_supports(const cb_json *doc)
{
    char err[CB_ERRLEN] = "";
    cb_params p;
    const cb_engine *e = req_engine(doc, err);
    if (e == NULL || req_params(doc, &p, err) != 0) {
        send_error(NULL, 0, "%s", err);
        return;
    }
    char why[CB_ERRLEN] = "";
    int rc = e->supports(&p, why);
    cb_obj_begin(&out, "supports");
    cb_obj_u64(&out, "ok", rc == CB_OK);
    if (rc != CB_OK)
        cb_obj_str(&out, "why", why[0] ? why : "not supported");
    cb_obj_end(&out);
    send_reply();
}

static void cmd_compute(const cb_json *doc)
{
    char err[CB_ERRLEN] = "";
    cb_params p;
    cb_kv in = { 0 }, res = { 0 };
    const cb_engine *e = req_engine(doc, err);
    if (e == NULL || req_params(doc, &p, err) != 0 || req_inputs(doc, &in, err) != 0) {
        send_error(NULL, 0, "%s", err);
        cb_kv_free(&in);
        return;
    }
    int rc = !payload_missing(&p, 1) ? e->compute(&p, &in, &res, err)
             : e->supports(&p, err) != CB_OK ? CB_UNSUPPORTED : cb_say(err, CB_ERR, "bytes is required");
    if (rc != CB_OK) {
        send_error(NULL, rc == CB_UNSUPPORTED, "%s", err[0] ? err : "compute failed");
    } else {
        cb_obj_begin(&out, "out");
        cb_buf_raw(&out, ",\"out\":{");
        for (int i = 0; i < res.n; i++) {
            if (i)
                cb_buf_raw(&out, ",");
            cb_buf_jstr(&out, res.name[i]);
            cb_buf_raw(&out, ":");
            cb_buf_hex(&out, res.val[i], res.len[i]);
        }
        cb_buf_raw(&out, "}");
        cb_obj_end(&out);
        send_reply();
    }
    cb_kv_free(&in);
    cb_kv_free(&res);
}

static void cmd_setup(const cb_json *doc)
{
    char err[CB_ERRLEN] = "";
    uint64_t id;
    cb_params p;
    if (req_u64(doc, "slot", &id, err) != 0) {
        send_error(NULL, 0, "%s", err);
        return;
    }
    const cb_engine *e = req_engine(doc, err);
    if (e == NULL || req_params(doc, &p, err) != 0) {
        send_error(&id, 0, "%s", err);
        return;
    }
    if (find_slot(id) != NULL) {
        send_error(&id, 0, "slot %llu is already set up; tear it down first",
                   (unsigned long long)id);
        return;
    }
    slot_t *s = NULL;
    for (int i = 0; i < MAX_SLOTS && s == NULL; i++)
        if (!slots[i].used)
            s = &slots[i];
    if (s == NULL) {
        send_error(&id, 0, "too many slots (at most %d)", MAX_SLOTS);
        return;
    }
    if (e->supports(&p, err) != CB_OK) {
        send_error(&id, 1, "%s", err[0] ? err : "not supported");
        return;
    }
    if (payload_missing(&p, 0)) {
        send_error(&id, 0, "bytes is required");
        return;
    }
    err[0] = '\0';
    void *state = e->setup(&p, err);
    if (state == NULL) {
        send_error(&id, 0, "%s", err[0] ? err : "setup failed");
        return;
    }
    s->used = 1;
    s->id = id;
    s->eng = e;
    s->state = state;
    cb_obj_begin(&out, "ready");
    cb_obj_u64(&out, "slot", id);
    cb_obj_end(&out);
    send_reply();
}

/* One batch of k operations, bracketed by clock and counter reads. */
static int timed_batch(slot_t *s, uint64_t k, uint64_t *ns, uint64_t *cyc, char *err)
{
    err[0] = '\0';
    uint64_t t0 = clock_ns();
    uint64_t c0 = counter_read();
    int rc = s->eng->run(s->state, k, err);
    uint64_t c1 = counter_read();
    uint64_t t1 = clock_ns();
    *ns = t1 - t0;
    *cyc = c1 - c0;
    if (rc != CB_OK && err[0] == '\0')
        snprintf(err, CB_ERRLEN, "operation failed");
    return rc == CB_OK ? 0 : -1;
}

/* Next batch size: scale k by the estimated shortfall plus 10 %, but at least x2 (so the loop
 * always ends quickly) and at most x100 (a tiny first batch is dominated by clock overhead and
 * cold caches, so its estimate is not trusted further than that). Fixed point in 1/16. */
static uint64_t next_k(uint64_t k, uint64_t ns, uint64_t min_ns)
{
    uint64_t f16 = 1600;
    if (ns > 0 && min_ns < (1ull << 58) / 11)
        f16 = min_ns * 16 * 11 / 10 / ns;
    if (f16 < 32)
        f16 = 32;
    if (f16 > 1600)
        f16 = 1600;
    uint64_t next = k * f16 / 16;       /* k <= 2^40, f16 <= 1600: no overflow */
    return next > K_MAX ? K_MAX : next;
}

static slot_t *req_slot(const cb_json *doc, uint64_t *id)
{
    char err[CB_ERRLEN];
    if (req_u64(doc, "slot", id, err) != 0) {
        send_error(NULL, 0, "%s", err);
        return NULL;
    }
    slot_t *s = find_slot(*id);
    if (s == NULL)
        send_error(id, 0, "unknown slot %llu", (unsigned long long)*id);
    return s;
}

static void cmd_calibrate(const cb_json *doc)
{
    char err[CB_ERRLEN];
    uint64_t id, min_ns, k = 1, ns, cyc;
    slot_t *s = req_slot(doc, &id);
    if (s == NULL)
        return;
    if (req_u64(doc, "min_ns", &min_ns, err) != 0) {
        send_error(&id, 0, "%s", err);
        return;
    }
    for (;;) {
        if (timed_batch(s, k, &ns, &cyc, err) != 0) {
            send_error(&id, 0, "%s", err);
            return;
        }
        if (ns >= min_ns || k >= K_MAX)
            break;
        k = next_k(k, ns, min_ns);
    }
    cb_obj_begin(&out, "calibrated");
    cb_obj_u64(&out, "slot", id);
    cb_obj_u64(&out, "k", k);
    cb_obj_u64(&out, "ns", ns);
    cb_obj_end(&out);
    send_reply();
}

static void cmd_sample(const cb_json *doc)
{
    char err[CB_ERRLEN];
    uint64_t id, k, n, ns, cyc;
    slot_t *s = req_slot(doc, &id);
    if (s == NULL)
        return;
    if (req_u64(doc, "k", &k, err) != 0 || req_u64(doc, "n", &n, err) != 0) {
        send_error(&id, 0, "%s", err);
        return;
    }
    if (k < 1 || k > K_MAX) {
        send_error(&id, 0, "k must be between 1 and 2^40");
        return;
    }
    for (uint64_t i = 0; i < n; i++) {
        if (timed_batch(s, k, &ns, &cyc, err) != 0) {
            send_error(&id, 0, "%s", err);     /* ends the sampling; no "done" */
            return;
        }
        cb_obj_begin(&out, "sample");
        cb_obj_u64(&out, "slot", id);
        cb_obj_u64(&out, "k", k);
        cb_obj_u64(&out, "ns", ns);
        cb_obj_u64(&out, "cyc", cyc);
        cb_obj_end(&out);
        send_reply();
    }
    cb_obj_begin(&out, "done");
    cb_obj_u64(&out, "slot", id);
    cb_obj_end(&out);
    send_reply();
}

/* Energy windows (docs/protocol.md): batches of k operations back to back until at least min_ns
 * have passed, so that an energy counter read by the orchestrator before the request and after
 * the reply sees a window long against its update period. */
static void cmd_window(const cb_json *doc)
{
    char err[CB_ERRLEN];
    uint64_t id, k, min_ns, ops = 0;
    slot_t *s = req_slot(doc, &id);
    if (s == NULL)
        return;
    if (req_u64(doc, "k", &k, err) != 0 || req_u64(doc, "min_ns", &min_ns, err) != 0) {
        send_error(&id, 0, "%s", err);
        return;
    }
    if (k < 1 || k > K_MAX) {
        send_error(&id, 0, "k must be between 1 and 2^40");
        return;
    }
    if (min_ns > WINDOW_NS_MAX) {
        send_error(&id, 0, "min_ns must be at most %llu (10 minutes)", (unsigned long long)WINDOW_NS_MAX);
        return;
    }
    uint64_t t0 = clock_ns();
    uint64_t c0 = counter_read();
    uint64_t t1;
    do {
        err[0] = '\0';
        if (s->eng->run(s->state, k, err) != CB_OK) {
            send_error(&id, 0, "%s", err[0] ? err : "operation failed");
            return;
        }
        ops += k;
        t1 = clock_ns();
    } while (t1 - t0 < min_ns);
    uint64_t c1 = counter_read();
    cb_obj_begin(&out, "window");
    cb_obj_u64(&out, "slot", id);
    cb_obj_u64(&out, "k", k);
    cb_obj_u64(&out, "ops", ops);
    cb_obj_u64(&out, "ns", t1 - t0);
    cb_obj_u64(&out, "cyc", c1 - c0);
    cb_obj_end(&out);
    send_reply();
}

/* Sleep ns (nanosleep, resumed after a signal) and report how long it really took: the idle
 * windows of an energy baseline, and (ns = 0) the pipe round trip. */
static void cmd_idle(const cb_json *doc)
{
    char err[CB_ERRLEN];
    uint64_t ns;
    if (req_u64(doc, "ns", &ns, err) != 0) {
        send_error(NULL, 0, "%s", err);
        return;
    }
    if (ns > WINDOW_NS_MAX) {
        send_error(NULL, 0, "ns must be at most %llu (10 minutes)", (unsigned long long)WINDOW_NS_MAX);
        return;
    }
    uint64_t t0 = clock_ns();
    if (ns > 0) {
        struct timespec req = { (time_t)(ns / 1000000000u), (long)(ns % 1000000000u) }, rem;
        while (nanosleep(&req, &rem) != 0 && errno == EINTR)
            req = rem;
    }
    uint64_t t1 = clock_ns();
    cb_obj_begin(&out, "idle");
    cb_obj_u64(&out, "ns", t1 - t0);
    cb_obj_end(&out);
    send_reply();
}

static void free_slot(slot_t *s)
{
    s->eng->teardown(s->state);
    memset(s, 0, sizeof *s);
}

static void cmd_teardown(const cb_json *doc)
{
    uint64_t id;
    slot_t *s = req_slot(doc, &id);
    if (s == NULL)
        return;
    free_slot(s);
    cb_obj_begin(&out, "bye");
    cb_obj_u64(&out, "slot", id);
    cb_obj_end(&out);
    send_reply();
}

/* ================================================================ loop */

/* Read one line without its '\n' (and a '\r' before it). 1: a line; 0: end of input;
 * -1: the line was too long or held a NUL byte (the rest of it has been skipped). */
static int read_line(char *buf, size_t *len)
{
    size_t n = 0;
    int c, bad = 0;
    while ((c = getc_unlocked(stdin)) != EOF && c != '\n') {
        if (c == '\0')
            bad = 1;
        if (n < CB_LINE_MAX)
            buf[n++] = (char)c;
        else
            bad = 2;
    }
    if (c == EOF && n == 0 && !bad)
        return 0;
    if (n > 0 && buf[n - 1] == '\r')
        n--;
    buf[n] = '\0';
    *len = n;
    return bad ? -bad : 1;
}

static int blank(const char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    return *s == '\0';
}

static void free_all_slots(void)
{
    for (int i = 0; i < MAX_SLOTS; i++)
        if (slots[i].used)
            free_slot(&slots[i]);
}

int main(void)
{
    static char line[CB_LINE_MAX + 1];
    static cb_json doc;
    static const struct { const char *name; void (*fn)(const cb_json *); } cmds[] = {
        { "engine", cmd_engine },
        { "supports", cmd_supports },
        { "compute", cmd_compute },
        { "setup", cmd_setup },
        { "calibrate", cmd_calibrate },
        { "sample", cmd_sample },
        { "teardown", cmd_teardown },
        { "window", cmd_window },
        { "idle", cmd_idle },
    };
    char err[CB_ERRLEN];
    size_t len;
    int rc;

    cb_buf_init(&out);
    timing_init();

    while ((rc = read_line(line, &len)) != 0) {
        if (rc == -1) {
            send_error(NULL, 0, "bad request: NUL byte in line");
            continue;
        }
        if (rc == -2) {
            send_error(NULL, 0, "bad request: line longer than %d bytes", CB_LINE_MAX);
            continue;
        }
        if (blank(line))
            continue;
        if (cb_json_parse(line, len, &doc, err, sizeof err) != 0) {
            send_error(NULL, 0, "%s", err);
            continue;
        }
        const char *cmd = req_str(&doc, "cmd", err);
        if (cmd == NULL) {
            send_error(NULL, 0, "%s", err);
            continue;
        }
        if (strcmp(cmd, "hello") == 0) {
            cmd_hello();
            continue;
        }
        if (strcmp(cmd, "quit") == 0)
            break;
        size_t i;
        for (i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
            if (strcmp(cmd, cmds[i].name) == 0) {
                cmds[i].fn(&doc);
                break;
            }
        }
        if (i == sizeof cmds / sizeof cmds[0])
            send_error(NULL, 0, "unknown cmd '%.40s'; valid: hello, engine, supports, compute, "
                       "setup, calibrate, sample, teardown, window, idle, quit", cmd);
    }

    free_all_slots();
    if (rc != 0) {              /* quit: acknowledge; at end of input nobody is listening */
        cb_obj_begin(&out, "bye");
        cb_obj_end(&out);
        send_reply();
    }
    cb_buf_free(&out);
    return 0;
}
