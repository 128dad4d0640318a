/* engine_openssl.c - the OpenSSL 3 engine: EVP APIs only, no deprecated low-level calls.
 *
 * Timed operations do what `openssl speed` does per operation where the protocol allows, so that
 * the harness and `openssl speed` can be checked against each other:
 *   digests:          EVP_Digest one-shot with an EVP_MD fetched once (as `speed -evp sha256`);
 *   ECDSA, ECDH, RSA: EVP_PKEY_sign / verify / derive on contexts initialised once (as speed);
 *   AEAD:             EncryptInit(iv) [+ CCM length] + AAD + EncryptUpdate + EncryptFinal + get tag
 *                     on one context whose key schedule is set once per slot (docs/protocol.md).
 * Beware when comparing AEAD figures: the `speed -aead` loop of OpenSSL 3.0.19 (Debian 12) sets
 * the IV length and calls EVP_CipherInit_ex(ctx, NULL, NULL, key, iv, -1) on every operation,
 * i.e. it re-keys (AES key expansion + GHASH table) each time; that costs ~150 ns per operation
 * (~5 % at 16 KiB, ~2x at 16 bytes) which this engine, keeping the key schedule, does not pay.
 * Every algorithm is fetched in setup, never per operation. Payloads are encrypted in place, as
 * `openssl speed` does; the content of the plaintext does not change the timing.
 */
#define OPENSSL_API_COMPAT 30000
#define OPENSSL_NO_DEPRECATED   /* any deprecated call in this file is a compile error */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/ec.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/obj_mac.h>
#include <openssl/param_build.h>
#include <openssl/rand.h>
#include <openssl/rsa.h>

#include "engine.h"
#include "util.h"

#define NPAIRS 16           /* pre-made keys / signatures that timed ops cycle through */
#define DRBG_STRENGTH 256   /* AES-256 CTR_DRBG */
/* Given a NULL personalization string, OpenSSL's instantiate substitutes its own default one;
 * an empty non-NULL string means "none", as in SP 800-90A and CAVP. */
#define NO_PERSO ((const unsigned char *)"")

/* ================================================================ small helpers */

/* Fill err with what failed and OpenSSL's reason, and clear OpenSSL's error queue. */
static int fail(char *err, const char *what)
{
    unsigned long e = ERR_peek_last_error();
    char detail[160] = "";
    if (e)
        ERR_error_string_n(e, detail, sizeof detail);
    ERR_clear_error();
    snprintf(err, CB_ERRLEN, "%s%s%s", what, e ? ": " : "", detail);
    return CB_ERR;
}

static int bad_input(char *err, const char *fmt, const char *name)
{
    snprintf(err, CB_ERRLEN, fmt, name);
    return CB_ERR;
}

static int unsupported(char *why, const char *msg)
{
    snprintf(why, CB_ERRLEN, "%s", msg);
    return CB_UNSUPPORTED;
}

/* Store a 64-bit counter little-endian in the first min(8, len) bytes of buf: fresh IVs,
 * nonces and digests per operation. */
static void put_counter(uint8_t *buf, size_t len, uint64_t ctr)
{
    for (size_t i = 0; i < len && i < 8; i++)
        buf[i] = (uint8_t)(ctr >> (8 * i));
}

/* ================================================================ operation families */

/* M_CHACHA: ChaCha20-Poly1305; M_CHACHA20: raw ChaCha20 (EVP_chacha20, a 16-byte iv: the
 * block counter, little-endian, then the 12-byte nonce; no tag) */
enum { M_ECB, M_CBC, M_CTR, M_CCM, M_GCM, M_CHACHA, M_CHACHA20 };

/* The op's catalog family (cb_ops.h), or -1 where this engine has no code for the op at all: an
 * id outside the catalog, or an AEAD other than ChaCha20-Poly1305 (supports() answers "unknown
 * op" for these, as for the reference loop, which is the system engine's). */
static int family(cb_op_id op)
{
    int f = (int)cb_op(op)->family;
    if (f == CB_FAMILY_AEAD && op != CB_OP_CHACHA20_POLY1305_ENCRYPT)
        return -1;
    return f;
}

/* The EVP mode of an AES op, or -1 for a mode OpenSSL 3 lacks. */
static int aes_mode(cb_op_id op)
{
    switch (op) {
    case CB_OP_AES_ECB_ENCRYPT: return M_ECB;
    case CB_OP_AES_CBC_ENCRYPT: return M_CBC;
    case CB_OP_AES_CTR_ENCRYPT: return M_CTR;
    case CB_OP_AES_CCM_ENCRYPT: return M_CCM;
    case CB_OP_AES_GCM_ENCRYPT: return M_GCM;
    default: return -1;
    }
}

static const char *digest_name(cb_op_id op)
{
    switch (op) {
    case CB_OP_SHA1: return "SHA1";
    case CB_OP_SHA224: return "SHA224";
    case CB_OP_SHA256: return "SHA256";
    case CB_OP_SHA384: return "SHA384";
    case CB_OP_SHA512: return "SHA512";
    default: return NULL;
    }
}

/* Curves: OpenSSL group name (NULL for X25519), NID and the byte length of a scalar. */
typedef struct {
    const char *id;
    const char *group;
    int nid;
    size_t bytes;
} curve_info;

static const curve_info curves[] = {
    { "p256", "P-256", NID_X9_62_prime256v1, 32 },
    { "p521", "P-521", NID_secp521r1, 66 },
    { "x25519", NULL, NID_X25519, 32 },
};

static const curve_info *find_curve(const char *id)
{
    for (size_t i = 0; i < sizeof curves / sizeof curves[0]; i++)
        if (strcmp(curves[i].id, id) == 0)
            return &curves[i];
    return NULL;
}

/* ================================================================ supports */

static int ccm_params_ok(const cb_params *p, char *why)
{
    long t = p->tag_bytes, n = p->nonce_bytes;
    if (t < 4 || t > 16 || t % 2)
        return unsupported(why, "CCM tag_bytes must be 4, 6, 8, 10, 12, 14 or 16");
    if (n < 7 || n > 13)
        return unsupported(why, "CCM nonce_bytes must be 7..13");
    long lbytes = 15 - n;           /* width of the CCM length field */
    if (lbytes < 8 && p->bytes >= 0 && (unsigned long)p->bytes >> (8 * lbytes) != 0)
        return unsupported(why, "bytes too large for the CCM length field of this nonce size");
    return CB_OK;
}

static int ossl_supports(const cb_params *p, char *why)
{
    const curve_info *c = find_curve(p->curve);
    switch (family(p->op)) {
    case CB_FAMILY_AES: {
        int mode = aes_mode(p->op);
        if (mode < 0)
            return unsupported(why, "OpenSSL has no such AES mode (EAX is not in OpenSSL 3)");
        if (p->key_bits != 128 && p->key_bits != 192 && p->key_bits != 256)
            return unsupported(why, "key_bits must be 128, 192 or 256");
        if ((mode == M_ECB || mode == M_CBC) && p->bytes >= 0 && p->bytes % 16)
            return unsupported(why, "ECB/CBC without padding need bytes as a multiple of 16");
        if (mode == M_CCM)
            return ccm_params_ok(p, why);
        return CB_OK;
    }
    case CB_FAMILY_AEAD:
    case CB_FAMILY_STREAM:
    case CB_FAMILY_SHA:
    case CB_FAMILY_DRBG:
        return CB_OK;
    case CB_FAMILY_ECDH:
    case CB_FAMILY_ECC:
        if (c == NULL)
            return unsupported(why, "curve must be p256, p521 or x25519");
        return CB_OK;
    case CB_FAMILY_ECDSA:
        if (c != NULL && c->group == NULL)
            return unsupported(why, "ECDSA is not defined on X25519 (a Montgomery curve, "
                                    "for key exchange only)");
        if (c == NULL)
            return unsupported(why, "curve must be p256 or p521");
        return CB_OK;
    case CB_FAMILY_ECJPAKE:
        return unsupported(why, "OpenSSL 3 has no EC-JPAKE");
    case CB_FAMILY_RSA:
        if (p->rsa_bits < 1024 || p->rsa_bits > 16384)
            return unsupported(why, "rsa_bits must be 1024..16384");
        return CB_OK;
    case CB_FAMILY_RANDOM:
        if (strcmp(p->source, "library") != 0)
            return unsupported(why, "the openssl engine draws only from its own DRBG "
                                    "(source \"library\", RAND_bytes); OS and CPU sources "
                                    "are the system engine's");
        return CB_OK;
    }
    return unsupported(why, "unknown op");
}

