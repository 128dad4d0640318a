/* cc26x2_crypto.c - glue for cryptobench's own register-level CC13x2/CC26x2 CRYPTO driver
 * (harness/firmware/drivers/cc26x2, written from TI SWCU185G): the catalog ops the AES and hash
 * engine serves. On the simulator (`--device cc2652`) the registers are the timing-annotated
 * model's (docs/accelerators.md); on a CC26x2 board they are the part's.
 *
 *   aes-ecb/cbc/ctr-encrypt   key store + AES engine through its DMA, RESULT_AVAIL polled (or by
 *                             interrupt in the cc26x2-crypto-irq build, as is the PKA's RUN)
 *   aes-gcm-encrypt           the same with the AAD first; the tag from AESTAGOUT (12-byte nonce)
 *   aes-ccm-encrypt           the same in CCM (7-13 byte nonce, even 4-16 byte tag; A0 in AESIV)
 *   sha224 / sha256           the hash engine through its DMA, padded by the engine
 *   ecdh-keygen               Q = d x G on the PKA (ECC-MUL), P-256: out = 04 || X || Y;
 *                             X25519: X25519(d, 9) on the PKA (ECmontMUL), RFC 7748 strings
 *   ecdh-shared-secret        z = x(d x peer) on the PKA, after checking the peer point is on P-256;
 *                             X25519: X25519(d, peer) (ECmontMUL; the all-zero result refused)
 *   ecdsa-sign                FIPS 186-4 6.4 on the PKA (ECC-MUL, ModInv, Multiply, Add, Modulo),
 *                             the nonce k from fw_random; out = r || s
 *   ecdsa-verify              FIPS 186-4 6.4.2 on the PKA (ModInv, Multiply/Modulo, two ECC-MULs,
 *                             ECC-ADD, Compare); out = 01 / 00
 *   random                    `bytes` bytes from the TRNG, 8 a number (OUT0/OUT1 once RDY)
 *
 * Every AES/hash operation loads its key into the key store (rekey=1 and rekey=0 alike: the engine
 * keeps no schedule a glue could hold outside the timed region). No heap. */

#include <string.h>

#include "cc26x2_crypto.h"
#include "cc26x2_pka.h"
#include "cc26x2_trng.h"
#include "fw.h"

#ifdef CC26X2_COMPLETION_IRQ          /* the cc26x2-crypto-irq recipe: the driver waits in WFI */
const char fw_lib_name[] = "cc26x2-crypto-irq";
const char fw_lib_version[] = "cryptobench CC26x2 register driver, SWCU185G, interrupt completion "
                              "(served by peripheral: TI CC26x2 CRYPTO for aes-*, sha*; "
                              "peripheral: TI CC26x2 PKA for ecdh-*, ecdsa-*; "
                              "peripheral: TI CC26x2 TRNG for random)";
#else
const char fw_lib_name[] = "cc26x2-crypto";
const char fw_lib_version[] = "cryptobench CC26x2 register driver, SWCU185G, polling "
                              "(served by peripheral: TI CC26x2 CRYPTO for aes-*, sha*; "
                              "peripheral: TI CC26x2 PKA for ecdh-*, ecdsa-*; "
                              "peripheral: TI CC26x2 TRNG for random)";
#endif

#if defined(FW_OP_AES_ECB_ENCRYPT) || defined(FW_OP_AES_CBC_ENCRYPT) || defined(FW_OP_AES_CTR_ENCRYPT) \
    || defined(FW_OP_AES_GCM_ENCRYPT) || defined(FW_OP_AES_CCM_ENCRYPT)
static int
aes_supports(const fw_params *p, const char **why)
{
	if (p->rekey == 0) {
		*why = "the CC26x2 engine takes its key from the key store in every operation (no schedule to keep)";
		return FW_UNSUPPORTED;
	}
	if (p->key_bits != 128 && p->key_bits != 192 && p->key_bits != 256) {
		*why = "key_bits must be 128, 192 or 256";
		return FW_UNSUPPORTED;
	}
	return FW_OK;
}

