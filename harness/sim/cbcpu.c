/* cbcpu.c - cryptobench's own Thumb executor (see cbcpu.h): memory, the block loop that runs the
 * pre-decoded blocks of cbdecode.c, M-profile exceptions, and the API used from Python (ctypes).
 * Semantics from the ARMv7-M Architecture Reference Manual (ARM DDI 0403E) pseudocode. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cbcpu_int.h"             /* and cbsim_int.h, the accounting it drives */

#define LIKELY(x) __builtin_expect(!!(x), 1)
#define UNLIKELY(x) __builtin_expect(!!(x), 0)
#define VTOR_ADDR 0xE000ED08u
#define CLOCK_CALLS 256         /* callbacks into the host between two reads of the clock */
#define CLOCK_BLOCKS 0x40000    /* blocks between two reads of the clock (2^18) */

/* a callback into the host: an image that calls semihosting or touches peripherals in every
 * block must not overrun the run's timeout, so the clock is read after CLOCK_CALLS of them */
static inline void slow_call(cbcpu *c)
{
    if (++c->slow >= CLOCK_CALLS)
        c->attn.is.clock = 1;
}

/* The console's bytes so far to the host. Called before every other callback, so that the host
 * sees the console and everything else in the order the image made them. */
static void console_flush(cbcpu *c)
{
    if (c->con.n == 0)
        return;
    uint32_t n = c->con.n;
    c->con.n = 0;
    slow_call(c);
    c->con.fn(c->con.buf, n);
}

/* A store of the console's data register: the host is called at the newline (the line may end
 * the run there, as when each byte was a callback) or when the buffer is full. */
static void console_byte(cbcpu *c, uint32_t v)
{
    c->con.last = v;
    c->con.buf[c->con.n++] = (uint8_t)v;
    if ((v & 0xFF) == '\n' || c->con.n == CBCPU_CONSOLE_BYTES)
        console_flush(c);
}

void cbcpu_fail(cbcpu *c, const char *fmt, ...)
{
    if (c->status == CBCPU_PROBLEM)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->problem, sizeof c->problem, fmt, ap);
    va_end(ap);
    c->status = CBCPU_PROBLEM;
    c->attn.is.stop = 1;
}

/* ---- memory -------------------------------------------------------------------------------- */

/* After a fault the rest of its block still runs (the stop is looked at between blocks), so the
 * host is not called again: nothing observable (a peripheral write, semihosting) follows a fault,
 * as on Unicorn, which stops at the faulting access itself. */
static uint32_t slow_read(cbcpu *c, uint32_t a, uint32_t size)
{
    uint32_t v = 0;
    if (a == VTOR_ADDR && size == 4)
        return c->vtor;
    if (c->status == CBCPU_PROBLEM)
        return 0;
    if (c->nholds && c->acct) {
        /* the count is already the block's end (cbsim charges a block when it is entered), never
         * before the reading instruction: below `until` the read is the one the host answered */
        uint64_t now = cbsim_cycles(c->acct);
        for (int i = 0; i < c->nholds; i++) {
            if (c->hold[i].addr != a || c->hold[i].size != size)
                continue;
            if (now < c->hold[i].until) {
                c->held++;
                return c->hold[i].value;
            }
            c->hold[i] = c->hold[--c->nholds];
            break;
        }
    }
    if (c->con.fn != NULL) {
        if (a == c->con.status_addr)
            return c->con.status_value;
        if (a == c->con.data_addr)
            return c->con.last;
        console_flush(c);
    }
    slow_call(c);
    if (c->rd == NULL || c->rd(a, size, &v) != 0)
        cbcpu_fail(c, "read of %u bytes at unmapped 0x%08x (pc=0x%08x)", size, a, c->r[15] - 4);
    return v;
}

static void slow_write(cbcpu *c, uint32_t a, uint32_t size, uint32_t v)
{
    if (a == VTOR_ADDR && size == 4)
        c->vtor = v & ~0x7Fu;
    if (c->status == CBCPU_PROBLEM)
        return;
    c->nholds = 0;          /* a store to any register may change what every held read gives */
    if (c->con.fn != NULL) {
        if (a == c->con.data_addr) {
            console_byte(c, v);
            return;
        }
        console_flush(c);
    }
    slow_call(c);
    if (c->wr == NULL || c->wr(a, size, v) != 0)
        cbcpu_fail(c, "write of %u bytes at unmapped 0x%08x (pc=0x%08x)", size, a, c->r[15] - 4);
}

