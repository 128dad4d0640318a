/* engine_libsodium.c - the "libsodium" engine: the system libsodium.
 *
 * libsodium offers a small, fixed menu; everything outside it is unsupported with the reason:
 *  - chacha20-poly1305-encrypt: crypto_aead_chacha20poly1305_ietf_encrypt (RFC 8439).
 *  - aes-gcm-encrypt: AES-256 only, and only on CPUs with AES-NI and PCLMUL
 *    (crypto_aead_aes256gcm_is_available()); the timed call uses the precomputed key schedule
 *    (crypto_aead_aes256gcm_beforenm once per slot, encrypt_afternm per operation); with
 *    rekey=1, crypto_aead_aes256gcm_encrypt, which expands the key on every call. ChaCha20 has
 *    no key schedule, so rekey changes nothing there.
 *  - chacha20-encrypt: crypto_stream_chacha20_ietf_xor_ic (RFC 8439: 32-bit block counter,
 *    12-byte nonce); the catalog's 16-byte iv is that counter, little-endian, then the nonce.
 *    No key schedule here either: rekey changes nothing.
 *  - sha256, sha512: crypto_hash_sha256 / crypto_hash_sha512.
 *  - ecdh-keygen / ecdh-shared-secret / ecc-keygen on X25519: crypto_scalarmult_base,
 *    crypto_scalarmult and crypto_box_keypair. ecdh-keygen is timed as public-from-private
 *    (crypto_scalarmult_base on one of 16 pre-generated secret keys, cycling).
 *  - random, source "library": randombytes_buf.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "engine.h"

#define POOL 16

/* Ops libsodium lacks, with the reason (matched by prefix). */
static const struct { const char *prefix; const char *why; } missing[] = {
    {"aes-ecb", "libsodium has no raw AES block/ECB interface"},
    {"aes-cbc", "libsodium has no AES-CBC"},
    {"aes-ctr", "libsodium has no AES-CTR"},
    {"aes-ccm", "libsodium has no AES-CCM"},
    {"sha1", "libsodium has no SHA-1"},
    {"sha224", "libsodium has no SHA-224"},
    {"sha384", "libsodium has no SHA-384"},
    {"ctr-drbg", "libsodium has no CTR_DRBG (its randombytes_buf reads the OS generator)"},
    {"ecdsa", "libsodium has no ECDSA (it signs with Ed25519)"},
    {"ecjpake", "libsodium has no EC-JPAKE"},
    {"rsa", "libsodium has no RSA"},
};

/* sodium_init() once; it is idempotent and cheap after the first call, but we keep the answer. */
static int init(char *err)
{
    static int state;      /* 0: not tried, 1: ready, -1: failed */
    if (state == 0)
        state = sodium_init() < 0 ? -1 : 1;
    return state == 1 ? CB_OK : cb_say(err, CB_ERR, "sodium_init() failed");
}

static int check(const cb_params *p, char *why)
{
    int op = p->op;

    if (init(why) != CB_OK)
        return CB_UNSUPPORTED;
    switch (op) {
    case CB_OP_CHACHA20_POLY1305_ENCRYPT: case CB_OP_CHACHA20_ENCRYPT: case CB_OP_SHA256:
    case CB_OP_SHA512:
        return CB_OK;
    case CB_OP_AES_GCM_ENCRYPT:
        if (p->key_bits != 256)
            return cb_say(why, CB_UNSUPPORTED, "libsodium has AES-GCM with 256-bit keys only");
        if (!crypto_aead_aes256gcm_is_available())
            return cb_say(why, CB_UNSUPPORTED,
                       "libsodium's AES-256-GCM needs AES-NI and PCLMUL, which this CPU lacks");
        return CB_OK;
    case CB_OP_ECDH_KEYGEN: case CB_OP_ECDH_SHARED_SECRET: case CB_OP_ECC_KEYGEN:
        if (strcmp(p->curve, "x25519") != 0)
            return cb_say(why, CB_UNSUPPORTED, "libsodium has X25519 only, no NIST curves");
        return CB_OK;
    case CB_OP_RANDOM:
        if (strcmp(p->source, "library") != 0)
            return cb_say(why, CB_UNSUPPORTED,
                       "libsodium offers only source \"library\" (randombytes_buf)");
        return CB_OK;
    }
    for (size_t i = 0; i < sizeof missing / sizeof missing[0]; i++)
        if (strncmp(cb_op_name(p), missing[i].prefix, strlen(missing[i].prefix)) == 0)
            return cb_say(why, CB_UNSUPPORTED, missing[i].why);
    return cb_say(why, CB_UNSUPPORTED, "libsodium engine does not implement this op");
}