static int
fits(const fw_io *io, size_t n)
{
	return io->out != NULL && io->out_cap >= n;
}

static int
aes_mode(fw_io *io, int mode)
{
	if (!fits(io, io->msg_len) || (mode != CC26X2_ECB && io->iv_len != 16))
		return FW_ERR;
	if (cc26x2_aes(mode, 1, io->key, io->key_len, io->iv, io->msg, io->out, io->msg_len))
		return FW_ERR;
	io->out_len = io->msg_len;
	return FW_OK;
}
#endif

#ifdef FW_OP_AES_ECB_ENCRYPT
static int
ecb_run(const fw_params *p, fw_io *io)
{
	(void)p;
	return aes_mode(io, CC26X2_ECB);
}
#define FW_GLUE_AES_ECB_ENCRYPT aes_supports, ecb_run
#endif

#ifdef FW_OP_AES_CBC_ENCRYPT
static int
cbc_run(const fw_params *p, fw_io *io)
{
	(void)p;
	return aes_mode(io, CC26X2_CBC);
}
#define FW_GLUE_AES_CBC_ENCRYPT aes_supports, cbc_run
#endif

#ifdef FW_OP_AES_CTR_ENCRYPT
static int
ctr_run(const fw_params *p, fw_io *io)
{
	(void)p;
	return aes_mode(io, CC26X2_CTR);
}
#define FW_GLUE_AES_CTR_ENCRYPT aes_supports, ctr_run
#endif

#if defined(FW_OP_AES_GCM_ENCRYPT) || defined(FW_OP_AES_CCM_ENCRYPT)
static int
gcm_supports(const fw_params *p, const char **why)
{
	if (aes_supports(p, why) != FW_OK)
		return FW_UNSUPPORTED;
	if (p->bytes == 0) {
		*why = "an empty payload starts no DMA transfer on the engine's DMA path this driver uses";
		return FW_UNSUPPORTED;
	}
	return FW_OK;
}

#endif

#ifdef FW_OP_AES_GCM_ENCRYPT
/* GCM's IV is the catalog's 12-byte nonce (J0 = nonce || 1); another length fails the call */
static int
gcm_run(const fw_params *p, fw_io *io)
{
	(void)p;
	if (io->iv_len != 12 || !fits(io, io->msg_len + 16))
		return FW_ERR;
	if (cc26x2_aes_gcm(io->key, io->key_len, io->iv, io->aad, io->aad_len, io->msg, io->out, io->msg_len,
	                   io->out + io->msg_len))
		return FW_ERR;
	io->out_len = io->msg_len + 16;
	return FW_OK;
}
#define FW_GLUE_AES_GCM_ENCRYPT gcm_supports, gcm_run
#endif

#ifdef FW_OP_AES_CCM_ENCRYPT
static int
ccm_supports(const fw_params *p, const char **why)
{
	if (gcm_supports(p, why) != FW_OK)
		return FW_UNSUPPORTED;
	if (p->nonce_bytes < 7 || p->nonce_bytes > 13 || p->tag_bytes < 4 || p->tag_bytes > 16 || p->tag_bytes % 2) {
		*why = "CCM takes a 7-13 byte nonce and an even 4-16 byte tag (SP 800-38C)";
		return FW_UNSUPPORTED;
	}
	return FW_OK;
}

static int
ccm_run(const fw_params *p, fw_io *io)
{
	size_t t = (size_t)p->tag_bytes;
	if (!fits(io, io->msg_len + t))
		return FW_ERR;
	if (cc26x2_aes_ccm(io->key, io->key_len, io->iv, io->iv_len, io->aad, io->aad_len, io->msg, io->out, io->msg_len,
	                   io->out + io->msg_len, t))
		return FW_ERR;
	io->out_len = io->msg_len + t;
	return FW_OK;
}
#define FW_GLUE_AES_CCM_ENCRYPT ccm_supports, ccm_run
#endif