/* ================================================================ symmetric ciphers */

/* One cipher context with its key schedule set once (or, with rekey, before every operation, as
 * `openssl speed -aead` does); sym_encrypt is one timed operation. */
typedef struct {
    int mode;
    int rekey;
    uint8_t key[32];
    EVP_CIPHER *cipher;
    EVP_CIPHER_CTX *ctx;
    uint8_t iv[16];
    size_t ivlen;
    const uint8_t *aad;
    size_t aadlen;
    size_t taglen;
} sym;

static void sym_free(sym *c)
{
    EVP_CIPHER_CTX_free(c->ctx);
    EVP_CIPHER_free(c->cipher);
    c->ctx = NULL;
    c->cipher = NULL;
}

/* Fetch the cipher and set the key. ivlen/taglen matter for the AEAD modes only. */
static int sym_init(sym *c, int mode, const uint8_t *key, size_t keylen, size_t ivlen,
                    size_t taglen, char *err)
{
    static const char *const names[] = { "ECB", "CBC", "CTR", "CCM", "GCM" };
    char name[32];
    if (mode == M_CHACHA)
        snprintf(name, sizeof name, "ChaCha20-Poly1305");
    else if (mode == M_CHACHA20)
        snprintf(name, sizeof name, "ChaCha20");
    else
        snprintf(name, sizeof name, "AES-%zu-%s", keylen * 8, names[mode]);

    memset(c, 0, sizeof *c);
    c->mode = mode;
    c->ivlen = ivlen;
    c->taglen = taglen;
    c->cipher = EVP_CIPHER_fetch(NULL, name, NULL);
    c->ctx = EVP_CIPHER_CTX_new();
    if (c->cipher == NULL || c->ctx == NULL)
        return fail(err, "EVP_CIPHER_fetch");
    if ((size_t)EVP_CIPHER_get_key_length(c->cipher) != keylen)
        return bad_input(err, "%s: wrong key length", name);
    if (!EVP_EncryptInit_ex2(c->ctx, c->cipher, NULL, NULL, NULL))
        return fail(err, "EVP_EncryptInit_ex2");
    /* always set the AEAD nonce length: for CCM, EVP_CIPHER_get_iv_length says 12 while a
     * fresh context uses 7 */
    int aead = mode == M_CCM || mode == M_GCM || mode == M_CHACHA;
    if (aead && EVP_CIPHER_CTX_ctrl(c->ctx, EVP_CTRL_AEAD_SET_IVLEN, (int)ivlen, NULL) <= 0)
        return fail(err, "set IV length");
    /* CCM needs the tag length before the key (it is part of the first block) */
    if (mode == M_CCM && EVP_CIPHER_CTX_ctrl(c->ctx, EVP_CTRL_AEAD_SET_TAG, (int)taglen, NULL) <= 0)
        return fail(err, "set CCM tag length");
    if (!EVP_EncryptInit_ex2(c->ctx, NULL, key, NULL, NULL))
        return fail(err, "set key");
    memcpy(c->key, key, keylen);
    if ((mode == M_ECB || mode == M_CBC) && !EVP_CIPHER_CTX_set_padding(c->ctx, 0))
        return fail(err, "disable padding");
    return CB_OK;
}

/* Encrypt len bytes from in to out (may be the same buffer); AEAD modes append the tag.
 * Returns 1 on success. One timed operation: a fresh IV on the keyed context, then the data. */
static int sym_encrypt(sym *c, uint8_t *out, const uint8_t *in, size_t len)
{
    EVP_CIPHER_CTX *ctx = c->ctx;
    int outl, fin;

    if (c->mode == M_ECB) {
        if (c->rekey && !EVP_EncryptInit_ex(ctx, NULL, NULL, c->key, NULL))
            return 0;
        return EVP_EncryptUpdate(ctx, out, &outl, in, (int)len);
    }
    if (!EVP_EncryptInit_ex(ctx, NULL, NULL, c->rekey ? c->key : NULL, c->iv))
        return 0;
    if (c->mode == M_CBC || c->mode == M_CTR || c->mode == M_CHACHA20)
        return EVP_EncryptUpdate(ctx, out, &outl, in, (int)len);

    /* CCM authenticates the message length first, so it must be given before the AAD */
    if (c->mode == M_CCM && !EVP_EncryptUpdate(ctx, NULL, &outl, NULL, (int)len))
        return 0;
    if (c->aadlen > 0 && !EVP_EncryptUpdate(ctx, NULL, &outl, c->aad, (int)c->aadlen))
        return 0;
    if (!EVP_EncryptUpdate(ctx, out, &outl, in, (int)len))
        return 0;
    if (!EVP_EncryptFinal_ex(ctx, out + outl, &fin))
        return 0;
    return EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_GET_TAG, (int)c->taglen, out + len) > 0;
}

/* The cipher mode of an op of the AES, AEAD or stream family. */
static int cipher_mode(cb_op_id op)
{
    int f = family(op);
    return f == CB_FAMILY_AEAD ? M_CHACHA : f == CB_FAMILY_STREAM ? M_CHACHA20 : aes_mode(op);
}

static int compute_cipher(const cb_params *p, const cb_kv *in, cb_kv *out, char *err)
{
    int mode = cipher_mode(p->op);
    int chacha = mode == M_CHACHA || mode == M_CHACHA20;
    size_t keylen, ivlen = 0, msglen, aadlen = 0;
    const uint8_t *key = cb_kv_get(in, "key", &keylen);
    const uint8_t *msg = cb_kv_get(in, "msg", &msglen);
    const uint8_t *iv = NULL, *aad = NULL;
    size_t taglen = 16;

    if (key == NULL || msg == NULL)
        return bad_input(err, "%s needs inputs key and msg", cb_op_name(p));
    if (chacha ? keylen != 32 : (keylen != 16 && keylen != 24 && keylen != 32))
        return bad_input(err, "%s: bad key length", cb_op_name(p));
    if (!chacha && p->key_bits >= 0 && (size_t)p->key_bits != keylen * 8)
        return bad_input(err, "%s: key length does not match key_bits", cb_op_name(p));
    if ((mode == M_ECB || mode == M_CBC) && msglen % 16)
        return bad_input(err, "%s: msg must be a multiple of 16 bytes (no padding)", cb_op_name(p));
    if (mode != M_ECB) {
        const char *ivname = (mode == M_CCM || mode == M_CHACHA) ? "nonce" : "iv";
        iv = cb_kv_get(in, ivname, &ivlen);
        if (iv == NULL)
            return bad_input(err, "missing input %s", ivname);
        size_t want = mode == M_CBC || mode == M_CTR || mode == M_CHACHA20 ? 16 : mode == M_CCM ? 0 : 12;
        if (want && ivlen != want && !(mode == M_GCM && ivlen >= 1 && ivlen <= 16))
            return bad_input(err, "%s: bad iv/nonce length", cb_op_name(p));
        if (mode == M_CCM && (ivlen < 7 || ivlen > 13))
            return bad_input(err, "%s: CCM nonce must be 7..13 bytes", cb_op_name(p));
        /* OpenSSL would carry into the nonce; others wrap or abort (cb_chacha20.h) */
        if (mode == M_CHACHA20 && cb_chacha20_wraps(cb_chacha20_counter(iv), msglen))
            return bad_input(err, "%s", CB_CHACHA20_WRAP_MSG);
    }
    if (mode == M_CCM) {
        taglen = (size_t)p->tag_bytes;
        if (taglen < 4 || taglen > 16 || taglen % 2)
            return bad_input(err, "%s: bad tag_bytes", cb_op_name(p));
    }
    if (mode == M_CCM || mode == M_GCM || mode == M_CHACHA)
        aad = cb_kv_get(in, "aad", &aadlen);
    else
        taglen = 0;

    sym c;
    uint8_t *ct = malloc(msglen + 16);
    int rc = ct ? sym_init(&c, mode, key, keylen, ivlen, taglen, err) : fail(err, "malloc");
    if (rc == CB_OK) {
        if (iv)
            memcpy(c.iv, iv, ivlen);
        c.aad = aad;
        c.aadlen = aadlen;
        if (!sym_encrypt(&c, ct, msg, msglen))
            rc = fail(err, "encrypt");
        else if (cb_kv_put(out, "ct", ct, msglen + taglen))
            rc = fail(err, "out of memory");
    }
    if (ct)
        sym_free(&c);
    free(ct);
    return rc;
}