static int sd_supports(const cb_params *p, char *why)
{
    return check(p, why);
}

static int put(cb_kv *out, const char *name, const uint8_t *val, size_t len, char *err)
{
    return cb_kv_put(out, name, val, len) == 0 ? CB_OK : cb_say(err, CB_ERR, "out of memory");
}

/* ---- compute ------------------------------------------------------------------------------ */

static int sd_compute(const cb_params *p, const cb_kv *in, cb_kv *out, char *err)
{
    int op = p->op;
    int rc = check(p, err);
    size_t klen, nlen, alen, mlen, dlen, qlen;
    const uint8_t *key = cb_kv_input(in, "key", &klen);
    const uint8_t *aad = cb_kv_input(in, "aad", &alen);
    const uint8_t *msg = cb_kv_input(in, "msg", &mlen);
    const uint8_t *d = cb_kv_input(in, "d", &dlen);
    const uint8_t *peer = cb_kv_input(in, "peer", &qlen);
    const uint8_t *nonce;
    uint8_t buf[64], pk[32];
    uint8_t *ct;
    unsigned long long clen;

    if (rc != CB_OK)
        return rc;
    switch (op) {
    case CB_OP_CHACHA20_POLY1305_ENCRYPT:
    case CB_OP_AES_GCM_ENCRYPT:
        nonce = op == CB_OP_CHACHA20_POLY1305_ENCRYPT ? cb_kv_input(in, "nonce", &nlen) : cb_kv_input(in, "iv", &nlen);
        if (klen != 32 || nlen != 12)
            return cb_say(err, CB_ERR, "needs a 32-byte key and a 12-byte nonce/iv");
        ct = malloc(mlen + 16 + 1);
        if (ct == NULL)
            return cb_say(err, CB_ERR, "out of memory");
        if (op == CB_OP_CHACHA20_POLY1305_ENCRYPT)
            rc = crypto_aead_chacha20poly1305_ietf_encrypt(ct, &clen, msg, mlen, aad, alen, NULL,
                                                           nonce, key);
        else
            rc = crypto_aead_aes256gcm_encrypt(ct, &clen, msg, mlen, aad, alen, NULL, nonce, key);
        rc = rc != 0 ? cb_say(err, CB_ERR, "encryption failed") : put(out, "ct", ct, clen, err);
        free(ct);
        return rc;
    case CB_OP_CHACHA20_ENCRYPT: {
        const uint8_t *iv = cb_kv_input(in, "iv", &nlen);
        uint32_t ic;
        if (klen != 32 || nlen != 16)
            return cb_say(err, CB_ERR, "needs a 32-byte key and a 16-byte iv (counter, nonce)");
        ic = cb_chacha20_counter(iv);
        /* libsodium aborts the process (sodium_misuse) when the 32-bit counter would wrap */
        if (cb_chacha20_wraps(ic, mlen))
            return cb_say(err, CB_ERR, CB_CHACHA20_WRAP_MSG);
        ct = malloc(mlen + 1);
        if (ct == NULL)
            return cb_say(err, CB_ERR, "out of memory");
        rc = crypto_stream_chacha20_ietf_xor_ic(ct, msg, mlen, iv + 4, ic, key) != 0
             ? cb_say(err, CB_ERR, "crypto_stream_chacha20_ietf_xor_ic failed") : put(out, "ct", ct, mlen, err);
        free(ct);
        return rc;
    }
    case CB_OP_SHA256:
        crypto_hash_sha256(buf, msg, mlen);
        return put(out, "digest", buf, 32, err);
    case CB_OP_SHA512:
        crypto_hash_sha512(buf, msg, mlen);
        return put(out, "digest", buf, 64, err);
    case CB_OP_ECDH_KEYGEN:
        /* crypto_scalarmult_base clamps the RFC 7748 scalar itself. */
        if (dlen != 32)
            return cb_say(err, CB_ERR, "x25519 private key must be 32 bytes");
        if (crypto_scalarmult_base(pk, d) != 0)
            return cb_say(err, CB_ERR, "crypto_scalarmult_base failed");
        return put(out, "q", pk, 32, err);
    case CB_OP_ECDH_SHARED_SECRET:
        if (dlen != 32 || qlen != 32)
            return cb_say(err, CB_ERR, "x25519 keys must be 32 bytes");
        /* Fails for a low-order peer key (all-zero shared secret). */
        if (crypto_scalarmult(buf, d, peer) != 0)
            return cb_say(err, CB_ERR, "crypto_scalarmult failed (low-order peer key)");
        return put(out, "z", buf, 32, err);
    case CB_OP_ECC_KEYGEN:
        crypto_box_keypair(pk, buf);
        rc = put(out, "d", buf, 32, err);
        sodium_memzero(buf, sizeof buf);
        return rc == CB_OK ? put(out, "q", pk, 32, err) : rc;
    case CB_OP_RANDOM: {
        uint8_t *r = malloc((size_t)p->bytes + 1);
        if (r == NULL)
            return cb_say(err, CB_ERR, "out of memory");
        randombytes_buf(r, (size_t)p->bytes);
        rc = put(out, "bits", r, (size_t)p->bytes, err);
        free(r);
        return rc;
    }
    }
    return cb_say(err, CB_UNSUPPORTED, "libsodium engine does not implement this op");
}

