/* psa.c - glue for the PSA Crypto API (psa/crypto.h), as Mbed TLS 3.5 implements it
 * (config/psa_mbedtls_config.h). The same file is the core of the `psa` host engine
 * (harness/host/engine_psa.c compiles it with every FW_OP_* defined), so firmware and host run
 * the same calls.
 *
 * Every op goes through the PSA API only: a key is imported (psa_import_key) as a volatile key,
 * used, and destroyed within the one operation, so one operation includes the key setup (the
 * catalog's rekey=1). With rekey=0 (fw.h) the cipher and AEAD ops import their key once per cell,
 * in the cell's first, untimed call, and every later call uses that key id (cell_key below); the
 * PSA API has no handle on anything finer, so what a library does per operation with the key
 * (Mbed TLS 3.5's builtin AES expands it again in every psa_cipher_encrypt_setup and
 * psa_aead_encrypt) stays in the timed operation, as on the host's psa engine. Whatever serves a
 * call, builtin software or a driver that the library's driver wrappers dispatch to, is the
 * library's business: this glue does not change.
 *
 * Randomness: MBEDTLS_PSA_CRYPTO_EXTERNAL_RNG; mbedtls_psa_external_get_random() below hands out
 * the harness's deterministic fw_random bytes (ECDSA nonces, blinding). Benchmark inputs only.
 */
#include <string.h>

#include "fw.h"

#include "psa/crypto.h"
#include "mbedtls/version.h"

/* Which implementation serves the calls. Built with PSA_CRYPTO_DRIVER_TEST, Mbed TLS's driver
 * wrappers hand every call to its transparent test driver (tests/src/drivers, a stand-in for an
 * accelerator), and every op below checks that the driver's hit counter moved: an op the driver
 * did not serve fails (and with it the op's known-answer tests), so "served by" is proven per
 * call, not assumed. The orchestrator records the "(served by ...)" of this version string in
 * every cell's result (served_by). A vendor's glue says its own driver here. */
#if defined(PSA_CRYPTO_DRIVER_TEST)
#include "test/drivers/test_driver.h"
#define SERVED_BY "driver: mbedtls_test_transparent"
#define DRV_BEGIN(hits) unsigned long drv_hits0 = (hits)
#define DRV_SERVED(hits) ((hits) != drv_hits0)
#else
#define SERVED_BY "builtin"
#define DRV_BEGIN(hits) ((void)0)
#define DRV_SERVED(hits) 1
#endif

const char fw_lib_name[] = "psa";
const char fw_lib_version[] = "Mbed TLS " MBEDTLS_VERSION_STRING " PSA Crypto API (served by " SERVED_BY ")";

#define EC_BYTES 32 /* P-256 and X25519 scalars, coordinates and secrets */

psa_status_t mbedtls_psa_external_get_random(mbedtls_psa_external_random_context_t *ctx,
                                             uint8_t *output, size_t output_size,
                                             size_t *output_length)
{
    (void)ctx;
    if (fw_random(NULL, output, output_size) != 0)
        return PSA_ERROR_INSUFFICIENT_ENTROPY;
    *output_length = output_size;
    return PSA_SUCCESS;
}

/* psa_crypto_init once; called from every supports() so that it is never inside a timed op. */
static int psa_ready(void)
{
    static int done;
    if (!done && psa_crypto_init() == PSA_SUCCESS)
        done = 1;
    return done;
}

#if defined(PSA_CB_HOST)
/* Host only: the psa engine (harness/host/engine_psa.c) sets this while it times a slot whose
 * key is set up once (rekey=0, and the fixed keys of the EC ops): the last imported key is kept
 * and handed out again while the same key material, type, algorithm and usage come back, so the
 * key setup is not inside every operation. Off, every operation imports and destroys its key, as
 * on the firmware (where this is compiled out). */
int glue_keep_key;
static struct {
    int valid;
    psa_key_type_t type;
    psa_algorithm_t alg;
    psa_key_usage_t usage;
    size_t len;
    uint8_t bytes[80];
    mbedtls_svc_key_id_t id;
} kept;
#endif

