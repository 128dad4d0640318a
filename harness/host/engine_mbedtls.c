/* engine_mbedtls.c - the "mbedtls" engine: the system libmbedcrypto (mbed TLS 2.28).
 *
 * What one timed operation is, per op, is fixed by docs/protocol.md; the choices this engine
 * has to make on top of it are written next to the code that makes them:
 *
 *  - AES, ChaCha20 and ChaCha20-Poly1305: the key schedule is set once per slot (rekey=1: before
 *    every operation); every operation encrypts `bytes` from one buffer into another with a fresh
 *    IV/nonce (a counter). ChaCha20 uses the context API (setkey once, starts + update per
 *    operation), which is what mbedtls_chacha20_crypt does inside.
 *  - CTR_DRBG: mbedtls_ctr_drbg (AES-256, always with the derivation function), fed from a
 *    cursor over pre-generated entropy so that no OS entropy is gathered inside the timing.
 *  - ecdh-keygen is timed as public-from-private: mbedtls_ecp_mul(d, G) for one of 16 private
 *    scalars generated in setup, cycling (the TI report also leaves private key generation out).
 *    ecc-keygen, in contrast, is mbedtls_ecp_gen_keypair: random scalar plus d*G.
 *  - ECDSA signs with a random k (mbedtls_ecdsa_sign), as OpenSSL does, not with the RFC 6979
 *    deterministic k that mbedtls_ecdsa_write_signature would pick.
 *  - Everything that needs randomness (key generation, ECDSA k, blinding of ECC and RSA private
 *    operations, the "library" random source) takes it from one CTR_DRBG per process seeded
 *    from mbedtls_entropy_func, as an application using mbed TLS would.
 *  - EC-JPAKE: Debian builds libmbedcrypto without MBEDTLS_ECJPAKE_C. When the build defines
 *    CBH_HAVE_ECJPAKE, library/ecjpake.c of mbed TLS 2.28 was compiled from source against the
 *    system headers and library (see harness/host/mbedtls_ecjpake_config.h); otherwise the op
 *    is unsupported.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mbedtls/aes.h>
#include <mbedtls/aesni.h>
#include <mbedtls/bignum.h>
#include <mbedtls/ccm.h>
#include <mbedtls/chacha20.h>
#include <mbedtls/chachapoly.h>
#include <mbedtls/ctr_drbg.h>
#include <mbedtls/ecdh.h>
#include <mbedtls/ecdsa.h>
#include <mbedtls/ecp.h>
#include <mbedtls/entropy.h>
#include <mbedtls/error.h>
#include <mbedtls/gcm.h>
#include <mbedtls/rsa.h>
#include <mbedtls/sha1.h>
#include <mbedtls/sha256.h>
#include <mbedtls/sha512.h>
#include <mbedtls/version.h>
#ifdef CBH_HAVE_ECJPAKE
#include <mbedtls/ecjpake.h>
#endif

#include "cb_cursor.h"   /* the entropy callback's source, shared with the firmware glue */
#include "engine.h"

#if defined(MBEDTLS_CTR_DRBG_USE_128_BIT_KEY)
#error "this libmbedcrypto's CTR_DRBG uses AES-128; the benchmark defines CTR_DRBG as AES-256"
#endif

#define POOL 16              /* pre-generated keys / signatures per slot, used cycling */
#define DRBG_CHUNK MBEDTLS_CTR_DRBG_MAX_REQUEST   /* most bytes one generate call may return */

/* Curves by protocol name. `bytes` is the length of a scalar / coordinate; `hash_len` the digest
 * length the timing slots sign (SHA-256 for P-256, SHA-512 for P-521, as the orchestrator's
 * cross-checks do). */
typedef struct {
    const char *name;
    mbedtls_ecp_group_id id;
    size_t bytes;
    int montgomery;
    size_t hash_len;
} curve_info;

static const curve_info curves[] = {
    {"p256", MBEDTLS_ECP_DP_SECP256R1, 32, 0, 32},
#if defined(MBEDTLS_ECP_DP_SECP384R1_ENABLED)
    {"p384", MBEDTLS_ECP_DP_SECP384R1, 48, 0, 48},
#endif
    {"p521", MBEDTLS_ECP_DP_SECP521R1, 66, 0, 64},
#if defined(MBEDTLS_ECP_DP_CURVE25519_ENABLED)
    {"x25519", MBEDTLS_ECP_DP_CURVE25519, 32, 1, 0},
#endif
};

/* ---- small helpers ------------------------------------------------------------------------ */

static const curve_info *curve_of(const char *name)
{
    for (size_t i = 0; i < sizeof curves / sizeof curves[0]; i++)
        if (strcmp(curves[i].name, name) == 0)
            return &curves[i];
    return NULL;
}

/* Fill err with "what: <mbed TLS's message> (-0xNNNN)"; returns CB_ERR. */
static int fail(char *err, const char *what, int ret)
{
    char msg[160];
    mbedtls_strerror(ret, msg, sizeof msg);
    snprintf(err, CB_ERRLEN, "%s: %s (-0x%04x)", what, msg, (unsigned)-ret);
    return CB_ERR;
}

/* Write the low n (<= 8) bytes of v big-endian: turns a counter into a fresh IV or digest. */
static void put_counter(uint8_t *dst, size_t n, uint64_t v)
{
    for (size_t i = 0; i < n; i++)
        dst[n - 1 - i] = (uint8_t)(v >> (8 * i));
}

static int put(cb_kv *out, const char *name, const uint8_t *val, size_t len, char *err)
{
    if (cb_kv_put(out, name, val, len) != 0)
        return cb_say(err, CB_ERR, "out of memory");
    return CB_OK;
}

/* ---- the process-wide RNG ------------------------------------------------------------------ */

static mbedtls_entropy_context g_entropy;
static mbedtls_ctr_drbg_context g_drbg;
static int g_rng_ready;

static int rng_init(char *err)
{
    static const unsigned char pers[] = "cryptobench cbh mbedtls";
    int ret;

    if (g_rng_ready)
        return CB_OK;
    mbedtls_entropy_init(&g_entropy);
    mbedtls_ctr_drbg_init(&g_drbg);
    ret = mbedtls_ctr_drbg_seed(&g_drbg, mbedtls_entropy_func, &g_entropy, pers, sizeof pers - 1);
    if (ret != 0) {
        mbedtls_ctr_drbg_free(&g_drbg);
        mbedtls_entropy_free(&g_entropy);
        return fail(err, "seeding the CTR_DRBG from mbedtls_entropy", ret);
    }
    g_rng_ready = 1;
    return CB_OK;
}

/* The f_rng callback handed to mbed TLS. */
static int rng(void *unused, unsigned char *buf, size_t len)
{
    (void)unused;
    return mbedtls_ctr_drbg_random(&g_drbg, buf, len);
}

/* Any length from the process RNG (one CTR_DRBG request returns at most DRBG_CHUNK bytes). */
static int rng_bytes(uint8_t *buf, size_t len)
{
    while (len > 0) {
        size_t n = len < DRBG_CHUNK ? len : DRBG_CHUNK;
        int ret = mbedtls_ctr_drbg_random(&g_drbg, buf, n);
        if (ret != 0)
            return ret;
        buf += n;
        len -= n;
    }
    return 0;
}

/* ---- CTR_DRBG entropy from a cursor (cb_cursor.h: how the CAVP flow's entropy is served) ----- */

static int cursor_entropy(void *ctx, unsigned char *out, size_t len)
{
    return cb_cursor_read(ctx, out, len) == 0 ? 0 : MBEDTLS_ERR_CTR_DRBG_ENTROPY_SOURCE_FAILED;
}

/* Instantiate ctx with entropy_len bytes of entropy and nonce_len bytes of nonce from cur, then
 * perso: seed material = entropy || nonce || perso, exactly as SP 800-90A / CAVP. ctx must be
 * freshly initialised (the nonce length can only be set before seeding). */
static int drbg_instantiate(mbedtls_ctr_drbg_context *ctx, cb_cursor *cur, size_t entropy_len,
                            size_t nonce_len, const uint8_t *perso, size_t perso_len)
{
    int ret;
    mbedtls_ctr_drbg_set_entropy_len(ctx, entropy_len);
    ret = mbedtls_ctr_drbg_set_nonce_len(ctx, nonce_len);
    if (ret != 0)
        return ret;
    ret = mbedtls_ctr_drbg_seed(ctx, cursor_entropy, cur, perso, perso_len);
    if (ret != 0)
        return ret;
    mbedtls_ctr_drbg_set_prediction_resistance(ctx, MBEDTLS_CTR_DRBG_PR_OFF);
    return 0;
}