/* ================================================================ CTR_DRBG */

/* An AES-256 CTR_DRBG with derivation function, fed by a TEST-RAND parent whose entropy and
 * nonce we set: the CAVP flow needs exact inputs, and timing needs entropy that costs nothing
 * to produce (its production is not part of the DRBG's work). */
typedef struct {
    EVP_RAND_CTX *parent;
    EVP_RAND_CTX *drbg;
} drbg_pair;

static void drbg_free(drbg_pair *d)
{
    EVP_RAND_CTX_free(d->drbg);
    EVP_RAND_CTX_free(d->parent);
    d->drbg = d->parent = NULL;
}

/* Next entropy (and nonce, when given) the parent hands out. */
static int drbg_feed(drbg_pair *d, const uint8_t *ent, size_t entlen,
                     const uint8_t *nonce, size_t noncelen)
{
    OSSL_PARAM params[3], *q = params;
    *q++ = OSSL_PARAM_construct_octet_string(OSSL_RAND_PARAM_TEST_ENTROPY, (void *)ent, entlen);
    if (nonce)
        *q++ = OSSL_PARAM_construct_octet_string(OSSL_RAND_PARAM_TEST_NONCE, (void *)nonce,
                                                 noncelen);
    *q = OSSL_PARAM_construct_end();
    return EVP_RAND_CTX_set_params(d->parent, params);
}

static int drbg_new(drbg_pair *d, char *err)
{
    unsigned int strength = DRBG_STRENGTH;
    unsigned int reseed_requests = 0x7fffffff;  /* never reached: no reseed inside generate */
    time_t reseed_seconds = (time_t)1 << 40;
    int use_df = 1;
    char cipher[] = "AES-256-CTR";
    EVP_RAND *test = EVP_RAND_fetch(NULL, "TEST-RAND", NULL);
    EVP_RAND *ctr = EVP_RAND_fetch(NULL, "CTR-DRBG", NULL);

    d->parent = d->drbg = NULL;
    if (test && ctr) {
        d->parent = EVP_RAND_CTX_new(test, NULL);
        if (d->parent)
            d->drbg = EVP_RAND_CTX_new(ctr, d->parent);
    }
    EVP_RAND_free(test);
    EVP_RAND_free(ctr);
    if (d->drbg == NULL)
        return fail(err, "EVP_RAND TEST-RAND / CTR-DRBG");

    OSSL_PARAM pp[] = {
        OSSL_PARAM_construct_uint(OSSL_RAND_PARAM_STRENGTH, &strength),
        OSSL_PARAM_construct_end(),
    };
    OSSL_PARAM dp[] = {
        OSSL_PARAM_construct_utf8_string(OSSL_DRBG_PARAM_CIPHER, cipher, 0),
        OSSL_PARAM_construct_int(OSSL_DRBG_PARAM_USE_DF, &use_df),
        OSSL_PARAM_construct_uint(OSSL_DRBG_PARAM_RESEED_REQUESTS, &reseed_requests),
        OSSL_PARAM_construct_time_t(OSSL_DRBG_PARAM_RESEED_TIME_INTERVAL, &reseed_seconds),
        OSSL_PARAM_construct_end(),
    };
    if (!EVP_RAND_CTX_set_params(d->parent, pp)
        || !EVP_RAND_instantiate(d->parent, strength, 0, NULL, 0, NULL)
        || !EVP_RAND_CTX_set_params(d->drbg, dp)) {
        fail(err, "configure CTR-DRBG");
        drbg_free(d);
        return CB_ERR;
    }
    return CB_OK;
}

/* NIST CAVP flow: instantiate(entropy, nonce, perso); reseed(entropy_reseed, add_reseed);
 * generate(add1) discarded; generate(add2) returned. An empty input is an absent one; without
 * entropy_reseed the reseed is skipped (the CAVP "no reseed" files). */
static int compute_drbg(const cb_params *p, const cb_kv *in, cb_kv *out, char *err)
{
    size_t n[7];
    static const char *const names[7] = { "entropy", "nonce", "perso", "entropy_reseed",
                                          "add_reseed", "add1", "add2" };
    const uint8_t *v[7];
    for (int i = 0; i < 7; i++) {
        v[i] = cb_kv_get(in, names[i], &n[i]);
        if (v[i] != NULL && n[i] == 0)
            v[i] = NULL;
    }
    if (v[0] == NULL || v[1] == NULL)
        return bad_input(err, "%s needs inputs entropy and nonce", cb_op_name(p));
    size_t outlen = p->bytes >= 0 ? (size_t)p->bytes : 64;  /* CAVP: 512 returned bits */

    drbg_pair d;
    if (drbg_new(&d, err) != CB_OK)
        return CB_ERR;
    uint8_t *bits = malloc(outlen ? outlen : 1);
    int rc = CB_OK;
    if (bits == NULL)
        rc = fail(err, "malloc");
    else if (!drbg_feed(&d, v[0], n[0], v[1], n[1])
             || !EVP_RAND_instantiate(d.drbg, DRBG_STRENGTH, 0, v[2] ? v[2] : NO_PERSO, n[2],
                                      NULL))
        rc = fail(err, "instantiate");
    else if (v[3] && (!drbg_feed(&d, v[3], n[3], NULL, 0)
                      || !EVP_RAND_reseed(d.drbg, 0, NULL, 0, v[4], n[4])))
        rc = fail(err, "reseed");
    else if (!EVP_RAND_generate(d.drbg, bits, outlen, DRBG_STRENGTH, 0, v[5], n[5])
             || !EVP_RAND_generate(d.drbg, bits, outlen, DRBG_STRENGTH, 0, v[6], n[6]))
        rc = fail(err, "generate");
    else if (cb_kv_put(out, "bits", bits, outlen))
        rc = fail(err, "out of memory");
    free(bits);
    drbg_free(&d);
    return rc;
}

/* ================================================================ EC keys */

static EVP_PKEY *fromdata(const char *type, OSSL_PARAM_BLD *bld, int selection)
{
    EVP_PKEY *pkey = NULL;
    OSSL_PARAM *params = OSSL_PARAM_BLD_to_param(bld);
    EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_name(NULL, type, NULL);
    if (params == NULL || ctx == NULL || EVP_PKEY_fromdata_init(ctx) <= 0
        || EVP_PKEY_fromdata(ctx, &pkey, selection, params) <= 0)
        pkey = NULL;
    EVP_PKEY_CTX_free(ctx);
    OSSL_PARAM_free(params);
    return pkey;
}

