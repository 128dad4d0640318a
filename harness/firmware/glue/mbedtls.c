/* mbedtls.c - firmware glue for mbedTLS 2.28 (config/mbedtls_config.h).
 *
 * Each op and its table entry are built only when FW_OP_<ID> is defined; with none defined the
 * table holds only the sentinel (the "empty harness" image). One operation includes the key
 * setup: context init, setkey (or group load and key read), the operation itself, and free.
 * Heap use goes through fw_calloc/fw_free (MBEDTLS_PLATFORM_*_MACRO in the config).
 */
#include <string.h>

#include "fw.h"

#include "mbedtls/version.h"
#include "mbedtls/aes.h"
#include "mbedtls/ccm.h"
#include "mbedtls/gcm.h"
#include "mbedtls/chachapoly.h"
#include "mbedtls/sha1.h"
#include "mbedtls/sha256.h"
#include "mbedtls/sha512.h"
#include "mbedtls/bignum.h"
#include "mbedtls/ecp.h"
#include "mbedtls/ecdh.h"
#include "mbedtls/ecdsa.h"

const char fw_lib_name[] = "mbedtls";
const char fw_lib_version[] = MBEDTLS_VERSION_STRING;

/* Which shared helpers the selected ops need. */
#if defined(FW_OP_AES_ECB_ENCRYPT) || defined(FW_OP_AES_CBC_ENCRYPT) || \
    defined(FW_OP_AES_CTR_ENCRYPT) || defined(FW_OP_AES_CCM_ENCRYPT) || \
    defined(FW_OP_AES_GCM_ENCRYPT)
#define GLUE_AES 1
#endif
#if defined(FW_OP_CHACHA20_POLY1305_ENCRYPT) || defined(FW_OP_SHA1) || \
    defined(FW_OP_SHA224) || defined(FW_OP_SHA256) || defined(FW_OP_SHA384) || \
    defined(FW_OP_SHA512)
#define GLUE_ANY 1
#endif
#if defined(FW_OP_ECDH_KEYGEN) || defined(FW_OP_ECDH_SHARED_SECRET)
#define GLUE_ECDH 1
#endif
#if defined(FW_OP_ECDSA_SIGN) || defined(FW_OP_ECDSA_VERIFY)
#define GLUE_ECDSA 1
#endif

#define EC_BYTES 32 /* P-256 and X25519 scalars, coordinates and secrets */

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
    mbedtls_aes_context aes;
    size_t i;
    int ret;

    if (!aes_key_ok(p, io) || io->msg_len % 16 != 0 || io->out_cap < io->msg_len)
        return FW_ERR;
    mbedtls_aes_init(&aes);
    ret = mbedtls_aes_setkey_enc(&aes, io->key, (unsigned)p->key_bits);
    for (i = 0; ret == 0 && i < io->msg_len; i += 16)
        ret = mbedtls_aes_crypt_ecb(&aes, MBEDTLS_AES_ENCRYPT, io->msg + i, io->out + i);
    mbedtls_aes_free(&aes);
    if (ret != 0)
        return FW_ERR;
    io->out_len = io->msg_len;
    return FW_OK;
}
#endif

#if defined(FW_OP_AES_CBC_ENCRYPT)
static int aes_cbc_run(const fw_params *p, fw_io *io)
{
    mbedtls_aes_context aes;
    unsigned char iv[16]; /* mbedTLS updates the IV in place */
    int ret;

    if (!aes_key_ok(p, io) || io->iv_len != 16 || io->msg_len % 16 != 0 ||
        io->out_cap < io->msg_len)
        return FW_ERR;
    memcpy(iv, io->iv, 16);
    mbedtls_aes_init(&aes);
    ret = mbedtls_aes_setkey_enc(&aes, io->key, (unsigned)p->key_bits);
    if (ret == 0)
        ret = mbedtls_aes_crypt_cbc(&aes, MBEDTLS_AES_ENCRYPT, io->msg_len, iv, io->msg, io->out);
    mbedtls_aes_free(&aes);
    if (ret != 0)
        return FW_ERR;
    io->out_len = io->msg_len;
    return FW_OK;
}
#endif

#if defined(FW_OP_AES_CTR_ENCRYPT)
/* iv = the full 16-byte initial counter block; mbedTLS increments all 128 bits big-endian. */
static int aes_ctr_run(const fw_params *p, fw_io *io)
{
    mbedtls_aes_context aes;
    unsigned char ctr[16], stream[16];
    size_t off = 0;
    int ret;

    if (!aes_key_ok(p, io) || io->iv_len != 16 || io->out_cap < io->msg_len)
        return FW_ERR;
    memcpy(ctr, io->iv, 16);
    mbedtls_aes_init(&aes);
    ret = mbedtls_aes_setkey_enc(&aes, io->key, (unsigned)p->key_bits);
    if (ret == 0)
        ret = mbedtls_aes_crypt_ctr(&aes, io->msg_len, &off, ctr, stream, io->msg, io->out);
    mbedtls_aes_free(&aes);
    if (ret != 0)
        return FW_ERR;
    io->out_len = io->msg_len;
    return FW_OK;
}
#endif

#if defined(FW_OP_AES_CCM_ENCRYPT)
static int ccm_tag_bytes(const fw_params *p)
{
    return p->tag_bytes < 0 ? 16 : (int)p->tag_bytes;
}

