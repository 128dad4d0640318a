/* mbedtls.c - firmware glue for mbedTLS 2.28 (config/mbedtls_config.h).
 *
 * Each op and its table entry are built only when FW_OP_<ID> is defined; with none defined the
 * table holds only the sentinel (the "empty harness" image). One operation includes the key
 * setup: context init, setkey (or group load and key read), the operation itself, and free.
 * With rekey=0 (AES-ECB/CBC/CTR/CCM/GCM, ChaCha20-Poly1305, ChaCha20) the key schedule is set up
 * once per cell, by its first, untimed call (fw_keyed, fw.h), in a static context that is kept.
 * Heap use goes through fw_calloc/fw_free (MBEDTLS_PLATFORM_*_MACRO in the config).
 * The exceptions are the CTR_DRBG ops: a DRBG has state between calls, so their timing cells
 * work on one static context (the rules are written above their code).
 */
#include <limits.h>
#include <string.h>

#include "fw.h"
#include "cb_chacha20.h" /* the chacha20-encrypt iv's block counter, and the wrap every engine refuses */
#include "cb_cursor.h"   /* the CTR_DRBG entropy callback's source, shared with the host engine */

#include "mbedtls/version.h"
#include "mbedtls/aes.h"
#include "mbedtls/ccm.h"
#include "mbedtls/gcm.h"
#include "mbedtls/chacha20.h"
#include "mbedtls/chachapoly.h"
#include "mbedtls/sha1.h"
#include "mbedtls/sha256.h"
#include "mbedtls/sha512.h"
#include "mbedtls/bignum.h"
#include "mbedtls/ecp.h"
#include "mbedtls/ecdh.h"
#include "mbedtls/ecdsa.h"
#include "mbedtls/ctr_drbg.h"
#include "mbedtls/ecjpake.h"

const char fw_lib_name[] = "mbedtls";
const char fw_lib_version[] = MBEDTLS_VERSION_STRING;

/* Which shared helpers the selected ops need. */
#if defined(FW_OP_AES_ECB_ENCRYPT) || defined(FW_OP_AES_CBC_ENCRYPT) || \
    defined(FW_OP_AES_CTR_ENCRYPT) || defined(FW_OP_AES_CCM_ENCRYPT) || \
    defined(FW_OP_AES_GCM_ENCRYPT)
#define GLUE_AES 1
#endif
#if defined(FW_OP_CHACHA20_POLY1305_ENCRYPT) || defined(FW_OP_CHACHA20_ENCRYPT) || defined(FW_OP_SHA1) || \
    defined(FW_OP_SHA224) || defined(FW_OP_SHA256) || defined(FW_OP_SHA384) || \
    defined(FW_OP_SHA512) || defined(FW_OP_CTR_DRBG_INSTANTIATE) || \
    defined(FW_OP_CTR_DRBG_RESEED) || defined(FW_OP_CTR_DRBG_GENERATE)
#define GLUE_ANY 1
#endif
#if defined(FW_OP_ECDH_KEYGEN) || defined(FW_OP_ECDH_SHARED_SECRET)
#define GLUE_ECDH 1
#endif
#if defined(FW_OP_ECDSA_SIGN) || defined(FW_OP_ECDSA_VERIFY)
#define GLUE_ECDSA 1
#endif
#if defined(FW_OP_CTR_DRBG_INSTANTIATE) || defined(FW_OP_CTR_DRBG_RESEED) || \
    defined(FW_OP_CTR_DRBG_GENERATE)
#define GLUE_DRBG 1
#endif

#define EC_BYTES 32 /* P-256 and X25519 scalars, coordinates and secrets */

/* A keyed op's context: with rekey=1 a local one, initialised and keyed here and freed by
 * KEYED_END; with rekey=0 the op's static `kept` one, keyed only while fw_keyed is 0 (the cell's
 * first call), when the previous cell's key (GCM and CCM hold a heap block) is freed first;
 * freeing a zeroed, never-used context is a no-op in Mbed TLS. Declares `ctx` and `ret`. */
#define KEYED(type, kept, init, free_fn, setkey)              \
    type local_, *ctx = p->rekey ? &local_ : &kept;         \
    int ret = 0;                                              \
    if (p->rekey || !fw_keyed) {                              \
        if (!p->rekey)                                        \
            free_fn(ctx);                                     \
        init(ctx);                                            \
        ret = (setkey);                                       \
        fw_keyed = 1;                                         \
    }
#define KEYED_END(free_fn) \
    if (p->rekey)          \
        free_fn(ctx)

const uint8_t fw_lib_keeps_key = 1;     /* fw.h: the ops above honour rekey=0 */

/* ---- shared helpers ---------------------------------------------------------------------- */

#if defined(GLUE_ANY)
/* Ops with no parameter to refuse. */
static int any_supports(const fw_params *p, const char **why)
{
    (void)p;
    (void)why;
    return FW_OK;
}
#endif

#if defined(GLUE_AES)
static int aes_bits_ok(const fw_params *p, const char **why)
{
    if (p->key_bits != 128 && p->key_bits != 192 && p->key_bits != 256) {
        *why = "AES keys are 128, 192 or 256 bits";
        return FW_UNSUPPORTED;
    }
    return FW_OK;
}