/* A P-256/P-521 public key from its encoding 04||X||Y (OpenSSL checks it is on the curve). */
static EVP_PKEY *ec_public(const curve_info *c, const uint8_t *q, size_t qlen)
{
    OSSL_PARAM_BLD *bld = OSSL_PARAM_BLD_new();
    EVP_PKEY *pkey = NULL;
    if (bld && OSSL_PARAM_BLD_push_utf8_string(bld, OSSL_PKEY_PARAM_GROUP_NAME, c->group, 0)
        && OSSL_PARAM_BLD_push_octet_string(bld, OSSL_PKEY_PARAM_PUB_KEY, q, qlen))
        pkey = fromdata("EC", bld, EVP_PKEY_PUBLIC_KEY);
    OSSL_PARAM_BLD_free(bld);
    return pkey;
}

/* A P-256/P-521 key pair from the private scalar d (big-endian). EVP_PKEY_fromdata does not
 * derive the public point from the private key, so compute Q = d*G here first. */
static EVP_PKEY *ec_private(const curve_info *c, const uint8_t *d, size_t dlen, char *err)
{
    EC_GROUP *g = EC_GROUP_new_by_curve_name(c->nid);
    EC_POINT *Q = g ? EC_POINT_new(g) : NULL;
    BIGNUM *bd = BN_bin2bn(d, (int)dlen, NULL);
    OSSL_PARAM_BLD *bld = OSSL_PARAM_BLD_new();
    EVP_PKEY *pkey = NULL;
    uint8_t q[1 + 2 * 66];
    size_t qlen = 0;

    if (Q == NULL || bd == NULL || bld == NULL) {
        fail(err, "out of memory");
    } else if (BN_is_zero(bd) || BN_cmp(bd, EC_GROUP_get0_order(g)) >= 0) {
        snprintf(err, CB_ERRLEN, "d is not in [1, n-1]");
    } else if (!EC_POINT_mul(g, Q, bd, NULL, NULL, NULL)
               || (qlen = EC_POINT_point2oct(g, Q, POINT_CONVERSION_UNCOMPRESSED, q, sizeof q,
                                             NULL)) == 0) {
        fail(err, "compute public point");
    } else if (!OSSL_PARAM_BLD_push_utf8_string(bld, OSSL_PKEY_PARAM_GROUP_NAME, c->group, 0)
               || !OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_PRIV_KEY, bd)
               || !OSSL_PARAM_BLD_push_octet_string(bld, OSSL_PKEY_PARAM_PUB_KEY, q, qlen)
               || (pkey = fromdata("EC", bld, EVP_PKEY_KEYPAIR)) == NULL) {
        fail(err, "EVP_PKEY_fromdata");
    }
    OSSL_PARAM_BLD_free(bld);
    BN_clear_free(bd);
    EC_POINT_free(Q);
    EC_GROUP_free(g);
    return pkey;
}

/* The key from input d: big-endian scalar for P-curves, RFC 7748 bytes for X25519. */
static EVP_PKEY *key_from_d(const curve_info *c, const cb_kv *in, char *err)
{
    size_t dlen;
    const uint8_t *d = cb_kv_get(in, "d", &dlen);
    if (d == NULL || dlen == 0) {
        snprintf(err, CB_ERRLEN, "missing input d");
        return NULL;
    }
    if (c->group)
        return ec_private(c, d, dlen, err);
    EVP_PKEY *pkey = NULL;
    if (dlen != 32)
        snprintf(err, CB_ERRLEN, "x25519 d must be 32 bytes");
    else if ((pkey = EVP_PKEY_new_raw_private_key_ex(NULL, "X25519", NULL, d, 32)) == NULL)
        fail(err, "EVP_PKEY_new_raw_private_key_ex");
    return pkey;
}

static EVP_PKEY *key_from_q(const curve_info *c, const uint8_t *q, size_t qlen, char *err)
{
    EVP_PKEY *pkey = c->group ? ec_public(c, q, qlen)
                   : qlen == 32 ? EVP_PKEY_new_raw_public_key_ex(NULL, "X25519", NULL, q, 32)
                   : NULL;
    if (pkey == NULL)
        fail(err, "bad public key");
    return pkey;
}

/* Public key in protocol form: 04||X||Y, or the X25519 u-coordinate. */
static int put_public(cb_kv *out, const curve_info *c, EVP_PKEY *pkey, char *err)
{
    uint8_t q[1 + 2 * 66];
    size_t qlen = sizeof q;
    int ok = c->group
        ? EVP_PKEY_get_octet_string_param(pkey, OSSL_PKEY_PARAM_PUB_KEY, q, sizeof q, &qlen)
        : EVP_PKEY_get_raw_public_key(pkey, q, &qlen);
    if (!ok)
        return fail(err, "get public key");
    return cb_kv_put(out, "q", q, qlen) ? fail(err, "out of memory") : CB_OK;
}

static int put_private(cb_kv *out, const curve_info *c, EVP_PKEY *pkey, char *err)
{
    uint8_t d[66];
    size_t dlen = sizeof d;
    if (c->group) {
        BIGNUM *bd = NULL;
        if (!EVP_PKEY_get_bn_param(pkey, OSSL_PKEY_PARAM_PRIV_KEY, &bd)
            || BN_bn2binpad(bd, d, (int)c->bytes) < 0) {
            BN_clear_free(bd);
            return fail(err, "get private key");
        }
        BN_clear_free(bd);
        dlen = c->bytes;
    } else if (!EVP_PKEY_get_raw_private_key(pkey, d, &dlen)) {
        return fail(err, "get private key");
    }
    int rc = cb_kv_put(out, "d", d, dlen) ? fail(err, "out of memory") : CB_OK;
    OPENSSL_cleanse(d, sizeof d);
    return rc;
}

/* A fresh key pair on the curve (set-up only). */
static EVP_PKEY *ec_generate(const curve_info *c)
{
    return c->group ? EVP_PKEY_Q_keygen(NULL, NULL, "EC", c->group)
                    : EVP_PKEY_Q_keygen(NULL, NULL, "X25519");
}

/* A keygen context prepared once: EVP_PKEY_keygen on it generates the private scalar and computes
 * the public key (OpenSSL has no public-from-private call, so ecdh-keygen times both). */
static EVP_PKEY_CTX *keygen_ctx(const cb_params *p)
{
    const curve_info *c = find_curve(p->curve);
    EVP_PKEY_CTX *ctx;
    int ok;
    if (family(p->op) == CB_FAMILY_RSA) {
        unsigned int e = 65537;
        size_t bits = (size_t)p->rsa_bits;
        OSSL_PARAM params[] = {
            OSSL_PARAM_construct_size_t(OSSL_PKEY_PARAM_RSA_BITS, &bits),
            OSSL_PARAM_construct_uint(OSSL_PKEY_PARAM_RSA_E, &e),
            OSSL_PARAM_construct_end(),
        };
        ctx = EVP_PKEY_CTX_new_from_name(NULL, "RSA", NULL);
        ok = ctx && EVP_PKEY_keygen_init(ctx) > 0 && EVP_PKEY_CTX_set_params(ctx, params) > 0;
    } else {
        ctx = EVP_PKEY_CTX_new_from_name(NULL, c->group ? "EC" : "X25519", NULL);
        ok = ctx && EVP_PKEY_keygen_init(ctx) > 0
             && (c->group == NULL || EVP_PKEY_CTX_set_group_name(ctx, c->group) > 0);
    }
    if (!ok) {
        EVP_PKEY_CTX_free(ctx);
        return NULL;
    }
    return ctx;
}

