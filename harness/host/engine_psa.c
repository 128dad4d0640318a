/* engine_psa.c - the `psa` engine: the PSA Crypto API of Mbed TLS 3.5, built here from the source
 * the psa-crypto-sys crate vendors, configured by harness/firmware/config/psa_mbedtls_config.h
 * (with PSA_CB_HOST: the C library's calloc, no assembly), in its own binary cbh-psa (the
 * system's Mbed TLS 2.28 defines the same symbols).
 *
 * The operations are the firmware's: this file compiles harness/firmware/glue/psa.c with every
 * FW_OP_* defined and calls its table, so host and microcontroller run the very same PSA calls.
 * On the firmware one operation imports its key (psa_import_key), uses and destroys it. Here a
 * timed slot with rekey=1 does the same; with rekey=0 (and for the EC ops' fixed keys) the glue
 * keeps the imported key while the same key comes back (glue_keep_key), so the key is set up once
 * per slot as the host protocol says (describe reports this as key_setup).
 *
 * Built with CBH_PSA_TEST_DRIVER (cbh-psa-testdriver), Mbed TLS is compiled with
 * PSA_CRYPTO_DRIVER_TEST and linked with its transparent test driver (tests/src/drivers), which
 * stands in for an accelerator: the driver wrappers hand every call to it first. The engine counts
 * the driver's hits around each call and reports per op how many calls the driver served
 * ("dispatch" in describe), from which the orchestrator records which implementation served a cell.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "engine.h"

/* The glue, compiled in this translation unit with every op. */
#define FW_OP_AES_ECB_ENCRYPT 1
#define FW_OP_AES_CBC_ENCRYPT 1
#define FW_OP_AES_CTR_ENCRYPT 1
#define FW_OP_AES_CCM_ENCRYPT 1
#define FW_OP_AES_GCM_ENCRYPT 1
#define FW_OP_CHACHA20_POLY1305_ENCRYPT 1
#define FW_OP_SHA1 1
#define FW_OP_SHA224 1
#define FW_OP_SHA256 1
#define FW_OP_SHA384 1
#define FW_OP_SHA512 1
#define FW_OP_ECDH_KEYGEN 1
#define FW_OP_ECDH_SHARED_SECRET 1
#define FW_OP_ECDSA_SIGN 1
#define FW_OP_ECDSA_VERIFY 1
#include "../firmware/glue/psa.c"

#if defined(CBH_PSA_TEST_DRIVER)
#include "test/drivers/test_driver.h"
#define DRIVER_NAME "mbedtls_test_transparent"
#endif

#ifndef CBH_PSA_SOURCE
#define CBH_PSA_SOURCE "unknown"
#endif
#ifndef CBH_PSA_LIBFLAGS
#define CBH_PSA_LIBFLAGS "unknown"
#endif

/* Randomness for ECDSA nonces and blinding on the host: the OS's. */
int fw_random(void *ctx, unsigned char *buf, size_t len)
{
    (void)ctx;
    while (len > 0) {
        ssize_t n = getrandom(buf, len, 0);
        if (n <= 0)
            return -1;
        buf += n;
        len -= (size_t)n;
    }
    return 0;
}

/* ---- which implementation served a call ---------------------------------------------------- */

static struct {
    unsigned long long calls, driver_calls;
} dispatch[sizeof fw_lib_ops / sizeof fw_lib_ops[0]];

/* The catalog family of op, and whether it is one of the EC ops the glue runs (ecdh-*, ecdsa-*). */
static cb_family family(cb_op_id op)
{
    return cb_op(op)->family;
}

static int is_ec(cb_op_id op)
{
    return family(op) == CB_FAMILY_ECDH || family(op) == CB_FAMILY_ECDSA;
}

/* The catalog op of the glue's entry i (the glue's table names its ops by catalog id). */
static cb_op_id glue_op(int i)
{
    return (cb_op_id)cb_op_find(fw_lib_ops[i].op);
}