/* The key bytes must match key_bits. */
static int aes_key_ok(const fw_params *p, const fw_io *io)
{
    return io->key_len * 8 == (size_t)p->key_bits;
}
#endif

#if defined(FW_OP_AES_CTR_ENCRYPT) || defined(FW_OP_AES_GCM_ENCRYPT)
/* Any length; only key_bits to check. */
static int aes_supports(const fw_params *p, const char **why)
{
    return aes_bits_ok(p, why);
}
#endif

#if defined(FW_OP_AES_ECB_ENCRYPT) || defined(FW_OP_AES_CBC_ENCRYPT)
/* ECB and CBC without padding. */
static int aes_blocks_supports(const fw_params *p, const char **why)
{
    if (p->bytes >= 0 && p->bytes % 16 != 0) {
        *why = "AES-ECB/CBC without padding needs a multiple of 16 bytes";
        return FW_UNSUPPORTED;
    }
    return aes_bits_ok(p, why);
}
#endif

#if defined(GLUE_ECDH)
/* The curve's group id, or MBEDTLS_ECP_DP_NONE when this build lacks it. */
static mbedtls_ecp_group_id ecdh_curve(const fw_params *p)
{
    if (strncmp(p->curve, "p256", sizeof p->curve) == 0)
        return MBEDTLS_ECP_DP_SECP256R1;
    if (strncmp(p->curve, "x25519", sizeof p->curve) == 0)
        return MBEDTLS_ECP_DP_CURVE25519;
    return MBEDTLS_ECP_DP_NONE;
}

static int ecdh_supports(const fw_params *p, const char **why)
{
    if (ecdh_curve(p) == MBEDTLS_ECP_DP_NONE) {
        *why = "curve not in this build (only p256 and x25519; p521 is off)";
        return FW_UNSUPPORTED;
    }
    return FW_OK;
}
#endif

#if defined(GLUE_ECDSA)
static int ecdsa_supports(const fw_params *p, const char **why)
{
    if (strncmp(p->curve, "p256", sizeof p->curve) != 0) {
        *why = "curve not in this build (ECDSA on p256 only; p521 is off)";
        return FW_UNSUPPORTED;
    }
    return FW_OK;
}
#endif

/* ---- AES ---------------------------------------------------------------------------------- */

#if defined(FW_OP_AES_ECB_ENCRYPT)
static int aes_ecb_run(const fw_params *p, fw_io *io)
{
    static mbedtls_aes_context kept;
    size_t i;

    if (!aes_key_ok(p, io) || io->msg_len % 16 != 0 || io->out_cap < io->msg_len)
        return FW_ERR;
    KEYED(mbedtls_aes_context, kept, mbedtls_aes_init, mbedtls_aes_free,
          mbedtls_aes_setkey_enc(ctx, io->key, (unsigned)p->key_bits));
    for (i = 0; ret == 0 && i < io->msg_len; i += 16)
        ret = mbedtls_aes_crypt_ecb(ctx, MBEDTLS_AES_ENCRYPT, io->msg + i, io->out + i);
    KEYED_END(mbedtls_aes_free);
    if (ret != 0)
        return FW_ERR;
    io->out_len = io->msg_len;
    return FW_OK;
}
#define FW_GLUE_AES_ECB_ENCRYPT aes_blocks_supports, aes_ecb_run
#endif

#if defined(FW_OP_AES_CBC_ENCRYPT)
static int aes_cbc_run(const fw_params *p, fw_io *io)
{
    static mbedtls_aes_context kept;
    unsigned char iv[16]; /* mbedTLS updates the IV in place */

    if (!aes_key_ok(p, io) || io->iv_len != 16 || io->msg_len % 16 != 0 ||
        io->out_cap < io->msg_len)
        return FW_ERR;
    memcpy(iv, io->iv, 16);
    KEYED(mbedtls_aes_context, kept, mbedtls_aes_init, mbedtls_aes_free,
          mbedtls_aes_setkey_enc(ctx, io->key, (unsigned)p->key_bits));
    if (ret == 0)
        ret = mbedtls_aes_crypt_cbc(ctx, MBEDTLS_AES_ENCRYPT, io->msg_len, iv, io->msg, io->out);
    KEYED_END(mbedtls_aes_free);
    if (ret != 0)
        return FW_ERR;
    io->out_len = io->msg_len;
    return FW_OK;
}
#define FW_GLUE_AES_CBC_ENCRYPT aes_blocks_supports, aes_cbc_run
#endif