/* ---- EC keys in protocol encoding ---------------------------------------------------------- */

static int load_group(mbedtls_ecp_group *grp, const curve_info *c, char *err)
{
    int ret = mbedtls_ecp_group_load(grp, c->id);
    return ret == 0 ? CB_OK : fail(err, "loading the curve", ret);
}

/* Private scalar: big-endian for Weierstrass curves; for X25519 the RFC 7748 32-byte string,
 * clamped here as RFC 7748 decodeScalar25519 does (mbedtls_ecp_mul insists on a clamped one). */
static int read_private(const mbedtls_ecp_group *grp, const curve_info *c, mbedtls_mpi *d,
                        const uint8_t *buf, size_t len, char *err)
{
    int ret;
    if (c->montgomery) {
        uint8_t k[32];
        if (len != 32)
            return cb_say(err, CB_ERR, "x25519 private key must be 32 bytes");
        memcpy(k, buf, 32);
        k[0] &= 248;
        k[31] &= 127;
        k[31] |= 64;
        ret = mbedtls_mpi_read_binary_le(d, k, 32);
    } else {
        if (len == 0 || len > c->bytes)
            return cb_say(err, CB_ERR, "private key has the wrong length");
        ret = mbedtls_mpi_read_binary(d, buf, len);
    }
    if (ret != 0)
        return fail(err, "reading the private key", ret);
    ret = mbedtls_ecp_check_privkey(grp, d);
    return ret == 0 ? CB_OK : fail(err, "private key", ret);
}

static int write_private(const curve_info *c, const mbedtls_mpi *d, uint8_t *buf)
{
    return c->montgomery ? mbedtls_mpi_write_binary_le(d, buf, c->bytes)
                         : mbedtls_mpi_write_binary(d, buf, c->bytes);
}

/* Public key: 04||X||Y, or the X25519 u-coordinate (mbed TLS reads it little-endian and clears
 * the top bit as RFC 7748 asks). Checked to be on the curve. */
static int read_public(const mbedtls_ecp_group *grp, mbedtls_ecp_point *q, const uint8_t *buf,
                       size_t len, char *err)
{
    int ret = mbedtls_ecp_point_read_binary(grp, q, buf, len);
    if (ret != 0)
        return fail(err, "reading the public key", ret);
    ret = mbedtls_ecp_check_pubkey(grp, q);
    return ret == 0 ? CB_OK : fail(err, "public key", ret);
}

static int write_public(const mbedtls_ecp_group *grp, const mbedtls_ecp_point *q, uint8_t *buf,
                        size_t cap, size_t *len)
{
    return mbedtls_ecp_point_write_binary(grp, q, MBEDTLS_ECP_PF_UNCOMPRESSED, len, buf, cap);
}

/* Shared secret z: the x-coordinate, big-endian (Weierstrass) or little-endian (X25519). */
static int write_secret(const curve_info *c, const mbedtls_mpi *z, uint8_t *buf)
{
    return write_private(c, z, buf);
}

/* ---- supports ------------------------------------------------------------------------------- */

#define ECJPAKE_WHY "EC-JPAKE not built: the system libmbedcrypto lacks MBEDTLS_ECJPAKE_C and " \
                    "cbh was built without mbed TLS's ecjpake.c (fetch failed or NO_ECJPAKE)"

static int check(const cb_params *p, char *why)
{
    int op = p->op;
    const curve_info *c;

    switch (op) {
    case CB_OP_AES_ECB_ENCRYPT: case CB_OP_AES_CBC_ENCRYPT: case CB_OP_AES_CTR_ENCRYPT:
    case CB_OP_AES_CCM_ENCRYPT: case CB_OP_AES_GCM_ENCRYPT:
        if (p->key_bits != 128 && p->key_bits != 192 && p->key_bits != 256)
            return cb_say(why, CB_UNSUPPORTED, "AES key_bits must be 128, 192 or 256");
        if ((op == CB_OP_AES_ECB_ENCRYPT || op == CB_OP_AES_CBC_ENCRYPT)
            && p->bytes > 0 && p->bytes % 16 != 0)
            return cb_say(why, CB_UNSUPPORTED, "ECB/CBC without padding need bytes % 16 == 0");
        if (op == CB_OP_AES_CCM_ENCRYPT) {
            long t = p->tag_bytes < 0 ? CB_DEFAULT_TAG_BYTES : p->tag_bytes;
            long n = p->nonce_bytes < 0 ? CB_DEFAULT_NONCE_BYTES : p->nonce_bytes;
            if (t < 4 || t > 16 || t % 2 != 0)
                return cb_say(why, CB_UNSUPPORTED, "CCM tag_bytes must be 4, 6, ..., 16");
            if (n < 7 || n > 13)
                return cb_say(why, CB_UNSUPPORTED, "CCM nonce_bytes must be 7..13");
        }
        return CB_OK;
    case CB_OP_CHACHA20_POLY1305_ENCRYPT:
#if defined(MBEDTLS_CHACHAPOLY_C)
        return CB_OK;
#else
        return cb_say(why, CB_UNSUPPORTED, "libmbedcrypto built without MBEDTLS_CHACHAPOLY_C");
#endif
    case CB_OP_CHACHA20_ENCRYPT:
#if defined(MBEDTLS_CHACHA20_C)
        return CB_OK;
#else
        return cb_say(why, CB_UNSUPPORTED, "libmbedcrypto built without MBEDTLS_CHACHA20_C");
#endif
    case CB_OP_SHA1: case CB_OP_SHA224: case CB_OP_SHA256: case CB_OP_SHA384: case CB_OP_SHA512:
        return CB_OK;
    case CB_OP_CTR_DRBG_INSTANTIATE: case CB_OP_CTR_DRBG_RESEED: case CB_OP_CTR_DRBG_GENERATE:
        return CB_OK;
    case CB_OP_ECDH_KEYGEN: case CB_OP_ECDH_SHARED_SECRET: case CB_OP_ECC_KEYGEN:
        if (curve_of(p->curve) == NULL)
            return cb_say(why, CB_UNSUPPORTED, "curve not available in this libmbedcrypto");
        return CB_OK;
    case CB_OP_ECDSA_SIGN: case CB_OP_ECDSA_VERIFY:
        c = curve_of(p->curve);
        if (c == NULL)
            return cb_say(why, CB_UNSUPPORTED, "curve not available in this libmbedcrypto");
        if (c->montgomery)
            return cb_say(why, CB_UNSUPPORTED, "ECDSA needs a Weierstrass curve");
        return CB_OK;
    case CB_OP_ECJPAKE_EXCHANGE:
#ifdef CBH_HAVE_ECJPAKE
        if (strcmp(p->curve, "p256") != 0 && p->curve[0] != '\0')
            return cb_say(why, CB_UNSUPPORTED, "EC-JPAKE is benchmarked on P-256 only");
        return CB_OK;
#else
        return cb_say(why, CB_UNSUPPORTED, ECJPAKE_WHY);
#endif
    case CB_OP_RSA_KEYGEN: case CB_OP_RSA_SIGN: case CB_OP_RSA_VERIFY:
        if (p->rsa_bits < 1024 || p->rsa_bits > MBEDTLS_MPI_MAX_BITS || p->rsa_bits % 2 != 0)
            return cb_say(why, CB_UNSUPPORTED, "rsa_bits must be even, 1024..8192");
        return CB_OK;
    case CB_OP_RANDOM:
        if (strcmp(p->source, "library") != 0)
            return cb_say(why, CB_UNSUPPORTED,
                       "mbedtls offers only source \"library\" (CTR_DRBG seeded from the OS)");
        return CB_OK;
    default:
        return cb_say(why, CB_UNSUPPORTED, "mbedtls engine does not implement this op");
    }
}

static int mb_supports(const cb_params *p, char *why)
{
    return check(p, why);
}

/* ---- compute: one operation on explicit inputs ---------------------------------------------- */

