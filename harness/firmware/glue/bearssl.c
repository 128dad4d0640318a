/* bearssl.c - BearSSL glue for the bare-metal benchmark firmware.
 *
 * BearSSL as vendored in bearssl-sys 0.0.4: a 2017 snapshot, older than BearSSL 0.6, and the
 * tree carries no version number. Only implementations that BearSSL describes as fit for small
 * 32-bit cores are used: constant-time code that needs 32x32->32 multiplications only (the
 * Cortex-M0/M0+ has no 32x32->64 multiply, and the Cortex-M3's UMULL takes a data-dependent
 * number of cycles):
 *
 *   AES               aes_ct (bitsliced, constant-time)
 *   GHASH (GCM)       ghash_ctmul32
 *   ChaCha20          chacha20_ct (also raw, for chacha20-encrypt)
 *   Poly1305          poly1305_ctmul32 (ten 13-bit limbs; ctmul needs 32x32->64)
 *   P-256             ec_p256_m15
 *   X25519            ec_c25519_m15
 *   ECDSA             ecdsa_i15 (RFC 6979 deterministic nonces: no random source needed)
 *
 * One operation includes the key schedule. BearSSL works in place, so the input is first
 * copied into the output buffer. No heap.
 *
 * rekey=0 (fw.h): AES-CBC, AES-CTR and AES-GCM keep their key schedule in static storage, set up
 * by the cell's first, untimed call (fw_keyed): the br_aes_ct_*_keys of br_aes_ct_cbcenc_init /
 * br_aes_ct_ctr_init, and for GCM also the br_gcm_context, whose br_gcm_init computes the GHASH
 * key H = AES_K(0^128). ChaCha20-Poly1305 and ChaCha20 take the key in every call
 * (br_poly1305_ctmul32_run, br_chacha20_ct_run) and have no schedule to keep: rekey=0 runs the
 * same calls as rekey=1, as in the Monocypher glue.
 */

#include <string.h>

#include "cb_chacha20.h"
#include "fw.h"
#include "bearssl.h"

const char fw_lib_name[] = "bearssl";
const char fw_lib_version[] = "2017 snapshot, pre-0.6 (bearssl-sys 0.0.4)";
const uint8_t fw_lib_keeps_key = 1;     /* fw.h: the ops honour rekey=0 (see above) */

/* A keyed op's schedule: with rekey=1 the local `local`, set up in every call; with rekey=0 the
 * op's static `kept`, set up only while fw_keyed is 0 (the cell's first call). Declares `kc`
 * and `fresh` (1 when the schedule was just set up: GCM then sets up its context too). */
#define KEYED(type, init)                                       \
	static type kept;                                       \
	type local, *kc = p->rekey ? &local : &kept;            \
	int fresh = p->rekey || !fw_keyed;                      \
	if (fresh) {                                            \
		init(kc, io->key, io->key_len);                 \
		fw_keyed = 1;                                   \
	}

#if defined(FW_OP_AES_CBC_ENCRYPT) || defined(FW_OP_AES_CTR_ENCRYPT) \
	|| defined(FW_OP_AES_GCM_ENCRYPT)
#define GLUE_AES   1
#endif

#if defined(FW_OP_CHACHA20_POLY1305_ENCRYPT) || defined(FW_OP_CHACHA20_ENCRYPT) || defined(FW_OP_SHA1) \
	|| defined(FW_OP_SHA224) || defined(FW_OP_SHA256) \
	|| defined(FW_OP_SHA384) || defined(FW_OP_SHA512)
#define GLUE_ANY   1
#endif

#if defined(FW_OP_ECDH_KEYGEN) || defined(FW_OP_ECDH_SHARED_SECRET)
#define GLUE_ECDH   1
#endif

#if defined(FW_OP_ECDSA_SIGN) || defined(FW_OP_ECDSA_VERIFY)
#define GLUE_ECDSA   1
#endif

#if GLUE_AES || GLUE_ANY || GLUE_ECDH || GLUE_ECDSA
/* Room for n output bytes? */
static int
out_fits(const fw_io *io, size_t n)
{
	return io->out != NULL && io->out_cap >= n;
}
#endif

#if GLUE_AES || defined(FW_OP_CHACHA20_POLY1305_ENCRYPT) || defined(FW_OP_CHACHA20_ENCRYPT)
/* Copy the plaintext into the output buffer (BearSSL encrypts in place). */
static void
load_msg(fw_io *io)
{
	if (io->msg_len > 0) {
		memmove(io->out, io->msg, io->msg_len);
	}
}
#endif

#if GLUE_ANY
static int
supports_any(const fw_params *p, const char **why)
{
	(void)p;
	(void)why;
	return FW_OK;
}
#endif

