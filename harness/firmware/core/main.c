/* main.c - the bare-metal benchmark harness.
 *
 * Runs the image's plan and reports in the JSON-Lines protocol of docs/protocol.md ("push mode":
 * a target without input speaks unprompted): hello, then every known-answer test of the ops in
 * this image, then each cell: its output (for the host's cross-check), the stack high-water mark
 * found by painting, the heap arena's peak, and the cycle count of every repetition. An op whose
 * KAT failed gets no timing. No floats anywhere.
 */
#include <string.h>

#include "fw.h"
#include "hal.h"
#include "plan.h"

#define HARNESS_VERSION "0.1.0"
#ifndef FW_OUT_BYTES
#define FW_OUT_BYTES 1024        /* the output buffer: payload + tag must fit (set per board) */
#endif
#ifndef FW_MAX_REPEAT
#define FW_MAX_REPEAT 256        /* timed repetitions kept per cell */
#endif
#define OUT_CAP FW_OUT_BYTES
#define STACK_PAINT 0xA5A5A5A5u
#define STACK_GUARD 256              /* bytes kept unpainted below the live stack pointer */

#ifndef FW_ARENA_BYTES
#define FW_ARENA_BYTES 16384
#endif

extern uint32_t __stack_limit;

/* ---- line output ---------------------------------------------------------------------------- */

/* A line is built here and flushed in pieces when it grows long (a cell's cycle list can be
 * kilobytes), so small targets need no large buffer. */
static char line[256];
static size_t pos;

static void flush_part(void)
{
    line[pos] = 0;
    hal_puts(line);
    pos = 0;
}

static void put_char(char c)
{
    if (pos >= sizeof line - 3)
        flush_part();
    line[pos++] = c;
}

static void put_raw(const char *s)
{
    while (*s)
        put_char(*s++);
}

static void put_str(const char *key, const char *val)
{
    put_raw(",\"");
    put_raw(key);
    put_raw("\":\"");
    put_raw(val);            /* protocol strings here never need escaping */
    put_raw("\"");
}