static int compute_cipher(int op, const cb_params *p, const cb_kv *in, cb_kv *out, char *err)
{
    size_t klen, ivlen, aadlen, mlen;
    const uint8_t *key = cb_kv_input(in, "key", &klen);
    const uint8_t *msg = cb_kv_input(in, "msg", &mlen);
    const uint8_t *aad = cb_kv_input(in, "aad", &aadlen);
    const uint8_t *iv;
    uint8_t *ct;
    int ret = 0, rc;

    if (op == CB_OP_AES_CCM_ENCRYPT || op == CB_OP_CHACHA20_POLY1305_ENCRYPT)
        iv = cb_kv_input(in, "nonce", &ivlen);
    else
        iv = cb_kv_input(in, "iv", &ivlen);
    if (op != CB_OP_CHACHA20_POLY1305_ENCRYPT && op != CB_OP_CHACHA20_ENCRYPT
        && klen != 16 && klen != 24 && klen != 32)
        return cb_say(err, CB_ERR, "AES key must be 16, 24 or 32 bytes");
    ct = malloc(mlen + 16 + 1);
    if (ct == NULL)
        return cb_say(err, CB_ERR, "out of memory");

    switch (op) {
    case CB_OP_AES_ECB_ENCRYPT: case CB_OP_AES_CBC_ENCRYPT: case CB_OP_AES_CTR_ENCRYPT: {
        mbedtls_aes_context aes;
        uint8_t ivbuf[16], stream[16];
        size_t off = 0;
        if (op != CB_OP_AES_CTR_ENCRYPT && mlen % 16 != 0) {
            free(ct);
            return cb_say(err, CB_ERR, "message length must be a multiple of 16");
        }
        if (op != CB_OP_AES_ECB_ENCRYPT && ivlen != 16) {
            free(ct);
            return cb_say(err, CB_ERR, "iv must be 16 bytes");
        }
        if (op != CB_OP_AES_ECB_ENCRYPT)
            memcpy(ivbuf, iv, 16);
        mbedtls_aes_init(&aes);
        ret = mbedtls_aes_setkey_enc(&aes, key, (unsigned)klen * 8);
        for (size_t i = 0; ret == 0 && op == CB_OP_AES_ECB_ENCRYPT && i < mlen; i += 16)
            ret = mbedtls_aes_crypt_ecb(&aes, MBEDTLS_AES_ENCRYPT, msg + i, ct + i);
        if (ret == 0 && op == CB_OP_AES_CBC_ENCRYPT)
            ret = mbedtls_aes_crypt_cbc(&aes, MBEDTLS_AES_ENCRYPT, mlen, ivbuf, msg, ct);
        if (ret == 0 && op == CB_OP_AES_CTR_ENCRYPT)
            ret = mbedtls_aes_crypt_ctr(&aes, mlen, &off, ivbuf, stream, msg, ct);
        mbedtls_aes_free(&aes);
        break;
    }
    case CB_OP_AES_CCM_ENCRYPT: {
        mbedtls_ccm_context ccm;
        long t = p->tag_bytes < 0 ? 16 : p->tag_bytes;
        mbedtls_ccm_init(&ccm);
        ret = mbedtls_ccm_setkey(&ccm, MBEDTLS_CIPHER_ID_AES, key, (unsigned)klen * 8);
        if (ret == 0)
            ret = mbedtls_ccm_encrypt_and_tag(&ccm, mlen, iv, ivlen, aad, aadlen, msg, ct,
                                              ct + mlen, (size_t)t);
        mbedtls_ccm_free(&ccm);
        mlen += (size_t)t;
        break;
    }
    case CB_OP_AES_GCM_ENCRYPT: {
        mbedtls_gcm_context gcm;
        mbedtls_gcm_init(&gcm);
        ret = mbedtls_gcm_setkey(&gcm, MBEDTLS_CIPHER_ID_AES, key, (unsigned)klen * 8);
        if (ret == 0)
            ret = mbedtls_gcm_crypt_and_tag(&gcm, MBEDTLS_GCM_ENCRYPT, mlen, iv, ivlen, aad,
                                            aadlen, msg, ct, 16, ct + mlen);
        mbedtls_gcm_free(&gcm);
        mlen += 16;
        break;
    }
#if defined(MBEDTLS_CHACHAPOLY_C)
    case CB_OP_CHACHA20_POLY1305_ENCRYPT: {
        mbedtls_chachapoly_context cp;
        if (klen != 32 || ivlen != 12) {
            free(ct);
            return cb_say(err, CB_ERR, "ChaCha20-Poly1305 needs a 32-byte key and a 12-byte nonce");
        }
        mbedtls_chachapoly_init(&cp);
        ret = mbedtls_chachapoly_setkey(&cp, key);
        if (ret == 0)
            ret = mbedtls_chachapoly_encrypt_and_tag(&cp, mlen, iv, aad, aadlen, msg, ct,
                                                     ct + mlen);
        mbedtls_chachapoly_free(&cp);
        mlen += 16;
        break;
    }
#endif
#if defined(MBEDTLS_CHACHA20_C)
    case CB_OP_CHACHA20_ENCRYPT:
        if (klen != 32 || ivlen != 16) {
            free(ct);
            return cb_say(err, CB_ERR, "ChaCha20 needs a 32-byte key and a 16-byte iv (counter, nonce)");
        }
        if (cb_chacha20_wraps(cb_chacha20_counter(iv), mlen)) {
            free(ct);
            return cb_say(err, CB_ERR, CB_CHACHA20_WRAP_MSG);
        }
        ret = mbedtls_chacha20_crypt(key, iv + 4, cb_chacha20_counter(iv), mlen, msg, ct);
        break;
#endif
    }
    if (ret != 0)
        rc = fail(err, "encrypt", ret);
    else
        rc = put(out, "ct", ct, mlen, err);
    free(ct);
    return rc;
}

static int sha(int op, const uint8_t *msg, size_t len, uint8_t *digest, size_t *dlen)
{
    switch (op) {
    case CB_OP_SHA1:   *dlen = 20; return mbedtls_sha1_ret(msg, len, digest);
    case CB_OP_SHA224: *dlen = 28; return mbedtls_sha256_ret(msg, len, digest, 1);
    case CB_OP_SHA256: *dlen = 32; return mbedtls_sha256_ret(msg, len, digest, 0);
    case CB_OP_SHA384: *dlen = 48; return mbedtls_sha512_ret(msg, len, digest, 1);
    default:        *dlen = 64; return mbedtls_sha512_ret(msg, len, digest, 0);
    }
}

/* The CAVP CTR_DRBG flow (protocol.md). An absent entropy_reseed skips the reseed, which also
 * covers CAVP's no-reseed files. `bytes` defaults to 64 (CAVP's 512 returned bits for AES-256). */
static int compute_drbg(const cb_params *p, const cb_kv *in, cb_kv *out, char *err)
{
    size_t elen, nlen, plen, rlen, arlen, a1len, a2len;
    const uint8_t *entropy = cb_kv_input(in, "entropy", &elen);
    const uint8_t *nonce = cb_kv_input(in, "nonce", &nlen);
    const uint8_t *perso = cb_kv_input(in, "perso", &plen);
    const uint8_t *reseed = cb_kv_input(in, "entropy_reseed", &rlen);
    const uint8_t *add_reseed = cb_kv_input(in, "add_reseed", &arlen);
    const uint8_t *add1 = cb_kv_input(in, "add1", &a1len);
    const uint8_t *add2 = cb_kv_input(in, "add2", &a2len);
    size_t nbytes = p->bytes < 0 ? 64 : (size_t)p->bytes;
    uint8_t *buf, *seed;
    mbedtls_ctr_drbg_context ctx;
    cb_cursor cur = {0};
    int ret, rc;

    if (elen == 0)
        return cb_say(err, CB_ERR, "entropy is required");
    if (nbytes == 0 || nbytes > DRBG_CHUNK)
        return cb_say(err, CB_ERR, "bytes must be 1..1024 (one CTR_DRBG generate request)");
    buf = malloc(nbytes);
    seed = malloc(elen + nlen);
    if (buf == NULL || seed == NULL) {
        free(buf);
        free(seed);
        return cb_say(err, CB_ERR, "out of memory");
    }
    memcpy(seed, entropy, elen);
    memcpy(seed + elen, nonce, nlen);
    cur.buf = seed;
    cur.len = elen + nlen;

    mbedtls_ctr_drbg_init(&ctx);
    ret = drbg_instantiate(&ctx, &cur, elen, nlen, perso, plen);
    if (ret == 0 && rlen > 0) {
        cur.buf = reseed;
        cur.len = rlen;
        cur.pos = 0;
        mbedtls_ctr_drbg_set_entropy_len(&ctx, rlen);
        ret = mbedtls_ctr_drbg_reseed(&ctx, add_reseed, arlen);
    }
    if (ret == 0)
        ret = mbedtls_ctr_drbg_random_with_add(&ctx, buf, nbytes, add1, a1len);
    if (ret == 0)
        ret = mbedtls_ctr_drbg_random_with_add(&ctx, buf, nbytes, add2, a2len);
    mbedtls_ctr_drbg_free(&ctx);
    rc = ret != 0 ? fail(err, "CTR_DRBG", ret) : put(out, "bits", buf, nbytes, err);
    free(buf);
    free(seed);
    return rc;
}