/* The test driver's hit counter for the entry points of op i (0 without a driver). */
static unsigned long driver_hits(int i)
{
#if defined(CBH_PSA_TEST_DRIVER)
    cb_op_id op = glue_op(i);
    if (family(op) == CB_FAMILY_SHA)
        return mbedtls_test_driver_hash_hooks.hits;
    if (op == CB_OP_AES_ECB_ENCRYPT || op == CB_OP_AES_CBC_ENCRYPT ||
        op == CB_OP_AES_CTR_ENCRYPT)
        return mbedtls_test_driver_cipher_hooks.hits;
    if (family(op) == CB_FAMILY_AES || family(op) == CB_FAMILY_AEAD)
        return mbedtls_test_driver_aead_hooks.hits_encrypt;
    if (op == CB_OP_ECDSA_SIGN)
        return mbedtls_test_driver_signature_sign_hooks.hits;
    if (op == CB_OP_ECDSA_VERIFY)
        return mbedtls_test_driver_signature_verify_hooks.hits;
    if (op == CB_OP_ECDH_SHARED_SECRET)
        return mbedtls_test_driver_key_agreement_hooks.hits;
    if (op == CB_OP_ECDH_KEYGEN)
        return mbedtls_test_driver_key_management_hooks.hits;
#else
    (void)i;
#endif
    return 0;
}

/* ---- parameters and inputs ----------------------------------------------------------------- */

/* The glue's entry for op: its index in fw_lib_ops, or -1. */
static int find_op(cb_op_id op)
{
    for (int i = 0; fw_lib_ops[i].op != NULL; i++)
        if (glue_op(i) == op)
            return i;
    return -1;
}

static const fw_op *find_fw(cb_op_id op)
{
    int i = find_op(op);
    return i < 0 ? NULL : &fw_lib_ops[i];
}

/* ecc-keygen (host only: the verifier's key pairs, and timed): psa_generate_key, then the private
 * and the public key exported; out = d || q. */
static int is_keygen(const cb_params *p)
{
    return p->op == CB_OP_ECC_KEYGEN;
}

static int keygen(const char *curve, uint8_t *d, size_t *dlen, uint8_t *q, size_t *qlen)
{
    psa_key_attributes_t attr = PSA_KEY_ATTRIBUTES_INIT;
    mbedtls_svc_key_id_t id = MBEDTLS_SVC_KEY_ID_INIT;
    psa_ecc_family_t fam = strcmp(curve, "p256") == 0 ? PSA_ECC_FAMILY_SECP_R1 : PSA_ECC_FAMILY_MONTGOMERY;
    psa_status_t st;

    psa_set_key_type(&attr, PSA_KEY_TYPE_ECC_KEY_PAIR(fam));
    psa_set_key_bits(&attr, fam == PSA_ECC_FAMILY_SECP_R1 ? 256 : 255);
    psa_set_key_algorithm(&attr, PSA_ALG_ECDH);
    psa_set_key_usage_flags(&attr, PSA_KEY_USAGE_DERIVE | PSA_KEY_USAGE_EXPORT);
    st = psa_generate_key(&attr, &id);
    if (st == PSA_SUCCESS && d != NULL)
        st = psa_export_key(id, d, 32, dlen);
    if (st == PSA_SUCCESS && q != NULL)
        st = psa_export_public_key(id, q, 65, qlen);
    psa_destroy_key(id);
    return st == PSA_SUCCESS ? FW_OK : FW_ERR;
}

static void to_fw(const cb_params *p, fw_params *f)
{
    memset(f, 0, sizeof *f);
    f->key_bits = (int32_t)p->key_bits;
    f->bytes = (int32_t)p->bytes;
    f->aad_bytes = (int32_t)p->aad_bytes;
    f->tag_bytes = (int32_t)p->tag_bytes;
    f->nonce_bytes = (int32_t)p->nonce_bytes;
    for (size_t i = 0; i + 1 < sizeof f->curve && p->curve[i] != '\0'; i++)
        f->curve[i] = p->curve[i];         /* curves longer than 7 characters are none of ours */
}