#if GLUE_AES
static int
aes_supports(const fw_params *p, const char **why)
{
	if (p->key_bits != 128 && p->key_bits != 192 && p->key_bits != 256) {
		*why = "AES key_bits must be 128, 192 or 256";
		return FW_UNSUPPORTED;
	}
	return FW_OK;
}

static int
aes_key_ok(const fw_io *io)
{
	return io->key_len == 16 || io->key_len == 24 || io->key_len == 32;
}
#endif

#ifdef FW_OP_AES_CBC_ENCRYPT
static int
aes_cbc_supports(const fw_params *p, const char **why)
{
	if (p->bytes >= 0 && (p->bytes & 15) != 0) {
		*why = "CBC without padding needs bytes as a multiple of 16";
		return FW_UNSUPPORTED;
	}
	return aes_supports(p, why);
}

/* br_aes_ct_cbcenc (aes_ct). */
static int
aes_cbc_run(const fw_params *p, fw_io *io)
{
	unsigned char iv[16];

	if (!aes_key_ok(io) || io->iv_len != 16 || (io->msg_len & 15) != 0
		|| !out_fits(io, io->msg_len))
	{
		return FW_ERR;
	}
	KEYED(br_aes_ct_cbcenc_keys, br_aes_ct_cbcenc_init);
	(void)fresh;
	memcpy(iv, io->iv, 16);
	load_msg(io);
	br_aes_ct_cbcenc_run(kc, iv, io->out, io->msg_len);
	io->out_len = io->msg_len;
	return FW_OK;
}
#define FW_GLUE_AES_CBC_ENCRYPT aes_cbc_supports, aes_cbc_run
#endif

#ifdef FW_OP_AES_CTR_ENCRYPT
/* br_aes_ct_ctr (aes_ct). The catalog's IV is a 16-byte counter block incremented over all
 * 128 bits; BearSSL takes a 12-byte prefix and a 32-bit counter that wraps without carry.
 * The two agree until the low 32 bits wrap, so the message is split there and the carry is
 * added to the prefix here: the result is exact for every IV. */
static int
aes_ctr_run(const fw_params *p, fw_io *io)
{
	unsigned char iv[12];
	unsigned char *buf;
	size_t len;
	uint32_t cc;
	int i;

	if (!aes_key_ok(io) || io->iv_len != 16 || !out_fits(io, io->msg_len)) {
		return FW_ERR;
	}
	KEYED(br_aes_ct_ctr_keys, br_aes_ct_ctr_init);
	(void)fresh;
	memcpy(iv, io->iv, 12);
	cc = ((uint32_t)io->iv[12] << 24) | ((uint32_t)io->iv[13] << 16)
		| ((uint32_t)io->iv[14] << 8) | (uint32_t)io->iv[15];
	load_msg(io);
	buf = io->out;
	len = io->msg_len;
	for (;;) {
		/* bytes left before the low 32 bits of the counter wrap */
		uint64_t room = ((uint64_t)0x100000000 - cc) << 4;

		if ((uint64_t)len <= room) {
			br_aes_ct_ctr_run(kc, iv, cc, buf, len);
			break;
		}
		br_aes_ct_ctr_run(kc, iv, cc, buf, (size_t)room);
		buf += (size_t)room;
		len -= (size_t)room;
		cc = 0;
		for (i = 11; i >= 0; i --) {
			if (++ iv[i] != 0) {
				break;
			}
		}
	}
	io->out_len = io->msg_len;
	return FW_OK;
}
#define FW_GLUE_AES_CTR_ENCRYPT aes_supports, aes_ctr_run
#endif

#ifdef FW_OP_AES_GCM_ENCRYPT
/* br_gcm over br_aes_ct_ctr and br_ghash_ctmul32; out = ciphertext || 16-byte tag. The key
 * schedule is the AES keys and br_gcm_init's H (kept together with rekey=0); br_gcm_reset
 * starts each message. */
static int
aes_gcm_run(const fw_params *p, fw_io *io)
{
	static br_gcm_context kept_gc;
	br_gcm_context local_gc, *gc;

	if (!aes_key_ok(io) || io->iv_len == 0 || !out_fits(io, io->msg_len + 16)) {
		return FW_ERR;
	}
	KEYED(br_aes_ct_ctr_keys, br_aes_ct_ctr_init);
	gc = p->rekey ? &local_gc : &kept_gc;
	if (fresh) {
		br_gcm_init(gc, &kc->vtable, &br_ghash_ctmul32);
	}
	br_gcm_reset(gc, io->iv, io->iv_len);
	if (io->aad_len > 0) {
		br_gcm_aad_inject(gc, io->aad, io->aad_len);
	}
	br_gcm_flip(gc);
	load_msg(io);
	br_gcm_run(gc, 1, io->out, io->msg_len);
	br_gcm_get_tag(gc, io->out + io->msg_len);
	io->out_len = io->msg_len + 16;
	return FW_OK;
}
#define FW_GLUE_AES_GCM_ENCRYPT aes_supports, aes_gcm_run
#endif