static inline uint8_t *host(cbcpu *c, uint32_t a, uint32_t size, int write)
{
    uint32_t o = a - c->ram_lo;
    if (LIKELY(o <= c->ram_size - size)) {
        if (write && UNLIKELY(c->ram_code[o >> PAGE_BITS]))
            c->attn.is.flush = 1;
        return c->ram + o;
    }
    o = a - c->flash_lo;
    if (o <= c->flash_size - size) {
        if (write) {
            if (c->flash_code[o >> PAGE_BITS])
                c->attn.is.flush = 1;
        } else if (c->acct) {
            cbsim_flash_data_read(c->acct, a, size);
        }
        return c->flash + o;
    }
    return NULL;
}

static inline uint32_t ld32(cbcpu *c, uint32_t a)
{
    uint8_t *p = host(c, a, 4, 0);
    uint32_t v;
    if (UNLIKELY(p == NULL))
        return slow_read(c, a, 4);
    memcpy(&v, p, 4);
    return v;
}

static inline uint32_t ld16(cbcpu *c, uint32_t a)
{
    uint8_t *p = host(c, a, 2, 0);
    uint16_t v;
    if (UNLIKELY(p == NULL))
        return slow_read(c, a, 2);
    memcpy(&v, p, 2);
    return v;
}

static inline uint32_t ld8(cbcpu *c, uint32_t a)
{
    uint8_t *p = host(c, a, 1, 0);
    return UNLIKELY(p == NULL) ? slow_read(c, a, 1) : *p;
}

static inline void st32(cbcpu *c, uint32_t a, uint32_t v)
{
    uint8_t *p = host(c, a, 4, 1);
    if (UNLIKELY(p == NULL))
        slow_write(c, a, 4, v);
    else
        memcpy(p, &v, 4);
}

static inline void st16(cbcpu *c, uint32_t a, uint32_t v)
{
    uint8_t *p = host(c, a, 2, 1);
    uint16_t h = (uint16_t)v;
    if (UNLIKELY(p == NULL))
        slow_write(c, a, 2, v & 0xFFFF);
    else
        memcpy(p, &h, 2);
}

static inline void st8(cbcpu *c, uint32_t a, uint32_t v)
{
    uint8_t *p = host(c, a, 1, 1);
    if (UNLIKELY(p == NULL))
        slow_write(c, a, 1, v & 0xFF);
    else
        *p = (uint8_t)v;
}

/* an instruction fetch: no accounting, no callbacks */
int cbcpu_fetch16(cbcpu *c, uint32_t a, uint32_t *hw)
{
    uint16_t v;
    if (a - c->ram_lo <= c->ram_size - 2)
        memcpy(&v, c->ram + (a - c->ram_lo), 2);
    else if (a - c->flash_lo <= c->flash_size - 2)
        memcpy(&v, c->flash + (a - c->flash_lo), 2);
    else
        return -1;
    *hw = v;
    return 0;
}

/* ---- arithmetic helpers --------------------------------------------------------------------- */

static inline uint32_t add_c(cbcpu *c, uint32_t a, uint32_t b, uint32_t cin, int s)
{
    uint64_t u = (uint64_t)a + b + cin;
    uint32_t r = (uint32_t)u;
    if (s) {
        c->fn = r >> 31;
        c->fz = r == 0;
        c->fc = (uint32_t)(u >> 32);
        c->fv = ((a ^ r) & (b ^ r)) >> 31;
    }
    return r;
}

/* Shift_C for amounts 0-255 (register shifts; immediates are 1-32, RRX is type 4) */
static inline uint32_t shift_c(uint32_t v, int type, uint32_t n, uint32_t cin, uint32_t *cout)
{
    if (n == 0 && type != 4) {
        *cout = cin;
        return v;
    }
    switch (type) {
    case 0:
        if (n < 32) { *cout = (v >> (32 - n)) & 1; return v << n; }
        *cout = n == 32 ? (v & 1) : 0;
        return 0;
    case 1:
        if (n < 32) { *cout = (v >> (n - 1)) & 1; return v >> n; }
        *cout = n == 32 ? (v >> 31) : 0;
        return 0;
    case 2:
        if (n < 32) { *cout = (v >> (n - 1)) & 1; return (uint32_t)((int32_t)v >> n); }
        *cout = v >> 31;
        return (uint32_t)((int32_t)v >> 31);
    case 3: {
        uint32_t k = n & 31;
        uint32_t r = k ? (v >> k) | (v << (32 - k)) : v;
        *cout = r >> 31;
        return r;
    }
    default:
        *cout = v & 1;
        return (v >> 1) | (cin << 31);
    }
}