static int psa_supports_(const cb_params *p, char *why)
{
    int i = find_op(p->op);
    const char *w = "not supported";
    fw_params f;

    if (is_keygen(p)) {
        if (strcmp(p->curve, "p256") != 0 && strcmp(p->curve, "x25519") != 0)
            return cb_say(why, CB_UNSUPPORTED, "curve not in this build (only p256 and x25519)");
        return psa_ready() ? CB_OK : cb_say(why, CB_UNSUPPORTED, "psa_crypto_init failed");
    }
    if (i < 0)
        return cb_say(why, CB_UNSUPPORTED, "the psa engine has no such op (see recipes/psa.toml "
                                           "[unavailable] for why)");
    to_fw(p, &f);
    if (fw_lib_ops[i].supports(&f, &w) != FW_OK)
        return cb_say(why, CB_UNSUPPORTED, w);
    return CB_OK;
}

/* The protocol's input names for the glue's fw_io fields, and the output's name. */
static const char *out_name(cb_op_id op)
{
    if (family(op) == CB_FAMILY_SHA)
        return "digest";
    if (op == CB_OP_ECDH_KEYGEN)
        return "q";
    if (op == CB_OP_ECDH_SHARED_SECRET)
        return "z";
    if (op == CB_OP_ECDSA_SIGN)
        return "sig";
    if (op == CB_OP_ECDSA_VERIFY)
        return "ok";
    return "ct";
}

static void io_from(const cb_params *p, const cb_kv *in, fw_io *io)
{
    int ec = is_ec(p->op);
    memset(io, 0, sizeof *io);
    io->key = cb_kv_input(in, ec ? "d" : "key", &io->key_len);
    io->iv = cb_kv_input(in, "iv", &io->iv_len);
    if (io->iv_len == 0)
        io->iv = cb_kv_input(in, "nonce", &io->iv_len);
    io->aad = cb_kv_input(in, "aad", &io->aad_len);
    io->msg = cb_kv_input(in, ec ? "hash" : "msg", &io->msg_len);
    io->peer = cb_kv_input(in, p->op == CB_OP_ECDH_SHARED_SECRET ? "peer" : "q",
                           &io->peer_len);
    io->sig = cb_kv_input(in, "sig", &io->sig_len);
}

/* One call through the glue, counted. */
static int call(int i, const fw_params *f, fw_io *io)
{
    unsigned long h0 = driver_hits(i);
    int rc = fw_lib_ops[i].run(f, io);
    dispatch[i].calls++;
    if (driver_hits(i) != h0)
        dispatch[i].driver_calls++;
    return rc;
}

static int psa_compute(const cb_params *p, const cb_kv *in, cb_kv *out, char *err)
{
    int i = find_op(p->op);
    fw_params f;
    fw_io io;
    int rc;

    if ((rc = psa_supports_(p, err)) != CB_OK)
        return rc;
    if (is_keygen(p)) {
        uint8_t d[32], q[65];
        size_t dl = 0, ql = 0;
        if (keygen(p->curve, d, &dl, q, &ql) != FW_OK)
            return cb_say(err, CB_ERR, "psa_generate_key failed");
        if (cb_kv_put(out, "d", d, dl) != 0 || cb_kv_put(out, "q", q, ql) != 0)
            return cb_say(err, CB_ERR, "out of memory");
        return CB_OK;
    }
    to_fw(p, &f);
    io_from(p, in, &io);
    io.out_cap = io.msg_len + 256;
    io.out = malloc(io.out_cap);
    if (io.out == NULL)
        return cb_say(err, CB_ERR, "out of memory");
    rc = call(i, &f, &io);
    if (rc == FW_OK && cb_kv_put(out, out_name(p->op), io.out, io.out_len) != 0)
        rc = FW_ERR;
    free(io.out);
    return rc == FW_OK ? CB_OK : cb_say(err, CB_ERR, "the PSA call failed (bad input or key)");
}

/* ---- timing slots ----------------------------------------------------------------------------- */

#define N_EC 16 /* pre-made (key, peer) or (hash, signature) sets cycled through */

typedef struct {
    int op;                          /* index in fw_lib_ops; -1: ecc-keygen */
    char curve[16];
    fw_params f;
    uint8_t *buf;                    /* inputs and output */
    fw_io io[N_EC];
    uint64_t n;                      /* operations so far: the IV/nonce/digest counter */
    int keep_key;                    /* key set up once per slot (glue_keep_key), not per operation */
} slot;

static void psa_teardown(void *h)
{
    slot *s = h;
    if (s != NULL) {
        free(s->buf);
        free(s);
    }
}