#ifdef FW_OP_CHACHA20_POLY1305_ENCRYPT
/* br_poly1305_ctmul32_run with br_chacha20_ct_run (RFC 7539/8439 AEAD); out = ct || tag.
 * ctmul32 rather than ctmul: it needs 32x32->32 multiplies only, which BearSSL notes are
 * "way faster than 32x32->64 multiplications on the ARM Cortex-M0/M0+" and keep the
 * Cortex-M3 constant-time. The key goes into every call (no schedule): rekey=0 runs the same. */
static int
chapol_run(const fw_params *p, fw_io *io)
{
	(void)p;
	if (io->key_len != 32 || io->iv_len != 12 || !out_fits(io, io->msg_len + 16)) {
		return FW_ERR;
	}
	load_msg(io);
	br_poly1305_ctmul32_run(io->key, io->iv, io->out, io->msg_len,
		io->aad, io->aad_len, io->out + io->msg_len, &br_chacha20_ct_run, 1);
	io->out_len = io->msg_len + 16;
	return FW_OK;
}
#define FW_GLUE_CHACHA20_POLY1305_ENCRYPT supports_any, chapol_run
#endif

#ifdef FW_OP_CHACHA20_ENCRYPT
/* Raw ChaCha20 with br_chacha20_ct_run(key, 12-byte nonce, block counter, data, len), in place;
 * iv = the 32-bit block counter (little-endian) || the nonce. BearSSL's counter would wrap to 0
 * past 2^32 - 1; every engine refuses that message (cb_chacha20.h). No schedule: the key goes
 * into every call, so rekey=0 runs the same. */
static int
chacha20_run(const fw_params *p, fw_io *io)
{
	uint32_t ctr;

	(void)p;
	if (!out_fits(io, io->msg_len)
	    || !cb_chacha20_usable(io->key_len, io->iv_len, io->iv, io->msg_len, &ctr)) {
		return FW_ERR;
	}
	load_msg(io);
	br_chacha20_ct_run(io->key, io->iv + 4, ctr, io->out, io->msg_len);
	io->out_len = io->msg_len;
	return FW_OK;
}
#define FW_GLUE_CHACHA20_ENCRYPT supports_any, chacha20_run
#endif