static int derive(EVP_PKEY *own, EVP_PKEY *peer, cb_kv *out, char *err)
{
    EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_pkey(NULL, own, NULL);
    uint8_t z[66];
    size_t zlen = sizeof z;
    int rc = CB_OK;
    if (ctx == NULL || EVP_PKEY_derive_init(ctx) <= 0 || EVP_PKEY_derive_set_peer(ctx, peer) <= 0
        || EVP_PKEY_derive(ctx, z, &zlen) <= 0)
        rc = fail(err, "EVP_PKEY_derive");
    else if (cb_kv_put(out, "z", z, zlen))
        rc = fail(err, "out of memory");
    EVP_PKEY_CTX_free(ctx);
    return rc;
}

/* ECDSA signatures travel as fixed-width r||s; OpenSSL speaks DER. */
static int der_to_rs(const uint8_t *der, size_t derlen, uint8_t *rs, size_t n)
{
    const unsigned char *p = der;
    ECDSA_SIG *sig = d2i_ECDSA_SIG(NULL, &p, (long)derlen);
    int ok = sig != NULL
             && BN_bn2binpad(ECDSA_SIG_get0_r(sig), rs, (int)n) >= 0
             && BN_bn2binpad(ECDSA_SIG_get0_s(sig), rs + n, (int)n) >= 0;
    ECDSA_SIG_free(sig);
    return ok;
}

/* DER of r||s into *der (OPENSSL_malloc'd); length or 0. */
static size_t rs_to_der(const uint8_t *rs, size_t n, unsigned char **der)
{
    ECDSA_SIG *sig = ECDSA_SIG_new();
    BIGNUM *r = BN_bin2bn(rs, (int)n, NULL), *s = BN_bin2bn(rs + n, (int)n, NULL);
    int len = 0;
    *der = NULL;
    if (sig && r && s && ECDSA_SIG_set0(sig, r, s)) {
        r = s = NULL;                   /* now owned by sig */
        len = i2d_ECDSA_SIG(sig, der);
    }
    BN_free(r);
    BN_free(s);
    ECDSA_SIG_free(sig);
    return len > 0 ? (size_t)len : 0;
}

static int compute_ec(const cb_params *p, const cb_kv *in, cb_kv *out, char *err)
{
    const curve_info *c = find_curve(p->curve);
    EVP_PKEY *own = NULL, *peer = NULL;
    EVP_PKEY_CTX *ctx = NULL;
    int rc = CB_ERR;
    size_t qlen, hlen, siglen;
    const uint8_t *q, *hash, *sig;

    if (p->op == CB_OP_ECC_KEYGEN) {
        if ((own = ec_generate(c)) == NULL)
            rc = fail(err, "keygen");
        else if ((rc = put_private(out, c, own, err)) == CB_OK)
            rc = put_public(out, c, own, err);
    } else if (p->op == CB_OP_ECDH_KEYGEN) {
        if ((own = key_from_d(c, in, err)) != NULL)
            rc = put_public(out, c, own, err);
    } else if (p->op == CB_OP_ECDH_SHARED_SECRET) {
        if ((q = cb_kv_get(in, "peer", &qlen)) == NULL)
            rc = bad_input(err, "%s needs inputs d and peer", cb_op_name(p));
        else if ((own = key_from_d(c, in, err)) != NULL
                 && (peer = key_from_q(c, q, qlen, err)) != NULL)
            rc = derive(own, peer, out, err);
    } else if (p->op == CB_OP_ECDSA_SIGN) {
        uint8_t der[160], rs[2 * 66];
        siglen = sizeof der;
        if ((hash = cb_kv_get(in, "hash", &hlen)) == NULL || hlen == 0)
            rc = bad_input(err, "%s needs inputs d and hash", cb_op_name(p));
        else if ((own = key_from_d(c, in, err)) == NULL)
            rc = CB_ERR;
        else if ((ctx = EVP_PKEY_CTX_new_from_pkey(NULL, own, NULL)) == NULL
                 || EVP_PKEY_sign_init(ctx) <= 0
                 || EVP_PKEY_sign(ctx, der, &siglen, hash, hlen) <= 0
                 || !der_to_rs(der, siglen, rs, c->bytes))
            rc = fail(err, "ECDSA sign");
        else
            rc = cb_kv_put(out, "sig", rs, 2 * c->bytes) ? fail(err, "out of memory") : CB_OK;
    } else if (p->op == CB_OP_ECDSA_VERIFY) {
        q = cb_kv_get(in, "q", &qlen);
        hash = cb_kv_get(in, "hash", &hlen);
        sig = cb_kv_get(in, "sig", &siglen);
        if (q == NULL || hash == NULL || sig == NULL || hlen == 0)
            rc = bad_input(err, "%s needs inputs q, hash and sig", cb_op_name(p));
        else if ((peer = key_from_q(c, q, qlen, err)) != NULL) {
            /* a signature of the wrong size is simply invalid */
            unsigned char *der = NULL;
            size_t derlen = siglen == 2 * c->bytes ? rs_to_der(sig, c->bytes, &der) : 0;
            uint8_t ok = 0;
            if (derlen > 0 && (ctx = EVP_PKEY_CTX_new_from_pkey(NULL, peer, NULL)) != NULL
                && EVP_PKEY_verify_init(ctx) > 0)
                ok = EVP_PKEY_verify(ctx, der, derlen, hash, hlen) == 1;
            ERR_clear_error();
            OPENSSL_free(der);
            rc = cb_kv_put(out, "ok", &ok, 1) ? fail(err, "out of memory") : CB_OK;
        }
    }
    EVP_PKEY_CTX_free(ctx);
    EVP_PKEY_free(own);
    EVP_PKEY_free(peer);
    return rc;
}

/* ================================================================ RSA */

static int rsa_bn(OSSL_PARAM_BLD *bld, const char *key, const uint8_t *v, size_t len, BIGNUM **bn)
{
    *bn = BN_bin2bn(v, (int)len, NULL);
    return *bn != NULL && OSSL_PARAM_BLD_push_BN(bld, key, *bn);
}

/* An RSA key from n, e and (when given) d; no primes, so private operations run without CRT. */
static EVP_PKEY *rsa_key(const cb_params *p, const cb_kv *in, int private, char *err)
{
    size_t nlen, elen, dlen = 0;
    const uint8_t *n = cb_kv_get(in, "n", &nlen), *e = cb_kv_get(in, "e", &elen);
    const uint8_t *d = private ? cb_kv_get(in, "d", &dlen) : NULL;
    BIGNUM *bn = NULL, *be = NULL, *bd = NULL;
    EVP_PKEY *pkey = NULL;

    if (n == NULL || e == NULL || nlen == 0 || elen == 0 || (private && (d == NULL || !dlen))) {
        snprintf(err, CB_ERRLEN, "%s needs inputs n, e%s", cb_op_name(p), private ? ", d" : "");
        return NULL;
    }
    OSSL_PARAM_BLD *bld = OSSL_PARAM_BLD_new();
    if (bld && rsa_bn(bld, OSSL_PKEY_PARAM_RSA_N, n, nlen, &bn)
        && rsa_bn(bld, OSSL_PKEY_PARAM_RSA_E, e, elen, &be)
        && (!private || rsa_bn(bld, OSSL_PKEY_PARAM_RSA_D, d, dlen, &bd))) {
        if (p->rsa_bits > 0 && BN_num_bits(bn) != p->rsa_bits)
            snprintf(err, CB_ERRLEN, "n has %d bits but rsa_bits is %ld", BN_num_bits(bn),
                     p->rsa_bits);
        else if ((pkey = fromdata("RSA", bld, private ? EVP_PKEY_KEYPAIR
                                                      : EVP_PKEY_PUBLIC_KEY)) == NULL)
            fail(err, "EVP_PKEY_fromdata RSA");
    } else {
        fail(err, "RSA key parameters");
    }
    OSSL_PARAM_BLD_free(bld);
    BN_free(bn);
    BN_free(be);
    BN_clear_free(bd);
    return pkey;
}