static inline __attribute__((always_inline)) int cond_pass(const cbcpu *c, int cond)
{
    switch (cond) {
    case 0: return c->fz;
    case 1: return !c->fz;
    case 2: return c->fc;
    case 3: return !c->fc;
    case 4: return c->fn;
    case 5: return !c->fn;
    case 6: return c->fv;
    case 7: return !c->fv;
    case 8: return c->fc && !c->fz;
    case 9: return !c->fc || c->fz;
    case 10: return c->fn == c->fv;
    case 11: return c->fn != c->fv;
    case 12: return !c->fz && c->fn == c->fv;
    case 13: return c->fz || c->fn != c->fv;
    default: return 1;
    }
}

static int32_t ssat(cbcpu *c, int64_t v, int bits)
{
    int64_t hi = ((int64_t)1 << (bits - 1)) - 1, lo = -((int64_t)1 << (bits - 1));
    if (v > hi) { c->fq = 1; return (int32_t)hi; }
    if (v < lo) { c->fq = 1; return (int32_t)lo; }
    return (int32_t)v;
}

static uint32_t usat(cbcpu *c, int64_t v, int bits)
{
    int64_t hi = ((int64_t)1 << bits) - 1;
    if (v > hi) { c->fq = 1; return (uint32_t)hi; }
    if (v < 0) { c->fq = 1; return 0; }
    return (uint32_t)v;
}

uint32_t cbcpu_xpsr(const cbcpu *c)
{
    return c->fn << 31 | c->fz << 30 | c->fc << 29 | c->fv << 28 | c->fq << 27 | 1u << 24 | c->ge << 16 | c->ipsr;
}

static void set_apsr(cbcpu *c, uint32_t v)
{
    c->fn = v >> 31;
    c->fz = (v >> 30) & 1;
    c->fc = (v >> 29) & 1;
    c->fv = (v >> 28) & 1;
    c->fq = (v >> 27) & 1;
}

/* the parallel add/subtract family (SADD16 ... UHSAX): which = op1[2:0], pre = op2 (U, prefix) */
static uint32_t parallel(cbcpu *c, int which, int pre, uint32_t a, uint32_t b)
{
    int uns = (pre >> 2) & 1, kind = pre & 3;    /* 0 modular, 1 saturating, 2 halving */
    int half = which == 0 || which == 4 ? 0 : 1;    /* 8-bit lanes for ADD8/SUB8 */
    int lanes = half ? 2 : 4, w = half ? 16 : 8;
    uint32_t mask = half ? 0xFFFF : 0xFF, r = 0, ge = 0;
    for (int i = 0; i < lanes; i++) {
        int sh = i * w;
        int64_t x, y, v;
        int j = i;
        int sub = which == 4 || which == 5;
        if (which == 2 || which == 6) {          /* ASX: lo = a.lo - b.hi, hi = a.hi + b.lo; SAX inverse */
            j = 1 - i;
            sub = (which == 2) ? (i == 0) : (i == 1);
        }
        uint32_t xa = (a >> sh) & mask, yb = (b >> (j * w)) & mask;
        if (uns) { x = xa; y = yb; }
        else { x = half ? (int16_t)xa : (int8_t)xa; y = half ? (int16_t)yb : (int8_t)yb; }
        v = sub ? x - y : x + y;
        if (kind == 0) {
            if (uns ? (sub ? v >= 0 : v > (int64_t)mask) : v >= 0) {
                uint32_t g = half ? 3u : 1u;
                ge |= g << (i * (half ? 2 : 1));
            }
        } else if (kind == 1) {
            if (uns) v = v < 0 ? 0 : v > (int64_t)mask ? (int64_t)mask : v;
            else {
                int64_t hi = (int64_t)(mask >> 1), lo = -hi - 1;
                v = v < lo ? lo : v > hi ? hi : v;
            }
        } else {
            v >>= 1;
        }
        r |= ((uint32_t)v & mask) << sh;
    }
    if (kind == 0)
        c->ge = ge;
    return r;
}