/* One-shot digest: init, update, out. */
#define HASH_RUN(name, cname)                                          \
static int                                                             \
name ## _run(const fw_params *p, fw_io *io)                            \
{                                                                      \
	br_ ## cname ## _context hc;                                   \
                                                                       \
	(void)p;                                                       \
	if (!out_fits(io, br_ ## cname ## _SIZE)) {                    \
		return FW_ERR;                                         \
	}                                                              \
	br_ ## cname ## _init(&hc);                                    \
	br_ ## cname ## _update(&hc, io->msg, io->msg_len);            \
	br_ ## cname ## _out(&hc, io->out);                            \
	io->out_len = br_ ## cname ## _SIZE;                           \
	return FW_OK;                                                  \
}

#ifdef FW_OP_SHA1
HASH_RUN(sha1, sha1)
#define FW_GLUE_SHA1 supports_any, sha1_run
#endif
#ifdef FW_OP_SHA224
HASH_RUN(sha224, sha224)
#define FW_GLUE_SHA224 supports_any, sha224_run
#endif
#ifdef FW_OP_SHA256
HASH_RUN(sha256, sha256)
#define FW_GLUE_SHA256 supports_any, sha256_run
#endif
#ifdef FW_OP_SHA384
HASH_RUN(sha384, sha384)
#define FW_GLUE_SHA384 supports_any, sha384_run
#endif
#ifdef FW_OP_SHA512
HASH_RUN(sha512, sha512)
#define FW_GLUE_SHA512 supports_any, sha512_run
#endif

#if GLUE_ECDH
/* P-256 (br_ec_p256_m15) or X25519 (br_ec_c25519_m15); 0 for anything else. Sets the curve
 * id and the length of an encoded point (04||X||Y, or the 32-byte u-coordinate). */
static const br_ec_impl *
ecdh_impl(const fw_params *p, int *curve, size_t *plen)
{
	if (strcmp(p->curve, "p256") == 0) {
		*curve = BR_EC_secp256r1;
		*plen = 65;
		return &br_ec_p256_m15;
	}
	if (strcmp(p->curve, "x25519") == 0) {
		*curve = BR_EC_curve25519;
		*plen = 32;
		return &br_ec_c25519_m15;
	}
	return NULL;
}

static int
ecdh_supports(const fw_params *p, const char **why)
{
	int curve;
	size_t plen;

	if (ecdh_impl(p, &curve, &plen) == NULL) {
		*why = "BearSSL glue builds ECDH for p256 and x25519 only";
		return FW_UNSUPPORTED;
	}
	return FW_OK;
}
#endif

#ifdef FW_OP_ECDH_KEYGEN
/* Public key = d*G (impl->mulgen). d is big-endian for P-256 and the RFC 7748 little-endian
 * string for X25519 (BearSSL's Curve25519 code takes the scalar as is, and clamps it). */
static int
ecdh_keygen_run(const fw_params *p, fw_io *io)
{
	const br_ec_impl *impl;
	int curve;
	size_t plen;

	impl = ecdh_impl(p, &curve, &plen);
	if (impl == NULL || io->key_len != 32 || !out_fits(io, plen)) {
		return FW_ERR;
	}
	io->out_len = impl->mulgen(io->out, io->key, io->key_len, curve);
	return io->out_len == plen ? FW_OK : FW_ERR;
}
#define FW_GLUE_ECDH_KEYGEN ecdh_supports, ecdh_keygen_run
#endif

#ifdef FW_OP_ECDH_SHARED_SECRET
/* z = x-coordinate of d*peer (impl->mul); the peer point is validated by BearSSL. */
static int
ecdh_shared_run(const fw_params *p, fw_io *io)
{
	const br_ec_impl *impl;
	unsigned char pt[65];
	int curve;
	size_t plen, xoff, xlen;

	impl = ecdh_impl(p, &curve, &plen);
	if (impl == NULL || io->key_len != 32 || io->peer_len != plen) {
		return FW_ERR;
	}
	xoff = impl->xoff(curve, &xlen);
	if (!out_fits(io, xlen)) {
		return FW_ERR;
	}
	memcpy(pt, io->peer, plen);
	if (!impl->mul(pt, plen, io->key, io->key_len, curve)) {
		return FW_ERR;
	}
	memcpy(io->out, pt + xoff, xlen);
	io->out_len = xlen;
	return FW_OK;
}
#define FW_GLUE_ECDH_SHARED_SECRET ecdh_supports, ecdh_shared_run
#endif

#if GLUE_ECDSA
static int
ecdsa_supports(const fw_params *p, const char **why)
{
	if (strcmp(p->curve, "p256") != 0) {
		*why = "BearSSL glue builds ECDSA for p256 only";
		return FW_UNSUPPORTED;
	}
	return FW_OK;
}
#endif

#ifdef FW_OP_ECDSA_SIGN
/* br_ecdsa_i15_sign_raw on br_ec_p256_m15; the nonce is RFC 6979 with HMAC-SHA-256, so the
 * hash must be a SHA-256 digest. out = r || s. */
static int
ecdsa_sign_run(const fw_params *p, fw_io *io)
{
	br_ec_private_key sk;

	(void)p;
	if (io->msg_len != br_sha256_SIZE || !out_fits(io, 64)) {
		return FW_ERR;
	}
	sk.curve = BR_EC_secp256r1;
	sk.x = (unsigned char *)io->key;   /* read only */
	sk.xlen = io->key_len;
	io->out_len = br_ecdsa_i15_sign_raw(&br_ec_p256_m15, &br_sha256_vtable,
		io->msg, &sk, io->out);
	return io->out_len == 64 ? FW_OK : FW_ERR;
}
#define FW_GLUE_ECDSA_SIGN ecdsa_supports, ecdsa_sign_run
#endif

#ifdef FW_OP_ECDSA_VERIFY
/* br_ecdsa_i15_vrfy_raw on br_ec_p256_m15; out = 01 (valid) or 00. */
static int
ecdsa_verify_run(const fw_params *p, fw_io *io)
{
	br_ec_public_key pk;

	(void)p;
	if (!out_fits(io, 1)) {
		return FW_ERR;
	}
	pk.curve = BR_EC_secp256r1;
	pk.q = (unsigned char *)io->peer;   /* read only */
	pk.qlen = io->peer_len;
	io->out[0] = (uint8_t)br_ecdsa_i15_vrfy_raw(&br_ec_p256_m15,
		io->msg, io->msg_len, &pk, io->sig, io->sig_len);
	io->out_len = 1;
	return FW_OK;
}
#define FW_GLUE_ECDSA_VERIFY ecdsa_supports, ecdsa_verify_run
#endif

/* The op table: the rows of fw_ops_table.h (generated from the catalog) for the FW_GLUE_* above. */
#include "fw_ops_table.h"
