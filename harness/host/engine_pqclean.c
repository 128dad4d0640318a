/* engine_pqclean.c - the `pqclean` engine: ML-KEM (FIPS 203) and ML-DSA (FIPS 204) from PQClean's
 * portable "clean" C sources, as vendored by the pqcrypto-mlkem / pqcrypto-mldsa crates and built by
 * the Makefile into cbh-pqclean (only that binary has this engine).
 *
 * Known answers need the schemes' random bytes to be given: ML-KEM has *_derand entry points (d || z
 * for key generation, m for encapsulation); ML-DSA's key generation and signing draw xi and rnd through
 * randombytes(), so this file supplies it (PQCLEAN_randombytes): bytes the compute request gave (queued by
 * feed()), else the system's getrandom(2). Timing always uses the system's bytes (hedged signing).
 * ML-DSA is pure ML-DSA with an empty context string (PQClean's *_ctx calls with ctxlen 0). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "cb_pqclean.h"
#include "engine.h"

#ifndef CBH_PQCLEAN_SOURCE
#define CBH_PQCLEAN_SOURCE "unknown"
#endif
#ifndef CBH_PQCLEAN_CRATES
#define CBH_PQCLEAN_CRATES "unknown"
#endif
#ifndef CBH_PQCLEAN_MLKEM_IMPL
#define CBH_PQCLEAN_MLKEM_IMPL "unknown"
#endif
#ifndef CBH_PQCLEAN_MLDSA_IMPL
#define CBH_PQCLEAN_MLDSA_IMPL "unknown"
#endif
#ifndef CBH_PQCLEAN_LIBFLAGS
#define CBH_PQCLEAN_LIBFLAGS ""
#endif

/* ---- PQClean's entry points (harness/common/cb_pqclean.h says why they are declared by hand) ---- */
CB_PQCLEAN_KEM_DECL(PQCLEAN_MLKEM512_CLEAN)
CB_PQCLEAN_KEM_DECL(PQCLEAN_MLKEM768_CLEAN)
CB_PQCLEAN_KEM_DECL(PQCLEAN_MLKEM1024_CLEAN)
CB_PQCLEAN_DSA_DECL(PQCLEAN_MLDSA44_CLEAN)
CB_PQCLEAN_DSA_DECL(PQCLEAN_MLDSA65_CLEAN)
CB_PQCLEAN_DSA_DECL(PQCLEAN_MLDSA87_CLEAN)

typedef struct {
    long level;
    size_t pk, sk, ct;          /* FIPS 203 Table 3: ek, dk, c */
    int (*keypair_derand)(uint8_t *, uint8_t *, const uint8_t *);
    int (*keypair)(uint8_t *, uint8_t *);
    int (*enc_derand)(uint8_t *, uint8_t *, const uint8_t *, const uint8_t *);
    int (*enc)(uint8_t *, uint8_t *, const uint8_t *);
    int (*dec)(uint8_t *, const uint8_t *, const uint8_t *);
} kem_t;

typedef struct {
    long level;
    size_t pk, sk, sig;         /* FIPS 204 Table 2 */
    int (*keypair)(uint8_t *, uint8_t *);
    int (*sign)(uint8_t *, size_t *, const uint8_t *, size_t, const uint8_t *, size_t, const uint8_t *);
    int (*verify)(const uint8_t *, size_t, const uint8_t *, size_t, const uint8_t *, size_t, const uint8_t *);
} dsa_t;

#define KEM(L, P, PK, SK, CT) { L, PK, SK, CT, P##_crypto_kem_keypair_derand, P##_crypto_kem_keypair, \
                                P##_crypto_kem_enc_derand, P##_crypto_kem_enc, P##_crypto_kem_dec }
#define DSA(L, P, PK, SK, SIG) { L, PK, SK, SIG, P##_crypto_sign_keypair, P##_crypto_sign_signature_ctx, \
                                 P##_crypto_sign_verify_ctx }
