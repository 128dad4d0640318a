/* cc26x2_pka.h - cryptobench's own register-level driver for the CC13x2/CC26x2 PKA (the EIP-28
 * public-key engine), written from TI SWCU185G's "PKA Engine" and "PKA Registers" sections. See
 * cc26x2_pka.c. Completion is polled (FUNCTION.RUN), or by PKA_IRQ in WFI with
 * CC26X2_COMPLETION_IRQ. P-256 (ECC-MUL, ECC-ADD and the PKCP operations) and X25519 (the
 * sequencer's ECmontMUL on Curve25519): every number is 8 little-endian 32-bit words (word 0 least
 * significant). */
#ifndef CB_CC26X2_PKA_H
#define CB_CC26X2_PKA_H

#include <stdint.h>

#define CC26X2_P256_WORDS 8

/* what ECC-MUL / ECC-ADD / ModInv leave in PKA_SHIFT (SWCU185G table "PKA_SHIFT result values") */
#define CC26X2_PKA_OK 0
#define CC26X2_PKA_INFINITY 7      /* result is the point at infinity (ModInv: no inverse exists) */
#define CC26X2_PKA_ERROR 31

/* the NIST P-256 domain parameters (FIPS 186-4 D.1.2.3), little-endian words */
extern const uint32_t cc26x2_p256_p[8], cc26x2_p256_a[8], cc26x2_p256_b[8], cc26x2_p256_n[8];
extern const uint32_t cc26x2_p256_gx[8], cc26x2_p256_gy[8];

/* 32 big-endian bytes <-> 8 little-endian words */
void cc26x2_pka_from_be(uint32_t *w, const uint8_t *be);
void cc26x2_pka_to_be(uint8_t *be, const uint32_t *w);

/* (rx, ry) = k x (x, y) on P-256 (ECC-MUL). Returns a PKA_SHIFT code (CC26X2_PKA_*). */
int cc26x2_pka_ecc_mul(const uint32_t *k, const uint32_t *x, const uint32_t *y, uint32_t *rx, uint32_t *ry);
/* (rx, ry) = (x1, y1) + (x2, y2) on P-256 (ECC-ADD; doubles when the points are equal). */
int cc26x2_pka_ecc_add(const uint32_t *x1, const uint32_t *y1, const uint32_t *x2, const uint32_t *y2,
                       uint32_t *rx, uint32_t *ry);
/* r = x(k x P) for x(P) = u on Curve25519 (ECmontMUL, as given: no clamping). Returns a PKA_SHIFT
 * code (CC26X2_PKA_INFINITY: the all-zero result). */
int cc26x2_pka_ecmont_mul(const uint32_t *k, const uint32_t *u, uint32_t *r);
/* RFC 7748 X25519(k, u) on 32-byte little-endian strings: k clamped (decodeScalar25519) and u's top
 * bit masked (decodeUCoordinate) here in software, then ECmontMUL. Returns a PKA_SHIFT code. */
int cc26x2_pka_x25519(uint8_t *out, const uint8_t *k, const uint8_t *u);

/* -1, 0 or 1 as a <, =, > b (Compare) */
int cc26x2_pka_cmp(const uint32_t *a, const uint32_t *b);
/* r = a mod m (Modulo) */
void cc26x2_pka_mod(const uint32_t *a, const uint32_t *m, uint32_t *r);
/* r = a * b mod m (Multiply, then Modulo) */
void cc26x2_pka_mul_mod(const uint32_t *a, const uint32_t *b, const uint32_t *m, uint32_t *r);
/* r = (a + b) mod m (Add, then Modulo) */
void cc26x2_pka_add_mod(const uint32_t *a, const uint32_t *b, const uint32_t *m, uint32_t *r);
/* r = a^-1 mod m (ModInv). Returns a PKA_SHIFT code. */
int cc26x2_pka_inv_mod(const uint32_t *a, const uint32_t *m, uint32_t *r);
/* 1 when (x, y) is a point of P-256 (x, y < p and y^2 = x^3 + ax + b mod p), else 0 */
int cc26x2_pka_p256_on_curve(const uint32_t *x, const uint32_t *y);

#endif