/* ---- floating point ------------------------------------------------------------------------- */

static inline float fs(const cbcpu *c, int i) { float f; memcpy(&f, &c->sx[i], 4); return f; }
static inline void set_fs(cbcpu *c, int i, float f) { memcpy(&c->sx[i], &f, 4); }
static inline double fd(const cbcpu *c, int i)
{
    uint64_t u = (uint64_t)c->sx[2 * i + 1] << 32 | c->sx[2 * i];
    double d;
    memcpy(&d, &u, 8);
    return d;
}
static inline void set_fd(cbcpu *c, int i, double d)
{
    uint64_t u;
    memcpy(&u, &d, 8);
    c->sx[2 * i] = (uint32_t)u;
    c->sx[2 * i + 1] = (uint32_t)(u >> 32);
}

static void fcmp(cbcpu *c, double a, double b)
{
    uint32_t f = isnan(a) || isnan(b) ? 0x3 : a == b ? 0x6 : a < b ? 0x8 : 0x2;
    c->fpscr = (c->fpscr & 0x0FFFFFFF) | f << 28;
}

static uint32_t to_int(double v, int sgn, int rz)
{
    if (isnan(v))
        return 0;
    v = rz ? trunc(v) : nearbyint(v);
    if (sgn) {
        if (v >= 2147483647.0) return 0x7FFFFFFF;
        if (v <= -2147483648.0) return 0x80000000u;
        return (uint32_t)(int32_t)v;
    }
    if (v >= 4294967295.0) return 0xFFFFFFFFu;
    if (v <= 0) return 0;
    return (uint32_t)v;
}

static void vfp(cbcpu *c, const op_t *o)
{
    int dbl = o->s;
    double d = dbl ? fd(c, o->d) : fs(c, o->d), n = dbl ? fd(c, o->n) : fs(c, o->n);
    double m = dbl ? fd(c, o->m) : fs(c, o->m), r;
    double p = dbl ? n * m : (double)(float)(n * m);     /* VMLA & co round the product first */
    switch (o->sht) {
    case F_MLA: r = d + p; break;
    case F_MLS: r = d - p; break;
    case F_NMLA: r = -d - p; break;
    case F_NMLS: r = -d + p; break;
    case F_MUL: r = n * m; break;
    case F_NMUL: r = -(n * m); break;
    case F_ADD: r = n + m; break;
    case F_SUB: r = n - m; break;
    case F_DIV: r = n / m; break;
    case F_FMA: r = dbl ? fma(n, m, d) : fmaf((float)n, (float)m, (float)d); break;
    case F_FMS: r = dbl ? fma(-n, m, d) : fmaf(-(float)n, (float)m, (float)d); break;
    case F_FNMA: r = dbl ? fma(-n, m, -d) : fmaf(-(float)n, (float)m, -(float)d); break;
    case F_FNMS: r = dbl ? fma(n, m, -d) : fmaf((float)n, (float)m, -(float)d); break;
    case F_MOVI:
        if (dbl) { c->sx[2 * o->d] = 0; c->sx[2 * o->d + 1] = o->imm; }
        else c->sx[o->d] = o->imm;
        return;
    case F_MOV:
        if (dbl) { c->sx[2 * o->d] = c->sx[2 * o->m]; c->sx[2 * o->d + 1] = c->sx[2 * o->m + 1]; }
        else c->sx[o->d] = c->sx[o->m];
        return;
    case F_ABS:
        if (dbl) { c->sx[2 * o->d] = c->sx[2 * o->m]; c->sx[2 * o->d + 1] = c->sx[2 * o->m + 1] & 0x7FFFFFFF; }
        else c->sx[o->d] = c->sx[o->m] & 0x7FFFFFFF;
        return;
    case F_NEG:
        if (dbl) { c->sx[2 * o->d] = c->sx[2 * o->m]; c->sx[2 * o->d + 1] = c->sx[2 * o->m + 1] ^ 0x80000000u; }
        else c->sx[o->d] = c->sx[o->m] ^ 0x80000000u;
        return;
    case F_SQRT: r = dbl ? sqrt(m) : sqrtf((float)m); break;
    case F_CMP: fcmp(c, d, m); return;
    case F_CMPZ: fcmp(c, d, 0.0); return;
    case F_CVT_DS:
        if (dbl) set_fs(c, o->d, (float)fd(c, o->m));
        else set_fd(c, o->d, (double)fs(c, o->m));
        return;
    case F_TOF_S: case F_TOF_U: {
        uint32_t v = c->sx[o->m];
        r = o->sht == F_TOF_S ? (double)(int32_t)v : (double)v;
        break;
    }
    default: {                                   /* to integer */
        int sgn = o->sht == F_TOI_S || o->sht == F_TOIR_S, rz = o->sht == F_TOI_S || o->sht == F_TOI_U;
        c->sx[o->d] = to_int(m, sgn, rz);
        return;
    }
    }
    if (dbl)
        set_fd(c, o->d, r);
    else
        set_fs(c, o->d, (float)r);
}