#if defined(FW_OP_SHA224) || defined(FW_OP_SHA256)
static int
sha_supports(const fw_params *p, const char **why)
{
	if (p->bytes == 0) {
		*why = "an empty message starts no DMA transfer on the engine's DMA path this driver uses";
		return FW_UNSUPPORTED;
	}
	return FW_OK;
}
#endif

#ifdef FW_OP_SHA224
static int
sha224_run(const fw_params *p, fw_io *io)
{
	(void)p;
	if (io->out == NULL || io->out_cap < 28 || io->msg_len == 0)
		return FW_ERR;
	cc26x2_sha2(1, io->msg, io->msg_len, io->out);
	io->out_len = 28;
	return FW_OK;
}
#define FW_GLUE_SHA224 sha_supports, sha224_run
#endif

#ifdef FW_OP_SHA256
static int
sha256_run(const fw_params *p, fw_io *io)
{
	(void)p;
	if (io->out == NULL || io->out_cap < 32 || io->msg_len == 0)
		return FW_ERR;
	cc26x2_sha2(0, io->msg, io->msg_len, io->out);
	io->out_len = 32;
	return FW_OK;
}
#define FW_GLUE_SHA256 sha_supports, sha256_run
#endif

/* ---- P-256 on the PKA (big-endian d, hash, r, s; points 04 || X || Y); X25519 (RFC 7748 strings) */

#if defined(FW_OP_ECDH_KEYGEN) || defined(FW_OP_ECDH_SHARED_SECRET) || defined(FW_OP_ECDSA_SIGN) \
    || defined(FW_OP_ECDSA_VERIFY)
#define W CC26X2_P256_WORDS

static int
p256_supports(const fw_params *p, const char **why)
{
	if (strncmp(p->curve, "p256", sizeof p->curve) != 0) {
		*why = "this driver runs ECDSA on P-256 on the PKA only (longer curves are not driven)";
		return FW_UNSUPPORTED;
	}
	return FW_OK;
}

static int
is_zero(const uint32_t *v)
{
	uint32_t any = 0;
	for (int i = 0; i < W; i++)
		any |= v[i];
	return any == 0;
}

/* 1 <= v < n */
static int
in_order_range(const uint32_t *v)
{
	return !is_zero(v) && cc26x2_pka_cmp(v, cc26x2_p256_n) < 0;
}

/* an uncompressed point 04 || X || Y that lies on P-256 */
static int
read_point(const uint8_t *in, size_t len, uint32_t *x, uint32_t *y)
{
	if (in == NULL || len != 1 + 8 * W || in[0] != 4)
		return 0;
	cc26x2_pka_from_be(x, in + 1);
	cc26x2_pka_from_be(y, in + 1 + 4 * W);
	return cc26x2_pka_p256_on_curve(x, y);
}

static void
write_point(uint8_t *out, const uint32_t *x, const uint32_t *y)
{
	out[0] = 4;
	cc26x2_pka_to_be(out + 1, x);
	cc26x2_pka_to_be(out + 1 + 4 * W, y);
}
#endif

#if defined(FW_OP_ECDSA_SIGN) || defined(FW_OP_ECDSA_VERIFY)
/* e: the hash's leftmost 256 bits as a number (FIPS 186-4 6.4: a shorter hash is taken as it is) */
static void
hash_number(const uint8_t *h, size_t len, uint32_t *e)
{
	uint8_t be[4 * W];
	size_t n = len < sizeof be ? len : sizeof be;
	memset(be, 0, sizeof be);
	memcpy(be + sizeof be - n, h, n);
	cc26x2_pka_from_be(e, be);
}
#endif

#if defined(FW_OP_ECDH_KEYGEN) || defined(FW_OP_ECDH_SHARED_SECRET)
static int
is_x25519(const fw_params *p)
{
	return strncmp(p->curve, "x25519", sizeof p->curve) == 0;
}

static int
ecdh_supports(const fw_params *p, const char **why)
{
	if (is_x25519(p))
		return FW_OK;
	if (p256_supports(p, why) != FW_OK) {
		*why = "this driver runs ECDH on P-256 (ECC-MUL) and X25519 (ECmontMUL) on the PKA only";
		return FW_UNSUPPORTED;
	}
	return FW_OK;
}