#if !defined(PSA_CB_HOST)
/* Firmware, rekey=0: the key imported by the cell's first call (cell_key), until the next cell. */
const uint8_t fw_lib_keeps_key = 1;     /* fw.h: the cipher and AEAD ops honour rekey=0 */
static mbedtls_svc_key_id_t fw_kept = MBEDTLS_SVC_KEY_ID_INIT;

/* Destroys the key a rekey=0 cell kept, so that neither its key slot nor its heap block outlives
 * the cell (the next cell's heap peak starts from an arena without it). */
static void drop_kept_key(void)
{
    if (!mbedtls_svc_key_id_is_null(fw_kept)) {
        psa_destroy_key(fw_kept);
        fw_kept = MBEDTLS_SVC_KEY_ID_INIT;
    }
}
#endif

/* A volatile key for one operation; 0 on failure. */
static mbedtls_svc_key_id_t import_key(psa_key_type_t type, psa_algorithm_t alg,
                                       psa_key_usage_t usage, const uint8_t *key, size_t len)
{
    psa_key_attributes_t attr = PSA_KEY_ATTRIBUTES_INIT;
    mbedtls_svc_key_id_t id = MBEDTLS_SVC_KEY_ID_INIT;

#if defined(PSA_CB_HOST)
    int same = kept.valid && kept.type == type && kept.alg == alg && kept.usage == usage &&
               kept.len == len && memcmp(kept.bytes, key, len) == 0;
    if (glue_keep_key && same)
        return kept.id;
    if (kept.valid) {
        psa_destroy_key(kept.id);
        kept.valid = 0;
    }
#endif
    psa_set_key_type(&attr, type);
    psa_set_key_algorithm(&attr, alg);
    psa_set_key_usage_flags(&attr, usage);
    if (psa_import_key(&attr, key, len, &id) != PSA_SUCCESS)
        return MBEDTLS_SVC_KEY_ID_INIT;
#if defined(PSA_CB_HOST)
    if (glue_keep_key && len <= sizeof kept.bytes) {
        kept.valid = 1;
        kept.type = type;
        kept.alg = alg;
        kept.usage = usage;
        kept.len = len;
        memcpy(kept.bytes, key, len);
        kept.id = id;
    }
#endif
    return id;
}

/* The end of a key's one operation: destroyed, unless it is the kept one (host only). */
static void release_key(mbedtls_svc_key_id_t id)
{
#if defined(PSA_CB_HOST)
    if (kept.valid && mbedtls_svc_key_id_equal(kept.id, id))
        return;
#endif
    psa_destroy_key(id);
}

static int key_ok(mbedtls_svc_key_id_t id)
{
    return !mbedtls_svc_key_id_is_null(id);
}

#if defined(FW_OP_AES_ECB_ENCRYPT) || defined(FW_OP_AES_CBC_ENCRYPT) || defined(FW_OP_AES_CTR_ENCRYPT) || \
    defined(FW_OP_AES_CCM_ENCRYPT) || defined(FW_OP_AES_GCM_ENCRYPT) || \
    defined(FW_OP_CHACHA20_POLY1305_ENCRYPT)
/* The key of a cipher or AEAD operation. rekey=1: imported for this operation (import_key).
 * rekey=0 on the firmware: imported only while fw_keyed is 0 (the cell's first, untimed call;
 * a key kept before is destroyed first), then the same id in every call; cell_key_done leaves
 * it alive. On the host the engine's glue_keep_key does this (import_key, release_key). */
static mbedtls_svc_key_id_t cell_key(const fw_params *p, psa_key_type_t type, psa_algorithm_t alg,
                                     const uint8_t *key, size_t len)
{
    mbedtls_svc_key_id_t id;

#if !defined(PSA_CB_HOST)
    if (p->rekey == 0) {
        if (fw_keyed)
            return fw_kept;
        drop_kept_key();
    }
#else
    (void)p;
#endif
    /* one call of import_key, which the compiler then inlines as before rekey=0 existed */
    id = import_key(type, alg, PSA_KEY_USAGE_ENCRYPT, key, len);
#if !defined(PSA_CB_HOST)
    if (p->rekey == 0) {
        fw_kept = id;
        fw_keyed = 1;
    }
#endif
    return id;
}

static void cell_key_done(const fw_params *p, mbedtls_svc_key_id_t id)
{
#if !defined(PSA_CB_HOST)
    if (p->rekey == 0)
        return;
#else
    (void)p;
#endif
    release_key(id);
}
#endif