static void put_uint_raw(uint32_t v)
{
    char buf[11];
    int i = 10;
    buf[i] = 0;
    do {
        buf[--i] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    put_raw(buf + i);
}

static void put_uint(const char *key, uint32_t v)
{
    put_raw(",\"");
    put_raw(key);
    put_raw("\":");
    put_uint_raw(v);
}

static void put_hex(const char *key, const uint8_t *p, size_t n)
{
    static const char digits[] = "0123456789abcdef";
    put_raw(",\"");
    put_raw(key);
    put_raw("\":\"");
    for (size_t i = 0; i < n; i++) {
        put_char(digits[p[i] >> 4]);
        put_char(digits[p[i] & 15]);
    }
    put_raw("\"");
}

static void begin(const char *type)
{
    pos = 0;
    put_raw("{\"t\":\"");
    put_raw(type);
    put_raw("\"");
}

static void end(void)
{
    line[pos++] = '}';
    line[pos++] = '\n';
    line[pos] = 0;
    hal_puts(line);
}

/* ---- services for the glue ------------------------------------------------------------------ */

/* Restarted at each cell from the plan's seed (fw_cell.seed), so a cell's ECDSA nonces and
 * generated keys are the same in every run, whatever ran before it. */
static uint64_t random_seed = 1000;

int fw_random(void *ctx, unsigned char *buf, size_t len)
{
    (void)ctx;
    cb_fill(buf, len, random_seed++);
    return 0;
}

/* A first-fit allocator over one fixed arena, with splitting and coalescing: libraries such as
 * mbedTLS ECC allocate and free many small blocks. Each block has an 8-byte header; `arena_peak`
 * is the most bytes (headers included) in use at once. */
typedef struct {
    uint32_t size;           /* bytes of the block, header included */
    uint32_t used;
} blk;

static uint8_t arena[FW_ARENA_BYTES] __attribute__((aligned(8), section(".fw_arena")));
static size_t arena_in_use, arena_peak;
static int arena_ready, arena_exhausted;

static void arena_reset(void)
{
    blk *b = (blk *)arena;
    b->size = sizeof arena;
    b->used = 0;
    arena_in_use = 0;
    arena_ready = 1;
}

void *fw_calloc(size_t n, size_t size)
{
    size_t bytes = n * size;
    if (size && bytes / size != n)
        return NULL;
    bytes = ((bytes + 7) & ~(size_t)7) + sizeof(blk);
    if (!arena_ready)
        arena_reset();
    for (uint8_t *p = arena; p < arena + sizeof arena; p += ((blk *)p)->size) {
        blk *b = (blk *)p;
        if (b->used || b->size < bytes)
            continue;
        if (b->size - bytes >= sizeof(blk) + 8) {      /* split off the rest */
            blk *rest = (blk *)(p + bytes);
            rest->size = b->size - (uint32_t)bytes;
            rest->used = 0;
            b->size = (uint32_t)bytes;
        }
        b->used = 1;
        arena_in_use += b->size;
        if (arena_in_use > arena_peak)
            arena_peak = arena_in_use;
        memset(b + 1, 0, b->size - sizeof(blk));
        return b + 1;
    }
    arena_exhausted = 1;
    return NULL;
}

void fw_free(void *ptr)
{
    if (ptr == NULL)
        return;
    blk *b = (blk *)ptr - 1;
    b->used = 0;
    arena_in_use -= b->size;
    for (uint8_t *p = arena; p < arena + sizeof arena;) {   /* merge free neighbours */
        blk *c = (blk *)p;
        uint8_t *next = p + c->size;
        if (!c->used && next < arena + sizeof arena && !((blk *)next)->used)
            c->size += ((blk *)next)->size;
        else
            p = next;
    }
}

/* ---- running one operation -------------------------------------------------------------------- */

uint8_t fw_keyed;                   /* fw.h: a glue's kept key schedule is set up */
static uint8_t out_buf[OUT_CAP];
static fw_io io;

static const fw_op *find_op(const char *id)
{
    for (int i = 0; fw_lib_ops[i].op != NULL; i++)
        if (strcmp(fw_lib_ops[i].op, id) == 0)
            return &fw_lib_ops[i];
    return NULL;
}

static void load_io(const fw_inputs *in)
{
    memset(&io, 0, sizeof io);
    io.key = in->key.p;   io.key_len = in->key.len;
    io.iv = in->iv.p;     io.iv_len = in->iv.len;
    io.aad = in->aad.p;   io.aad_len = in->aad.len;
    io.msg = in->msg.p;   io.msg_len = in->msg.len;
    io.peer = in->peer.p; io.peer_len = in->peer.len;
    io.sig = in->sig.p;   io.sig_len = in->sig.len;
    io.out = out_buf;
    io.out_cap = sizeof out_buf;
}

/* Paint the free stack below us, run the op once, return its stack use in bytes (from our own
 * stack pointer down to the deepest word it changed). */
static uint8_t stack_exhausted;     /* the last painted run used the whole stack (run_painted) */
static const char stack_why[] = "the operation used the whole stack of this image (its RAM after data, "
                                "bss and the arena): it needs more RAM than this board has";

static __attribute__((noinline)) uint32_t run_painted(const fw_op *op, const fw_params *p, int *rc)
{
    uint32_t *sp;
    __asm__ volatile("mov %0, sp" : "=r"(sp));
    uint32_t *top = sp - STACK_GUARD / 4;
    for (uint32_t *w = &__stack_limit; w < top; w++)
        *w = STACK_PAINT;
    *rc = op->run(p, &io);
    uint32_t *w = &__stack_limit;
    while (w < top && *w == STACK_PAINT)
        w++;
    /* not one painted word left: the op reached the stack's end and may have written past it */
    stack_exhausted = w == &__stack_limit;
    return (uint32_t)((uintptr_t)sp - (uintptr_t)w);
}

static uint16_t kat_fail_mark[64];   /* index of failed KATs (small plans only) */
static int n_kat_fail;

static int op_kat_failed(const char *op_id)
{
    for (int i = 0; i < n_kat_fail; i++)
        if (strcmp(fw_kats[kat_fail_mark[i]].in.op, op_id) == 0)
            return 1;
    return 0;
}

/* A payload whose output would not fit this board's buffer is refused, not overrun. */
static int fits(const fw_inputs *in)
{
    return in->msg.len + 64u <= OUT_CAP;
}

static void run_kats(void)
{
    for (int i = 0; fw_kats[i].id != NULL; i++) {
        const fw_kat *k = &fw_kats[i];
        const fw_op *op = find_op(k->in.op);
        const char *why = "";
        begin("kat");
        put_str("id", k->id);
        put_str("op", k->in.op);
        int ok = 0;
        if (op == NULL) {
            put_str("why", "op not in this image");
        } else if (!fits(&k->in) || op->supports(&k->in.params, &why) != FW_OK) {
            if (!fits(&k->in))
                why = "the output would not fit this board's buffer";
            put_str("why", why);
            put_uint("unsupported", 1);
            end();
            continue;
        } else {
            load_io(&k->in);
            int rc;
            fw_keyed = 0;
            (void)run_painted(op, &k->in.params, &rc);
            if (stack_exhausted)
                put_str("why", stack_why);
            ok = !stack_exhausted && rc == FW_OK && io.out_len == k->expect.len
                 && memcmp(io.out, k->expect.p, io.out_len) == 0;
            if (!ok)
                put_hex("got", io.out, rc == FW_OK ? io.out_len : 0);
        }
        put_uint("ok", (uint32_t)ok);
        end();
        if (!ok && n_kat_fail < (int)(sizeof kat_fail_mark / sizeof kat_fail_mark[0]))
            kat_fail_mark[n_kat_fail++] = (uint16_t)i;
    }
}

static void run_cell(int index, const fw_cell *c)
{
    const fw_op *op = find_op(c->in.op);
    const char *why = "";
    static uint32_t cyc[FW_MAX_REPEAT];
    begin("cell");
    put_uint("i", (uint32_t)index);
    put_str("op", c->in.op);
    int keep = c->in.params.rekey == 0;
    if (keep && &fw_lib_keeps_key == NULL)
        op = NULL, why = "rekey=0: this library's glue sets the key in every operation (rekey=1 only)";
    else if (op == NULL)
        why = "op not in this image";
    else if (!fits(&c->in))
        why = "the payload's output would not fit this board's RAM buffer";
    if (op == NULL || !fits(&c->in) || op->supports(&c->in.params, &why) != FW_OK) {
        put_str("status", "unsupported");
        put_str("why", why);
        end();
        return;
    }
    if (op_kat_failed(c->in.op)) {
        put_str("status", "failed");
        put_str("why", "known-answer test failed on the target");
        end();
        return;
    }
    uint32_t stack = 0, n = c->repeat > FW_MAX_REPEAT ? FW_MAX_REPEAT : c->repeat;
    int rc = FW_OK;
    uint32_t alt0 = fw_alt_calls ? fw_alt_calls() : 0;
    arena_peak = 0;
    arena_exhausted = 0;
    stack_exhausted = 0;
    random_seed = c->seed;
    fw_keyed = 0;
    if (keep) {                                          /* rekey=0: the key schedule, untimed */
        load_io(&c->in);
        rc = op->run(&c->in.params, &io);
    }
    load_io(&c->in);
    if (rc == FW_OK)
        stack = run_painted(op, &c->in.params, &rc);         /* the output and stack run */
    if (rc != FW_OK || stack_exhausted) {
        put_str("status", "failed");
        const char *lib_why = fw_lib_error ? fw_lib_error() : NULL;
        put_str("why", stack_exhausted ? stack_why
                       : arena_exhausted ? "heap arena exhausted"
                       : lib_why != NULL ? lib_why : "operation returned an error");
        end();
        return;
    }
    put_str("status", "ok");
    put_hex("out", io.out, io.out_len);
    put_uint("stack", stack);
    put_uint("heap", (uint32_t)arena_peak);
    for (uint32_t r = 0; r < n; r++) {
        load_io(&c->in);
        hal_marker(1);                                  /* a power analyzer's window: one repetition */
        uint32_t t0 = hal_cycles();
        rc = op->run(&c->in.params, &io);
        uint32_t t1 = hal_cycles();
        hal_marker(0);
        cyc[r] = t1 - t0;
        if (rc != FW_OK)
            break;
    }
    /* the counter's own cost: two back-to-back reads */
    uint32_t t0 = hal_cycles();
    uint32_t t1 = hal_cycles();
    put_uint("overhead", t1 - t0);
    put_raw(",\"cyc\":[");
    for (uint32_t r = 0; r < n; r++) {
        if (r)
            put_raw(",");
        put_uint_raw(cyc[r]);
    }
    put_raw("]");
    if (fw_alt_calls)                                   /* calls into _ALT code: output run + repetitions */
        put_uint("alt_calls", fw_alt_calls() - alt0);
    end();
}

int main(void)
{
    hal_init();
    if (fw_alt_init)                /* _ALT replacement code's own set-up (fw.h) */
        fw_alt_init();
    begin("hello");
    put_str("harness", "cbh-fw");
    put_str("version", HARNESS_VERSION);
    put_str("board", fw_board);
    put_str("cpu", fw_cpu);
    put_str("build", fw_build);
    put_str("lib", fw_lib_name);
    put_str("lib_version", fw_lib_version);
    put_str("counter", hal_counter_name());
    put_uint("ops", (uint32_t)fw_lib_n_ops);
    put_uint("arena", FW_ARENA_BYTES);
    end();
    run_kats();
    int n = 0;
    for (; fw_cells[n].in.op != NULL; n++)
        run_cell(n, &fw_cells[n]);
    begin("end");
    put_uint("cells", (uint32_t)n);
    put_uint("kat_fail", (uint32_t)n_kat_fail);
    end();
    return 0;
}

void fw_fault(const char *kind, const uint32_t *frame)
{
    begin("fault");
    put_str("kind", kind);
    put_uint("pc", frame[6]);
    put_uint("lr", frame[5]);
    put_uint("xpsr", frame[7]);
    end();
    hal_exit(1);
}