static int compute_ec(int op, const cb_params *p, const cb_kv *in, cb_kv *out, char *err)
{
    const curve_info *c = curve_of(p->curve);
    mbedtls_ecp_group grp;
    mbedtls_mpi d, z, r, s;
    mbedtls_ecp_point q;
    uint8_t buf[2 * 66 + 1];
    size_t len, dlen, qlen, hlen, slen;
    const uint8_t *dv = cb_kv_input(in, "d", &dlen);
    const uint8_t *qv = cb_kv_input(in, op == CB_OP_ECDH_SHARED_SECRET ? "peer" : "q", &qlen);
    const uint8_t *hash = cb_kv_input(in, "hash", &hlen);
    const uint8_t *sig = cb_kv_input(in, "sig", &slen);
    int ret = 0, rc;

    mbedtls_ecp_group_init(&grp);
    mbedtls_mpi_init(&d);
    mbedtls_mpi_init(&z);
    mbedtls_mpi_init(&r);
    mbedtls_mpi_init(&s);
    mbedtls_ecp_point_init(&q);
    rc = load_group(&grp, c, err);
    if (rc != CB_OK)
        goto done;

    switch (op) {
    case CB_OP_ECDH_KEYGEN:
        rc = read_private(&grp, c, &d, dv, dlen, err);
        if (rc == CB_OK && (ret = mbedtls_ecp_mul(&grp, &q, &d, &grp.G, rng, NULL)) != 0)
            rc = fail(err, "d*G", ret);
        if (rc == CB_OK && (ret = write_public(&grp, &q, buf, sizeof buf, &len)) != 0)
            rc = fail(err, "writing the public key", ret);
        if (rc == CB_OK)
            rc = put(out, "q", buf, len, err);
        break;
    case CB_OP_ECDH_SHARED_SECRET:
        rc = read_private(&grp, c, &d, dv, dlen, err);
        if (rc == CB_OK)
            rc = read_public(&grp, &q, qv, qlen, err);
        if (rc == CB_OK && (ret = mbedtls_ecdh_compute_shared(&grp, &z, &q, &d, rng, NULL)) != 0)
            rc = fail(err, "ECDH", ret);
        if (rc == CB_OK && (ret = write_secret(c, &z, buf)) != 0)
            rc = fail(err, "writing the secret", ret);
        if (rc == CB_OK)
            rc = put(out, "z", buf, c->bytes, err);
        break;
    case CB_OP_ECC_KEYGEN:
        if ((ret = mbedtls_ecp_gen_keypair(&grp, &d, &q, rng, NULL)) != 0)
            rc = fail(err, "key generation", ret);
        if (rc == CB_OK && (ret = write_private(c, &d, buf)) != 0)
            rc = fail(err, "writing the private key", ret);
        if (rc == CB_OK)
            rc = put(out, "d", buf, c->bytes, err);
        if (rc == CB_OK && (ret = write_public(&grp, &q, buf, sizeof buf, &len)) != 0)
            rc = fail(err, "writing the public key", ret);
        if (rc == CB_OK)
            rc = put(out, "q", buf, len, err);
        break;
    case CB_OP_ECDSA_SIGN:
        rc = read_private(&grp, c, &d, dv, dlen, err);
        if (rc == CB_OK && hlen == 0)
            rc = cb_say(err, CB_ERR, "hash is required");
        if (rc == CB_OK && (ret = mbedtls_ecdsa_sign(&grp, &r, &s, &d, hash, hlen, rng, NULL)) != 0)
            rc = fail(err, "ECDSA sign", ret);
        if (rc == CB_OK && ((ret = mbedtls_mpi_write_binary(&r, buf, c->bytes)) != 0 ||
                            (ret = mbedtls_mpi_write_binary(&s, buf + c->bytes, c->bytes)) != 0))
            rc = fail(err, "writing the signature", ret);
        if (rc == CB_OK)
            rc = put(out, "sig", buf, 2 * c->bytes, err);
        break;
    case CB_OP_ECDSA_VERIFY: {
        /* Anything that makes the signature not verify (bad encoding, point off the curve,
         * r or s out of range, mismatch) answers ok=00: it is a verification result. */
        uint8_t ok = 0;
        if (slen == 2 * c->bytes && mbedtls_ecp_point_read_binary(&grp, &q, qv, qlen) == 0 &&
            mbedtls_mpi_read_binary(&r, sig, c->bytes) == 0 &&
            mbedtls_mpi_read_binary(&s, sig + c->bytes, c->bytes) == 0 &&
            mbedtls_ecdsa_verify(&grp, hash, hlen, &q, &r, &s) == 0)
            ok = 1;
        rc = put(out, "ok", &ok, 1, err);
        break;
    }
    }
done:
    mbedtls_ecp_point_free(&q);
    mbedtls_mpi_free(&s);
    mbedtls_mpi_free(&r);
    mbedtls_mpi_free(&z);
    mbedtls_mpi_free(&d);
    mbedtls_ecp_group_free(&grp);
    return rc;
}

/* ---- RSA ------------------------------------------------------------------------------------ */

/* A PKCS#1 v1.5 / SHA-256 context from raw n, e and (for a private key) d. mbedtls_rsa_complete
 * recovers p and q from (n, e, d), so private operations use the CRT as with a generated key. */
static int rsa_from_raw(mbedtls_rsa_context *rsa, const uint8_t *n, size_t nlen, const uint8_t *e,
                        size_t elen, const uint8_t *d, size_t dlen, char *err)
{
    int ret;
    if (nlen == 0 || elen == 0)
        return cb_say(err, CB_ERR, "n and e are required");
    ret = mbedtls_rsa_import_raw(rsa, n, nlen, NULL, 0, NULL, 0, dlen ? d : NULL, dlen, e, elen);
    if (ret == 0)
        ret = mbedtls_rsa_complete(rsa);
    if (ret == 0)
        ret = dlen ? mbedtls_rsa_check_privkey(rsa) : mbedtls_rsa_check_pubkey(rsa);
    return ret == 0 ? CB_OK : fail(err, "RSA key", ret);
}

static int put_mpi(cb_kv *out, const char *name, const mbedtls_mpi *x, size_t len, char *err)
{
    uint8_t buf[MBEDTLS_MPI_MAX_SIZE];
    int ret;
    if (len == 0)
        len = mbedtls_mpi_size(x);
    ret = mbedtls_mpi_write_binary(x, buf, len);
    if (ret != 0)
        return fail(err, name, ret);
    return put(out, name, buf, len, err);
}

static int compute_rsa(int op, const cb_params *p, const cb_kv *in, cb_kv *out, char *err)
{
    mbedtls_rsa_context rsa;
    size_t nlen, elen, dlen, hlen, slen, k;
    const uint8_t *n = cb_kv_input(in, "n", &nlen);
    const uint8_t *e = cb_kv_input(in, "e", &elen);
    const uint8_t *d = cb_kv_input(in, "d", &dlen);
    const uint8_t *hash = cb_kv_input(in, "hash", &hlen);
    const uint8_t *sig = cb_kv_input(in, "sig", &slen);
    uint8_t buf[MBEDTLS_MPI_MAX_SIZE];
    int ret, rc = CB_OK;

    mbedtls_rsa_init(&rsa, MBEDTLS_RSA_PKCS_V15, MBEDTLS_MD_SHA256);
    switch (op) {
    case CB_OP_RSA_KEYGEN: {
        mbedtls_mpi N, E, D;
        mbedtls_mpi_init(&N);
        mbedtls_mpi_init(&E);
        mbedtls_mpi_init(&D);
        ret = mbedtls_rsa_gen_key(&rsa, rng, NULL, (unsigned)p->rsa_bits, 65537);
        if (ret == 0)
            ret = mbedtls_rsa_export(&rsa, &N, NULL, NULL, &D, &E);
        if (ret != 0) {
            rc = fail(err, "RSA key generation", ret);
        } else {
            k = mbedtls_rsa_get_len(&rsa);
            rc = put_mpi(out, "n", &N, k, err);
            if (rc == CB_OK)
                rc = put_mpi(out, "e", &E, 0, err);
            if (rc == CB_OK)
                rc = put_mpi(out, "d", &D, k, err);
        }
        mbedtls_mpi_free(&N);
        mbedtls_mpi_free(&E);
        mbedtls_mpi_free(&D);
        break;
    }
    case CB_OP_RSA_SIGN:
        if (dlen == 0) {
            rc = cb_say(err, CB_ERR, "d is required");
            break;
        }
        if (hlen != 32) {
            rc = cb_say(err, CB_ERR, "hash must be a 32-byte SHA-256 digest");
            break;
        }
        rc = rsa_from_raw(&rsa, n, nlen, e, elen, d, dlen, err);
        if (rc != CB_OK)
            break;
        ret = mbedtls_rsa_rsassa_pkcs1_v15_sign(&rsa, rng, NULL, MBEDTLS_RSA_PRIVATE,
                                                MBEDTLS_MD_SHA256, 32, hash, buf);
        rc = ret != 0 ? fail(err, "RSA sign", ret) : put(out, "sig", buf, mbedtls_rsa_get_len(&rsa), err);
        break;
    case CB_OP_RSA_VERIFY: {
        uint8_t ok = 0;
        rc = rsa_from_raw(&rsa, n, nlen, e, elen, NULL, 0, err);
        if (rc != CB_OK)
            break;
        if (hlen == 32 && slen == mbedtls_rsa_get_len(&rsa) &&
            mbedtls_rsa_rsassa_pkcs1_v15_verify(&rsa, NULL, NULL, MBEDTLS_RSA_PUBLIC,
                                                MBEDTLS_MD_SHA256, 32, hash, sig) == 0)
            ok = 1;
        rc = put(out, "ok", &ok, 1, err);
        break;
    }
    }
    mbedtls_rsa_free(&rsa);
    return rc;
}