/* Every op's supports() comes here. The harness asks it before each cell and known-answer test
 * and never between a cell's calls: the place, outside any timed operation, to start PSA and to
 * let go of a key the previous cell kept (rekey=0). */
static int any_supports(const fw_params *p, const char **why)
{
    (void)p;
#if !defined(PSA_CB_HOST)
    drop_kept_key();
#endif
    if (!psa_ready()) {
        *why = "psa_crypto_init failed";
        return FW_UNSUPPORTED;
    }
    return FW_OK;
}

__attribute__((unused)) static int aes_bits_ok(const fw_params *p, const char **why)
{
    if (p->key_bits != 128 && p->key_bits != 192 && p->key_bits != 256) {
        *why = "AES keys are 128, 192 or 256 bits";
        return FW_UNSUPPORTED;
    }
    return any_supports(p, why);
}

__attribute__((unused)) static int aes_key_ok(const fw_params *p, const fw_io *io)
{
    return io->key_len * 8 == (size_t)p->key_bits;
}

/* ---- AES block modes: psa_cipher_* -------------------------------------------------------- */

#if defined(FW_OP_AES_CTR_ENCRYPT) || defined(FW_OP_AES_GCM_ENCRYPT)
static int aes_supports(const fw_params *p, const char **why)
{
    return aes_bits_ok(p, why);
}
#endif

#if defined(FW_OP_AES_ECB_ENCRYPT) || defined(FW_OP_AES_CBC_ENCRYPT)
static int aes_blocks_supports(const fw_params *p, const char **why)
{
    if (p->bytes >= 0 && p->bytes % 16 != 0) {
        *why = "AES-ECB/CBC without padding needs a multiple of 16 bytes";
        return FW_UNSUPPORTED;
    }
    return aes_bits_ok(p, why);
}
#endif

#if defined(FW_OP_AES_ECB_ENCRYPT) || defined(FW_OP_AES_CBC_ENCRYPT) || defined(FW_OP_AES_CTR_ENCRYPT)
/* psa_cipher_encrypt_setup, set_iv (not for ECB), update, finish; out = ciphertext. */
static int cipher_run(const fw_params *p, fw_io *io, psa_algorithm_t alg, size_t iv_len)
{
    psa_cipher_operation_t op = PSA_CIPHER_OPERATION_INIT;
    mbedtls_svc_key_id_t key;
    size_t n1 = 0, n2 = 0;
    psa_status_t st;

    if (!aes_key_ok(p, io) || io->iv_len != iv_len || io->out_cap < io->msg_len)
        return FW_ERR;
    key = cell_key(p, PSA_KEY_TYPE_AES, alg, io->key, io->key_len);
    if (!key_ok(key))
        return FW_ERR;
    DRV_BEGIN(mbedtls_test_driver_cipher_hooks.hits);
    st = psa_cipher_encrypt_setup(&op, key, alg);
    if (st == PSA_SUCCESS && iv_len > 0)
        st = psa_cipher_set_iv(&op, io->iv, iv_len);
    if (st == PSA_SUCCESS)
        st = psa_cipher_update(&op, io->msg, io->msg_len, io->out, io->out_cap, &n1);
    if (st == PSA_SUCCESS)
        st = psa_cipher_finish(&op, io->out + n1, io->out_cap - n1, &n2);
    psa_cipher_abort(&op);
    cell_key_done(p, key);
    if (st != PSA_SUCCESS || n1 + n2 != io->msg_len || !DRV_SERVED(mbedtls_test_driver_cipher_hooks.hits))
        return FW_ERR;
    io->out_len = n1 + n2;
    return FW_OK;
}
#endif

#if defined(FW_OP_AES_ECB_ENCRYPT)
static int aes_ecb_run(const fw_params *p, fw_io *io)
{
    return cipher_run(p, io, PSA_ALG_ECB_NO_PADDING, 0);
}
#define FW_GLUE_AES_ECB_ENCRYPT aes_blocks_supports, aes_ecb_run
#endif