/* PKCS#1 v1.5 with a SHA-256 DigestInfo: set once on a sign or verify context. */
static int rsa_pkcs1_sha256(EVP_PKEY_CTX *ctx, const EVP_MD *sha256)
{
    return EVP_PKEY_CTX_set_rsa_padding(ctx, RSA_PKCS1_PADDING) > 0
        && EVP_PKEY_CTX_set_signature_md(ctx, sha256) > 0;
}

static int put_bn(cb_kv *out, const char *name, EVP_PKEY *pkey, const char *param, int width)
{
    BIGNUM *bn = NULL;
    int rc = -1;
    if (EVP_PKEY_get_bn_param(pkey, param, &bn)) {
        int len = width > 0 ? width : BN_num_bytes(bn);
        uint8_t *buf = malloc((size_t)len + 1);
        if (buf && BN_bn2binpad(bn, buf, len) == len)
            rc = cb_kv_put(out, name, buf, (size_t)len);
        if (buf)
            OPENSSL_cleanse(buf, (size_t)len);
        free(buf);
    }
    BN_clear_free(bn);
    return rc;
}

static int compute_rsa(const cb_params *p, const cb_kv *in, cb_kv *out, char *err)
{
    EVP_MD *sha256 = EVP_MD_fetch(NULL, "SHA256", NULL);
    EVP_PKEY *pkey = NULL;
    EVP_PKEY_CTX *ctx = NULL;
    int rc = CB_ERR;
    size_t hlen = 0, siglen = 0;
    const uint8_t *hash = cb_kv_get(in, "hash", &hlen);
    const uint8_t *sig = cb_kv_get(in, "sig", &siglen);

    if (sha256 == NULL) {
        rc = fail(err, "EVP_MD_fetch SHA256");
    } else if (p->op == CB_OP_RSA_KEYGEN) {
        cb_params kp = *p;
        if (kp.rsa_bits < 0)
            kp.rsa_bits = 2048;         /* the catalog's default */
        if ((ctx = keygen_ctx(&kp)) == NULL || EVP_PKEY_keygen(ctx, &pkey) <= 0) {
            rc = fail(err, "RSA keygen");
        } else {
            int width = (int)((kp.rsa_bits + 7) / 8);
            rc = put_bn(out, "n", pkey, OSSL_PKEY_PARAM_RSA_N, width)
                 || put_bn(out, "e", pkey, OSSL_PKEY_PARAM_RSA_E, 0)
                 || put_bn(out, "d", pkey, OSSL_PKEY_PARAM_RSA_D, width)
                 ? fail(err, "get RSA key") : CB_OK;
        }
    } else if (hash == NULL || hlen != 32) {
        rc = bad_input(err, "%s needs input hash, a 32-byte SHA-256 digest", cb_op_name(p));
    } else if (p->op == CB_OP_RSA_SIGN) {
        if ((pkey = rsa_key(p, in, 1, err)) != NULL) {
            uint8_t *buf = malloc((size_t)EVP_PKEY_get_size(pkey));
            siglen = (size_t)EVP_PKEY_get_size(pkey);
            if (buf == NULL || (ctx = EVP_PKEY_CTX_new_from_pkey(NULL, pkey, NULL)) == NULL
                || EVP_PKEY_sign_init(ctx) <= 0 || !rsa_pkcs1_sha256(ctx, sha256)
                || EVP_PKEY_sign(ctx, buf, &siglen, hash, hlen) <= 0)
                rc = fail(err, "RSA sign");
            else
                rc = cb_kv_put(out, "sig", buf, siglen) ? fail(err, "out of memory") : CB_OK;
            free(buf);
        }
    } else if (p->op == CB_OP_RSA_VERIFY) {
        if (sig == NULL) {
            rc = bad_input(err, "%s needs inputs n, e, hash and sig", cb_op_name(p));
        } else if ((pkey = rsa_key(p, in, 0, err)) != NULL) {
            uint8_t ok = 0;
            if ((ctx = EVP_PKEY_CTX_new_from_pkey(NULL, pkey, NULL)) != NULL
                && EVP_PKEY_verify_init(ctx) > 0 && rsa_pkcs1_sha256(ctx, sha256))
                ok = EVP_PKEY_verify(ctx, sig, siglen, hash, hlen) == 1;
            ERR_clear_error();
            rc = cb_kv_put(out, "ok", &ok, 1) ? fail(err, "out of memory") : CB_OK;
        }
    }
    EVP_PKEY_CTX_free(ctx);
    EVP_PKEY_free(pkey);
    EVP_MD_free(sha256);
    return rc;
}

/* ================================================================ compute */

static int ossl_compute(const cb_params *p, const cb_kv *in, cb_kv *out, char *err)
{
    int f = family(p->op);
    /* compute takes lengths from its inputs: check only what supports() says about the op */
    cb_params q = *p;
    if (f == CB_FAMILY_AES) {
        if (q.key_bits < 0) {           /* key_bits may be left to the key's length */
            size_t keylen = 0;
            cb_kv_get(in, "key", &keylen);
            q.key_bits = (long)keylen * 8;
        }
        q.bytes = -1;
    }
    if (f == CB_FAMILY_RSA && q.rsa_bits < 0)
        q.rsa_bits = 2048;              /* the key's own size applies */
    if (ossl_supports(&q, err) != CB_OK)
        return CB_UNSUPPORTED;
    ERR_clear_error();

    switch (f) {
    case CB_FAMILY_AES:
    case CB_FAMILY_AEAD:
    case CB_FAMILY_STREAM:
        return compute_cipher(p, in, out, err);
    case CB_FAMILY_SHA: {
        size_t len;
        const uint8_t *msg = cb_kv_get(in, "msg", &len);
        uint8_t md[EVP_MAX_MD_SIZE];
        unsigned int mdlen;
        EVP_MD *alg = EVP_MD_fetch(NULL, digest_name(p->op), NULL);
        int rc = CB_OK;
        if (msg == NULL)
            rc = bad_input(err, "%s needs input msg", cb_op_name(p));
        else if (alg == NULL || !EVP_Digest(msg, len, md, &mdlen, alg, NULL))
            rc = fail(err, "EVP_Digest");
        else if (cb_kv_put(out, "digest", md, mdlen))
            rc = fail(err, "out of memory");
        EVP_MD_free(alg);
        return rc;
    }
    case CB_FAMILY_DRBG:
        return compute_drbg(p, in, out, err);
    case CB_FAMILY_ECDH:
    case CB_FAMILY_ECC:
    case CB_FAMILY_ECDSA:
        return compute_ec(p, in, out, err);
    case CB_FAMILY_RSA:
        return compute_rsa(p, in, out, err);
    case CB_FAMILY_RANDOM: {
        uint8_t *buf = malloc((size_t)p->bytes + 1);
        int rc = CB_OK;
        if (buf == NULL || RAND_bytes(buf, (int)p->bytes) != 1)
            rc = fail(err, "RAND_bytes");
        else if (cb_kv_put(out, "bits", buf, (size_t)p->bytes))
            rc = fail(err, "out of memory");
        free(buf);
        return rc;
    }
    }
    return unsupported(err, "unknown op");
}

/* ================================================================ timing slots */