/* ---- exceptions ----------------------------------------------------------------------------- */

static void exc_entry(cbcpu *c, uint32_t exc, uint32_t ret)
{
    uint32_t sp = c->r[13], align = (sp & 4) ? 1 : 0;
    uint32_t frame = (sp - 0x20) & ~4u, xpsr = cbcpu_xpsr(c) | align << 9;
    uint32_t vals[8] = {c->r[0], c->r[1], c->r[2], c->r[3], c->r[12], c->r[14], ret, xpsr};
    for (int i = 0; i < 8; i++)
        st32(c, frame + 4 * (uint32_t)i, vals[i]);
    if (c->ipsr) {
        c->r[14] = 0xFFFFFFF1;
        c->r[13] = frame;
    } else if (c->control & 2) {                 /* thread mode on the PSP: the handler runs on the MSP */
        c->r[14] = 0xFFFFFFFD;
        c->r[13] = c->other_sp;
        c->other_sp = frame;
    } else {
        c->r[14] = 0xFFFFFFF9;
        c->r[13] = frame;
    }
    c->ipsr = exc;
    c->active[exc] = 1;
    c->pending[exc] = 0;
    c->control &= ~2u;
    c->pc = ld32(c, c->vtor + 4 * exc) & ~1u;
}

static void exc_return(cbcpu *c, uint32_t v)
{
    uint32_t to_thread = (v & 0xF) != 1, use_psp = (v & 0xF) == 0xD;
    if ((v & 0x10) == 0) {
        cbcpu_fail(c, "exception return 0x%08x with a floating-point frame: not implemented", v);
        return;
    }
    c->active[c->ipsr] = 0;
    if (use_psp) {
        uint32_t msp = c->r[13];
        c->r[13] = c->other_sp;
        c->other_sp = msp;
        c->control |= 2;
    }
    uint32_t f = c->r[13], vals[8];
    for (int i = 0; i < 8; i++)
        vals[i] = ld32(c, f + 4 * (uint32_t)i);
    c->r[0] = vals[0]; c->r[1] = vals[1]; c->r[2] = vals[2]; c->r[3] = vals[3];
    c->r[12] = vals[4]; c->r[14] = vals[5];
    c->pc = vals[6] & ~1u;
    set_apsr(c, vals[7]);
    c->ge = (vals[7] >> 16) & 15;
    c->ipsr = to_thread ? 0 : (vals[7] & 0x1FF);
    c->r[13] = f + 0x20 + ((vals[7] >> 9) & 1) * 4;
    c->event = 1;                   /* an exception return sets the event register (ARMv7-M ARM B1.5.18) */
    if (c->wake)
        c->attn.is.stop = 1;
}

/* the pc written by BX, BLX, POP, LDR or LDM: interworking, or an exception return */
static inline void bx_write(cbcpu *c, uint32_t v)
{
    if (UNLIKELY(v >= 0xF0000000u) && c->ipsr) {
        exc_return(c, v);
        return;
    }
    if (UNLIKELY(!(v & 1)))
        cbcpu_fail(c, "branch to 0x%08x without the Thumb bit (pc=0x%08x): the core would fault (INVSTATE)", v,
                   c->r[15] - 4);
    c->pc = v & ~1u;
}