/* X25519(d, u) into out (32 bytes, RFC 7748 little-endian); the all-zero result (a low-order u) is
 * refused, as RFC 7748 section 6.1 allows and the Mbed TLS glue's library does */
static int
x25519_run(fw_io *io, const uint8_t *u)
{
	if (io->key_len != 4 * W || io->out == NULL || io->out_cap < 4 * W)
		return FW_ERR;
	if (cc26x2_pka_x25519(io->out, io->key, u) != CC26X2_PKA_OK)
		return FW_ERR;
	io->out_len = 4 * W;
	return FW_OK;
}
#endif

#ifdef FW_OP_ECDH_KEYGEN
static const uint8_t x25519_base[4 * W] = {9};       /* RFC 7748 section 4.1: u = 9 */

static int
ecdh_keygen_run(const fw_params *p, fw_io *io)
{
	uint32_t d[W], qx[W], qy[W];
	if (is_x25519(p))
		return x25519_run(io, x25519_base);
	if (io->key_len != 4 * W || io->out == NULL || io->out_cap < 1 + 8 * W)
		return FW_ERR;
	cc26x2_pka_from_be(d, io->key);
	if (!in_order_range(d) || cc26x2_pka_ecc_mul(d, cc26x2_p256_gx, cc26x2_p256_gy, qx, qy) != CC26X2_PKA_OK)
		return FW_ERR;
	write_point(io->out, qx, qy);
	io->out_len = 1 + 8 * W;
	return FW_OK;
}
#define FW_GLUE_ECDH_KEYGEN ecdh_supports, ecdh_keygen_run
#endif

#ifdef FW_OP_ECDH_SHARED_SECRET
static int
ecdh_shared_run(const fw_params *p, fw_io *io)
{
	uint32_t d[W], px[W], py[W], zx[W], zy[W];
	if (is_x25519(p))
		return io->peer != NULL && io->peer_len == 4 * W ? x25519_run(io, io->peer) : FW_ERR;
	if (io->key_len != 4 * W || io->out == NULL || io->out_cap < 4 * W)
		return FW_ERR;
	cc26x2_pka_from_be(d, io->key);
	if (!in_order_range(d) || !read_point(io->peer, io->peer_len, px, py))
		return FW_ERR;
	if (cc26x2_pka_ecc_mul(d, px, py, zx, zy) != CC26X2_PKA_OK)
		return FW_ERR;
	cc26x2_pka_to_be(io->out, zx);
	io->out_len = 4 * W;
	return FW_OK;
}
#define FW_GLUE_ECDH_SHARED_SECRET ecdh_supports, ecdh_shared_run
#endif

#ifdef FW_OP_ECDSA_SIGN
/* k from fw_random until 1 <= k < n and neither r nor s is 0 */
static int
ecdsa_sign_run(const fw_params *p, fw_io *io)
{
	uint32_t d[W], e[W], k[W], kinv[W], rx[W], ry[W], r[W], s[W];
	uint8_t kb[4 * W];
	(void)p;
	if (io->key_len != 4 * W || io->out == NULL || io->out_cap < 8 * W)
		return FW_ERR;
	cc26x2_pka_from_be(d, io->key);
	if (!in_order_range(d))
		return FW_ERR;
	hash_number(io->msg, io->msg_len, e);
	cc26x2_pka_mod(e, cc26x2_p256_n, e);
	for (int tries = 0; tries < 16; tries++) {
		if (fw_random(NULL, kb, sizeof kb) != 0)
			return FW_ERR;
		cc26x2_pka_from_be(k, kb);
		if (!in_order_range(k) || cc26x2_pka_ecc_mul(k, cc26x2_p256_gx, cc26x2_p256_gy, rx, ry) != CC26X2_PKA_OK)
			continue;
		cc26x2_pka_mod(rx, cc26x2_p256_n, r);                  /* r = x1 mod n */
		if (is_zero(r) || cc26x2_pka_inv_mod(k, cc26x2_p256_n, kinv) != CC26X2_PKA_OK)
			continue;
		cc26x2_pka_mul_mod(r, d, cc26x2_p256_n, s);            /* s = k^-1 (e + r d) mod n */
		cc26x2_pka_add_mod(s, e, cc26x2_p256_n, s);
		cc26x2_pka_mul_mod(s, kinv, cc26x2_p256_n, s);
		if (is_zero(s))
			continue;
		cc26x2_pka_to_be(io->out, r);
		cc26x2_pka_to_be(io->out + 4 * W, s);
		io->out_len = 8 * W;
		return FW_OK;
	}
	return FW_ERR;
}
#define FW_GLUE_ECDSA_SIGN p256_supports, ecdsa_sign_run
#endif