/* ---- EC-JPAKE ------------------------------------------------------------------------------- */

#ifdef CBH_HAVE_ECJPAKE
#define JPAKE_BUF 512   /* a P-256 round message is 330 bytes (one) / 165 bytes (two) at most */

/* One whole exchange between a fresh client and a fresh server context: both rounds in the
 * order of the TLS/Thread flight (client one, server one, server two, client two), then each
 * side's premaster secret. pms_c / pms_s receive 32 bytes each (SHA-256 of the shared point). */
static int jpake_exchange(const uint8_t *pw_c, size_t pw_c_len, const uint8_t *pw_s,
                          size_t pw_s_len, uint8_t *pms_c, uint8_t *pms_s, char *err)
{
    mbedtls_ecjpake_context cli, srv;
    unsigned char buf[JPAKE_BUF];
    size_t len, pc_len = 0, ps_len = 0;
    const char *step = "setup";
    int ret;

    mbedtls_ecjpake_init(&cli);
    mbedtls_ecjpake_init(&srv);
    ret = mbedtls_ecjpake_setup(&cli, MBEDTLS_ECJPAKE_CLIENT, MBEDTLS_MD_SHA256,
                                MBEDTLS_ECP_DP_SECP256R1, pw_c, pw_c_len);
    if (ret == 0)
        ret = mbedtls_ecjpake_setup(&srv, MBEDTLS_ECJPAKE_SERVER, MBEDTLS_MD_SHA256,
                                    MBEDTLS_ECP_DP_SECP256R1, pw_s, pw_s_len);
    if (ret == 0) {
        step = "round one (client)";
        ret = mbedtls_ecjpake_write_round_one(&cli, buf, sizeof buf, &len, rng, NULL);
    }
    if (ret == 0)
        ret = mbedtls_ecjpake_read_round_one(&srv, buf, len);
    if (ret == 0) {
        step = "round one (server)";
        ret = mbedtls_ecjpake_write_round_one(&srv, buf, sizeof buf, &len, rng, NULL);
    }
    if (ret == 0)
        ret = mbedtls_ecjpake_read_round_one(&cli, buf, len);
    if (ret == 0) {
        step = "round two (server)";
        ret = mbedtls_ecjpake_write_round_two(&srv, buf, sizeof buf, &len, rng, NULL);
    }
    if (ret == 0)
        ret = mbedtls_ecjpake_read_round_two(&cli, buf, len);
    if (ret == 0) {
        step = "round two (client)";
        ret = mbedtls_ecjpake_write_round_two(&cli, buf, sizeof buf, &len, rng, NULL);
    }
    if (ret == 0)
        ret = mbedtls_ecjpake_read_round_two(&srv, buf, len);
    if (ret == 0) {
        step = "derive";
        ret = mbedtls_ecjpake_derive_secret(&cli, pms_c, 32, &pc_len, rng, NULL);
    }
    if (ret == 0)
        ret = mbedtls_ecjpake_derive_secret(&srv, pms_s, 32, &ps_len, rng, NULL);
    mbedtls_ecjpake_free(&cli);
    mbedtls_ecjpake_free(&srv);
    if (ret != 0) {
        char what[64];
        snprintf(what, sizeof what, "EC-JPAKE %s", step);
        return fail(err, what, ret);
    }
    if (pc_len != 32 || ps_len != 32)
        return cb_say(err, CB_ERR, "EC-JPAKE premaster secret is not 32 bytes");
    return CB_OK;
}
#endif

/* ---- compute dispatch ----------------------------------------------------------------------- */

static int mb_compute(const cb_params *p, const cb_kv *in, cb_kv *out, char *err)
{
    int op = p->op;
    int rc = check(p, err);
    if (rc != CB_OK)
        return rc;
    rc = rng_init(err);
    if (rc != CB_OK)
        return rc;

    switch (op) {
    case CB_OP_AES_ECB_ENCRYPT: case CB_OP_AES_CBC_ENCRYPT: case CB_OP_AES_CTR_ENCRYPT:
    case CB_OP_AES_CCM_ENCRYPT: case CB_OP_AES_GCM_ENCRYPT:
    case CB_OP_CHACHA20_POLY1305_ENCRYPT: case CB_OP_CHACHA20_ENCRYPT:
        return compute_cipher(op, p, in, out, err);
    case CB_OP_SHA1: case CB_OP_SHA224: case CB_OP_SHA256: case CB_OP_SHA384: case CB_OP_SHA512: {
        uint8_t digest[64];
        size_t mlen, dlen;
        const uint8_t *msg = cb_kv_input(in, "msg", &mlen);
        int ret = sha(op, msg, mlen, digest, &dlen);
        return ret != 0 ? fail(err, "digest", ret) : put(out, "digest", digest, dlen, err);
    }
    case CB_OP_CTR_DRBG_INSTANTIATE: case CB_OP_CTR_DRBG_RESEED: case CB_OP_CTR_DRBG_GENERATE:
        return compute_drbg(p, in, out, err);
    case CB_OP_ECDH_KEYGEN: case CB_OP_ECDH_SHARED_SECRET: case CB_OP_ECC_KEYGEN:
    case CB_OP_ECDSA_SIGN: case CB_OP_ECDSA_VERIFY:
        return compute_ec(op, p, in, out, err);
    case CB_OP_RSA_KEYGEN: case CB_OP_RSA_SIGN: case CB_OP_RSA_VERIFY:
        return compute_rsa(op, p, in, out, err);
#ifdef CBH_HAVE_ECJPAKE
    case CB_OP_ECJPAKE_EXCHANGE: {
        size_t lc, ls;
        const uint8_t *pwc = cb_kv_input(in, "password_client", &lc);
        const uint8_t *pws = cb_kv_input(in, "password_server", &ls);
        uint8_t pc[32], ps[32];
        if (lc == 0 || ls == 0)
            return cb_say(err, CB_ERR, "both passwords are required");
        rc = jpake_exchange(pwc, lc, pws, ls, pc, ps, err);
        if (rc == CB_OK)
            rc = put(out, "pms_client", pc, 32, err);
        if (rc == CB_OK)
            rc = put(out, "pms_server", ps, 32, err);
        return rc;
    }
#endif
    case CB_OP_RANDOM: {
        uint8_t *buf;
        int ret;
        buf = malloc((size_t)p->bytes + 1);
        if (buf == NULL)
            return cb_say(err, CB_ERR, "out of memory");
        ret = rng_bytes(buf, (size_t)p->bytes);
        rc = ret != 0 ? fail(err, "CTR_DRBG", ret) : put(out, "bits", buf, (size_t)p->bytes, err);
        free(buf);
        return rc;
    }
    }
    return cb_say(err, CB_UNSUPPORTED, "mbedtls engine does not implement this op");
}

/* ---- timing slots --------------------------------------------------------------------------- */