static int take_pending(cbcpu *c)
{
    for (uint32_t e = 2; e < 512; e++) {
        if (!c->pending[e])
            continue;
        if (c->ipsr != 0 && e > 3)           /* no priorities: only thread mode is preempted */
            return 0;
        if (c->primask && e > 3)
            return 0;
        exc_entry(c, e, c->pc);
        return 1;
    }
    c->attn.is.pending = 0;
    return 0;
}

/* ---- the block table ------------------------------------------------------------------------ */

static size_t slot(const cbcpu *c, uint32_t a) { return (size_t)((a >> 1) * 2654435761u) & (c->cap - 1); }

static int table_put(cbcpu *c, blk_t *b)
{
    if ((c->used + 1) * 2 > c->cap) {
        size_t oc = c->cap;
        blk_t **old = c->table;
        c->cap = oc * 2;
        c->table = calloc(c->cap, sizeof *c->table);
        if (c->table == NULL)
            return -1;
        for (size_t i = 0; i < oc; i++)
            if (old[i]) {
                size_t j = slot(c, old[i]->addr);
                while (c->table[j]) j = (j + 1) & (c->cap - 1);
                c->table[j] = old[i];
            }
        free(old);
    }
    size_t j = slot(c, b->addr);
    while (c->table[j]) j = (j + 1) & (c->cap - 1);
    c->table[j] = b;
    c->used++;
    return 0;
}

static inline blk_t *table_get(const cbcpu *c, uint32_t a)
{
    size_t j = slot(c, a);
    blk_t *b;
    while ((b = c->table[j]) != NULL) {
        if (b->addr == a)
            return b;
        j = (j + 1) & (c->cap - 1);
    }
    return NULL;
}

static void flush_blocks(cbcpu *c)
{
    while (c->all) {
        blk_t *n = c->all->chain;
        free(c->all);
        c->all = n;
    }
    if (c->table)
        memset(c->table, 0, c->cap * sizeof *c->table);
    c->used = 0;
    memset(c->ram_code, 0, (c->ram_size >> PAGE_BITS) + 1);
    memset(c->flash_code, 0, (c->flash_size >> PAGE_BITS) + 1);
    c->attn.is.flush = 0;
    c->flushes++;
}

#include "cbexec.inc"

/* ---- API (ctypes) ---------------------------------------------------------------------------- */

cbcpu *cbcpu_new(int arch, uint32_t flash_lo, uint32_t flash_size, uint32_t ram_lo, uint32_t ram_size)
{
    cbcpu *c = calloc(1, sizeof *c);
    if (c == NULL)
        return NULL;
    c->arch = arch;
    c->flash_lo = flash_lo;
    c->flash_size = flash_size;
    c->ram_lo = ram_lo;
    c->ram_size = ram_size;
    c->flash = calloc(flash_size ? flash_size : 1, 1);
    c->ram = calloc(ram_size ? ram_size : 1, 1);
    c->flash_code = calloc((flash_size >> PAGE_BITS) + 1, 1);
    c->ram_code = calloc((ram_size >> PAGE_BITS) + 1, 1);
    c->cap = 8192;
    c->table = calloc(c->cap, sizeof *c->table);
    if (!c->table || !c->flash || !c->ram || !c->flash_code || !c->ram_code || flash_size < 4 || ram_size < 4) {
        free(c->table); free(c->flash); free(c->ram); free(c->flash_code); free(c->ram_code); free(c);
        return NULL;
    }
    return c;
}

void cbcpu_set_callbacks(cbcpu *c, cbcpu_read_fn rd, cbcpu_write_fn wr, cbcpu_bkpt_fn bkpt)
{
    c->rd = rd;
    c->wr = wr;
    c->bkpt = bkpt;
}

/* The board's console UART served by the executor (fn NULL: by the read and write callbacks):
 * a read of status_addr gives status_value (always ready to send), a read of data_addr the last
 * value stored there (0 before any), and each store to data_addr is a byte for fn. The host sees
 * what it saw with a callback per byte, a line at a time: the bytes come before any other
 * callback and before cbcpu_run returns, and a newline is passed on at the store that makes it. */