#if defined(FW_OP_AES_CBC_ENCRYPT)
static int aes_cbc_run(const fw_params *p, fw_io *io)
{
    return cipher_run(p, io, PSA_ALG_CBC_NO_PADDING, 16);
}
#define FW_GLUE_AES_CBC_ENCRYPT aes_blocks_supports, aes_cbc_run
#endif

#if defined(FW_OP_AES_CTR_ENCRYPT)
/* iv = the full 16-byte initial counter block, incremented as one 128-bit big-endian number. */
static int aes_ctr_run(const fw_params *p, fw_io *io)
{
    return cipher_run(p, io, PSA_ALG_CTR, 16);
}
#define FW_GLUE_AES_CTR_ENCRYPT aes_supports, aes_ctr_run
#endif

/* ---- AEAD: psa_aead_encrypt (out = ciphertext || tag) ------------------------------------- */

#if defined(FW_OP_AES_CCM_ENCRYPT) || defined(FW_OP_AES_GCM_ENCRYPT) || \
    defined(FW_OP_CHACHA20_POLY1305_ENCRYPT)
static int aead_run(const fw_params *p, fw_io *io, psa_key_type_t type, psa_algorithm_t alg,
                    size_t tag_len)
{
    mbedtls_svc_key_id_t key;
    size_t olen = 0;
    psa_status_t st;

    if (io->out_cap < io->msg_len + tag_len)
        return FW_ERR;
    key = cell_key(p, type, alg, io->key, io->key_len);
    if (!key_ok(key))
        return FW_ERR;
    DRV_BEGIN(mbedtls_test_driver_aead_hooks.hits_encrypt);
    st = psa_aead_encrypt(key, alg, io->iv, io->iv_len, io->aad, io->aad_len,
                          io->msg, io->msg_len, io->out, io->out_cap, &olen);
    cell_key_done(p, key);
    if (st != PSA_SUCCESS || olen != io->msg_len + tag_len ||
        !DRV_SERVED(mbedtls_test_driver_aead_hooks.hits_encrypt))
        return FW_ERR;
    io->out_len = olen;
    return FW_OK;
}
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
    if (nonce >= 12 && p->bytes >= ((int32_t)1 << (8 * (15 - nonce)))) {
        *why = "message too long for the CCM length field (15 - nonce_bytes bytes)";
        return FW_UNSUPPORTED;
    }
    return aes_bits_ok(p, why);
}

static int aes_ccm_run(const fw_params *p, fw_io *io)
{
    size_t tag = (size_t)ccm_tag_bytes(p);

    if (!aes_key_ok(p, io))
        return FW_ERR;
    return aead_run(p, io, PSA_KEY_TYPE_AES, PSA_ALG_AEAD_WITH_SHORTENED_TAG(PSA_ALG_CCM, tag), tag);
}
#define FW_GLUE_AES_CCM_ENCRYPT aes_ccm_supports, aes_ccm_run
#endif

#if defined(FW_OP_AES_GCM_ENCRYPT)
static int aes_gcm_run(const fw_params *p, fw_io *io)
{
    if (!aes_key_ok(p, io) || io->iv_len == 0)
        return FW_ERR;
    return aead_run(p, io, PSA_KEY_TYPE_AES, PSA_ALG_GCM, 16);
}
#define FW_GLUE_AES_GCM_ENCRYPT aes_supports, aes_gcm_run
#endif

#if defined(FW_OP_CHACHA20_POLY1305_ENCRYPT)
static int chachapoly_run(const fw_params *p, fw_io *io)
{
    if (io->key_len != 32 || io->iv_len != 12)
        return FW_ERR;
    return aead_run(p, io, PSA_KEY_TYPE_CHACHA20, PSA_ALG_CHACHA20_POLY1305, 16);
}
#define FW_GLUE_CHACHA20_POLY1305_ENCRYPT any_supports, chachapoly_run
#endif

/* ---- hashes: psa_hash_compute ------------------------------------------------------------ */

#if defined(FW_OP_SHA1) || defined(FW_OP_SHA224) || defined(FW_OP_SHA256) || \
    defined(FW_OP_SHA384) || defined(FW_OP_SHA512)