typedef struct {
    int op;
    cb_params p;
    uint64_t counter;             /* fresh IV / nonce / digest per operation */

    /* payload ops */
    uint8_t *msg, *out, *aad;
    size_t len, aad_len, tag_len;
    uint8_t iv[16];
    size_t iv_len;
    uint8_t key[32];
    mbedtls_aes_context aes;
    mbedtls_ccm_context ccm;
    mbedtls_gcm_context gcm;
#if defined(MBEDTLS_CHACHAPOLY_C)
    mbedtls_chachapoly_context chachapoly;
#endif
#if defined(MBEDTLS_CHACHA20_C)
    mbedtls_chacha20_context chacha20;
#endif

    /* CTR_DRBG */
    mbedtls_ctr_drbg_context drbg;
    cb_cursor cur;
    uint8_t seed[64];             /* entropy (32) || nonce (16), and reseed entropy */

    /* EC */
    const curve_info *curve;
    mbedtls_ecp_group grp;
    mbedtls_mpi d[POOL], r[POOL], s[POOL], z, rr, ss;
    mbedtls_ecp_point q[POOL], peer[POOL], tmp;
    uint8_t hash[POOL][64];
    size_t hash_len;

    /* RSA */
    mbedtls_rsa_context rsa;
    uint8_t *sigs;                /* POOL signatures of rsa_len bytes */
    size_t rsa_len;
} slot;

static void slot_free(slot *s)
{
    if (s == NULL)
        return;
    free(s->msg);
    free(s->out);
    free(s->aad);
    free(s->sigs);
    mbedtls_aes_free(&s->aes);
    mbedtls_ccm_free(&s->ccm);
    mbedtls_gcm_free(&s->gcm);
#if defined(MBEDTLS_CHACHAPOLY_C)
    mbedtls_chachapoly_free(&s->chachapoly);
#endif
#if defined(MBEDTLS_CHACHA20_C)
    mbedtls_chacha20_free(&s->chacha20);
#endif
    mbedtls_ctr_drbg_free(&s->drbg);
    mbedtls_ecp_group_free(&s->grp);
    for (int i = 0; i < POOL; i++) {
        mbedtls_mpi_free(&s->d[i]);
        mbedtls_mpi_free(&s->r[i]);
        mbedtls_mpi_free(&s->s[i]);
        mbedtls_ecp_point_free(&s->q[i]);
        mbedtls_ecp_point_free(&s->peer[i]);
    }
    mbedtls_mpi_free(&s->z);
    mbedtls_mpi_free(&s->rr);
    mbedtls_mpi_free(&s->ss);
    mbedtls_ecp_point_free(&s->tmp);
    mbedtls_rsa_free(&s->rsa);
    free(s);
}

/* Every context is initialised up front, so teardown can free them all whatever the op. */
static slot *slot_new(const cb_params *p, int op)
{
    slot *s = calloc(1, sizeof *s);
    if (s == NULL)
        return NULL;
    s->op = op;
    s->p = *p;
    mbedtls_aes_init(&s->aes);
    mbedtls_ccm_init(&s->ccm);
    mbedtls_gcm_init(&s->gcm);
#if defined(MBEDTLS_CHACHAPOLY_C)
    mbedtls_chachapoly_init(&s->chachapoly);
#endif
#if defined(MBEDTLS_CHACHA20_C)
    mbedtls_chacha20_init(&s->chacha20);
#endif
    mbedtls_ctr_drbg_init(&s->drbg);
    mbedtls_ecp_group_init(&s->grp);
    for (int i = 0; i < POOL; i++) {
        mbedtls_mpi_init(&s->d[i]);
        mbedtls_mpi_init(&s->r[i]);
        mbedtls_mpi_init(&s->s[i]);
        mbedtls_ecp_point_init(&s->q[i]);
        mbedtls_ecp_point_init(&s->peer[i]);
    }
    mbedtls_mpi_init(&s->z);
    mbedtls_mpi_init(&s->rr);
    mbedtls_mpi_init(&s->ss);
    mbedtls_ecp_point_init(&s->tmp);
    mbedtls_rsa_init(&s->rsa, MBEDTLS_RSA_PKCS_V15, MBEDTLS_MD_SHA256);
    return s;
}

/* The key schedule (and GCM's H table) for the slot's key: once per slot, or before every
 * operation when the params ask for rekey=1. Returns the library's code. */
static int set_key(slot *s)
{
    unsigned bits = (unsigned)s->p.key_bits;
    switch (s->op) {
    case CB_OP_AES_ECB_ENCRYPT: case CB_OP_AES_CBC_ENCRYPT: case CB_OP_AES_CTR_ENCRYPT:
        return mbedtls_aes_setkey_enc(&s->aes, s->key, bits);
    case CB_OP_AES_CCM_ENCRYPT:
        return mbedtls_ccm_setkey(&s->ccm, MBEDTLS_CIPHER_ID_AES, s->key, bits);
    case CB_OP_AES_GCM_ENCRYPT:
        return mbedtls_gcm_setkey(&s->gcm, MBEDTLS_CIPHER_ID_AES, s->key, bits);
#if defined(MBEDTLS_CHACHAPOLY_C)
    case CB_OP_CHACHA20_POLY1305_ENCRYPT:
        return mbedtls_chachapoly_setkey(&s->chachapoly, s->key);
#endif
#if defined(MBEDTLS_CHACHA20_C)
    case CB_OP_CHACHA20_ENCRYPT:
        return mbedtls_chacha20_setkey(&s->chacha20, s->key);
#endif
    }
    return 0;
}

static int setup_cipher(slot *s, char *err)
{
    const cb_params *p = &s->p;

    s->len = (size_t)p->bytes;
    s->aad_len = p->aad_bytes < 0 ? 0 : (size_t)p->aad_bytes;
    s->msg = malloc(s->len + 1);
    s->out = malloc(s->len + 16 + 1);
    s->aad = malloc(s->aad_len + 1);
    if (s->msg == NULL || s->out == NULL || s->aad == NULL)
        return cb_say(err, CB_ERR, "out of memory");
    cb_fill(s->msg, s->len, 1);
    cb_fill(s->aad, s->aad_len, 2);
    cb_fill(s->key, sizeof s->key, 3);
    cb_fill(s->iv, sizeof s->iv, 4);

    switch (s->op) {
    case CB_OP_AES_CCM_ENCRYPT:
        s->iv_len = p->nonce_bytes < 0 ? 13 : (size_t)p->nonce_bytes;
        s->tag_len = p->tag_bytes < 0 ? 16 : (size_t)p->tag_bytes;
        break;
    case CB_OP_AES_GCM_ENCRYPT: case CB_OP_CHACHA20_POLY1305_ENCRYPT:
        s->iv_len = 12;
        break;
    default:
        s->iv_len = 16;
    }
    int ret = set_key(s);
    return ret == 0 ? CB_OK : fail(err, "setting the key", ret);
}

static int run_cipher(slot *s, uint64_t k, char *err)
{
    uint8_t stream[16];
    size_t off;
    /* The counter goes into the last (up to) 8 bytes of the IV / nonce. */
    size_t cn = s->iv_len < 8 ? s->iv_len : 8;
    uint8_t *ctr = s->iv + s->iv_len - cn;
    int ret = 0;

    for (uint64_t i = 0; i < k && ret == 0; i++) {
        put_counter(ctr, cn, ++s->counter);
        if (s->p.rekey && (ret = set_key(s)) != 0)
            break;
        switch (s->op) {
        case CB_OP_AES_ECB_ENCRYPT:
            for (size_t j = 0; j < s->len && ret == 0; j += 16)
                ret = mbedtls_aes_crypt_ecb(&s->aes, MBEDTLS_AES_ENCRYPT, s->msg + j, s->out + j);
            break;
        case CB_OP_AES_CBC_ENCRYPT: {
            uint8_t iv[16];        /* mbedtls_aes_crypt_cbc updates the IV it is given */
            memcpy(iv, s->iv, 16);
            ret = mbedtls_aes_crypt_cbc(&s->aes, MBEDTLS_AES_ENCRYPT, s->len, iv, s->msg, s->out);
            break;
        }
        case CB_OP_AES_CTR_ENCRYPT: {
            uint8_t cb[16];        /* ... and crypt_ctr the counter block */
            memcpy(cb, s->iv, 16);
            off = 0;
            ret = mbedtls_aes_crypt_ctr(&s->aes, s->len, &off, cb, stream, s->msg, s->out);
            break;
        }
        case CB_OP_AES_CCM_ENCRYPT:
            ret = mbedtls_ccm_encrypt_and_tag(&s->ccm, s->len, s->iv, s->iv_len, s->aad,
                                              s->aad_len, s->msg, s->out, s->out + s->len,
                                              s->tag_len);
            break;
        case CB_OP_AES_GCM_ENCRYPT:
            ret = mbedtls_gcm_crypt_and_tag(&s->gcm, MBEDTLS_GCM_ENCRYPT, s->len, s->iv, 12,
                                            s->aad, s->aad_len, s->msg, s->out, 16,
                                            s->out + s->len);
            break;
#if defined(MBEDTLS_CHACHAPOLY_C)
        case CB_OP_CHACHA20_POLY1305_ENCRYPT:
            ret = mbedtls_chachapoly_encrypt_and_tag(&s->chachapoly, s->len, s->iv, s->aad,
                                                     s->aad_len, s->msg, s->out,
                                                     s->out + s->len);
            break;
#endif
#if defined(MBEDTLS_CHACHA20_C)
        case CB_OP_CHACHA20_ENCRYPT:    /* iv: the block counter (LE), then the 12-byte nonce */
            ret = mbedtls_chacha20_starts(&s->chacha20, s->iv + 4, cb_chacha20_counter(s->iv));
            if (ret == 0)
                ret = mbedtls_chacha20_update(&s->chacha20, s->len, s->msg, s->out);
            break;
#endif
        }
    }
    return ret == 0 ? CB_OK : fail(err, "encrypt", ret);
}