static const kem_t kems[] = {
    KEM(512, PQCLEAN_MLKEM512_CLEAN, 800, 1632, 768),
    KEM(768, PQCLEAN_MLKEM768_CLEAN, 1184, 2400, 1088),
    KEM(1024, PQCLEAN_MLKEM1024_CLEAN, 1568, 3168, 1568),
};
static const dsa_t dsas[] = {
    DSA(44, PQCLEAN_MLDSA44_CLEAN, 1312, 2560, 2420),
    DSA(65, PQCLEAN_MLDSA65_CLEAN, 1952, 4032, 3309),
    DSA(87, PQCLEAN_MLDSA87_CLEAN, 2592, 4896, 4627),
};
#define SS_BYTES 32
#define SEED_BYTES 32

static const kem_t *find_kem(long level)
{
    for (size_t i = 0; i < sizeof kems / sizeof kems[0]; i++)
        if (kems[i].level == level)
            return &kems[i];
    return NULL;
}

static const dsa_t *find_dsa(long level)
{
    for (size_t i = 0; i < sizeof dsas / sizeof dsas[0]; i++)
        if (dsas[i].level == level)
            return &dsas[i];
    return NULL;
}

/* ---- randombytes(): given bytes first, then the system's ---------------------------------------- */
static const uint8_t *fed;
static size_t fed_len;

static void feed(const uint8_t *buf, size_t len) { fed = buf; fed_len = len; }

