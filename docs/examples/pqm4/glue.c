/* glue.c - pqm4's Armv7E-M assembly (ML-KEM-768 m4fspeed, ML-DSA-65 m4f) for cryptobench's firmware
 * harness, built from a pqm4 checkout given as --library-source (pqm4-m4fspeed.toml).
 *
 *   ml-kem-keygen   crypto_kem_keypair(ek, dk), randombytes giving d || z
 *   ml-kem-encaps   crypto_kem_enc(c, k, ek), randombytes giving m
 *   ml-kem-decaps   crypto_kem_dec(k, c, dk)
 *   ml-dsa-keygen   crypto_sign_keypair(pk, sk), randombytes giving xi
 *   ml-dsa-sign     crypto_sign_signature_ctx, empty context, randombytes giving rnd
 *   ml-dsa-verify   crypto_sign_verify_ctx, empty context
 *
 * pqm4's schemes export the plain NIST API only (kem.c keeps its _derand functions static), so the
 * inputs that FIPS 203 / 204 feed the internal functions reach them through randombytes(), which this
 * file supplies: the call's input bytes first, then fw_random (the cell's deterministic stream,
 * core/fw.h). crypto_kem_keypair draws d || z in one 64-byte call and crypto_kem_enc m in one 32-byte
 * call, so the outputs are FIPS 203's KeyGen_internal(d, z) and Encaps_internal(ek, m) and the
 * catalog's known answers apply. Every keygen and encaps call is fed the input again: the timed
 * repetitions do the same work as the checked call. ml-dsa-sign is fed the input's rnd (or 32 zero
 * bytes: the deterministic variant) in the first call of a KAT or cell only and fw_random's bytes in
 * the timed repetitions, as the bundled pqclean glue does, so repetitions show rejection sampling's
 * spread as pqm4's hedged signing does.
 *
 * pqm4's checkout reaches randombytes.h through mupq/pqclean, whose header renames randombytes to
 * PQCLEAN_randombytes; both names are defined here, so a tree with or without that rename links.
 * The entry points are declared here: the two schemes' api.h / params.h share names.
 */

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "fw.h"

/* pqm4's m4f / m4fspeed assembly spills to the FPU's s registers: a build without them cannot assemble */
#if !defined(__ARM_FP)
#error "pqm4's m4f assembly needs the FPU's registers: build with --cpu m4f"
#endif

const char fw_lib_name[] = "pqm4-m4fspeed";
#ifndef PQ_IMPL
#define PQ_IMPL "unknown"
#endif
const char fw_lib_version[] = PQ_IMPL;

#define SEED_BYTES 32

/* ---- randombytes(): the call's bytes, then fw_random ------------------------------------------- */
static const uint8_t *fed;
static size_t fed_len;

int PQCLEAN_randombytes(uint8_t *out, size_t n);
int randombytes(uint8_t *out, size_t n);

int PQCLEAN_randombytes(uint8_t *out, size_t n)
{
    size_t take = n < fed_len ? n : fed_len;
    memcpy(out, fed, take);
    fed += take, fed_len -= take;
    return n > take ? fw_random(NULL, out + take, n - take) : 0;
}

int randombytes(uint8_t *out, size_t n)
{
    return PQCLEAN_randombytes(out, n);
}

static __attribute__((unused)) int out_fits(const fw_io *io, size_t n)
{
    return io->out != NULL && io->out_cap >= n;
}

/* ---- ML-KEM-768 (m4fspeed) ---------------------------------------------------------------------- */
#if defined(PQ_KEM_LEVEL) && (defined(FW_OP_ML_KEM_KEYGEN) || defined(FW_OP_ML_KEM_ENCAPS) \
                              || defined(FW_OP_ML_KEM_DECAPS))
#if PQ_KEM_LEVEL != 768
#error "this glue serves pqm4's ML-KEM-768 (add the sizes of another level to use its m4fspeed)"
#endif
#define KEM_EK 1184
#define KEM_DK 2400
#define KEM_CT 1088
#define SS_BYTES 32
int crypto_kem_keypair(unsigned char *pk, unsigned char *sk);
int crypto_kem_enc(unsigned char *ct, unsigned char *ss, const unsigned char *pk);
int crypto_kem_dec(unsigned char *ss, const unsigned char *ct, const unsigned char *sk);

static int kem_supports(const fw_params *p, const char **why)
{
    if (p->level != PQ_KEM_LEVEL) {
        *why = "this build has one ML-KEM parameter set (the recipe's variant for the cell's level)";
        return FW_UNSUPPORTED;
    }
    return FW_OK;
}
#endif

#if defined(PQ_KEM_LEVEL) && defined(FW_OP_ML_KEM_KEYGEN)
static int kem_keygen_run(const fw_params *p, fw_io *io)
{
    uint8_t coins[2 * SEED_BYTES];
    (void)p;
    if (io->key_len != SEED_BYTES || io->iv_len != SEED_BYTES || !out_fits(io, KEM_EK + KEM_DK))
        return FW_ERR;
    memcpy(coins, io->key, SEED_BYTES);               /* d || z: FIPS 203 ML-KEM.KeyGen_internal(d, z) */
    memcpy(coins + SEED_BYTES, io->iv, SEED_BYTES);
    fed = coins, fed_len = sizeof coins;
    int rc = crypto_kem_keypair(io->out, io->out + KEM_EK);
    fed_len = 0;
    io->out_len = KEM_EK + KEM_DK;
    return rc == 0 ? FW_OK : FW_ERR;
}
#define FW_GLUE_ML_KEM_KEYGEN kem_supports, kem_keygen_run
#endif