/* ---- timing slots ------------------------------------------------------------------------- */

typedef struct {
    int op;
    int rekey;                          /* aes-gcm: expand the key on every call */
    uint64_t counter;
    uint8_t *msg, *out, *aad;
    size_t len, aad_len;
    uint8_t key[32];
    uint8_t nonce[12];
    crypto_aead_aes256gcm_state *gcm;   /* 16-byte aligned, see sodium_malloc below */
    uint8_t sk[POOL][32], pk[POOL][32], peer[POOL][32], res[32], res2[32];
} slot;

static void sd_teardown(void *handle)
{
    slot *s = handle;
    if (s == NULL)
        return;
    free(s->msg);
    free(s->out);
    free(s->aad);
    if (s->gcm != NULL)
        sodium_free(s->gcm);
    sodium_memzero(s, sizeof *s);
    free(s);
}

static void *sd_setup(const cb_params *p, char *err)
{
    int op = p->op;
    slot *s;

    if (check(p, err) != CB_OK)
        return NULL;
    if ((s = cb_slot_new(sizeof *s, err)) == NULL)
        return NULL;
    s->op = op;
    s->rekey = p->rekey != 0;
    s->len = p->bytes < 0 ? 0 : (size_t)p->bytes;
    s->aad_len = p->aad_bytes < 0 ? 0 : (size_t)p->aad_bytes;
    s->msg = malloc(s->len + 1);
    s->out = malloc(s->len + 64);
    s->aad = malloc(s->aad_len + 1);
    if (s->msg == NULL || s->out == NULL || s->aad == NULL) {
        sd_teardown(s);
        cb_say(err, CB_ERR, "out of memory");
        return NULL;
    }
    cb_fill(s->msg, s->len, 1);
    cb_fill(s->aad, s->aad_len, 2);
    cb_fill(s->key, sizeof s->key, 3);
    cb_fill(s->nonce, sizeof s->nonce, 4);

    switch (op) {
    case CB_OP_AES_GCM_ENCRYPT:
        /* The state must be 16-byte aligned; sodium_malloc guarantees that (malloc may not). */
        s->gcm = sodium_malloc(sizeof *s->gcm);
        if (s->gcm == NULL) {
            sd_teardown(s);
            cb_say(err, CB_ERR, "out of memory");
            return NULL;
        }
        crypto_aead_aes256gcm_beforenm(s->gcm, s->key);
        break;
    case CB_OP_CHACHA20_ENCRYPT:
        if (cb_chacha20_wraps(1, s->len)) {
            sd_teardown(s);
            cb_say(err, CB_ERR, CB_CHACHA20_WRAP_MSG);
            return NULL;
        }
        break;
    case CB_OP_ECDH_KEYGEN:
        for (int i = 0; i < POOL; i++)
            randombytes_buf(s->sk[i], 32);
        break;
    case CB_OP_ECDH_SHARED_SECRET:
        for (int i = 0; i < POOL; i++) {
            crypto_box_keypair(s->pk[i], s->sk[i]);
            crypto_box_keypair(s->peer[i], s->res);   /* the peer's secret is not needed */
        }
        break;
    }
    return s;
}

