/* cc26x2_pka.c - cryptobench's own register-level driver for the CC13x2/CC26x2 PKA (EIP-28), written
 * from TI SWCU185G's "PKA Engine" and "PKA Registers" sections (no vendor code).
 *
 * The TRM's sequence for every operation: the operands go into the 2 KiB PKA RAM (0x4002 6000) as
 * little-endian 32-bit words at 8-byte aligned places, APTR..DPTR point at them (in words), ALENGTH
 * and BLENGTH give their lengths, and a write of FUNCTION with RUN set and one operation starts the
 * engine; RUN reads 0 when it is done. The PKCP operations leave their result in vector C (Divide's
 * quotient in D) and set MSW / DIVMSW / COMPARE; the sequencer's ECC-MUL, ECC-ADD and ModInv leave
 * theirs in vector D and a result code in SHIFT. For the ECC operations a point's y, and the curve's
 * a and b, follow their predecessor at the next even-word address plus two words (the TRM's
 * "followed by"), so with 8-word numbers every 10 words. ECmontMUL (sequencer operation 2, TI's
 * hw_pka.h SEQUENCER_OPERATIONS field) takes the scalar in A, the prime and then the Montgomery
 * coefficient A (486662 for Curve25519) in B, u in C, and leaves the result's u in D; the TRM does
 * not say that the engine clamps the scalar, so cc26x2_pka_x25519 does RFC 7748's decoding itself.
 * Clocks and power domains (PRCM) are the board start-up's.
 *
 * Completion: polled (FUNCTION.RUN read until 0), or with CC26X2_COMPLETION_IRQ by interrupt:
 * PKA_IRQ (NVIC interrupt 3, SWCU185G "Interrupts and Events") is the complement of RUN, a level
 * that stays high while the engine is idle, so it cannot be cleared at its source. The driver
 * enables it in the NVIC once the operation is started, waits in WFI, and the handler
 * (cc26x2_pka_irq, called by cc26x2_irq.c's fw_external_irq) disables it again (NVIC_ICER) so that
 * the idle engine's line does not re-enter. As in the CRYPTO driver, interrupts are masked around
 * the test of RUN so that the end of an operation between the test and the WFI is not lost (WFI
 * wakes on a pending interrupt with PRIMASK set, ARMv7-M ARM B1.5.19; CPSIE takes it). */
#include "cc26x2_pka.h"

#define PKA 0x40025000u                             /* SWCU185G memory map */
#define PKA_RAM 0x40026000u
#define R(o) (*(volatile uint32_t *)(PKA + (o)))
#define RAMW(w) (*(volatile uint32_t *)(PKA_RAM + 4u * (w)))
#define APTR 0x00u
#define BPTR 0x04u
#define CPTR 0x08u
#define DPTR 0x0Cu
#define ALENGTH 0x10u
#define BLENGTH 0x14u
#define SHIFT 0x18u
#define FUNCTION 0x1Cu
#define COMPARE 0x20u
#define F_MULTIPLY (1u << 0)
#define F_ADD (1u << 4)
#define F_MODULO (1u << 9)
#define F_COMPARE (1u << 10)
#define F_RUN (1u << 15)
#define SEQ(op) ((uint32_t)(op) << 12)
#define SEQ_ECMONT_MUL 2u
#define SEQ_ECC_ADD 3u
#define SEQ_ECC_MUL 5u
#define SEQ_MODINV 7u
#define CMP_EQ 1u
#define CMP_LT 2u
#define N CC26X2_P256_WORDS
#define STRIDE (N + N % 2 + 2)                      /* 10 words between ECC coordinates / parameters */

const uint32_t cc26x2_p256_p[8] = {0xffffffffu, 0xffffffffu, 0xffffffffu, 0x00000000u,
                                   0x00000000u, 0x00000000u, 0x00000001u, 0xffffffffu};
const uint32_t cc26x2_p256_a[8] = {0xfffffffcu, 0xffffffffu, 0xffffffffu, 0x00000000u,
                                   0x00000000u, 0x00000000u, 0x00000001u, 0xffffffffu};
const uint32_t cc26x2_p256_b[8] = {0x27d2604bu, 0x3bce3c3eu, 0xcc53b0f6u, 0x651d06b0u,
                                   0x769886bcu, 0xb3ebbd55u, 0xaa3a93e7u, 0x5ac635d8u};
const uint32_t cc26x2_p256_n[8] = {0xfc632551u, 0xf3b9cac2u, 0xa7179e84u, 0xbce6faadu,
                                   0xffffffffu, 0xffffffffu, 0x00000000u, 0xffffffffu};
const uint32_t cc26x2_p256_gx[8] = {0xd898c296u, 0xf4a13945u, 0x2deb33a0u, 0x77037d81u,
                                    0x63a440f2u, 0xf8bce6e5u, 0xe12c4247u, 0x6b17d1f2u};