/* Pre-generated seed material (entropy 32 B || nonce 16 B, the CAVP AES-256 sizes; no perso).
 * The cursor wraps, so reseeds keep drawing from the same pre-generated buffer. */
static int setup_drbg(slot *s, char *err)
{
    int ret;
    cb_fill(s->seed, sizeof s->seed, 5);
    s->cur.buf = s->seed;
    s->cur.len = sizeof s->seed;
    s->cur.wrap = 1;
    ret = drbg_instantiate(&s->drbg, &s->cur, 32, 16, NULL, 0);
    if (ret != 0)
        return fail(err, "CTR_DRBG instantiate", ret);
    /* No automatic reseed inside a generate benchmark: that would time reseeds too. */
    mbedtls_ctr_drbg_set_reseed_interval(&s->drbg, INT_MAX);
    if (s->op == CB_OP_CTR_DRBG_GENERATE) {
        s->len = (size_t)s->p.bytes;
        s->out = malloc(s->len + 1);
        if (s->out == NULL)
            return cb_say(err, CB_ERR, "out of memory");
    }
    return CB_OK;
}

static int run_drbg(slot *s, uint64_t k, char *err)
{
    int ret = 0;
    for (uint64_t i = 0; i < k && ret == 0; i++) {
        switch (s->op) {
        case CB_OP_CTR_DRBG_INSTANTIATE:
            /* A fresh context every time (the nonce length can only be set before seeding);
             * free + init is a zeroisation and a memset, negligible next to the seeding. */
            mbedtls_ctr_drbg_free(&s->drbg);
            mbedtls_ctr_drbg_init(&s->drbg);
            s->cur.pos = 0;
            ret = drbg_instantiate(&s->drbg, &s->cur, 32, 16, NULL, 0);
            break;
        case CB_OP_CTR_DRBG_RESEED:
            s->cur.pos = 32;      /* the reseed entropy: the 32 bytes after the seed entropy */
            ret = mbedtls_ctr_drbg_reseed(&s->drbg, NULL, 0);
            break;
        case CB_OP_CTR_DRBG_GENERATE: {
            /* More than one request's worth (1024 B) is produced in consecutive requests. */
            uint8_t *o = s->out;
            size_t left = s->len;
            while (left > 0 && ret == 0) {
                size_t n = left < DRBG_CHUNK ? left : DRBG_CHUNK;
                ret = mbedtls_ctr_drbg_random_with_add(&s->drbg, o, n, NULL, 0);
                o += n;
                left -= n;
            }
            break;
        }
        }
    }
    return ret == 0 ? CB_OK : fail(err, "CTR_DRBG", ret);
}

static int setup_ec(slot *s, char *err)
{
    int ret = 0, rc;
    s->curve = curve_of(s->p.curve);
    rc = load_group(&s->grp, s->curve, err);
    if (rc != CB_OK)
        return rc;
    s->hash_len = s->curve->hash_len;

    for (int i = 0; i < POOL && ret == 0; i++) {
        switch (s->op) {
        case CB_OP_ECDH_KEYGEN:
            /* The private scalars to compute public keys from. */
            ret = mbedtls_ecp_gen_privkey(&s->grp, &s->d[i], rng, NULL);
            break;
        case CB_OP_ECDH_SHARED_SECRET:
            /* Own key pair i and an independent peer public key i. */
            ret = mbedtls_ecp_gen_keypair(&s->grp, &s->d[i], &s->q[i], rng, NULL);
            if (ret == 0)
                ret = mbedtls_ecp_gen_keypair(&s->grp, &s->z, &s->peer[i], rng, NULL);
            break;
        case CB_OP_ECDSA_SIGN:
            /* One fixed key (d[0]); the digest changes per operation. */
            if (i == 0) {
                ret = mbedtls_ecp_gen_keypair(&s->grp, &s->d[0], &s->q[0], rng, NULL);
                cb_fill(s->hash[0], s->hash_len, 6);
            }
            break;
        case CB_OP_ECDSA_VERIFY:
            /* One fixed key, 16 (digest, signature) pairs. */
            if (i == 0)
                ret = mbedtls_ecp_gen_keypair(&s->grp, &s->d[0], &s->q[0], rng, NULL);
            cb_fill(s->hash[i], s->hash_len, 100 + (uint64_t)i);
            if (ret == 0)
                ret = mbedtls_ecdsa_sign(&s->grp, &s->r[i], &s->s[i], &s->d[0], s->hash[i],
                                         s->hash_len, rng, NULL);
            if (ret == 0)
                ret = mbedtls_ecdsa_verify(&s->grp, s->hash[i], s->hash_len, &s->q[0],
                                           &s->r[i], &s->s[i]);
            break;
        }
    }
    return ret == 0 ? CB_OK : fail(err, "preparing keys", ret);
}

static int run_ec(slot *s, uint64_t k, char *err)
{
    int ret = 0;
    for (uint64_t i = 0; i < k && ret == 0; i++) {
        int j = (int)(s->counter++ % POOL);
        switch (s->op) {
        case CB_OP_ECDH_KEYGEN:
            ret = mbedtls_ecp_mul(&s->grp, &s->tmp, &s->d[j], &s->grp.G, rng, NULL);
            break;
        case CB_OP_ECDH_SHARED_SECRET:
            ret = mbedtls_ecdh_compute_shared(&s->grp, &s->z, &s->peer[j], &s->d[j], rng, NULL);
            break;
        case CB_OP_ECC_KEYGEN:
            ret = mbedtls_ecp_gen_keypair(&s->grp, &s->z, &s->tmp, rng, NULL);
            break;
        case CB_OP_ECDSA_SIGN:
            put_counter(s->hash[0], 8, s->counter);
            ret = mbedtls_ecdsa_sign(&s->grp, &s->rr, &s->ss, &s->d[0], s->hash[0], s->hash_len,
                                     rng, NULL);
            break;
        case CB_OP_ECDSA_VERIFY:
            ret = mbedtls_ecdsa_verify(&s->grp, s->hash[j], s->hash_len, &s->q[0], &s->r[j],
                                       &s->s[j]);
            break;
        }
    }
    return ret == 0 ? CB_OK : fail(err, cb_op_name(&s->p), ret);
}

static int setup_rsa(slot *s, char *err)
{
    int ret = 0;
    if (s->op == CB_OP_RSA_KEYGEN)
        return CB_OK;
    ret = mbedtls_rsa_gen_key(&s->rsa, rng, NULL, (unsigned)s->p.rsa_bits, 65537);
    if (ret != 0)
        return fail(err, "RSA key generation", ret);
    s->rsa_len = mbedtls_rsa_get_len(&s->rsa);
    s->sigs = malloc(POOL * s->rsa_len);
    if (s->sigs == NULL)
        return cb_say(err, CB_ERR, "out of memory");
    for (int i = 0; i < POOL && ret == 0; i++) {
        cb_fill(s->hash[i], 32, 200 + (uint64_t)i);
        ret = mbedtls_rsa_rsassa_pkcs1_v15_sign(&s->rsa, rng, NULL, MBEDTLS_RSA_PRIVATE,
                                                MBEDTLS_MD_SHA256, 32, s->hash[i],
                                                s->sigs + i * s->rsa_len);
    }
    return ret == 0 ? CB_OK : fail(err, "RSA sign", ret);
}