static int hash_run(fw_io *io, psa_algorithm_t alg)
{
    size_t n = 0;
    DRV_BEGIN(mbedtls_test_driver_hash_hooks.hits);

    if (psa_hash_compute(alg, io->msg, io->msg_len, io->out, io->out_cap, &n) != PSA_SUCCESS ||
        !DRV_SERVED(mbedtls_test_driver_hash_hooks.hits))
        return FW_ERR;
    io->out_len = n;
    return FW_OK;
}
#endif

#if defined(FW_OP_SHA1)
static int sha1_run(const fw_params *p, fw_io *io) { (void)p; return hash_run(io, PSA_ALG_SHA_1); }
#define FW_GLUE_SHA1 any_supports, sha1_run
#endif
#if defined(FW_OP_SHA224)
static int sha224_run(const fw_params *p, fw_io *io) { (void)p; return hash_run(io, PSA_ALG_SHA_224); }
#define FW_GLUE_SHA224 any_supports, sha224_run
#endif
#if defined(FW_OP_SHA256)
static int sha256_run(const fw_params *p, fw_io *io) { (void)p; return hash_run(io, PSA_ALG_SHA_256); }
#define FW_GLUE_SHA256 any_supports, sha256_run
#endif
#if defined(FW_OP_SHA384)
static int sha384_run(const fw_params *p, fw_io *io) { (void)p; return hash_run(io, PSA_ALG_SHA_384); }
#define FW_GLUE_SHA384 any_supports, sha384_run
#endif
#if defined(FW_OP_SHA512)
static int sha512_run(const fw_params *p, fw_io *io) { (void)p; return hash_run(io, PSA_ALG_SHA_512); }
#define FW_GLUE_SHA512 any_supports, sha512_run
#endif

/* ---- ECDH: P-256 (big-endian d, 04||X||Y, z = X) and X25519 (RFC 7748 bytes) ------------- */

#if defined(FW_OP_ECDH_KEYGEN) || defined(FW_OP_ECDH_SHARED_SECRET)
static psa_ecc_family_t ecdh_family(const fw_params *p)
{
    if (strncmp(p->curve, "p256", sizeof p->curve) == 0)
        return PSA_ECC_FAMILY_SECP_R1;
    if (strncmp(p->curve, "x25519", sizeof p->curve) == 0)
        return PSA_ECC_FAMILY_MONTGOMERY;
    return 0;
}

static int ecdh_supports(const fw_params *p, const char **why)
{
    if (ecdh_family(p) == 0) {
        *why = "curve not in this build (only p256 and x25519)";
        return FW_UNSUPPORTED;
    }
    return any_supports(p, why);
}
#endif

#if defined(FW_OP_ECDH_KEYGEN)
/* psa_import_key of the private key, psa_export_public_key: Q = d*G. */
static int ecdh_keygen_run(const fw_params *p, fw_io *io)
{
    mbedtls_svc_key_id_t key;
    size_t olen = 0;
    psa_status_t st;

    if (io->key_len != EC_BYTES)
        return FW_ERR;
    key = import_key(PSA_KEY_TYPE_ECC_KEY_PAIR(ecdh_family(p)), PSA_ALG_ECDH, PSA_KEY_USAGE_DERIVE,
                     io->key, io->key_len);
    if (!key_ok(key))
        return FW_ERR;
    DRV_BEGIN(mbedtls_test_driver_key_management_hooks.hits);
    st = psa_export_public_key(key, io->out, io->out_cap, &olen);
    release_key(key);
    if (st != PSA_SUCCESS || !DRV_SERVED(mbedtls_test_driver_key_management_hooks.hits))
        return FW_ERR;
    io->out_len = olen;
    return FW_OK;
}
#define FW_GLUE_ECDH_KEYGEN ecdh_supports, ecdh_keygen_run
#endif