static int sd_run(void *handle, uint64_t k, char *err)
{
    slot *s = handle;
    unsigned long long clen;

    for (uint64_t i = 0; i < k; i++) {
        int j = (int)(s->counter % POOL);
        s->counter++;
        switch (s->op) {
        case CB_OP_CHACHA20_POLY1305_ENCRYPT:
        case CB_OP_AES_GCM_ENCRYPT:
            /* Fresh nonce: the counter in the last 8 bytes. */
            for (int b = 0; b < 8; b++)
                s->nonce[11 - b] = (uint8_t)(s->counter >> (8 * b));
            if (s->op == CB_OP_CHACHA20_POLY1305_ENCRYPT)
                crypto_aead_chacha20poly1305_ietf_encrypt(s->out, &clen, s->msg, s->len, s->aad,
                                                          s->aad_len, NULL, s->nonce, s->key);
            else if (s->rekey)      /* expands the key and H on every call */
                crypto_aead_aes256gcm_encrypt(s->out, &clen, s->msg, s->len, s->aad,
                                              s->aad_len, NULL, s->nonce, s->key);
            else
                crypto_aead_aes256gcm_encrypt_afternm(s->out, &clen, s->msg, s->len, s->aad,
                                                      s->aad_len, NULL, s->nonce, s->gcm);
            break;
        case CB_OP_CHACHA20_ENCRYPT:
            /* one message from block 1 (RFC 8439 §2.4's first block for encryption) */
            crypto_stream_chacha20_ietf_xor_ic(s->out, s->msg, s->len, s->nonce, 1, s->key);
            break;
        case CB_OP_SHA256:
            crypto_hash_sha256(s->out, s->msg, s->len);
            break;
        case CB_OP_SHA512:
            crypto_hash_sha512(s->out, s->msg, s->len);
            break;
        case CB_OP_ECDH_KEYGEN:
            if (crypto_scalarmult_base(s->res, s->sk[j]) != 0)
                return cb_say(err, CB_ERR, "crypto_scalarmult_base failed");
            break;
        case CB_OP_ECDH_SHARED_SECRET:
            if (crypto_scalarmult(s->res, s->sk[j], s->peer[j]) != 0)
                return cb_say(err, CB_ERR, "crypto_scalarmult failed");
            break;
        case CB_OP_ECC_KEYGEN:
            crypto_box_keypair(s->res, s->res2);
            break;
        case CB_OP_RANDOM:
            randombytes_buf(s->out, s->len);
            break;
        }
    }
    return CB_OK;
}

/* ---- describe ----------------------------------------------------------------------------- */

static void sd_describe(char *out, size_t outlen)
{
    char why[CB_ERRLEN];
    int ok = init(why) == CB_OK;
    snprintf(out, outlen, "\"version\":\"%s\",\"aes256gcm_available\":%d,\"randombytes\":\"%s\"",
             sodium_version_string(), ok ? crypto_aead_aes256gcm_is_available() : 0,
             ok ? randombytes_implementation_name() : "");
}

const cb_engine cb_engine_libsodium = {
    "libsodium",
    "libsodium",
    sd_describe,
    sd_supports,
    sd_compute,
    sd_setup,
    sd_run,
    sd_teardown,
};