#if defined(PQ_KEM_LEVEL) && defined(FW_OP_ML_KEM_ENCAPS)
static int kem_encaps_run(const fw_params *p, fw_io *io)
{
    (void)p;
    if (io->peer_len != KEM_EK || io->msg_len != SEED_BYTES || !out_fits(io, KEM_CT + SS_BYTES))
        return FW_ERR;
    fed = io->msg, fed_len = SEED_BYTES;              /* m: Encaps_internal(ek, m) */
    int rc = crypto_kem_enc(io->out, io->out + KEM_CT, io->peer);
    fed_len = 0;
    io->out_len = KEM_CT + SS_BYTES;
    return rc == 0 ? FW_OK : FW_ERR;
}
#define FW_GLUE_ML_KEM_ENCAPS kem_supports, kem_encaps_run
#endif

#if defined(PQ_KEM_LEVEL) && defined(FW_OP_ML_KEM_DECAPS)
static int kem_decaps_run(const fw_params *p, fw_io *io)
{
    (void)p;
    if (io->key_len != KEM_DK || io->sig_len != KEM_CT || !out_fits(io, SS_BYTES))
        return FW_ERR;
    int rc = crypto_kem_dec(io->out, io->sig, io->key);   /* a modified c: the implicit-rejection key */
    io->out_len = SS_BYTES;
    return rc == 0 ? FW_OK : FW_ERR;
}
#define FW_GLUE_ML_KEM_DECAPS kem_supports, kem_decaps_run
#endif

/* ---- ML-DSA-65 (m4f) ---------------------------------------------------------------------------- */
#if defined(PQ_DSA_LEVEL) && (defined(FW_OP_ML_DSA_KEYGEN) || defined(FW_OP_ML_DSA_SIGN) \
                              || defined(FW_OP_ML_DSA_VERIFY))
#if PQ_DSA_LEVEL != 65
#error "this glue serves pqm4's ML-DSA-65 (add the sizes of another level to use its m4f)"
#endif
#define DSA_PK 1952
#define DSA_SK 4032
#define DSA_SIG 3309
int crypto_sign_keypair(uint8_t *pk, uint8_t *sk);
int crypto_sign_signature_ctx(uint8_t *sig, size_t *siglen, const uint8_t *m, size_t mlen, const uint8_t *ctx,
                              size_t ctxlen, const uint8_t *sk);
int crypto_sign_verify_ctx(const uint8_t *sig, size_t siglen, const uint8_t *m, size_t mlen, const uint8_t *ctx,
                           size_t ctxlen, const uint8_t *pk);

static int dsa_supports(const fw_params *p, const char **why)
{
    if (p->level != PQ_DSA_LEVEL) {
        *why = "this build has one ML-DSA parameter set (the recipe's variant for the cell's level)";
        return FW_UNSUPPORTED;
    }
    return FW_OK;
}
#endif

#if defined(PQ_DSA_LEVEL) && defined(FW_OP_ML_DSA_KEYGEN)
static int dsa_keygen_run(const fw_params *p, fw_io *io)
{
    (void)p;
    if (io->key_len != SEED_BYTES || !out_fits(io, DSA_PK + DSA_SK))
        return FW_ERR;
    fed = io->key, fed_len = SEED_BYTES;              /* xi: ML-DSA.KeyGen_internal(xi) */
    int rc = crypto_sign_keypair(io->out, io->out + DSA_PK);
    fed_len = 0;
    io->out_len = DSA_PK + DSA_SK;
    return rc == 0 ? FW_OK : FW_ERR;
}
#define FW_GLUE_ML_DSA_KEYGEN dsa_supports, dsa_keygen_run
#endif

#if defined(PQ_DSA_LEVEL) && defined(FW_OP_ML_DSA_SIGN)
static const uint8_t zero_rnd[SEED_BYTES];

static int dsa_sign_run(const fw_params *p, fw_io *io)
{
    size_t siglen = 0;
    (void)p;
    if (io->key_len != DSA_SK || (io->iv_len != 0 && io->iv_len != SEED_BYTES) || !out_fits(io, DSA_SIG))
        return FW_ERR;
    if (!fw_keyed)                                    /* the checked call: the input's rnd (or zeros) */
        fed = io->iv_len ? io->iv : zero_rnd, fed_len = SEED_BYTES;
    fw_keyed = 1;                                     /* timed repetitions: rnd from fw_random */
    int rc = crypto_sign_signature_ctx(io->out, &siglen, io->msg, io->msg_len, NULL, 0, io->key);
    fed_len = 0;
    io->out_len = siglen;
    return rc == 0 && siglen == DSA_SIG ? FW_OK : FW_ERR;
}
#define FW_GLUE_ML_DSA_SIGN dsa_supports, dsa_sign_run
#endif

#if defined(PQ_DSA_LEVEL) && defined(FW_OP_ML_DSA_VERIFY)
static int dsa_verify_run(const fw_params *p, fw_io *io)
{
    (void)p;
    if (io->peer_len != DSA_PK || !out_fits(io, 1))
        return FW_ERR;
    io->out[0] = crypto_sign_verify_ctx(io->sig, io->sig_len, io->msg, io->msg_len, NULL, 0, io->peer) == 0;
    io->out_len = 1;
    return FW_OK;
}
#define FW_GLUE_ML_DSA_VERIFY dsa_supports, dsa_verify_run
#endif

/* The op table: the rows of fw_ops_table.h (generated from the catalog) for the FW_GLUE_* above. */
#include "fw_ops_table.h"