static int aes_ccm_supports(const fw_params *p, const char **why)
{
    int tag = ccm_tag_bytes(p);
    int nonce = p->nonce_bytes < 0 ? 13 : (int)p->nonce_bytes;

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
    mbedtls_ccm_context ccm;
    size_t tag_len = (size_t)ccm_tag_bytes(p);
    int ret;

    if (!aes_key_ok(p, io) || io->out_cap < io->msg_len + tag_len)
        return FW_ERR;
    mbedtls_ccm_init(&ccm);
    ret = mbedtls_ccm_setkey(&ccm, MBEDTLS_CIPHER_ID_AES, io->key, (unsigned)p->key_bits);
    if (ret == 0)
        ret = mbedtls_ccm_encrypt_and_tag(&ccm, io->msg_len, io->iv, io->iv_len,
                                          io->aad, io->aad_len, io->msg, io->out,
                                          io->out + io->msg_len, tag_len);
    mbedtls_ccm_free(&ccm);
    if (ret != 0)
        return FW_ERR;
    io->out_len = io->msg_len + tag_len;
    return FW_OK;
}
#endif

#if defined(FW_OP_AES_GCM_ENCRYPT)
/* out = ciphertext || 16-byte tag. */
static int aes_gcm_run(const fw_params *p, fw_io *io)
{
    mbedtls_gcm_context gcm;
    int ret;

    if (!aes_key_ok(p, io) || io->iv_len == 0 || io->out_cap < io->msg_len + 16)
        return FW_ERR;
    mbedtls_gcm_init(&gcm);
    ret = mbedtls_gcm_setkey(&gcm, MBEDTLS_CIPHER_ID_AES, io->key, (unsigned)p->key_bits);
    if (ret == 0)
        ret = mbedtls_gcm_crypt_and_tag(&gcm, MBEDTLS_GCM_ENCRYPT, io->msg_len,
                                        io->iv, io->iv_len, io->aad, io->aad_len,
                                        io->msg, io->out, 16, io->out + io->msg_len);
    mbedtls_gcm_free(&gcm);
    if (ret != 0)
        return FW_ERR;
    io->out_len = io->msg_len + 16;
    return FW_OK;
}
#endif

/* ---- ChaCha20-Poly1305 ---------------------------------------------------------------- */

#if defined(FW_OP_CHACHA20_POLY1305_ENCRYPT)
/* 32-byte key, 12-byte nonce; out = ciphertext || 16-byte tag. */
static int chachapoly_run(const fw_params *p, fw_io *io)
{
    mbedtls_chachapoly_context cp;
    int ret;

    (void)p;
    if (io->key_len != 32 || io->iv_len != 12 || io->out_cap < io->msg_len + 16)
        return FW_ERR;
    mbedtls_chachapoly_init(&cp);
    ret = mbedtls_chachapoly_setkey(&cp, io->key);
    if (ret == 0)
        ret = mbedtls_chachapoly_encrypt_and_tag(&cp, io->msg_len, io->iv, io->aad,
                                                 io->aad_len, io->msg, io->out,
                                                 io->out + io->msg_len);
    mbedtls_chachapoly_free(&cp);
    if (ret != 0)
        return FW_ERR;
    io->out_len = io->msg_len + 16;
    return FW_OK;
}
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
#endif

#if defined(FW_OP_SHA256)
static int sha256_run(const fw_params *p, fw_io *io)
{
    (void)p;
    return sha256_common(io, 0);
}
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
#endif

#if defined(FW_OP_SHA512)
static int sha512_run(const fw_params *p, fw_io *io)
{
    (void)p;
    return sha512_common(io, 0);
}
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
#endif

/* ---- the table ------------------------------------------------------------------------------ */

const fw_op fw_lib_ops[] = {
#if defined(FW_OP_AES_ECB_ENCRYPT)
    {"aes-ecb-encrypt", aes_blocks_supports, aes_ecb_run},
#endif
#if defined(FW_OP_AES_CBC_ENCRYPT)
    {"aes-cbc-encrypt", aes_blocks_supports, aes_cbc_run},
#endif
#if defined(FW_OP_AES_CTR_ENCRYPT)
    {"aes-ctr-encrypt", aes_supports, aes_ctr_run},
#endif
#if defined(FW_OP_AES_CCM_ENCRYPT)
    {"aes-ccm-encrypt", aes_ccm_supports, aes_ccm_run},
#endif
#if defined(FW_OP_AES_GCM_ENCRYPT)
    {"aes-gcm-encrypt", aes_supports, aes_gcm_run},
#endif
#if defined(FW_OP_CHACHA20_POLY1305_ENCRYPT)
    {"chacha20-poly1305-encrypt", any_supports, chachapoly_run},
#endif
#if defined(FW_OP_SHA1)
    {"sha1", any_supports, sha1_run},
#endif
#if defined(FW_OP_SHA224)
    {"sha224", any_supports, sha224_run},
#endif
#if defined(FW_OP_SHA256)
    {"sha256", any_supports, sha256_run},
#endif
#if defined(FW_OP_SHA384)
    {"sha384", any_supports, sha384_run},
#endif
#if defined(FW_OP_SHA512)
    {"sha512", any_supports, sha512_run},
#endif
#if defined(FW_OP_ECDH_KEYGEN)
    {"ecdh-keygen", ecdh_supports, ecdh_keygen_run},
#endif
#if defined(FW_OP_ECDH_SHARED_SECRET)
    {"ecdh-shared-secret", ecdh_supports, ecdh_shared_run},
#endif
#if defined(FW_OP_ECDSA_SIGN)
    {"ecdsa-sign", ecdsa_supports, ecdsa_sign_run},
#endif
#if defined(FW_OP_ECDSA_VERIFY)
    {"ecdsa-verify", ecdsa_supports, ecdsa_verify_run},
#endif
    {NULL, NULL, NULL},
};

const int fw_lib_n_ops = (int)(sizeof fw_lib_ops / sizeof fw_lib_ops[0]) - 1;