#if defined(FW_OP_AES_CTR_ENCRYPT)
/* iv = the full 16-byte initial counter block; mbedTLS increments all 128 bits big-endian. */
static int aes_ctr_run(const fw_params *p, fw_io *io)
{
    static mbedtls_aes_context kept;
    unsigned char ctr[16], stream[16];
    size_t off = 0;

    if (!aes_key_ok(p, io) || io->iv_len != 16 || io->out_cap < io->msg_len)
        return FW_ERR;
    memcpy(ctr, io->iv, 16);
    KEYED(mbedtls_aes_context, kept, mbedtls_aes_init, mbedtls_aes_free,
          mbedtls_aes_setkey_enc(ctx, io->key, (unsigned)p->key_bits));
    if (ret == 0)
        ret = mbedtls_aes_crypt_ctr(ctx, io->msg_len, &off, ctr, stream, io->msg, io->out);
    KEYED_END(mbedtls_aes_free);
    if (ret != 0)
        return FW_ERR;
    io->out_len = io->msg_len;
    return FW_OK;
}
#define FW_GLUE_AES_CTR_ENCRYPT aes_supports, aes_ctr_run
#endif

#if defined(FW_OP_AES_CCM_ENCRYPT)
static int ccm_tag_bytes(const fw_params *p)
{
    return p->tag_bytes < 0 ? CB_DEFAULT_TAG_BYTES : (int)p->tag_bytes;
}

static int aes_ccm_supports(const fw_params *p, const char **why)
{
    int tag = ccm_tag_bytes(p);
    int nonce = p->nonce_bytes < 0 ? CB_DEFAULT_NONCE_BYTES : (int)p->nonce_bytes;

    if (tag < 4 || tag > 16 || tag % 2 != 0) {
        *why = "CCM tags are 4, 6, ..., 16 bytes";
        return FW_UNSUPPORTED;
    }
    if (nonce < 7 || nonce > 13) {
        *why = "CCM nonces are 7 to 13 bytes";
        return FW_UNSUPPORTED;
    }
    if (p->aad_bytes >= 0xFF00) {
        *why = "mbedTLS 2.28 CCM takes less than 65280 bytes of AAD";
        return FW_UNSUPPORTED;
    }
    /* The length field has 15 - nonce bytes. */
    if (nonce >= 12 && p->bytes >= ((int32_t)1 << (8 * (15 - nonce)))) {
        *why = "message too long for the CCM length field (15 - nonce_bytes bytes)";
        return FW_UNSUPPORTED;
    }
    return aes_bits_ok(p, why);
}

/* out = ciphertext || tag (tag_bytes long); the nonce is io->iv. */
static int aes_ccm_run(const fw_params *p, fw_io *io)
{
    static mbedtls_ccm_context kept;
    size_t tag_len = (size_t)ccm_tag_bytes(p);

    if (!aes_key_ok(p, io) || io->out_cap < io->msg_len + tag_len)
        return FW_ERR;
    KEYED(mbedtls_ccm_context, kept, mbedtls_ccm_init, mbedtls_ccm_free,
          mbedtls_ccm_setkey(ctx, MBEDTLS_CIPHER_ID_AES, io->key, (unsigned)p->key_bits));
    if (ret == 0)
        ret = mbedtls_ccm_encrypt_and_tag(ctx, io->msg_len, io->iv, io->iv_len,
                                          io->aad, io->aad_len, io->msg, io->out,
                                          io->out + io->msg_len, tag_len);
    KEYED_END(mbedtls_ccm_free);
    if (ret != 0)
        return FW_ERR;
    io->out_len = io->msg_len + tag_len;
    return FW_OK;
}
#define FW_GLUE_AES_CCM_ENCRYPT aes_ccm_supports, aes_ccm_run
#endif

#if defined(FW_OP_AES_GCM_ENCRYPT)
/* out = ciphertext || 16-byte tag. */
static int aes_gcm_run(const fw_params *p, fw_io *io)
{
    static mbedtls_gcm_context kept;

    if (!aes_key_ok(p, io) || io->iv_len == 0 || io->out_cap < io->msg_len + 16)
        return FW_ERR;
    KEYED(mbedtls_gcm_context, kept, mbedtls_gcm_init, mbedtls_gcm_free,
          mbedtls_gcm_setkey(ctx, MBEDTLS_CIPHER_ID_AES, io->key, (unsigned)p->key_bits));
    if (ret == 0)
        ret = mbedtls_gcm_crypt_and_tag(ctx, MBEDTLS_GCM_ENCRYPT, io->msg_len,
                                        io->iv, io->iv_len, io->aad, io->aad_len,
                                        io->msg, io->out, 16, io->out + io->msg_len);
    KEYED_END(mbedtls_gcm_free);
    if (ret != 0)
        return FW_ERR;
    io->out_len = io->msg_len + 16;
    return FW_OK;
}
#define FW_GLUE_AES_GCM_ENCRYPT aes_supports, aes_gcm_run
#endif

/* ---- ChaCha20-Poly1305 ---------------------------------------------------------------- */

#if defined(FW_OP_CHACHA20_POLY1305_ENCRYPT)
/* 32-byte key, 12-byte nonce; out = ciphertext || 16-byte tag. */
static int chachapoly_run(const fw_params *p, fw_io *io)
{
    static mbedtls_chachapoly_context kept;

    if (io->key_len != 32 || io->iv_len != 12 || io->out_cap < io->msg_len + 16)
        return FW_ERR;
    KEYED(mbedtls_chachapoly_context, kept, mbedtls_chachapoly_init, mbedtls_chachapoly_free,
          mbedtls_chachapoly_setkey(ctx, io->key));
    if (ret == 0)
        ret = mbedtls_chachapoly_encrypt_and_tag(ctx, io->msg_len, io->iv, io->aad,
                                                 io->aad_len, io->msg, io->out,
                                                 io->out + io->msg_len);
    KEYED_END(mbedtls_chachapoly_free);
    if (ret != 0)
        return FW_ERR;
    io->out_len = io->msg_len + 16;
    return FW_OK;
}
#define FW_GLUE_CHACHA20_POLY1305_ENCRYPT any_supports, chachapoly_run
#endif