#if defined(FW_OP_ECDH_SHARED_SECRET)
/* psa_raw_key_agreement(PSA_ALG_ECDH): checks the peer point and returns z. */
static int ecdh_shared_run(const fw_params *p, fw_io *io)
{
    mbedtls_svc_key_id_t key;
    size_t olen = 0;
    psa_status_t st;

    if (io->key_len != EC_BYTES)
        return FW_ERR;
    key = import_key(PSA_KEY_TYPE_ECC_KEY_PAIR(ecdh_family(p)), PSA_ALG_ECDH, PSA_KEY_USAGE_DERIVE,
                     io->key, io->key_len);
    if (!key_ok(key))
        return FW_ERR;
    DRV_BEGIN(mbedtls_test_driver_key_agreement_hooks.hits);
    st = psa_raw_key_agreement(PSA_ALG_ECDH, key, io->peer, io->peer_len, io->out, io->out_cap,
                               &olen);
    release_key(key);
    if (st != PSA_SUCCESS || olen != EC_BYTES ||
        !DRV_SERVED(mbedtls_test_driver_key_agreement_hooks.hits))
        return FW_ERR;
    io->out_len = olen;
    return FW_OK;
}
#define FW_GLUE_ECDH_SHARED_SECRET ecdh_supports, ecdh_shared_run
#endif

/* ---- ECDSA P-256 (hash given; sig = r||s) ------------------------------------------------- */

#if defined(FW_OP_ECDSA_SIGN) || defined(FW_OP_ECDSA_VERIFY)
#define ECDSA_ALG PSA_ALG_ECDSA(PSA_ALG_SHA_256)

static int ecdsa_supports(const fw_params *p, const char **why)
{
    if (strncmp(p->curve, "p256", sizeof p->curve) != 0) {
        *why = "curve not in this build (ECDSA on p256 only)";
        return FW_UNSUPPORTED;
    }
    return any_supports(p, why);
}
#endif

#if defined(FW_OP_ECDSA_SIGN)
/* psa_sign_hash, randomized ECDSA: the nonce comes from the external RNG (fw_random). */
static int ecdsa_sign_run(const fw_params *p, fw_io *io)
{
    mbedtls_svc_key_id_t key;
    size_t olen = 0;
    psa_status_t st;

    (void)p;
    if (io->key_len != EC_BYTES)
        return FW_ERR;
    key = import_key(PSA_KEY_TYPE_ECC_KEY_PAIR(PSA_ECC_FAMILY_SECP_R1), ECDSA_ALG,
                     PSA_KEY_USAGE_SIGN_HASH, io->key, io->key_len);
    if (!key_ok(key))
        return FW_ERR;
    DRV_BEGIN(mbedtls_test_driver_signature_sign_hooks.hits);
    st = psa_sign_hash(key, ECDSA_ALG, io->msg, io->msg_len, io->out, io->out_cap, &olen);
    release_key(key);
    if (st != PSA_SUCCESS || olen != 2 * EC_BYTES ||
        !DRV_SERVED(mbedtls_test_driver_signature_sign_hooks.hits))
        return FW_ERR;
    io->out_len = olen;
    return FW_OK;
}
#define FW_GLUE_ECDSA_SIGN ecdsa_supports, ecdsa_sign_run
#endif

#if defined(FW_OP_ECDSA_VERIFY)
/* psa_verify_hash with the public key 04||X||Y; out = 01 (valid) or 00 (invalid signature). */
static int ecdsa_verify_run(const fw_params *p, fw_io *io)
{
    mbedtls_svc_key_id_t key;
    psa_status_t st;

    (void)p;
    if (io->out_cap < 1)
        return FW_ERR;
    key = import_key(PSA_KEY_TYPE_ECC_PUBLIC_KEY(PSA_ECC_FAMILY_SECP_R1), ECDSA_ALG,
                     PSA_KEY_USAGE_VERIFY_HASH, io->peer, io->peer_len);
    if (!key_ok(key))
        return FW_ERR;
    DRV_BEGIN(mbedtls_test_driver_signature_verify_hooks.hits);
    st = psa_verify_hash(key, ECDSA_ALG, io->msg, io->msg_len, io->sig, io->sig_len);
    release_key(key);
    if ((st != PSA_SUCCESS && st != PSA_ERROR_INVALID_SIGNATURE) ||
        !DRV_SERVED(mbedtls_test_driver_signature_verify_hooks.hits))
        return FW_ERR;
    io->out[0] = st == PSA_SUCCESS;
    io->out_len = 1;
    return FW_OK;
}
#define FW_GLUE_ECDSA_VERIFY ecdsa_supports, ecdsa_verify_run
#endif

/* The op table: the rows of fw_ops_table.h (generated from the catalog) for the FW_GLUE_* above. */
#include "fw_ops_table.h"