void cbcpu_set_console(cbcpu *c, uint32_t status_addr, uint32_t status_value, uint32_t data_addr,
                       cbcpu_console_fn fn)
{
    if (c->con.fn != NULL)
        console_flush(c);
    c->con.fn = fn;
    c->con.status_addr = status_addr;
    c->con.status_value = status_value;
    c->con.data_addr = data_addr;
    c->con.last = 0;
    c->con.n = 0;
}

/* The accounting this executor drives (cbsim_new(NULL, ...)), and which of the model's kinds are
 * charged by operands on this core (cbsim DYN_*: 0 when the table has a fixed cost). */
void cbcpu_set_accounting(cbcpu *c, struct cbsim *s, int dyn_div, int dyn_lmul, int dyn_lmla)
{
    c->acct = s;
    c->attn.is.mode = 1;
    c->dyn_div = (uint16_t)dyn_div;
    c->dyn_lmul = (uint16_t)dyn_lmul;
    c->dyn_lmla = (uint16_t)dyn_lmla;
    flush_blocks(c);
}

/* Copies n bytes between the target's flash/RAM and buf; -1 when [addr, addr+n) is not all there. */
int cbcpu_mem_write(cbcpu *c, uint32_t addr, const uint8_t *buf, uint32_t n)
{
    if (n == 0) return 0;
    if (addr - c->flash_lo < c->flash_size && n <= c->flash_size - (addr - c->flash_lo))
        memcpy(c->flash + (addr - c->flash_lo), buf, n);
    else if (addr - c->ram_lo < c->ram_size && n <= c->ram_size - (addr - c->ram_lo))
        memcpy(c->ram + (addr - c->ram_lo), buf, n);
    else
        return -1;
    c->attn.is.flush = 1;
    return 0;
}

int cbcpu_mem_read(cbcpu *c, uint32_t addr, uint8_t *buf, uint32_t n)
{
    if (n == 0) return 0;
    if (addr - c->flash_lo < c->flash_size && n <= c->flash_size - (addr - c->flash_lo))
        memcpy(buf, c->flash + (addr - c->flash_lo), n);
    else if (addr - c->ram_lo < c->ram_size && n <= c->ram_size - (addr - c->ram_lo))
        memcpy(buf, c->ram + (addr - c->ram_lo), n);
    else
        return -1;
    return 0;
}

uint32_t cbcpu_reg(const cbcpu *c, int r)
{
    if (r >= 0 && r < 15) return c->r[r];
    if (r >= CBCPU_S0 && r < CBCPU_S0 + 32) return c->sx[r - CBCPU_S0];
    switch (r) {
    case 15: return c->pc;
    case CBCPU_XPSR: return cbcpu_xpsr(c);
    case CBCPU_MSP: return (c->control & 2) ? c->other_sp : c->r[13];
    case CBCPU_PSP: return (c->control & 2) ? c->r[13] : c->other_sp;
    case CBCPU_PRIMASK: return c->primask;
    case CBCPU_CONTROL: return c->control;
    case CBCPU_FPSCR: return c->fpscr;
    case CBCPU_VTOR: return c->vtor;
    case CBCPU_BASEPRI: return c->basepri;
    case CBCPU_FAULTMASK: return c->faultmask;
    case CBCPU_EVENT: return c->event;
    default: return 0;
    }
}

void cbcpu_set_reg(cbcpu *c, int r, uint32_t v)
{
    if (r >= 0 && r < 15) c->r[r] = v;
    else if (r >= CBCPU_S0 && r < CBCPU_S0 + 32) c->sx[r - CBCPU_S0] = v;
    else if (r == 15) c->pc = v & ~1u;
    else if (r == CBCPU_XPSR) { set_apsr(c, v); c->ge = (v >> 16) & 15; c->ipsr = v & 0x1FF; }
    else if (r == CBCPU_PRIMASK) c->primask = v & 1;
    else if (r == CBCPU_CONTROL) c->control = v & 7;
    else if (r == CBCPU_FPSCR) c->fpscr = v;
    else if (r == CBCPU_VTOR) c->vtor = v;
    else if (r == CBCPU_EVENT) c->event = v & 1;
    else if (r == CBCPU_MSP) { if (c->control & 2) c->other_sp = v; else c->r[13] = v; }
    else if (r == CBCPU_PSP) { if (c->control & 2) c->r[13] = v; else c->other_sp = v; }
}