/* ---- ChaCha20 ------------------------------------------------------------------------- */

#if defined(FW_OP_CHACHA20_ENCRYPT)
/* 32-byte key; iv = the 32-bit block counter (little-endian) || the 12-byte nonce. The key is
 * set as the other ciphers' (KEYED); each operation is starts (nonce, counter) + update, which is
 * mbedtls_chacha20_crypt's own sequence. A counter that would wrap is refused (cb_chacha20.h). */
static int chacha20_run(const fw_params *p, fw_io *io)
{
    static mbedtls_chacha20_context kept;
    uint32_t ctr;

    if (io->out_cap < io->msg_len || !cb_chacha20_usable(io->key_len, io->iv_len, io->iv, io->msg_len, &ctr))
        return FW_ERR;
    KEYED(mbedtls_chacha20_context, kept, mbedtls_chacha20_init, mbedtls_chacha20_free,
          mbedtls_chacha20_setkey(ctx, io->key));
    if (ret == 0)
        ret = mbedtls_chacha20_starts(ctx, io->iv + 4, ctr);
    if (ret == 0)
        ret = mbedtls_chacha20_update(ctx, io->msg_len, io->msg, io->out);
    KEYED_END(mbedtls_chacha20_free);
    if (ret != 0)
        return FW_ERR;
    io->out_len = io->msg_len;
    return FW_OK;
}
#define FW_GLUE_CHACHA20_ENCRYPT any_supports, chacha20_run
#endif

/* ---- SHA (the one-shot calls do init, starts, update, finish and free) ------------------ */

#if defined(FW_OP_SHA1)
static int sha1_run(const fw_params *p, fw_io *io)
{
    (void)p;
    if (io->out_cap < 20 || mbedtls_sha1_ret(io->msg, io->msg_len, io->out) != 0)
        return FW_ERR;
    io->out_len = 20;
    return FW_OK;
}
#define FW_GLUE_SHA1 any_supports, sha1_run
#endif

#if defined(FW_OP_SHA224) || defined(FW_OP_SHA256)
static int sha256_common(fw_io *io, int is224)
{
    size_t n = is224 ? 28 : 32; /* SHA-224 writes only its 28 bytes */

    if (io->out_cap < n || mbedtls_sha256_ret(io->msg, io->msg_len, io->out, is224) != 0)
        return FW_ERR;
    io->out_len = n;
    return FW_OK;
}
#endif

#if defined(FW_OP_SHA224)
static int sha224_run(const fw_params *p, fw_io *io)
{
    (void)p;
    return sha256_common(io, 1);
}
#define FW_GLUE_SHA224 any_supports, sha224_run
#endif

#if defined(FW_OP_SHA256)
static int sha256_run(const fw_params *p, fw_io *io)
{
    (void)p;
    return sha256_common(io, 0);
}
#define FW_GLUE_SHA256 any_supports, sha256_run
#endif

#if defined(FW_OP_SHA384) || defined(FW_OP_SHA512)
static int sha512_common(fw_io *io, int is384)
{
    size_t n = is384 ? 48 : 64; /* SHA-384 writes only its 48 bytes */

    if (io->out_cap < n || mbedtls_sha512_ret(io->msg, io->msg_len, io->out, is384) != 0)
        return FW_ERR;
    io->out_len = n;
    return FW_OK;
}
#endif

#if defined(FW_OP_SHA384)
static int sha384_run(const fw_params *p, fw_io *io)
{
    (void)p;
    return sha512_common(io, 1);
}
#define FW_GLUE_SHA384 any_supports, sha384_run
#endif

#if defined(FW_OP_SHA512)
static int sha512_run(const fw_params *p, fw_io *io)
{
    (void)p;
    return sha512_common(io, 0);
}
#define FW_GLUE_SHA512 any_supports, sha512_run
#endif

/* ---- ECDH (P-256: big-endian d, 04||X||Y, z = X; X25519: RFC 7748 little-endian bytes) --- */

#if defined(FW_OP_ECDH_KEYGEN)
/* Public key from the private key: Q = d*G. mbedtls_ecp_read_key loads the group and, for
 * X25519, reads d little-endian and clamps it; point_write_binary writes the u-coordinate
 * little-endian for X25519. The RNG only blinds the multiplication. */