typedef struct slot slot;
struct slot {
    int (*run)(slot *s, uint64_t k, char *err);
    uint64_t ctr;               /* operations so far: fresh IVs and digests */
    size_t len;                 /* payload bytes */
    uint8_t *buf;               /* payload (+ tag room), encrypted in place; or output */
    uint8_t *aad;
    sym sym;
    EVP_MD *md;
    drbg_pair drbg;
    EVP_PKEY_CTX *ctx[NPAIRS];  /* sign/verify/derive/keygen contexts, prepared in setup */
    uint8_t dgst[NPAIRS][64];
    size_t dlen;
    uint8_t *sig[NPAIRS];
    size_t siglen[NPAIRS];
    size_t outcap;              /* capacity of buf for signatures and secrets */
};

static void ossl_teardown(void *state)
{
    slot *s = state;
    if (s == NULL)
        return;
    sym_free(&s->sym);
    EVP_MD_free(s->md);
    drbg_free(&s->drbg);
    for (int i = 0; i < NPAIRS; i++) {
        EVP_PKEY_CTX_free(s->ctx[i]);
        free(s->sig[i]);
    }
    free(s->buf);
    free(s->aad);
    free(s);
}

static int run_cipher(slot *s, uint64_t k, char *err)
{
    for (uint64_t i = 0; i < k; i++) {
        put_counter(s->sym.iv, s->sym.ivlen, ++s->ctr);
        if (!sym_encrypt(&s->sym, s->buf, s->buf, s->len))
            return fail(err, "encrypt");
    }
    return CB_OK;
}

static int run_digest(slot *s, uint64_t k, char *err)
{
    uint8_t md[EVP_MAX_MD_SIZE];
    for (uint64_t i = 0; i < k; i++)
        if (!EVP_Digest(s->buf, s->len, md, NULL, s->md, NULL))
            return fail(err, "EVP_Digest");
    return CB_OK;
}

/* A context can be instantiated only once, so one operation is uninstantiate + instantiate;
 * uninstantiate only wipes the state (a few memsets). */
static int run_drbg_instantiate(slot *s, uint64_t k, char *err)
{
    for (uint64_t i = 0; i < k; i++)
        if (!EVP_RAND_uninstantiate(s->drbg.drbg)
            || !EVP_RAND_instantiate(s->drbg.drbg, DRBG_STRENGTH, 0, NO_PERSO, 0, NULL))
            return fail(err, "instantiate");
    return CB_OK;
}

static int run_drbg_reseed(slot *s, uint64_t k, char *err)
{
    for (uint64_t i = 0; i < k; i++)
        if (!EVP_RAND_reseed(s->drbg.drbg, 0, NULL, 0, NULL, 0))
            return fail(err, "reseed");
    return CB_OK;
}

static int run_drbg_generate(slot *s, uint64_t k, char *err)
{
    for (uint64_t i = 0; i < k; i++)
        if (!EVP_RAND_generate(s->drbg.drbg, s->buf, s->len, DRBG_STRENGTH, 0, NULL, 0))
            return fail(err, "generate");
    return CB_OK;
}

static int run_random(slot *s, uint64_t k, char *err)
{
    for (uint64_t i = 0; i < k; i++)
        if (RAND_bytes(s->buf, (int)s->len) != 1)
            return fail(err, "RAND_bytes");
    return CB_OK;
}

static int run_keygen(slot *s, uint64_t k, char *err)
{
    for (uint64_t i = 0; i < k; i++) {
        EVP_PKEY *pkey = NULL;
        if (EVP_PKEY_keygen(s->ctx[0], &pkey) <= 0)
            return fail(err, "EVP_PKEY_keygen");
        EVP_PKEY_free(pkey);
    }
    return CB_OK;
}

static int run_derive(slot *s, uint64_t k, char *err)
{
    for (uint64_t i = 0; i < k; i++) {
        size_t zlen = s->outcap;    /* a NULL buffer would only ask for the length */
        if (EVP_PKEY_derive(s->ctx[s->ctr++ % NPAIRS], s->buf, &zlen) <= 0)
            return fail(err, "EVP_PKEY_derive");
    }
    return CB_OK;
}

static int run_sign(slot *s, uint64_t k, char *err)
{
    for (uint64_t i = 0; i < k; i++) {
        size_t siglen = s->outcap;
        put_counter(s->dgst[0], s->dlen, ++s->ctr);
        if (EVP_PKEY_sign(s->ctx[0], s->buf, &siglen, s->dgst[0], s->dlen) <= 0)
            return fail(err, "EVP_PKEY_sign");
    }
    return CB_OK;
}

static int run_verify(slot *s, uint64_t k, char *err)
{
    for (uint64_t i = 0; i < k; i++) {
        unsigned j = (unsigned)(s->ctr++ % NPAIRS);
        if (EVP_PKEY_verify(s->ctx[j], s->sig[j], s->siglen[j], s->dgst[j], s->dlen) != 1)
            return fail(err, "EVP_PKEY_verify rejected a valid signature");
    }
    return CB_OK;
}

static int setup_cipher(slot *s, const cb_params *p, char *err)
{
    int mode = cipher_mode(p->op);
    int chacha = mode == M_CHACHA || mode == M_CHACHA20;
    size_t keylen = chacha ? 32 : (size_t)p->key_bits / 8;
    size_t ivlen = mode == M_CCM ? (size_t)p->nonce_bytes
                 : mode == M_GCM || mode == M_CHACHA ? 12 : 16;
    size_t taglen = mode == M_CCM ? (size_t)p->tag_bytes
                  : mode == M_GCM || mode == M_CHACHA ? 16 : 0;
    size_t aadlen = p->aad_bytes > 0 && taglen ? (size_t)p->aad_bytes : 0;
    uint8_t key[32];

    cb_fill(key, sizeof key, 1);
    if (sym_init(&s->sym, mode, key, keylen, ivlen, taglen, err) != CB_OK)
        return CB_ERR;
    s->buf = malloc(s->len + 16);
    s->aad = malloc(aadlen + 1);
    if (s->buf == NULL || s->aad == NULL)
        return fail(err, "malloc");
    cb_fill(s->buf, s->len, 2);
    cb_fill(s->aad, aadlen, 3);
    cb_fill(s->sym.iv, sizeof s->sym.iv, 4);
    s->sym.aad = s->aad;
    s->sym.aadlen = aadlen;
    s->sym.rekey = p->rekey != 0;
    s->run = run_cipher;
    return CB_OK;
}

static int setup_drbg(slot *s, const cb_params *p, char *err)
{
    uint8_t entropy[32], nonce[16];
    cb_fill(entropy, sizeof entropy, 5);
    cb_fill(nonce, sizeof nonce, 6);
    if (drbg_new(&s->drbg, err) != CB_OK)
        return CB_ERR;
    if (!drbg_feed(&s->drbg, entropy, sizeof entropy, nonce, sizeof nonce)
        || !EVP_RAND_instantiate(s->drbg.drbg, DRBG_STRENGTH, 0, NO_PERSO, 0, NULL))
        return fail(err, "instantiate");
    if (p->op == CB_OP_CTR_DRBG_INSTANTIATE) {
        s->run = run_drbg_instantiate;
    } else if (p->op == CB_OP_CTR_DRBG_RESEED) {
        s->run = run_drbg_reseed;
    } else {
        s->len = p->bytes >= 0 ? (size_t)p->bytes : 32;
        if ((s->buf = malloc(s->len + 1)) == NULL)
            return fail(err, "malloc");
        s->run = run_drbg_generate;
    }
    return CB_OK;
}

/* 16 (own, peer) pairs, each with its derive context fully prepared. */
static int setup_derive(slot *s, const curve_info *c, char *err)
{
    for (int i = 0; i < NPAIRS; i++) {
        EVP_PKEY *own = ec_generate(c), *peer = ec_generate(c);
        s->ctx[i] = own ? EVP_PKEY_CTX_new_from_pkey(NULL, own, NULL) : NULL;
        int ok = peer && s->ctx[i] && EVP_PKEY_derive_init(s->ctx[i]) > 0
                 && EVP_PKEY_derive_set_peer(s->ctx[i], peer) > 0;
        EVP_PKEY_free(own);         /* the context holds its own references */
        EVP_PKEY_free(peer);
        if (!ok)
            return fail(err, "prepare derive");
    }
    s->outcap = 66;             /* the longest shared secret, P-521's */
    if ((s->buf = malloc(s->outcap)) == NULL)
        return fail(err, "malloc");
    s->run = run_derive;
    return CB_OK;
}