const uint32_t cc26x2_p256_gy[8] = {0x37bf51f5u, 0xcbb64068u, 0x6b315eceu, 0x2bce3357u,
                                    0x7c0f9e16u, 0x8ee7eb4au, 0xfe1a7f9bu, 0x4fe342e2u};

/* Curve25519 (RFC 7748 section 4.1): p = 2^255 - 19 and the Montgomery coefficient A = 486662 */
static const uint32_t c25519_p[8] = {0xffffffedu, 0xffffffffu, 0xffffffffu, 0xffffffffu,
                                     0xffffffffu, 0xffffffffu, 0xffffffffu, 0x7fffffffu};
static const uint32_t c25519_a[8] = {486662u, 0, 0, 0, 0, 0, 0, 0};

void cc26x2_pka_from_be(uint32_t *w, const uint8_t *be)
{
    for (unsigned i = 0; i < N; i++) {
        const uint8_t *b = be + 4u * (N - 1u - i);
        w[i] = (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
    }
}

void cc26x2_pka_to_be(uint8_t *be, const uint32_t *w)
{
    for (unsigned i = 0; i < N; i++) {
        uint8_t *b = be + 4u * (N - 1u - i);
        b[0] = (uint8_t)(w[i] >> 24);
        b[1] = (uint8_t)(w[i] >> 16);
        b[2] = (uint8_t)(w[i] >> 8);
        b[3] = (uint8_t)w[i];
    }
}

static void put(uint32_t at, const uint32_t *v, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        RAMW(at + i) = v[i];
}

static void get(uint32_t at, uint32_t *v, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        v[i] = RAMW(at + i);
}

/* FUNCTION with RUN starts the operation; the engine clears RUN when it is done */
#ifdef CC26X2_COMPLETION_IRQ
#include "cc26x2_irq.h"

/* PKA_IRQ, called by fw_external_irq (cc26x2_irq.c): the level stays high while the engine is
 * idle, so the handler masks the line in the NVIC; run() enables it for the next operation */
void cc26x2_pka_irq(void)
{
    CC26X2_NVIC_DISABLE(CC26X2_PKA_IRQ);
}

static void run(uint32_t function)
{
    R(FUNCTION) = F_RUN | function;
    __asm__ volatile("cpsid i" ::: "memory");
    CC26X2_NVIC_ENABLE(CC26X2_PKA_IRQ);
    while (R(FUNCTION) & F_RUN) {
        cc26x2_irq_sleep();
    }
    __asm__ volatile("cpsie i" ::: "memory");       /* a line that rose before the test is taken here */
}
#else
static void run(uint32_t function)
{
    R(FUNCTION) = F_RUN | function;
    while (R(FUNCTION) & F_RUN) {
    }
}
#endif

static void vectors(uint32_t a, uint32_t alen, uint32_t b, uint32_t blen, uint32_t c, uint32_t d)
{
    R(APTR) = a;
    R(ALENGTH) = alen;
    R(BPTR) = b;
    R(BLENGTH) = blen;
    R(CPTR) = c;
    R(DPTR) = d;
}

int cc26x2_pka_ecc_mul(const uint32_t *k, const uint32_t *x, const uint32_t *y, uint32_t *rx, uint32_t *ry)
{
    /* A: k at 0; B: p, a, b from 10; C: x, y from 40; D: the result from 60 */
    put(0, k, N);
    put(STRIDE, cc26x2_p256_p, N);
    put(2 * STRIDE, cc26x2_p256_a, N);
    put(3 * STRIDE, cc26x2_p256_b, N);
    put(4 * STRIDE, x, N);
    put(5 * STRIDE, y, N);
    vectors(0, N, STRIDE, N, 4 * STRIDE, 6 * STRIDE);
    run(SEQ(SEQ_ECC_MUL));
    int status = (int)R(SHIFT);
    if (status == CC26X2_PKA_OK) {
        get(6 * STRIDE, rx, N);
        get(7 * STRIDE, ry, N);
    }
    return status;
}

int cc26x2_pka_ecmont_mul(const uint32_t *k, const uint32_t *u, uint32_t *r)
{
    /* A: k at 0; B: p, A from 10; C: u at 30; D: the result at 40 */
    put(0, k, N);
    put(STRIDE, c25519_p, N);
    put(2 * STRIDE, c25519_a, N);
    put(3 * STRIDE, u, N);
    vectors(0, N, STRIDE, N, 3 * STRIDE, 4 * STRIDE);
    run(SEQ(SEQ_ECMONT_MUL));
    int status = (int)R(SHIFT);
    if (status == CC26X2_PKA_OK)
        get(4 * STRIDE, r, N);
    return status;
}

/* little-endian bytes <-> little-endian words (RFC 7748 encodes its numbers little-endian) */
static void from_le(uint32_t *w, const uint8_t *le)
{
    for (unsigned i = 0; i < N; i++) {
        const uint8_t *b = le + 4u * i;
        w[i] = (uint32_t)b[3] << 24 | (uint32_t)b[2] << 16 | (uint32_t)b[1] << 8 | b[0];
    }
}

int cc26x2_pka_x25519(uint8_t *out, const uint8_t *k, const uint8_t *u)
{
    uint32_t kw[N], uw[N], rw[N];
    from_le(kw, k);
    from_le(uw, u);
    kw[0] &= ~7u;                                   /* decodeScalar25519: clear bits 0-2 and 255, set 254 */
    kw[N - 1] = (kw[N - 1] & 0x7fffffffu) | 0x40000000u;
    uw[N - 1] &= 0x7fffffffu;                       /* decodeUCoordinate: mask bit 255 */
    int status = cc26x2_pka_ecmont_mul(kw, uw, rw);
    if (status == CC26X2_PKA_OK) {
        for (unsigned i = 0; i < 4u * N; i++)
            out[i] = (uint8_t)(rw[i / 4u] >> (8u * (i % 4u)));
    }
    return status;
}

int cc26x2_pka_ecc_add(const uint32_t *x1, const uint32_t *y1, const uint32_t *x2, const uint32_t *y2,
                       uint32_t *rx, uint32_t *ry)
{
    /* A: pntA from 0; B: p, a from 20; C: pntC from 40; D: the result from 60 (ALENGTH unused) */
    put(0, x1, N);
    put(STRIDE, y1, N);
    put(2 * STRIDE, cc26x2_p256_p, N);
    put(3 * STRIDE, cc26x2_p256_a, N);
    put(4 * STRIDE, x2, N);
    put(5 * STRIDE, y2, N);
    vectors(0, N, 2 * STRIDE, N, 4 * STRIDE, 6 * STRIDE);
    run(SEQ(SEQ_ECC_ADD));
    int status = (int)R(SHIFT);
    if (status == CC26X2_PKA_OK) {
        get(6 * STRIDE, rx, N);
        get(7 * STRIDE, ry, N);
    }
    return status;
}

int cc26x2_pka_cmp(const uint32_t *a, const uint32_t *b)
{
    put(0, a, N);
    put(N, b, N);
    vectors(0, N, N, N, 2 * N, 2 * N);
    run(F_COMPARE);
    uint32_t c = R(COMPARE);
    return c == CMP_EQ ? 0 : c == CMP_LT ? -1 : 1;
}

/* Modulo of the alen-word (at most 16) number already at word 16 by m (at word 32): the remainder
 * from word 42 (the result vector takes BLENGTH + 1 words) */
static void reduce(uint32_t alen, const uint32_t *m, uint32_t *r)
{
    put(32, m, N);
    vectors(16, alen, 32, N, 42, 42);
    run(F_MODULO);
    get(42, r, N);
}

void cc26x2_pka_mod(const uint32_t *a, const uint32_t *m, uint32_t *r)
{
    put(16, a, N);
    reduce(N, m, r);
}

void cc26x2_pka_mul_mod(const uint32_t *a, const uint32_t *b, const uint32_t *m, uint32_t *r)
{
    put(0, a, N);
    put(N, b, N);
    vectors(0, N, N, N, 16, 16);
    run(F_MULTIPLY);                                /* the 16-word product from word 16 */
    reduce(2 * N, m, r);
}

void cc26x2_pka_add_mod(const uint32_t *a, const uint32_t *b, const uint32_t *m, uint32_t *r)
{
    put(0, a, N);
    put(N, b, N);
    vectors(0, N, N, N, 16, 16);
    run(F_ADD);                                     /* the 9-word sum from word 16 */
    reduce(N + 1, m, r);
}

int cc26x2_pka_inv_mod(const uint32_t *a, const uint32_t *m, uint32_t *r)
{
    put(0, a, N);
    put(N, m, N);
    vectors(0, N, N, N, 2 * N, 2 * N);
    run(SEQ(SEQ_MODINV));
    int status = (int)R(SHIFT);
    if (status == CC26X2_PKA_OK)
        get(2 * N, r, N);
    return status;
}

int cc26x2_pka_p256_on_curve(const uint32_t *x, const uint32_t *y)
{
    uint32_t lhs[N], rhs[N];
    if (cc26x2_pka_cmp(x, cc26x2_p256_p) >= 0 || cc26x2_pka_cmp(y, cc26x2_p256_p) >= 0)
        return 0;
    cc26x2_pka_mul_mod(y, y, cc26x2_p256_p, lhs);              /* y^2 */
    cc26x2_pka_mul_mod(x, x, cc26x2_p256_p, rhs);              /* ((x^2 + a) x + b) mod p */
    cc26x2_pka_add_mod(rhs, cc26x2_p256_a, cc26x2_p256_p, rhs);
    cc26x2_pka_mul_mod(rhs, x, cc26x2_p256_p, rhs);
    cc26x2_pka_add_mod(rhs, cc26x2_p256_b, cc26x2_p256_p, rhs);
    return cc26x2_pka_cmp(lhs, rhs) == 0;
}