static int ecdh_keygen_run(const fw_params *p, fw_io *io)
{
    mbedtls_ecp_keypair kp;
    size_t olen = 0;
    int ret;

    if (io->key_len != EC_BYTES)
        return FW_ERR;
    mbedtls_ecp_keypair_init(&kp);
    ret = mbedtls_ecp_read_key(ecdh_curve(p), &kp, io->key, io->key_len);
    if (ret == 0)
        ret = mbedtls_ecp_mul(&kp.grp, &kp.Q, &kp.d, &kp.grp.G, fw_random, NULL);
    if (ret == 0)
        ret = mbedtls_ecp_point_write_binary(&kp.grp, &kp.Q, MBEDTLS_ECP_PF_UNCOMPRESSED,
                                             &olen, io->out, io->out_cap);
    mbedtls_ecp_keypair_free(&kp);
    if (ret != 0)
        return FW_ERR;
    io->out_len = olen;
    return FW_OK;
}
#define FW_GLUE_ECDH_KEYGEN ecdh_supports, ecdh_keygen_run
#endif

#if defined(FW_OP_ECDH_SHARED_SECRET)
/* z = x(d*peer): big-endian for P-256, little-endian for X25519. mbedtls_ecdh_compute_shared
 * checks the peer point (on the curve; for X25519 not a low-order point). */
static int ecdh_shared_run(const fw_params *p, fw_io *io)
{
    mbedtls_ecp_group_id id = ecdh_curve(p);
    mbedtls_ecp_keypair kp;
    mbedtls_ecp_point peer;
    mbedtls_mpi z;
    int ret;

    if (io->key_len != EC_BYTES || io->out_cap < EC_BYTES)
        return FW_ERR;
    mbedtls_ecp_keypair_init(&kp);
    mbedtls_ecp_point_init(&peer);
    mbedtls_mpi_init(&z);
    ret = mbedtls_ecp_read_key(id, &kp, io->key, io->key_len);
    if (ret == 0)
        ret = mbedtls_ecp_point_read_binary(&kp.grp, &peer, io->peer, io->peer_len);
    if (ret == 0)
        ret = mbedtls_ecdh_compute_shared(&kp.grp, &z, &peer, &kp.d, fw_random, NULL);
    if (ret == 0)
        ret = id == MBEDTLS_ECP_DP_CURVE25519 ? mbedtls_mpi_write_binary_le(&z, io->out, EC_BYTES)
                                              : mbedtls_mpi_write_binary(&z, io->out, EC_BYTES);
    mbedtls_mpi_free(&z);
    mbedtls_ecp_point_free(&peer);
    mbedtls_ecp_keypair_free(&kp);
    if (ret != 0)
        return FW_ERR;
    io->out_len = EC_BYTES;
    return FW_OK;
}
#define FW_GLUE_ECDH_SHARED_SECRET ecdh_supports, ecdh_shared_run
#endif

/* ---- ECDSA P-256 (hash given; sig = r||s, 32 bytes each, big-endian) ----------------------- */

#if defined(FW_OP_ECDSA_SIGN)
/* The nonce k (and the blinding) come from fw_random. */
static int ecdsa_sign_run(const fw_params *p, fw_io *io)
{
    mbedtls_ecp_keypair kp;
    mbedtls_mpi r, s;
    int ret;

    (void)p;
    if (io->key_len != EC_BYTES || io->out_cap < 2 * EC_BYTES)
        return FW_ERR;
    mbedtls_ecp_keypair_init(&kp);
    mbedtls_mpi_init(&r);
    mbedtls_mpi_init(&s);
    ret = mbedtls_ecp_read_key(MBEDTLS_ECP_DP_SECP256R1, &kp, io->key, io->key_len);
    if (ret == 0)
        ret = mbedtls_ecdsa_sign(&kp.grp, &r, &s, &kp.d, io->msg, io->msg_len, fw_random, NULL);
    if (ret == 0)
        ret = mbedtls_mpi_write_binary(&r, io->out, EC_BYTES);
    if (ret == 0)
        ret = mbedtls_mpi_write_binary(&s, io->out + EC_BYTES, EC_BYTES);
    mbedtls_mpi_free(&s);
    mbedtls_mpi_free(&r);
    mbedtls_ecp_keypair_free(&kp);
    if (ret != 0)
        return FW_ERR;
    io->out_len = 2 * EC_BYTES;
    return FW_OK;
}
#define FW_GLUE_ECDSA_SIGN ecdsa_supports, ecdsa_sign_run
#endif

#if defined(FW_OP_ECDSA_VERIFY)
/* out = 01 (valid) or 00. A signature that does not verify, r or s out of range, or a public
 * key that is not a point of the curve is a result 00; only other failures (memory) are errors. */
