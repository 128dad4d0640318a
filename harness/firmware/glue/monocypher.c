/* monocypher.c - Monocypher glue for the bare-metal benchmark firmware.
 *
 * Monocypher 4.0.2 (monocypher.c, and optional/monocypher-ed25519.c for SHA-512). Portable C,
 * constant-time, no assembly and no configuration: the same code runs on every core.
 *
 *   chacha20-poly1305-encrypt   crypto_aead_init_ietf + crypto_aead_write (RFC 8439)
 *   chacha20-encrypt            crypto_chacha20_ietf (RFC 8439: 12-byte nonce, 32-bit counter)
 *   ecdh-keygen x25519          crypto_x25519_public_key
 *   ecdh-shared-secret x25519   crypto_x25519 (raw shared secret, as RFC 7748)
 *   sha512                      crypto_sha512
 *
 * One operation includes the key setup. No heap. rekey=0 (fw.h) is accepted: these calls have no
 * key schedule to keep (crypto_aead_init_ietf copies the key and nonce into the context, and
 * crypto_chacha20_ietf takes the key itself), so a rekey=0 cell runs the same calls as a rekey=1 one.
 */

#include <string.h>

#include "cb_chacha20.h"
#include "fw.h"
#include "monocypher.h"
#include "monocypher-ed25519.h"

const char fw_lib_name[] = "monocypher";
const char fw_lib_version[] = "4.0.2";
const uint8_t fw_lib_keeps_key = 1;     /* fw.h: nothing to keep, see above */

#if defined(FW_OP_ECDH_KEYGEN) || defined(FW_OP_ECDH_SHARED_SECRET)
#define GLUE_ECDH   1
#endif

#if defined(FW_OP_CHACHA20_POLY1305_ENCRYPT) || defined(FW_OP_CHACHA20_ENCRYPT) || defined(FW_OP_SHA512)
#define GLUE_ANY   1
#endif

#if GLUE_ECDH || GLUE_ANY
/* Room for n output bytes? */
static int
out_fits(const fw_io *io, size_t n)
{
	return io->out != NULL && io->out_cap >= n;
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

#if GLUE_ECDH
static int
ecdh_supports(const fw_params *p, const char **why)
{
	if (strcmp(p->curve, "x25519") != 0) {
		*why = "Monocypher has X25519 only (no NIST curves)";
		return FW_UNSUPPORTED;
	}
	return FW_OK;
}
#endif

#ifdef FW_OP_CHACHA20_POLY1305_ENCRYPT
/* IETF ChaCha20-Poly1305: 12-byte nonce, out = ciphertext || 16-byte tag.
 * (crypto_aead_lock is the XChaCha20 variant, with a 24-byte nonce.) */
static int
chapol_run(const fw_params *p, fw_io *io)
{
	crypto_aead_ctx ctx;

	(void)p;
	if (io->key_len != 32 || io->iv_len != 12 || !out_fits(io, io->msg_len + 16)) {
		return FW_ERR;
	}
	crypto_aead_init_ietf(&ctx, io->key, io->iv);
	crypto_aead_write(&ctx, io->out, io->out + io->msg_len,
		io->aad, io->aad_len, io->msg, io->msg_len);
	crypto_wipe(&ctx, sizeof ctx);
	io->out_len = io->msg_len + 16;
	return FW_OK;
}
#define FW_GLUE_CHACHA20_POLY1305_ENCRYPT supports_any, chapol_run
#endif

#ifdef FW_OP_CHACHA20_ENCRYPT
/* Raw ChaCha20: iv = the 32-bit block counter (little-endian) || the 12-byte nonce. Monocypher
 * would carry a counter past 2^32 - 1 into the nonce; every engine refuses that (cb_chacha20.h). */
static int
chacha20_run(const fw_params *p, fw_io *io)
{
	uint32_t ctr;

	(void)p;
	if (!out_fits(io, io->msg_len)
	    || !cb_chacha20_usable(io->key_len, io->iv_len, io->iv, io->msg_len, &ctr)) {
		return FW_ERR;
	}
	crypto_chacha20_ietf(io->out, io->msg, io->msg_len, io->key, io->iv + 4, ctr);
	io->out_len = io->msg_len;
	return FW_OK;
}
#define FW_GLUE_CHACHA20_ENCRYPT supports_any, chacha20_run
#endif

#ifdef FW_OP_SHA512
static int
sha512_run(const fw_params *p, fw_io *io)
{
	(void)p;
	if (!out_fits(io, 64)) {
		return FW_ERR;
	}
	crypto_sha512(io->out, io->msg, io->msg_len);
	io->out_len = 64;
	return FW_OK;
}
#define FW_GLUE_SHA512 supports_any, sha512_run
#endif

#ifdef FW_OP_ECDH_KEYGEN
/* Public key = X25519(d, 9); d is the RFC 7748 little-endian string (clamped inside). */
static int
ecdh_keygen_run(const fw_params *p, fw_io *io)
{
	(void)p;
	if (io->key_len != 32 || !out_fits(io, 32)) {
		return FW_ERR;
	}
	crypto_x25519_public_key(io->out, io->key);
	io->out_len = 32;
	return FW_OK;
}
#define FW_GLUE_ECDH_KEYGEN ecdh_supports, ecdh_keygen_run
#endif

#ifdef FW_OP_ECDH_SHARED_SECRET
/* z = X25519(d, peer), the raw shared secret (not hashed). */
static int
ecdh_shared_run(const fw_params *p, fw_io *io)
{
	(void)p;
	if (io->key_len != 32 || io->peer_len != 32 || !out_fits(io, 32)) {
		return FW_ERR;
	}
	crypto_x25519(io->out, io->key, io->peer);
	io->out_len = 32;
	return FW_OK;
}
#define FW_GLUE_ECDH_SHARED_SECRET ecdh_supports, ecdh_shared_run
#endif

/* The op table: the rows of fw_ops_table.h (generated from the catalog) for the FW_GLUE_* above. */
#include "fw_ops_table.h"