/* Signing (ECDSA or RSA): one key, one context initialised once; verify: 16 (digest, signature)
 * pairs made here, each with its own verify context. */
static int setup_sign(slot *s, const cb_params *p, char *err)
{
    int rsa = family(p->op) == CB_FAMILY_RSA;
    int verify = (p->op == CB_OP_ECDSA_VERIFY || p->op == CB_OP_RSA_VERIFY);
    const curve_info *c = find_curve(p->curve);
    EVP_PKEY *pkey = NULL;
    EVP_PKEY_CTX *gen = NULL;

    if (rsa) {
        s->md = EVP_MD_fetch(NULL, "SHA256", NULL);
        gen = keygen_ctx(p);
        if (s->md == NULL || gen == NULL || EVP_PKEY_keygen(gen, &pkey) <= 0) {
            EVP_PKEY_CTX_free(gen);
            return fail(err, "RSA keygen");
        }
        EVP_PKEY_CTX_free(gen);
        s->dlen = 32;
    } else {
        if ((pkey = ec_generate(c)) == NULL)
            return fail(err, "EC keygen");
        s->dlen = c->bytes == 32 ? 32 : 64;     /* SHA-256 for P-256, SHA-512 for P-521 */
    }
    s->outcap = (size_t)EVP_PKEY_get_size(pkey);
    s->buf = malloc(s->outcap);
    if (s->buf == NULL) {
        EVP_PKEY_free(pkey);
        return fail(err, "malloc");
    }

    int n = verify ? NPAIRS : 1;
    for (int i = 0; i < n; i++) {
        cb_fill(s->dgst[i], s->dlen, 100 + (uint64_t)i);
        EVP_PKEY_CTX *sctx = EVP_PKEY_CTX_new_from_pkey(NULL, pkey, NULL);
        int ok = sctx && EVP_PKEY_sign_init(sctx) > 0 && (!rsa || rsa_pkcs1_sha256(sctx, s->md));
        if (ok && verify) {
            s->siglen[i] = s->outcap;
            ok = (s->sig[i] = malloc(s->outcap)) != NULL
                 && EVP_PKEY_sign(sctx, s->sig[i], &s->siglen[i], s->dgst[i], s->dlen) > 0;
            EVP_PKEY_CTX_free(sctx);
            sctx = EVP_PKEY_CTX_new_from_pkey(NULL, pkey, NULL);
            ok = ok && sctx && EVP_PKEY_verify_init(sctx) > 0
                 && (!rsa || rsa_pkcs1_sha256(sctx, s->md));
        }
        s->ctx[i] = sctx;
        if (!ok) {
            EVP_PKEY_free(pkey);
            return fail(err, verify ? "prepare verify" : "prepare sign");
        }
    }
    EVP_PKEY_free(pkey);
    s->run = verify ? run_verify : run_sign;
    return CB_OK;
}

static int setup_pk(slot *s, const cb_params *p, char *err)
{
    if (p->op == CB_OP_ECDH_SHARED_SECRET)
        return setup_derive(s, find_curve(p->curve), err);
    if ((p->op == CB_OP_ECDH_KEYGEN || p->op == CB_OP_ECC_KEYGEN || p->op == CB_OP_RSA_KEYGEN)) {  /* ecdh-keygen, ecc-keygen, rsa-keygen */
        s->ctx[0] = keygen_ctx(p);
        s->run = run_keygen;
        return s->ctx[0] ? CB_OK : fail(err, "prepare keygen");
    }
    return setup_sign(s, p, err);
}

static void *ossl_setup(const cb_params *p, char *err)
{
    slot *s = calloc(1, sizeof *s);
    int rc = CB_ERR;
    int f = family(p->op);

    if (s == NULL) {
        snprintf(err, CB_ERRLEN, "out of memory");
        return NULL;
    }
    if (ossl_supports(p, err) != CB_OK) {
        free(s);
        return NULL;
    }
    ERR_clear_error();
    s->len = p->bytes > 0 ? (size_t)p->bytes : 0;

    switch (f) {
    case CB_FAMILY_AES:
    case CB_FAMILY_AEAD:
    case CB_FAMILY_STREAM:
        rc = setup_cipher(s, p, err);
        break;
    case CB_FAMILY_SHA:
        s->md = EVP_MD_fetch(NULL, digest_name(p->op), NULL);
        s->buf = malloc(s->len + 1);
        if (s->md == NULL || s->buf == NULL) {
            rc = fail(err, "EVP_MD_fetch");
        } else {
            cb_fill(s->buf, s->len, 7);
            s->run = run_digest;
            rc = CB_OK;
        }
        break;
    case CB_FAMILY_DRBG:
        rc = setup_drbg(s, p, err);
        break;
    case CB_FAMILY_RANDOM:
        s->buf = malloc(s->len + 1);
        s->run = run_random;
        rc = s->buf ? CB_OK : fail(err, "malloc");
        break;
    case CB_FAMILY_ECDH:
    case CB_FAMILY_ECC:
    case CB_FAMILY_ECDSA:
    case CB_FAMILY_RSA:
        rc = setup_pk(s, p, err);
        break;
    default:
        snprintf(err, CB_ERRLEN, "unknown op");
    }
    if (rc != CB_OK) {
        ossl_teardown(s);
        return NULL;
    }
    return s;
}

static int ossl_run(void *state, uint64_t k, char *err)
{
    slot *s = state;
    return s->run(s, k, err);
}

/* ================================================================ describe */

static void ossl_describe(char *out, size_t outlen)
{
    const char *cpu = OpenSSL_version(OPENSSL_CPU_INFO);
    const char *ia32 = getenv("OPENSSL_ia32cap"), *arm = getenv("OPENSSL_armcap");
    cb_member_str(out, outlen, "version", OpenSSL_version(OPENSSL_VERSION));
    cb_member_str(out, outlen, "cpuinfo", cpu);
    cb_member_str(out, outlen, "ia32cap_env", ia32 ? ia32 : "");
    cb_member_str(out, outlen, "armcap_env", arm ? arm : "");
#if defined(__x86_64__) || defined(__i386__)
    /* the effective capability vector, after any env mask: OPENSSL_ia32cap=0xA:0xB, where A is
     * CPUID.1 EDX|ECX<<32 and B is CPUID.7 EBX|ECX<<32 */
    unsigned long long w0 = 0, w1 = 0;
    const char *v = strstr(cpu, "OPENSSL_ia32cap=");
    if (v && sscanf(v, "OPENSSL_ia32cap=0x%llx:0x%llx", &w0, &w1) >= 1) {
        cb_member_int(out, outlen, "aesni", (w0 >> 57) & 1);
        cb_member_int(out, outlen, "pclmulqdq", (w0 >> 33) & 1);
        cb_member_int(out, outlen, "avx2", (w1 >> 5) & 1);
        cb_member_int(out, outlen, "sha_ni", (w1 >> 29) & 1);
        cb_member_int(out, outlen, "vaes", (w1 >> 41) & 1);
    }
#endif
}

const cb_engine cb_engine_openssl = {
    .name = "openssl",
    .library = "OpenSSL",
    .describe = ossl_describe,
    .supports = ossl_supports,
    .compute = ossl_compute,
    .setup = ossl_setup,
    .run = ossl_run,
    .teardown = ossl_teardown,
};