/* A scalar below the P-256 group order (and any X25519 scalar): the top bit cleared. */
static void scalar(uint8_t *d, uint64_t seed)
{
    cb_fill(d, 32, seed);
    d[0] = (uint8_t)((d[0] & 0x7f) | 1);
}

static void *psa_setup(const cb_params *p, char *err)
{
    slot *s = calloc(1, sizeof *s);
    size_t bytes = p->bytes > 0 ? (size_t)p->bytes : 0, aad = p->aad_bytes > 0 ? (size_t)p->aad_bytes : 0;
    size_t per = 2 * bytes + aad + 1024;
    int sets = is_ec(p->op) ? N_EC : 1;

    if (s == NULL || (s->buf = calloc((size_t)sets, per)) == NULL) {
        psa_teardown(s);
        cb_say(err, CB_ERR, "out of memory");
        return NULL;
    }
    if (is_keygen(p)) {
        s->op = -1;
        snprintf(s->curve, sizeof s->curve, "%s", p->curve);
        return s;
    }
    s->op = find_op(p->op);
    to_fw(p, &s->f);
    /* ciphers: rekey=1 sets the key in every operation, else once; EC ops: a fixed key (ECDH
     * shared secrets cycle through 16, so each is imported again) */
    s->keep_key = is_ec(p->op) || family(p->op) == CB_FAMILY_SHA || p->rekey != 1;
    for (int j = 0; j < sets; j++) {
        uint8_t *b = s->buf + (size_t)j * per;
        uint8_t *key = b, *iv = b + 64, *msg = b + 128, *peer = b + 192, *sig = b + 320,
                *aadp = b + 448, *out = b + 448 + aad;
        fw_io *io = &s->io[j];
        memset(io, 0, sizeof *io);
        io->out = out;
        io->out_cap = bytes + 256;
        if (!is_ec(p->op)) {
            size_t klen = p->op == CB_OP_CHACHA20_POLY1305_ENCRYPT ? 32
                                                                           : (size_t)p->key_bits / 8;
            size_t ivlen = p->op == CB_OP_AES_CCM_ENCRYPT
                               ? (size_t)(p->nonce_bytes < 0 ? CB_DEFAULT_NONCE_BYTES : p->nonce_bytes)
                         : p->op == CB_OP_AES_GCM_ENCRYPT || p->op == CB_OP_CHACHA20_POLY1305_ENCRYPT ? 12
                         : p->op == CB_OP_AES_ECB_ENCRYPT ? 0 : 16;
            uint8_t *m = out + bytes + 256;      /* the message after the output room */
            if (family(p->op) == CB_FAMILY_SHA)
                klen = ivlen = 0;
            cb_fill(key, klen, 1);
            cb_fill(iv, ivlen, 2);
            cb_fill(aadp, aad, 3);
            cb_fill(m, bytes, 4);
            io->key = key; io->key_len = klen;
            io->iv = iv; io->iv_len = ivlen;
            io->aad = aadp; io->aad_len = aad;
            io->msg = m; io->msg_len = bytes;
            continue;
        }
        /* EC: own scalar d, a digest, and per op the peer's public key or a signature */
        scalar(key, 100 + (uint64_t)j);
        cb_fill(msg, 32, 200 + (uint64_t)j);
        io->key = key; io->key_len = 32;
        io->msg = msg; io->msg_len = 32;
        if (p->op == CB_OP_ECDH_SHARED_SECRET || p->op == CB_OP_ECDSA_VERIFY) {
            uint8_t d2[32];
            fw_io kg = {0};
            fw_params fk = s->f;
            scalar(d2, 300 + (uint64_t)j);
            kg.key = p->op == CB_OP_ECDSA_VERIFY ? key : d2;
            kg.key_len = 32;
            kg.out = peer;
            kg.out_cap = 128;
            if (find_fw(CB_OP_ECDH_KEYGEN)->run(&fk, &kg) != FW_OK)
                goto fail;
            io->peer = peer; io->peer_len = kg.out_len;
        }
        if (p->op == CB_OP_ECDSA_VERIFY) {
            fw_io sg = *io;
            sg.out = sig;
            sg.out_cap = 128;
            if (find_fw(CB_OP_ECDSA_SIGN)->run(&s->f, &sg) != FW_OK)
                goto fail;
            io->sig = sig; io->sig_len = sg.out_len;
        }
    }
    /* one untimed call: the inputs work */
    if (fw_lib_ops[s->op].run(&s->f, &s->io[0]) != FW_OK)
        goto fail;
    return s;
fail:
    psa_teardown(s);
    cb_say(err, CB_ERR, "setup: a PSA call on the prepared inputs failed");
    return NULL;
}