/* Pends exception number exc (2-511): taken at the next block boundary when it may preempt. */
void cbcpu_pend(cbcpu *c, int exc)
{
    if (exc >= 2 && exc < 512) {
        c->pending[exc] = 1;
        c->attn.is.pending = 1;
    }
}

void cbcpu_stop(cbcpu *c) { c->attn.is.stop = 1; }

/* With `on` (`cryptobench sim run`), each block is entered through cbsim_enter (the accounting's
 * alarm and watched functions), and the run also stops before the next block after an instruction
 * that may unmask interrupts (CPSIE, MSR to PRIMASK/BASEPRI/FAULTMASK), after an exception
 * return, so the host holding a pending exception of its own (SysTick) can take it there, and after
 * a WFI (which ends its block), where the host may put the core to sleep until an interrupt. */
void cbcpu_set_wake(cbcpu *c, int on) { c->wake = c->enter = on ? 1 : 0; c->attn.is.mode = 1; }
/* With `on`, each block is entered through cbsim_enter, without the wake's stops: cryptobench's
 * own images with the per-function profile on (`cryptobench run --profile`). */
void cbcpu_set_enter(cbcpu *c, int on) { c->enter = (on || c->wake) ? 1 : 0; c->attn.is.mode = 1; }
/* With `on`, the run stops after a WFI and after a WFE that found no event, without the wake's
 * other stops: cryptobench's own images, whose run loop sleeps the core there or stops the run. */
void cbcpu_set_hints(cbcpu *c, int on) { c->hints = on ? 1 : 0; }
/* From a read callback: the value read at `addr` (`size` bytes) stays the same, with no effect of
 * reading it, while the accounting's count is below `until`, unless a store reaches the host
 * first (every held read is dropped then). The oldest of CBCPU_HOLDS gives way to a new one. */
void cbcpu_hold_read(cbcpu *c, uint32_t addr, uint32_t size, uint32_t value, uint64_t until)
{
    int i;
    for (i = 0; i < c->nholds; i++)
        if (c->hold[i].addr == addr && c->hold[i].size == size)
            break;
    if (i == c->nholds) {
        if (c->nholds < CBCPU_HOLDS)
            c->nholds++;
        else {
            memmove(&c->hold[0], &c->hold[1], sizeof c->hold[0] * (CBCPU_HOLDS - 1));
            i = CBCPU_HOLDS - 1;
        }
    }
    c->hold[i].addr = addr;
    c->hold[i].size = size;
    c->hold[i].value = value;
    c->hold[i].until = until;
}
uint64_t cbcpu_held_reads(const cbcpu *c) { return c->held; }
/* From a read callback: the read had an effect on the host's state (a FIFO popped, a flag
 * cleared), which may change what any held read would give: every held read is dropped. */
void cbcpu_drop_holds(cbcpu *c) { c->nholds = 0; }
/* The hint that stopped the last run: 3 after a WFI, 2 after a WFE without an event, else 0. */
int cbcpu_slept(const cbcpu *c) { return c->slept; }
const char *cbcpu_problem(const cbcpu *c) { return c->status == CBCPU_PROBLEM ? c->problem : NULL; }
uint64_t cbcpu_insns(const cbcpu *c) { return c->insns; }
/* the instruction under way (in a memory callback: the one making the access) */
uint32_t cbcpu_insn_addr(const cbcpu *c) { return c->r[15] - 4; }
uint64_t cbcpu_blocks(const cbcpu *c) { return c->blocks; }
uint64_t cbcpu_decoded(const cbcpu *c) { return c->decoded; }
uint64_t cbcpu_flushes(const cbcpu *c) { return c->flushes; }
uint32_t cbcpu_last_insns(const cbcpu *c) { return c->last_insns; }
/* the last block's instructions as Unicorn's instruction count (emu_start count=) steps them: IT
 * is not one there (QEMU translates it into the instructions it makes conditional) */
uint32_t cbcpu_last_steps(const cbcpu *c) { return c->last_insns - c->last_its; }
uint32_t cbcpu_last_size(const cbcpu *c) { return c->last_size; }

void cbcpu_free(cbcpu *c)
{
    if (c == NULL)
        return;
    c->cap = 0;
    flush_blocks(c);
    free(c->table);
    free(c->flash);
    free(c->ram);
    free(c->flash_code);
    free(c->ram_code);
    free(c);
}