#ifdef FW_OP_ECDSA_VERIFY
/* out = 01 (valid) or 00: r or s out of [1, n-1], a key that is not a point of P-256, or a
 * signature that does not verify are all a result 00 (as the Mbed TLS glue reports them) */
static int
ecdsa_verify_ok(fw_io *io)
{
	uint32_t qx[W], qy[W], r[W], s[W], e[W], w[W], u1[W], u2[W], x1[W], y1[W], x2[W], y2[W], v[W];
	int st1, st2;
	if (!read_point(io->peer, io->peer_len, qx, qy))
		return 0;
	cc26x2_pka_from_be(r, io->sig);
	cc26x2_pka_from_be(s, io->sig + 4 * W);
	if (!in_order_range(r) || !in_order_range(s))
		return 0;
	hash_number(io->msg, io->msg_len, e);
	if (cc26x2_pka_inv_mod(s, cc26x2_p256_n, w) != CC26X2_PKA_OK)
		return 0;
	cc26x2_pka_mul_mod(e, w, cc26x2_p256_n, u1);               /* u1 = e w, u2 = r w mod n */
	cc26x2_pka_mul_mod(r, w, cc26x2_p256_n, u2);
	st1 = cc26x2_pka_ecc_mul(u1, cc26x2_p256_gx, cc26x2_p256_gy, x1, y1);
	st2 = cc26x2_pka_ecc_mul(u2, qx, qy, x2, y2);
	if (st1 == CC26X2_PKA_OK && st2 == CC26X2_PKA_OK) {
		if (cc26x2_pka_ecc_add(x1, y1, x2, y2, x1, y1) != CC26X2_PKA_OK)
			return 0;                                           /* u1 G + u2 Q is the point at infinity */
	} else if (st1 == CC26X2_PKA_INFINITY && st2 == CC26X2_PKA_OK) {
		memcpy(x1, x2, sizeof x1);
	} else if (st1 != CC26X2_PKA_OK || st2 != CC26X2_PKA_INFINITY) {
		return 0;
	}
	cc26x2_pka_mod(x1, cc26x2_p256_n, v);                      /* v = x mod n, valid when v = r */
	return cc26x2_pka_cmp(v, r) == 0;
}

static int
ecdsa_verify_run(const fw_params *p, fw_io *io)
{
	(void)p;
	if (io->sig == NULL || io->sig_len != 8 * W || io->out == NULL || io->out_cap < 1)
		return FW_ERR;
	io->out[0] = (uint8_t)ecdsa_verify_ok(io);
	io->out_len = 1;
	return FW_OK;
}
#define FW_GLUE_ECDSA_VERIFY p256_supports, ecdsa_verify_run
#endif

#ifdef FW_OP_RANDOM
static int
random_supports(const fw_params *p, const char **why)
{
	(void)p;
	(void)why;
	return FW_OK;
}

static int
random_run(const fw_params *p, fw_io *io)
{
	size_t n = p->bytes < 0 ? 0u : (size_t)p->bytes;
	if (io->out == NULL || io->out_cap < n)
		return FW_ERR;
	cc26x2_trng_read(io->out, n);
	io->out_len = n;
	return FW_OK;
}
#define FW_GLUE_RANDOM random_supports, random_run
#endif

/* The op table: the rows of fw_ops_table.h (generated from the catalog) for the FW_GLUE_* above. */
#include "fw_ops_table.h"