static int ecdsa_verify_run(const fw_params *p, fw_io *io)
{
    mbedtls_ecp_group grp;
    mbedtls_ecp_point q;
    mbedtls_mpi r, s;
    int ret;

    (void)p;
    if (io->sig_len != 2 * EC_BYTES || io->out_cap < 1)
        return FW_ERR;
    mbedtls_ecp_group_init(&grp);
    mbedtls_ecp_point_init(&q);
    mbedtls_mpi_init(&r);
    mbedtls_mpi_init(&s);
    ret = mbedtls_ecp_group_load(&grp, MBEDTLS_ECP_DP_SECP256R1);
    if (ret == 0)
        ret = mbedtls_mpi_read_binary(&r, io->sig, EC_BYTES);
    if (ret == 0)
        ret = mbedtls_mpi_read_binary(&s, io->sig + EC_BYTES, EC_BYTES);
    if (ret == 0) {
        ret = mbedtls_ecp_point_read_binary(&grp, &q, io->peer, io->peer_len);
        if (ret == MBEDTLS_ERR_ECP_BAD_INPUT_DATA || ret == MBEDTLS_ERR_ECP_FEATURE_UNAVAILABLE)
            ret = MBEDTLS_ERR_ECP_INVALID_KEY; /* not an uncompressed point */
    }
    if (ret == 0)
        ret = mbedtls_ecdsa_verify(&grp, io->msg, io->msg_len, &q, &r, &s);
    mbedtls_mpi_free(&s);
    mbedtls_mpi_free(&r);
    mbedtls_ecp_point_free(&q);
    mbedtls_ecp_group_free(&grp);
    if (ret != 0 && ret != MBEDTLS_ERR_ECP_VERIFY_FAILED && ret != MBEDTLS_ERR_ECP_INVALID_KEY)
        return FW_ERR;
    io->out[0] = ret == 0 ? 1 : 0;
    io->out_len = 1;
    return FW_OK;
}
#define FW_GLUE_ECDSA_VERIFY ecdsa_supports, ecdsa_verify_run
#endif

/* ---- CTR_DRBG (AES-256, derivation function, no prediction resistance) ------------------------
 *
 * Inputs. fw_io has six byte inputs; the CAVP flow of the vectors (docs/protocol.md, "compute")
 * is mapped onto them as follows (docs/firmware.md, "CTR_DRBG inputs on the firmware"):
 *   key  = entropy (32 B) || nonce (the rest: 16 B in CAVP AES-256)      instantiate
 *   msg  = perso                                                         instantiate
 *   iv   = entropy_reseed (32 B)                                         reseed
 *   aad  = add_reseed                                                    reseed
 *   peer = add1 (its generate's output is discarded)
 *   sig  = add2
 *   out  = the bytes of the second generate (the vectors' "bits"; params.bytes, 64 when absent)
 * The entropy reaches mbedTLS through a custom entropy callback reading the given bytes (a cursor),
 * as on the host (harness/host/engine_mbedtls.c): instantiate asks it for 32 bytes of entropy,
 * then for the nonce; reseed for 32 bytes. No entropy is gathered anywhere.
 *
 * Which flow `run` takes, for all three ops alike:
 *  - Known-answer call: iv, peer or sig present (the CAVP vectors always carry entropy_reseed).
 *    The whole CAVP flow on a fresh context: instantiate(key, msg); reseed(iv, aad) when iv is
 *    present; generate(peer), discarded; generate(sig) -> out. One firmware call cannot test one
 *    step of the flow alone, so the three ops return the same bytes and the same vectors check
 *    them (targets/verify.py also matches the CTR_DRBG vectors to all three ops). The context is freed
 *    afterwards, so no cell continues from a vector's state.
 *  - Timing cell: iv, peer and sig all empty (the cells carry key = entropy || nonce only). One
 *    call is one step on a static context kept between calls:
 *      ctr-drbg-instantiate: free + seed the context from key (entropy || nonce) and msg (perso);
 *        out is empty.
 *      ctr-drbg-reseed: one reseed with 32 bytes of entropy taken from the key input round and
 *        round from its byte 32 (the host engine's wrapping cursor does the same), aad as the
 *        additional input; out is empty.
 *      ctr-drbg-generate: params.bytes from the context, in requests of at most 1024 bytes (the
 *        most one mbedTLS call returns), no additional input; out = those bytes.
 *    For reseed and generate the context is instantiated from key and msg on first use, inside
 *    that call. The harness's first call of a cell is its untimed output-and-stack run, so no
 *    timed repetition includes the seeding, but that run's stack figure does (seeding is the
 *    deeper path: its 384-byte seed buffer and the derivation function). Automatic reseeding is
 *    off (interval INT_MAX), so a timed generate never includes a reseed.
 */

#if defined(GLUE_DRBG)
#define DRBG_ENTROPY 32                                   /* bytes of entropy per (re)seed */
#define DRBG_CHUNK MBEDTLS_CTR_DRBG_MAX_REQUEST           /* most bytes one generate returns */

#if defined(MBEDTLS_CTR_DRBG_USE_128_BIT_KEY)
#error "the catalog's CTR_DRBG is AES-256: MBEDTLS_CTR_DRBG_USE_128_BIT_KEY must be off"
#endif

enum { DRBG_INSTANTIATE, DRBG_RESEED, DRBG_GENERATE };

static mbedtls_ctr_drbg_context drbg_ctx;
static cb_cursor drbg_cur;
static int drbg_ready;                   /* drbg_ctx is instantiated (timing cells only) */

/* The entropy callback: drbg_cur's bytes (cb_cursor.h), shared with the host engine. */
static int drbg_entropy(void *ctx, unsigned char *out, size_t len)
{
    return cb_cursor_read(ctx, out, len) == 0 ? 0 : MBEDTLS_ERR_CTR_DRBG_ENTROPY_SOURCE_FAILED;
}

