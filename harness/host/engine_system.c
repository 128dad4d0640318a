/* engine_system.c - the "system" engine: random bytes straight from the OS and the CPU.
 *
 * Only op "random", with these sources:
 *  - getrandom: getrandom(2) with flags 0 (the kernel CSPRNG; blocks only before it is seeded).
 *  - rdrand / rdseed: the x86-64 instructions, 8 bytes per instruction. Each one may report
 *    "no data yet" (carry flag clear). RDRAND is retried up to 10 times per 64-bit word, as
 *    Intel's DRNG software implementation guide recommends (10 failures in a row mean a broken
 *    generator). RDSEED is different: it hands out conditioned entropy at a limited rate and
 *    runs dry routinely when asked in a loop (on the AMD EPYC this was written on, about 3% of
 *    back-to-back RDSEEDs succeed and a word often needs 30-60 tries), so Intel's guidance there
 *    is to retry with PAUSE; we allow up to 1000 tries per word before reporting failure. The
 *    timing of rdseed therefore includes its rate limit, which is the point of measuring it.
 *  - hwrng: read(2) from /dev/hwrng, the kernel's hardware RNG device.
 *
 * And op "reference-loop": no cryptography, 250 steps of an add-rotate-xor mix on eight 32-bit
 * words held in registers (two interleaved ChaCha-style quarter-round pairs per step, see
 * ref_mix) per operation. No memory traffic, no library: its speed depends only on the core's
 * clock and on whether the core's execution units were really ours (a busy SMT sibling of a
 * shared host slows it as it slows integer crypto code), so the spread of its samples is the
 * machine's own noise floor. The runner samples it between cells.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#endif

#include "engine.h"

#define HWRNG_PATH "/dev/hwrng"
#define HWRNG_CURRENT "/sys/class/misc/hw_random/rng_current"
#define RDRAND_RETRIES 10
#define RDSEED_RETRIES 1000

enum { SRC_GETRANDOM, SRC_RDRAND, SRC_RDSEED, SRC_HWRNG };

/* ---- x86-64 RDRAND / RDSEED ------------------------------------------------------------------ */

#if defined(__x86_64__)
static int cpu_has_rdrand(void)
{
    unsigned a, b, c, d;
    return __get_cpuid(1, &a, &b, &c, &d) && (c & bit_RDRND);
}

static int cpu_has_rdseed(void)
{
    unsigned a, b, c, d;
    return __get_cpuid_count(7, 0, &a, &b, &c, &d) && (b & bit_RDSEED);
}

/* The target attributes let this file build without -mrdrnd / -mrdseed; the instructions only
 * run after the CPUID check above said they exist. */
__attribute__((target("rdrnd")))
static int rdrand_word(unsigned long long *w)
{
    for (int i = 0; i < RDRAND_RETRIES; i++)
        if (_rdrand64_step(w))
            return 1;
    return 0;
}

__attribute__((target("rdseed")))
static int rdseed_word(unsigned long long *w)
{
    for (int i = 0; i < RDSEED_RETRIES; i++) {
        if (_rdseed64_step(w))
            return 1;
        _mm_pause();   /* RDSEED runs dry under load; give the conditioner a moment */
    }
    return 0;
}

/* Fill buf with words from RDRAND or RDSEED; the last partial word is cut. */
static int cpu_random(int src, uint8_t *buf, size_t len)
{
    unsigned long long w;
    while (len > 0) {
        size_t n = len < 8 ? len : 8;
        if (!(src == SRC_RDRAND ? rdrand_word(&w) : rdseed_word(&w)))
            return -1;
        memcpy(buf, &w, n);
        buf += n;
        len -= n;
    }
    return 0;
}
#else
static int cpu_has_rdrand(void) { return 0; }
static int cpu_has_rdseed(void) { return 0; }
static int cpu_random(int src, uint8_t *buf, size_t len)
{
    (void)src; (void)buf; (void)len;
    return -1;
}
#endif

/* Some AMD CPUs have returned all-ones from RDRAND while reporting success (after resume from
 * suspend), and Zen 5 parts return zeros from the 16/32-bit RDSEED forms; refuse a generator
 * that repeats itself. Checked once per instruction. */
static int cpu_sane(int src)
{
    static int state[2];   /* per source: 0 untested, 1 good, -1 broken */
    int *st = &state[src == SRC_RDSEED];
    if (*st == 0) {
        unsigned long long w[3] = {0, 0, 0};
        *st = -1;
        if (cpu_random(src, (uint8_t *)w, sizeof w) == 0 && !(w[0] == w[1] && w[1] == w[2]))
            *st = 1;
    }
    return *st == 1;
}

/* ---- /dev/hwrng ---------------------------------------------------------------------------- */