static int psa_run(void *h, uint64_t k, char *err)
{
    slot *s = h;
    if (s->op < 0) {
        for (uint64_t i = 0; i < k; i++)
            if (keygen(s->curve, NULL, NULL, NULL, NULL) != FW_OK)
                return cb_say(err, CB_ERR, "psa_generate_key failed");
        return CB_OK;
    }
    int sets = is_ec(glue_op(s->op)) ? N_EC : 1;
    int ecdsa_sign = glue_op(s->op) == CB_OP_ECDSA_SIGN;
    unsigned long h0 = driver_hits(s->op);

    glue_keep_key = s->keep_key;
    for (uint64_t i = 0; i < k; i++, s->n++) {
        fw_io *io = &s->io[s->n % (uint64_t)sets];
        /* a fresh IV/nonce, or a fresh digest to sign: the counter in its first bytes */
        uint8_t *fresh = (uint8_t *)(ecdsa_sign ? io->msg : io->iv_len >= 8 ? io->iv : NULL);
        if (fresh != NULL)
            memcpy(fresh, &s->n, sizeof s->n);
        if (fw_lib_ops[s->op].run(&s->f, io) != FW_OK) {
            glue_keep_key = 0;
            return cb_say(err, CB_ERR, "a PSA call failed");
        }
    }
    glue_keep_key = 0;
    dispatch[s->op].calls += k;
    if (driver_hits(s->op) != h0)
        dispatch[s->op].driver_calls += k;
    return CB_OK;
}

static void psa_describe(char *out, size_t outlen)
{
    size_t n;
    n = (size_t)snprintf(out, outlen,
                         "\"version\":\"%s\",\"api\":\"PSA Crypto API %d.%d\",\"source\":\"%s\","
                         "\"libflags\":\"%s\",\"key_setup\":\"rekey=1: psa_import_key ... psa_destroy_key in every "
                         "operation (as on the firmware); rekey=0 and the EC ops' fixed keys: imported once "
                         "and kept while the same key comes back\",\"driver\":\"%s\",\"dispatch\":{",
                         MBEDTLS_VERSION_STRING, PSA_CRYPTO_API_VERSION_MAJOR,
                         PSA_CRYPTO_API_VERSION_MINOR, CBH_PSA_SOURCE, CBH_PSA_LIBFLAGS,
#if defined(CBH_PSA_TEST_DRIVER)
                         DRIVER_NAME " (Mbed TLS tests/src/drivers, PSA_CRYPTO_DRIVER_TEST)"
#else
                         "none: builtin software only"
#endif
    );
    int first = 1;
    for (int i = 0; fw_lib_ops[i].op != NULL && n < outlen; i++) {
        if (dispatch[i].calls == 0)
            continue;
        n += (size_t)snprintf(out + n, outlen - n, "%s\"%s\":{\"calls\":%llu,\"driver_calls\":%llu,"
                              "\"served_by\":\"%s\"}", first ? "" : ",", fw_lib_ops[i].op,
                              dispatch[i].calls, dispatch[i].driver_calls,
#if defined(CBH_PSA_TEST_DRIVER)
                              dispatch[i].driver_calls == dispatch[i].calls ? "driver: " DRIVER_NAME
                              : dispatch[i].driver_calls == 0 ? "builtin" : "mixed"
#else
                              "builtin"
#endif
        );
        first = 0;
    }
    if (n < outlen)
        snprintf(out + n, outlen - n, "}");
}

const cb_engine cb_engine_psa = {
    "psa", "Mbed TLS 3.5 PSA Crypto API", psa_describe, psa_supports_, psa_compute,
    psa_setup, psa_run, psa_teardown,
};