/* Free and re-seed drbg_ctx: seed material = key (entropy || nonce) || msg (perso), as in
 * SP 800-90A and CAVP. mbedtls_ctr_drbg_free leaves the context as mbedtls_ctr_drbg_init does;
 * the nonce length can only be set before seeding. */
static int drbg_instantiate(const fw_io *io)
{
    int ret;

    drbg_ready = 0;
    mbedtls_ctr_drbg_free(&drbg_ctx);
    mbedtls_ctr_drbg_init(&drbg_ctx);
    drbg_cur.buf = io->key;
    drbg_cur.len = io->key_len;
    drbg_cur.pos = 0;
    drbg_cur.wrap = 0;
    mbedtls_ctr_drbg_set_entropy_len(&drbg_ctx, DRBG_ENTROPY);
    ret = mbedtls_ctr_drbg_set_nonce_len(&drbg_ctx, io->key_len - DRBG_ENTROPY);
    if (ret == 0)
        ret = mbedtls_ctr_drbg_seed(&drbg_ctx, drbg_entropy, &drbg_cur, io->msg, io->msg_len);
    if (ret != 0)
        return ret;
    mbedtls_ctr_drbg_set_prediction_resistance(&drbg_ctx, MBEDTLS_CTR_DRBG_PR_OFF);
    mbedtls_ctr_drbg_set_reseed_interval(&drbg_ctx, INT_MAX);
    drbg_ready = 1;
    return 0;
}

/* The CAVP flow; out = generate(add2) after generate(add1). */
static int drbg_cavp(size_t nbytes, fw_io *io)
{
    int ret;

    if (nbytes > DRBG_CHUNK)
        return MBEDTLS_ERR_CTR_DRBG_REQUEST_TOO_BIG;
    ret = drbg_instantiate(io);
    if (ret == 0 && io->iv_len > 0) {
        drbg_cur.buf = io->iv;
        drbg_cur.len = io->iv_len;
        drbg_cur.pos = 0;
        drbg_cur.wrap = 0;
        mbedtls_ctr_drbg_set_entropy_len(&drbg_ctx, io->iv_len);
        ret = mbedtls_ctr_drbg_reseed(&drbg_ctx, io->aad, io->aad_len);
    }
    if (ret == 0)
        ret = mbedtls_ctr_drbg_random_with_add(&drbg_ctx, io->out, nbytes, io->peer, io->peer_len);
    if (ret == 0)
        ret = mbedtls_ctr_drbg_random_with_add(&drbg_ctx, io->out, nbytes, io->sig, io->sig_len);
    mbedtls_ctr_drbg_free(&drbg_ctx);
    drbg_ready = 0;
    return ret;
}

static int drbg_run(int which, const fw_params *p, fw_io *io)
{
    size_t nbytes = p->bytes < 0 ? 64 : (size_t)p->bytes;
    int ret = 0;

    if (io->key_len < DRBG_ENTROPY)
        return FW_ERR;
    io->out_len = 0;
    if (io->iv_len > 0 || io->peer_len > 0 || io->sig_len > 0) {          /* known-answer call */
        if (io->out_cap < nbytes || drbg_cavp(nbytes, io) != 0)
            return FW_ERR;
        io->out_len = nbytes;
        return FW_OK;
    }
    if (which == DRBG_INSTANTIATE)                                          /* timing cells */
        return drbg_instantiate(io) == 0 ? FW_OK : FW_ERR;
    if (!drbg_ready && drbg_instantiate(io) != 0)
        return FW_ERR;
    if (which == DRBG_RESEED) {
        drbg_cur.buf = io->key;
        drbg_cur.len = io->key_len;
        drbg_cur.pos = DRBG_ENTROPY;
        drbg_cur.wrap = 1;
        mbedtls_ctr_drbg_set_entropy_len(&drbg_ctx, DRBG_ENTROPY);
        ret = mbedtls_ctr_drbg_reseed(&drbg_ctx, io->aad, io->aad_len);
    } else {
        uint8_t *o = io->out;
        size_t left = nbytes;

        if (io->out_cap < nbytes)
            return FW_ERR;
        while (ret == 0 && left > 0) {
            size_t n = left < DRBG_CHUNK ? left : DRBG_CHUNK;
            ret = mbedtls_ctr_drbg_random_with_add(&drbg_ctx, o, n, NULL, 0);
            o += n;
            left -= n;
        }
        if (ret == 0)
            io->out_len = nbytes;
    }
    return ret == 0 ? FW_OK : FW_ERR;
}
#endif

#if defined(FW_OP_CTR_DRBG_INSTANTIATE)
static int drbg_instantiate_run(const fw_params *p, fw_io *io)
{
    return drbg_run(DRBG_INSTANTIATE, p, io);
}
#define FW_GLUE_CTR_DRBG_INSTANTIATE any_supports, drbg_instantiate_run
#endif

#if defined(FW_OP_CTR_DRBG_RESEED)
static int drbg_reseed_run(const fw_params *p, fw_io *io)
{
    return drbg_run(DRBG_RESEED, p, io);
}
#define FW_GLUE_CTR_DRBG_RESEED any_supports, drbg_reseed_run
#endif