/* Which driver feeds /dev/hwrng ("none" when no hardware RNG is bound); "" if unknown. */
static void hwrng_driver(char *buf, size_t len)
{
    FILE *f = fopen(HWRNG_CURRENT, "r");
    buf[0] = '\0';
    if (f == NULL)
        return;
    if (fgets(buf, (int)len, f) == NULL)
        buf[0] = '\0';
    buf[strcspn(buf, "\n")] = '\0';
    for (char *c = buf; *c; c++)          /* it goes into a JSON string */
        if (*c == '"' || *c == '\\' || (unsigned char)*c < 0x20)
            *c = '?';
    fclose(f);
}

/* 0 if /dev/hwrng can be opened for reading and has a driver; else why (fills why). */
static int hwrng_usable(char *why)
{
    char drv[64];
    int fd = open(HWRNG_PATH, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        snprintf(why, CB_ERRLEN, "%s: %s", HWRNG_PATH, strerror(errno));
        return -1;
    }
    close(fd);
    hwrng_driver(drv, sizeof drv);
    if (strcmp(drv, "none") == 0) {
        snprintf(why, CB_ERRLEN, "%s: no hardware RNG driver bound (rng_current: none)",
                 HWRNG_PATH);
        return -1;
    }
    return 0;
}

/* Read exactly len bytes (the device returns short reads). */
static int read_full(int fd, uint8_t *buf, size_t len, char *err)
{
    while (len > 0) {
        ssize_t n = read(fd, buf, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            snprintf(err, CB_ERRLEN, "%s: %s", HWRNG_PATH, n == 0 ? "end of file" : strerror(errno));
            return CB_ERR;
        }
        buf += n;
        len -= (size_t)n;
    }
    return CB_OK;
}

/* ---- getrandom ------------------------------------------------------------------------------ */

static int getrandom_full(uint8_t *buf, size_t len, char *err)
{
    while (len > 0) {
        ssize_t n = getrandom(buf, len, 0);   /* large requests may come back short */
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            snprintf(err, CB_ERRLEN, "getrandom: %s", strerror(errno));
            return CB_ERR;
        }
        buf += n;
        len -= (size_t)n;
    }
    return CB_OK;
}

/* ---- the engine ---------------------------------------------------------------------------- */

static int source_of(const char *name)
{
    if (strcmp(name, "getrandom") == 0) return SRC_GETRANDOM;
    if (strcmp(name, "rdrand") == 0) return SRC_RDRAND;
    if (strcmp(name, "rdseed") == 0) return SRC_RDSEED;
    if (strcmp(name, "hwrng") == 0) return SRC_HWRNG;
    return -1;
}

#define REF_STEPS 250
#define ROTL32(x, n) ((uint32_t)((x) << (n)) | ((x) >> (32 - (n))))

static void ref_mix(uint32_t v[8], uint64_t steps)
{
    uint32_t a = v[0], b = v[1], c = v[2], d = v[3], e = v[4], f = v[5], g = v[6], h = v[7];
    for (uint64_t i = 0; i < steps; i++) {
        a += b; d ^= a; d = ROTL32(d, 16); c += d; b ^= c; b = ROTL32(b, 12);
        e += f; h ^= e; h = ROTL32(h, 16); g += h; f ^= g; f = ROTL32(f, 12);
        a += f; h ^= a; h = ROTL32(h, 8);  g += h; f ^= g; f = ROTL32(f, 7);
        e += b; d ^= e; d = ROTL32(d, 8);  c += d; b ^= c; b = ROTL32(b, 7);
    }
    v[0] = a; v[1] = b; v[2] = c; v[3] = d; v[4] = e; v[5] = f; v[6] = g; v[7] = h;
}

static int is_reference(const cb_params *p)
{
    return p->op == CB_OP_REFERENCE_LOOP;
}

static int sys_supports(const cb_params *p, char *why)
{
    if (is_reference(p))
        return CB_OK;
    if (p->op != CB_OP_RANDOM)
        return cb_say(why, CB_UNSUPPORTED, "the system engine only provides random bytes");
    switch (source_of(p->source)) {
    case SRC_GETRANDOM:
        return CB_OK;
    case SRC_RDRAND:
        if (!cpu_has_rdrand())
            return cb_say(why, CB_UNSUPPORTED, "this CPU has no RDRAND (x86-64 only)");
        if (!cpu_sane(SRC_RDRAND))
            return cb_say(why, CB_UNSUPPORTED, "RDRAND fails or returns a constant on this CPU");
        return CB_OK;
    case SRC_RDSEED:
        if (!cpu_has_rdseed())
            return cb_say(why, CB_UNSUPPORTED, "this CPU has no RDSEED (x86-64 only)");
        if (!cpu_sane(SRC_RDSEED))
            return cb_say(why, CB_UNSUPPORTED, "RDSEED fails or returns a constant on this CPU");
        return CB_OK;
    case SRC_HWRNG:
        return hwrng_usable(why) == 0 ? CB_OK : CB_UNSUPPORTED;
    }
    return cb_say(why, CB_UNSUPPORTED,
               "the system engine's sources are getrandom, rdrand, rdseed and hwrng");
}