static int run_rsa(slot *s, uint64_t k, char *err)
{
    int ret = 0;
    for (uint64_t i = 0; i < k && ret == 0; i++) {
        int j = (int)(s->counter++ % POOL);
        switch (s->op) {
        case CB_OP_RSA_KEYGEN: {
            /* A fresh context per key: generating into a used one would reuse its state. */
            mbedtls_rsa_context rsa;
            mbedtls_rsa_init(&rsa, MBEDTLS_RSA_PKCS_V15, MBEDTLS_MD_SHA256);
            ret = mbedtls_rsa_gen_key(&rsa, rng, NULL, (unsigned)s->p.rsa_bits, 65537);
            mbedtls_rsa_free(&rsa);
            break;
        }
        case CB_OP_RSA_SIGN:
            /* mbed TLS's PKCS#1 v1.5 sign also verifies its result (fault countermeasure);
             * that is part of the library's sign call and so of the timing. */
            put_counter(s->hash[0], 8, s->counter);
            ret = mbedtls_rsa_rsassa_pkcs1_v15_sign(&s->rsa, rng, NULL, MBEDTLS_RSA_PRIVATE,
                                                    MBEDTLS_MD_SHA256, 32, s->hash[0],
                                                    s->sigs);
            break;
        case CB_OP_RSA_VERIFY:
            ret = mbedtls_rsa_rsassa_pkcs1_v15_verify(&s->rsa, NULL, NULL, MBEDTLS_RSA_PUBLIC,
                                                      MBEDTLS_MD_SHA256, 32, s->hash[j],
                                                      s->sigs + j * s->rsa_len);
            break;
        }
    }
    return ret == 0 ? CB_OK : fail(err, cb_op_name(&s->p), ret);
}

static void *mb_setup(const cb_params *p, char *err)
{
    int op = p->op;
    int rc = check(p, err);
    slot *s;

    if (rc != CB_OK)
        return NULL;
    if (rng_init(err) != CB_OK)
        return NULL;
    s = slot_new(p, op);
    if (s == NULL) {
        cb_say(err, CB_ERR, "out of memory");
        return NULL;
    }
    switch (op) {
    case CB_OP_AES_ECB_ENCRYPT: case CB_OP_AES_CBC_ENCRYPT: case CB_OP_AES_CTR_ENCRYPT:
    case CB_OP_AES_CCM_ENCRYPT: case CB_OP_AES_GCM_ENCRYPT:
    case CB_OP_CHACHA20_POLY1305_ENCRYPT: case CB_OP_CHACHA20_ENCRYPT:
        rc = setup_cipher(s, err);
        break;
    case CB_OP_SHA1: case CB_OP_SHA224: case CB_OP_SHA256: case CB_OP_SHA384: case CB_OP_SHA512:
    case CB_OP_RANDOM:
        s->len = (size_t)p->bytes;
        s->msg = malloc(s->len + 1);
        s->out = malloc(s->len + 64);
        rc = (s->msg && s->out) ? CB_OK : cb_say(err, CB_ERR, "out of memory");
        if (rc == CB_OK)
            cb_fill(s->msg, s->len, 7);
        break;
    case CB_OP_CTR_DRBG_INSTANTIATE: case CB_OP_CTR_DRBG_RESEED: case CB_OP_CTR_DRBG_GENERATE:
        rc = setup_drbg(s, err);
        break;
    case CB_OP_ECDH_KEYGEN: case CB_OP_ECDH_SHARED_SECRET: case CB_OP_ECC_KEYGEN:
    case CB_OP_ECDSA_SIGN: case CB_OP_ECDSA_VERIFY:
        rc = setup_ec(s, err);
        break;
    case CB_OP_RSA_KEYGEN: case CB_OP_RSA_SIGN: case CB_OP_RSA_VERIFY:
        rc = setup_rsa(s, err);
        break;
    case CB_OP_ECJPAKE_EXCHANGE:
        rc = CB_OK;
        break;
    }
    if (rc != CB_OK) {
        slot_free(s);
        return NULL;
    }
    return s;
}

static int mb_run(void *handle, uint64_t k, char *err)
{
    slot *s = handle;
    int ret = 0;

    switch (s->op) {
    case CB_OP_AES_ECB_ENCRYPT: case CB_OP_AES_CBC_ENCRYPT: case CB_OP_AES_CTR_ENCRYPT:
    case CB_OP_AES_CCM_ENCRYPT: case CB_OP_AES_GCM_ENCRYPT:
    case CB_OP_CHACHA20_POLY1305_ENCRYPT: case CB_OP_CHACHA20_ENCRYPT:
        return run_cipher(s, k, err);
    case CB_OP_SHA1: case CB_OP_SHA224: case CB_OP_SHA256: case CB_OP_SHA384: case CB_OP_SHA512: {
        size_t dlen;
        for (uint64_t i = 0; i < k && ret == 0; i++)
            ret = sha(s->op, s->msg, s->len, s->out, &dlen);
        return ret == 0 ? CB_OK : fail(err, "digest", ret);
    }
    case CB_OP_CTR_DRBG_INSTANTIATE: case CB_OP_CTR_DRBG_RESEED: case CB_OP_CTR_DRBG_GENERATE:
        return run_drbg(s, k, err);
    case CB_OP_ECDH_KEYGEN: case CB_OP_ECDH_SHARED_SECRET: case CB_OP_ECC_KEYGEN:
    case CB_OP_ECDSA_SIGN: case CB_OP_ECDSA_VERIFY:
        return run_ec(s, k, err);
    case CB_OP_RSA_KEYGEN: case CB_OP_RSA_SIGN: case CB_OP_RSA_VERIFY:
        return run_rsa(s, k, err);
#ifdef CBH_HAVE_ECJPAKE
    case CB_OP_ECJPAKE_EXCHANGE: {
        static const uint8_t pw[] = "threadjpaketest";
        uint8_t pc[32], ps[32];
        for (uint64_t i = 0; i < k; i++) {
            if (jpake_exchange(pw, sizeof pw - 1, pw, sizeof pw - 1, pc, ps, err) != CB_OK)
                return CB_ERR;
        }
        return CB_OK;
    }
#endif
    case CB_OP_RANDOM:
        /* The process CTR_DRBG through mbedtls_ctr_drbg_random (what applications call), with
         * its default reseed interval, so periodic reseeds from the OS are part of the cost. */
        for (uint64_t i = 0; i < k && ret == 0; i++)
            ret = rng_bytes(s->out, s->len);
        return ret == 0 ? CB_OK : fail(err, "CTR_DRBG", ret);
    }
    return cb_say(err, CB_ERR, "bad slot");
}

static void mb_teardown(void *handle)
{
    slot_free(handle);
}

/* ---- describe ------------------------------------------------------------------------------- */

/* The build's CPU-specific code, reported so that cryptobench can check that `mbedtls-portable`
 * really is portable (targets/host/engines.py) and say so in the conditions. */
#if defined(MBEDTLS_AESNI_C)
#define CBH_MB_AESNI_C 1
#else
#define CBH_MB_AESNI_C 0
#endif
#if defined(MBEDTLS_HAVE_ASM)
#define CBH_MB_HAVE_ASM 1
#else
#define CBH_MB_HAVE_ASM 0
#endif
#if defined(MBEDTLS_PADLOCK_C)
#define CBH_MB_PADLOCK_C 1
#else
#define CBH_MB_PADLOCK_C 0
#endif
#ifndef CBH_MBEDTLS_SOURCE
#define CBH_MBEDTLS_SOURCE "system libmbedcrypto"
#endif

static void mb_describe(char *out, size_t outlen)
{
    char version[32] = "";
    int aesni = 0;

    mbedtls_version_get_string_full(version);
#if defined(MBEDTLS_AESNI_C) && defined(MBEDTLS_AESNI_HAVE_CODE)
    aesni = mbedtls_aesni_has_support(MBEDTLS_AESNI_AES);
#endif
    snprintf(out, outlen,
             "\"version\":\"%s\",\"aesni\":%d,\"ctr_drbg\":\"AES-256 with df\","
             "\"build\":\"" CBH_MBEDTLS_SOURCE "\","
             "\"config\":{\"MBEDTLS_AESNI_C\":%d,\"MBEDTLS_HAVE_ASM\":%d,\"MBEDTLS_PADLOCK_C\":%d},"
#ifdef CBH_MBEDTLS_LIBFLAGS
             "\"library_cflags\":\"" CBH_MBEDTLS_LIBFLAGS "\","
#endif
#ifdef CBH_HAVE_ECJPAKE
             "\"ecjpake\":\"built from source\""
#ifdef CBH_ECJPAKE_SOURCE
             ",\"ecjpake_source\":\"" CBH_ECJPAKE_SOURCE "\""
#endif
#else
             "\"ecjpake\":\"unavailable\""
#endif
             , version, aesni, CBH_MB_AESNI_C, CBH_MB_HAVE_ASM, CBH_MB_PADLOCK_C);
}

const cb_engine cb_engine_mbedtls = {
    "mbedtls",
    "Mbed TLS",
    mb_describe,
    mb_supports,
    mb_compute,
    mb_setup,
    mb_run,
    mb_teardown,
};