#if defined(FW_OP_CTR_DRBG_GENERATE)
static int drbg_generate_run(const fw_params *p, fw_io *io)
{
    return drbg_run(DRBG_GENERATE, p, io);
}
#define FW_GLUE_CTR_DRBG_GENERATE any_supports, drbg_generate_run
#endif

/* ---- EC-JPAKE (P-256, SHA-256) ---------------------------------------------------------------- */

#if defined(FW_OP_ECJPAKE_EXCHANGE)
/* One key pair with its proof in a round message: X (1-byte length + 65) || V (1 + 65) ||
 * r (1 + at most 32). Round one carries two of them (330 bytes); round two one, plus the 3-byte
 * ECParameters from the server: so 330 bytes hold every message of the exchange. */
#define JPAKE_KKP (2 * (2 + 2 * EC_BYTES) + 1 + EC_BYTES)
#define JPAKE_BUF (2 * JPAKE_KKP)

static int ecjpake_supports(const fw_params *p, const char **why)
{
    if (p->curve[0] != '\0' && strncmp(p->curve, "p256", sizeof p->curve) != 0) {
        *why = "EC-JPAKE is benchmarked on P-256 only";
        return FW_UNSUPPORTED;
    }
    return FW_OK;
}

/* The whole exchange between a fresh client and a fresh server context, as on the host
 * (harness/host/engine_mbedtls.c): round one both ways (client, then server), round two both
 * ways (server, then client, the order of the TLS/Thread flight), then each side's premaster
 * secret (SHA-256 of the shared point, 32 bytes). Inputs: key = password_client,
 * iv = password_server (fw_io has no slots named after them); out = pms_client || pms_server
 * (the host's compute returns the two separately). Every random value comes from fw_random.
 * With equal passwords the two secrets must be equal: if they differ the call fails, so a broken
 * build cannot pass (there are no stored EC-JPAKE vectors; the host checks out's two halves). */
static int ecjpake_run(const fw_params *p, fw_io *io)
{
    mbedtls_ecjpake_context cli, srv;
    unsigned char buf[JPAKE_BUF];
    size_t len = 0, pc_len = 0, ps_len = 0;
    int ret;

    (void)p;
    if (io->key_len == 0 || io->iv_len == 0 || io->out_cap < 2 * EC_BYTES)
        return FW_ERR;
    mbedtls_ecjpake_init(&cli);
    mbedtls_ecjpake_init(&srv);
    ret = mbedtls_ecjpake_setup(&cli, MBEDTLS_ECJPAKE_CLIENT, MBEDTLS_MD_SHA256,
                                MBEDTLS_ECP_DP_SECP256R1, io->key, io->key_len);
    if (ret == 0)
        ret = mbedtls_ecjpake_setup(&srv, MBEDTLS_ECJPAKE_SERVER, MBEDTLS_MD_SHA256,
                                    MBEDTLS_ECP_DP_SECP256R1, io->iv, io->iv_len);
    if (ret == 0)
        ret = mbedtls_ecjpake_write_round_one(&cli, buf, sizeof buf, &len, fw_random, NULL);
    if (ret == 0)
        ret = mbedtls_ecjpake_read_round_one(&srv, buf, len);
    if (ret == 0)
        ret = mbedtls_ecjpake_write_round_one(&srv, buf, sizeof buf, &len, fw_random, NULL);
    if (ret == 0)
        ret = mbedtls_ecjpake_read_round_one(&cli, buf, len);
    if (ret == 0)
        ret = mbedtls_ecjpake_write_round_two(&srv, buf, sizeof buf, &len, fw_random, NULL);
    if (ret == 0)
        ret = mbedtls_ecjpake_read_round_two(&cli, buf, len);
    if (ret == 0)
        ret = mbedtls_ecjpake_write_round_two(&cli, buf, sizeof buf, &len, fw_random, NULL);
    if (ret == 0)
        ret = mbedtls_ecjpake_read_round_two(&srv, buf, len);
    if (ret == 0)
        ret = mbedtls_ecjpake_derive_secret(&cli, io->out, EC_BYTES, &pc_len, fw_random, NULL);
    if (ret == 0)
        ret = mbedtls_ecjpake_derive_secret(&srv, io->out + EC_BYTES, EC_BYTES, &ps_len,
                                            fw_random, NULL);
    mbedtls_ecjpake_free(&cli);
    mbedtls_ecjpake_free(&srv);
    if (ret != 0 || pc_len != EC_BYTES || ps_len != EC_BYTES)
        return FW_ERR;
    if (io->key_len == io->iv_len && memcmp(io->key, io->iv, io->key_len) == 0 &&
        memcmp(io->out, io->out + EC_BYTES, EC_BYTES) != 0)
        return FW_ERR;
    io->out_len = 2 * EC_BYTES;
    return FW_OK;
}
#define FW_GLUE_ECJPAKE_EXCHANGE ecjpake_supports, ecjpake_run
#endif

/* The op table: the rows of fw_ops_table.h (generated from the catalog) for the FW_GLUE_* above. */
#include "fw_ops_table.h"