typedef struct {
    int reference;       /* op reference-loop */
    uint32_t v[8];       /* its state, kept so the loop cannot be optimised away */
    int src;
    int fd;              /* /dev/hwrng, opened once per slot */
    uint8_t *buf;
    size_t len;
} slot;

static int produce(slot *s, char *err)
{
    switch (s->src) {
    case SRC_GETRANDOM:
        return getrandom_full(s->buf, s->len, err);
    case SRC_RDRAND:
    case SRC_RDSEED:
        if (cpu_random(s->src, s->buf, s->len) != 0) {
            snprintf(err, CB_ERRLEN, "%s: no data after %d tries",
                     s->src == SRC_RDRAND ? "RDRAND" : "RDSEED",
                     s->src == SRC_RDRAND ? RDRAND_RETRIES : RDSEED_RETRIES);
            return CB_ERR;
        }
        return CB_OK;
    default:
        return read_full(s->fd, s->buf, s->len, err);
    }
}

static void sys_teardown(void *handle)
{
    slot *s = handle;
    if (s == NULL)
        return;
    if (s->fd >= 0)
        close(s->fd);
    free(s->buf);
    free(s);
}

static void *sys_setup(const cb_params *p, char *err)
{
    slot *s;
    if (sys_supports(p, err) != CB_OK)
        return NULL;
    if (is_reference(p)) {
        if ((s = calloc(1, sizeof *s)) == NULL)
            cb_say(err, CB_ERR, "out of memory");
        else {
            s->reference = 1;
            for (int i = 0; i < 8; i++)
                s->v[i] = (uint32_t)i + 1;
            s->fd = -1;
        }
        return s;
    }
    if ((s = cb_slot_new(sizeof *s, err)) == NULL)
        return NULL;
    s->src = source_of(p->source);
    s->fd = -1;
    s->len = (size_t)p->bytes;
    s->buf = malloc(s->len + 1);
    if (s->buf == NULL) {
        sys_teardown(s);
        cb_say(err, CB_ERR, "out of memory");
        return NULL;
    }
    if (s->src == SRC_HWRNG) {
        s->fd = open(HWRNG_PATH, O_RDONLY | O_CLOEXEC);
        if (s->fd < 0) {
            snprintf(err, CB_ERRLEN, "%s: %s", HWRNG_PATH, strerror(errno));
            sys_teardown(s);
            return NULL;
        }
    }
    return s;
}

static int sys_run(void *handle, uint64_t k, char *err)
{
    slot *s = handle;
    if (s->reference) {
        for (uint64_t i = 0; i < k; i++)
            ref_mix(s->v, REF_STEPS);
        return CB_OK;
    }
    for (uint64_t i = 0; i < k; i++)
        if (produce(s, err) != CB_OK)
            return CB_ERR;
    return CB_OK;
}

static int sys_compute(const cb_params *p, const cb_kv *in, cb_kv *out, char *err)
{
    slot *s;
    int rc = sys_supports(p, err);
    if (rc != CB_OK)
        return rc;
    if (is_reference(p)) {       /* input v (8 little-endian words) -> v after one operation */
        size_t len;
        const uint8_t *in_v = cb_kv_get(in, "v", &len);
        uint8_t le[32];
        uint32_t v[8];
        if (in_v == NULL || len != 32)
            return cb_say(err, CB_ERR, "reference-loop needs input v of 32 bytes");
        for (int i = 0; i < 8; i++)
            v[i] = (uint32_t)in_v[4 * i] | (uint32_t)in_v[4 * i + 1] << 8
                   | (uint32_t)in_v[4 * i + 2] << 16 | (uint32_t)in_v[4 * i + 3] << 24;
        ref_mix(v, REF_STEPS);
        for (int i = 0; i < 32; i++)
            le[i] = (uint8_t)(v[i / 4] >> (8 * (i % 4)));
        return cb_kv_put(out, "v", le, 32) != 0 ? cb_say(err, CB_ERR, "out of memory") : CB_OK;
    }
    s = sys_setup(p, err);
    if (s == NULL)
        return CB_ERR;
    rc = produce(s, err);
    if (rc == CB_OK && cb_kv_put(out, "bits", s->buf, s->len) != 0)
        rc = cb_say(err, CB_ERR, "out of memory");
    sys_teardown(s);
    return rc;
}

static void sys_describe(char *out, size_t outlen)
{
    char why[CB_ERRLEN], drv[64];
    int hw = hwrng_usable(why) == 0;
    hwrng_driver(drv, sizeof drv);
    snprintf(out, outlen,
             "\"getrandom\":1,\"rdrand\":%d,\"rdseed\":%d,\"hwrng\":%d,\"hwrng_driver\":\"%s\"",
             cpu_has_rdrand() && cpu_sane(SRC_RDRAND), cpu_has_rdseed() && cpu_sane(SRC_RDSEED),
             hw, drv);
}

const cb_engine cb_engine_system = {
    "system",
    "OS and CPU random sources",
    sys_describe,
    sys_supports,
    sys_compute,
    sys_setup,
    sys_run,
    sys_teardown,
};