/* PQClean's common/randombytes.h names it PQCLEAN_randombytes (its randombytes is a macro for that) */
int PQCLEAN_randombytes(uint8_t *out, size_t n);
int PQCLEAN_randombytes(uint8_t *out, size_t n)
{
    if (fed_len) {                          /* a known-answer request's xi or rnd, used exactly once */
        size_t take = n < fed_len ? n : fed_len;
        memcpy(out, fed, take);
        fed += take, fed_len -= take, out += take, n -= take;
    }
    while (n > 0) {
        ssize_t got = getrandom(out, n, 0);
        if (got < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        out += got, n -= (size_t)got;
    }
    return 0;
}

/* ---- supports / compute ------------------------------------------------------------------------- */
static int pq_supports(const cb_params *p, char *why)
{
    switch (p->op) {
    case CB_OP_ML_KEM_KEYGEN: case CB_OP_ML_KEM_ENCAPS: case CB_OP_ML_KEM_DECAPS:
        return find_kem(p->level) ? CB_OK : cb_say(why, CB_UNSUPPORTED, "level must be 512, 768 or 1024");
    case CB_OP_ML_DSA_KEYGEN: case CB_OP_ML_DSA_SIGN: case CB_OP_ML_DSA_VERIFY:
        return find_dsa(p->level) ? CB_OK : cb_say(why, CB_UNSUPPORTED, "level must be 44, 65 or 87");
    default:
        return cb_say(why, CB_UNSUPPORTED, "pqclean implements only ML-KEM and ML-DSA");
    }
}

/* The input `name` of exactly `want` bytes (0: any length); NULL and err filled when it has another. */
static const uint8_t *need(const cb_kv *in, const char *name, size_t want, size_t *len, char *err)
{
    const uint8_t *v = cb_kv_input(in, name, len);
    if (want && *len != want) {
        snprintf(err, CB_ERRLEN, "input %s has %zu bytes, expected %zu", name, *len, want);
        return NULL;
    }
    return v;
}

static int kem_compute(const cb_params *p, const kem_t *k, const cb_kv *in, cb_kv *out, char *err)
{
    uint8_t pk[1568], sk[3168], ct[1568], ss[SS_BYTES], coins[2 * SEED_BYTES];
    size_t n1, n2;
    const uint8_t *a, *b;
    switch (p->op) {
    case CB_OP_ML_KEM_KEYGEN:
        cb_kv_input(in, "d", &n1);
        cb_kv_input(in, "z", &n2);
        if (n1 || n2) {                     /* FIPS 203 ML-KEM.KeyGen_internal(d, z) */
            if (!(a = need(in, "d", SEED_BYTES, &n1, err)) || !(b = need(in, "z", SEED_BYTES, &n2, err)))
                return CB_ERR;
            memcpy(coins, a, SEED_BYTES), memcpy(coins + SEED_BYTES, b, SEED_BYTES);
            k->keypair_derand(pk, sk, coins);
        } else if (k->keypair(pk, sk) != 0)
            return cb_say(err, CB_ERR, "key generation failed");
        return cb_kv_put(out, "ek", pk, k->pk) || cb_kv_put(out, "dk", sk, k->sk) ? CB_ERR : CB_OK;
    case CB_OP_ML_KEM_ENCAPS:
        if (!(a = need(in, "ek", k->pk, &n1, err)))
            return CB_ERR;
        cb_kv_input(in, "m", &n2);
        if (n2) {                           /* ML-KEM.Encaps_internal(ek, m) */
            if (!(b = need(in, "m", SEED_BYTES, &n2, err)))
                return CB_ERR;
            k->enc_derand(ct, ss, a, b);
        } else
            k->enc(ct, ss, a);
        return cb_kv_put(out, "c", ct, k->ct) || cb_kv_put(out, "k", ss, SS_BYTES) ? CB_ERR : CB_OK;
    default:                                /* decaps: a modified c gives the implicit-rejection key */
        if (!(a = need(in, "dk", k->sk, &n1, err)) || !(b = need(in, "c", k->ct, &n2, err)))
            return CB_ERR;
        k->dec(ss, b, a);
        return cb_kv_put(out, "k", ss, SS_BYTES) ? CB_ERR : CB_OK;
    }
}

static int dsa_compute(const cb_params *p, const dsa_t *d, const cb_kv *in, cb_kv *out, char *err)
{
    uint8_t pk[2592], sk[4896], sig[4627];
    size_t n1, n2, n3, siglen = 0;
    const uint8_t *a, *m, *r;
    int rc;
    switch (p->op) {
    case CB_OP_ML_DSA_KEYGEN:
        cb_kv_input(in, "seed", &n1);
        if (n1 && !(a = need(in, "seed", SEED_BYTES, &n1, err)))
            return CB_ERR;
        if (n1)
            feed(a, n1);                    /* xi: PQClean draws it with randombytes() */
        rc = d->keypair(pk, sk);
        feed(NULL, 0);
        if (rc != 0)
            return cb_say(err, CB_ERR, "key generation failed");
        return cb_kv_put(out, "pk", pk, d->pk) || cb_kv_put(out, "sk", sk, d->sk) ? CB_ERR : CB_OK;
    case CB_OP_ML_DSA_SIGN:
        if (!(a = need(in, "sk", d->sk, &n1, err)))
            return CB_ERR;
        m = cb_kv_input(in, "msg", &n2);
        r = cb_kv_input(in, "rnd", &n3);
        if (n3 && !(r = need(in, "rnd", SEED_BYTES, &n3, err)))
            return CB_ERR;
        if (n3)
            feed(r, n3);                    /* rnd (all zero: deterministic ML-DSA); else hedged */
        rc = d->sign(sig, &siglen, m, n2, NULL, 0, a);
        feed(NULL, 0);
        if (rc != 0)
            return cb_say(err, CB_ERR, "signing failed");
        return cb_kv_put(out, "sig", sig, siglen) ? CB_ERR : CB_OK;
    default: {                              /* verify: any malformed input is a rejection, ok = 00 */
        a = cb_kv_input(in, "pk", &n1);
        m = cb_kv_input(in, "msg", &n2);
        r = cb_kv_input(in, "sig", &n3);
        uint8_t ok = n1 == d->pk && d->verify(r, n3, m, n2, NULL, 0, a) == 0;
        return cb_kv_put(out, "ok", &ok, 1) ? CB_ERR : CB_OK;
    }
    }
}

static int pq_compute(const cb_params *p, const cb_kv *in, cb_kv *out, char *err)
{
    if (pq_supports(p, err) != CB_OK)
        return CB_UNSUPPORTED;
    const kem_t *k = find_kem(p->level);
    if (p->op == CB_OP_ML_KEM_KEYGEN || p->op == CB_OP_ML_KEM_ENCAPS || p->op == CB_OP_ML_KEM_DECAPS)
        return kem_compute(p, k, in, out, err);
    return dsa_compute(p, find_dsa(p->level), in, out, err);
}

/* ---- timing: one slot holds a key pair (and a ciphertext / message / signature) made at setup ------- */
typedef struct {
    cb_op_id op;
    const kem_t *kem;
    const dsa_t *dsa;
    uint8_t pk[2592], sk[4896], ct[1568], ss[SS_BYTES], sig[4627];
    uint8_t *msg;
    size_t msg_len, sig_len;
} slot_t;

static void pq_teardown(void *s)
{
    slot_t *slot = s;
    if (slot)
        free(slot->msg);
    free(slot);
}

static void *pq_setup(const cb_params *p, char *err)
{
    if (pq_supports(p, err) != CB_OK)
        return NULL;
    slot_t *s = cb_slot_new(sizeof *s, err);
    if (!s)
        return NULL;
    s->op = p->op;
    s->kem = find_kem(p->level);
    s->dsa = find_dsa(p->level);
    if (s->kem) {
        s->kem->keypair(s->pk, s->sk);
        s->kem->enc(s->ct, s->ss, s->pk);
        return s;
    }
    s->msg_len = p->bytes > 0 ? (size_t)p->bytes : 0;
    s->msg = malloc(s->msg_len ? s->msg_len : 1);
    if (!s->msg) {
        pq_teardown(s);
        cb_say(err, CB_ERR, "out of memory");
        return NULL;
    }
    cb_fill(s->msg, s->msg_len, 1);
    if (s->dsa->keypair(s->pk, s->sk) != 0 ||
        s->dsa->sign(s->sig, &s->sig_len, s->msg, s->msg_len, NULL, 0, s->sk) != 0) {
        pq_teardown(s);
        cb_say(err, CB_ERR, "key generation or signing failed at setup");
        return NULL;
    }
    return s;
}

static int pq_run(void *sv, uint64_t k, char *err)
{
    slot_t *s = sv;
    for (uint64_t i = 0; i < k; i++) {
        int rc = 0;
        switch (s->op) {
        case CB_OP_ML_KEM_KEYGEN: rc = s->kem->keypair(s->pk, s->sk); break;
        case CB_OP_ML_KEM_ENCAPS: rc = s->kem->enc(s->ct, s->ss, s->pk); break;
        case CB_OP_ML_KEM_DECAPS: rc = s->kem->dec(s->ss, s->ct, s->sk); break;
        case CB_OP_ML_DSA_KEYGEN: rc = s->dsa->keypair(s->pk, s->sk); break;
        case CB_OP_ML_DSA_SIGN:
            rc = s->dsa->sign(s->sig, &s->sig_len, s->msg, s->msg_len, NULL, 0, s->sk);
            break;
        default:
            rc = s->dsa->verify(s->sig, s->sig_len, s->msg, s->msg_len, NULL, 0, s->pk);
            break;
        }
        if (rc != 0)
            return cb_say(err, CB_ERR, "operation failed while timing");
    }
    return CB_OK;
}

static void pq_describe(char *out, size_t outlen)
{
    /* which code served a cell: the crates (name and version) and, per scheme, the upstream commit that
     * the clean implementation's META.yml names (read by the Makefile at build time) */
    snprintf(out, outlen, "\"version\":\"PQClean clean (%s)\",\"crates\":\"%s\",\"source\":\"%s\","
             "\"ml_kem\":\"%s\",\"ml_dsa\":\"%s\","
             "\"libflags\":\"%s\",\"randombytes\":\"getrandom(2); a compute request's d, z, m, seed or rnd "
             "when it gives them\",\"ml_dsa_context\":\"empty (pure ML-DSA)\"",
             CBH_PQCLEAN_CRATES, CBH_PQCLEAN_CRATES, CBH_PQCLEAN_SOURCE, CBH_PQCLEAN_MLKEM_IMPL,
             CBH_PQCLEAN_MLDSA_IMPL, CBH_PQCLEAN_LIBFLAGS);
}

const cb_engine cb_engine_pqclean = {
    "pqclean",
    "PQClean",
    pq_describe,
    pq_supports,
    pq_compute,
    pq_setup,
    pq_run,
    pq_teardown,
};
