/* pqclean.c - PQClean glue for the bare-metal benchmark firmware: ML-KEM (FIPS 203) and ML-DSA
 * (FIPS 204) from PQClean's portable "clean" C, as the pqcrypto-mlkem crate vendors it.
 *
 *   ml-kem-keygen   PQCLEAN_MLKEM<L>_CLEAN_crypto_kem_keypair_derand(ek, dk, d || z)
 *   ml-kem-encaps   PQCLEAN_MLKEM<L>_CLEAN_crypto_kem_enc_derand(c, k, ek, m)
 *   ml-kem-decaps   PQCLEAN_MLKEM<L>_CLEAN_crypto_kem_dec(k, c, dk)
 *   ml-dsa-keygen   PQCLEAN_MLDSA<L>_CLEAN_crypto_sign_keypair (xi through randombytes)
 *   ml-dsa-sign     PQCLEAN_MLDSA<L>_CLEAN_crypto_sign_signature_ctx, empty context (rnd through randombytes)
 *   ml-dsa-verify   PQCLEAN_MLDSA<L>_CLEAN_crypto_sign_verify_ctx, empty context
 *
 * One build serves one parameter set: the recipe's variants define PQ_KEM_LEVEL or PQ_DSA_LEVEL, so
 * an image links that level's code only and its code size is the level's. The schemes' headers
 * share macro names (KYBER_K, K, L, ...), so the entry points are declared here, not included.
 *
 * Randomness: ML-DSA draws xi and rnd through PQClean's randombytes() (PQCLEAN_randombytes), which
 * this file supplies: the bytes of the call's input (seed, rnd) first, then fw_random (the cell's
 * deterministic stream, core/fw.h). ml-dsa-sign signs with the input's rnd in the first call of a KAT
 * or cell (the output the host checks) and with fw_random's bytes in the timed repetitions after it
 * (fw_keyed marks that first call: the harness clears it before each KAT and cell), so repetitions
 * show rejection sampling's spread as pqm4's hedged signing does, and repeat between runs. A sign
 * call without rnd is FIPS 204's deterministic variant (rnd = 32 zero bytes).
 *
 * Heap: PQClean's common/fips202.c keeps each SHAKE/SHA-3 state (200-208 bytes) in malloc'd memory
 * and calls exit(111) when malloc fails. newlib's malloc has no heap here (_sbrk fails), so malloc
 * and free below take the harness's arena (fw_calloc: its peak is the cell's heap B); the recipe
 * sizes the arena (`heap` = bytes) and gives the rest of the RAM to the stack.
 */

#include <string.h>

#include "cb_pqclean.h"
#include "fw.h"

const char fw_lib_name[] = "pqclean";
#ifndef PQ_IMPL
#define PQ_IMPL "unknown"
#endif
/* the recipe's version line (which upstream commit PQClean's META.yml names for `clean`) */
const char fw_lib_version[] = PQ_IMPL;

#define SEED_BYTES 32

/* ---- randombytes(): the call's bytes, then fw_random ------------------------------------------- */
static const uint8_t *fed;
static size_t fed_len;

int PQCLEAN_randombytes(uint8_t *out, size_t n);
int PQCLEAN_randombytes(uint8_t *out, size_t n)
{
    size_t take = n < fed_len ? n : fed_len;
    memcpy(out, fed, take);
    fed += take, fed_len -= take;
    return n > take ? fw_random(NULL, out + take, n - take) : 0;
}

/* ---- malloc/free: the harness's arena --------------------------------------------------------- */
void *malloc(size_t n)
{
    return fw_calloc(1, n);
}

void free(void *p)
{
    fw_free(p);
}

static __attribute__((unused)) int out_fits(const fw_io *io, size_t n)
{
    return io->out != NULL && io->out_cap >= n;
}

/* ---- ML-KEM ------------------------------------------------------------------------------------ */
#if defined(PQ_KEM_LEVEL) && (defined(FW_OP_ML_KEM_KEYGEN) || defined(FW_OP_ML_KEM_ENCAPS) \
                              || defined(FW_OP_ML_KEM_DECAPS))
#if PQ_KEM_LEVEL == 512
#define KEM_P PQCLEAN_MLKEM512_CLEAN
#define KEM_EK 800
#define KEM_DK 1632
#define KEM_CT 768
#elif PQ_KEM_LEVEL == 768
#define KEM_P PQCLEAN_MLKEM768_CLEAN
#define KEM_EK 1184
#define KEM_DK 2400
#define KEM_CT 1088
#elif PQ_KEM_LEVEL == 1024
#define KEM_P PQCLEAN_MLKEM1024_CLEAN
#define KEM_EK 1568
#define KEM_DK 3168
#define KEM_CT 1568
#else
#error "PQ_KEM_LEVEL must be 512, 768 or 1024"
#endif
#define KEM_CAT_(P, F) P##_##F
#define KEM_CAT(P, F) KEM_CAT_(P, F)
#define KEM_FN(F) KEM_CAT(KEM_P, F)
CB_PQCLEAN_KEM_DECL(PQCLEAN_MLKEM512_CLEAN)
CB_PQCLEAN_KEM_DECL(PQCLEAN_MLKEM768_CLEAN)
CB_PQCLEAN_KEM_DECL(PQCLEAN_MLKEM1024_CLEAN)
#define SS_BYTES 32

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
    memcpy(coins, io->key, SEED_BYTES);               /* FIPS 203 ML-KEM.KeyGen_internal(d, z) */
    memcpy(coins + SEED_BYTES, io->iv, SEED_BYTES);
    KEM_FN(crypto_kem_keypair_derand)(io->out, io->out + KEM_EK, coins);
    io->out_len = KEM_EK + KEM_DK;
    return FW_OK;
}
#define FW_GLUE_ML_KEM_KEYGEN kem_supports, kem_keygen_run
#endif

#if defined(PQ_KEM_LEVEL) && defined(FW_OP_ML_KEM_ENCAPS)
static int kem_encaps_run(const fw_params *p, fw_io *io)
{
    (void)p;
    if (io->peer_len != KEM_EK || io->msg_len != SEED_BYTES || !out_fits(io, KEM_CT + SS_BYTES))
        return FW_ERR;
    KEM_FN(crypto_kem_enc_derand)(io->out, io->out + KEM_CT, io->peer, io->msg);   /* Encaps_internal */
    io->out_len = KEM_CT + SS_BYTES;
    return FW_OK;
}
#define FW_GLUE_ML_KEM_ENCAPS kem_supports, kem_encaps_run
#endif

#if defined(PQ_KEM_LEVEL) && defined(FW_OP_ML_KEM_DECAPS)
static int kem_decaps_run(const fw_params *p, fw_io *io)
{
    (void)p;
    if (io->key_len != KEM_DK || io->sig_len != KEM_CT || !out_fits(io, SS_BYTES))
        return FW_ERR;
    KEM_FN(crypto_kem_dec)(io->out, io->sig, io->key);   /* a modified c: the implicit-rejection key */
    io->out_len = SS_BYTES;
    return FW_OK;
}
#define FW_GLUE_ML_KEM_DECAPS kem_supports, kem_decaps_run
#endif

/* ---- ML-DSA ------------------------------------------------------------------------------------ */
#if defined(PQ_DSA_LEVEL) && (defined(FW_OP_ML_DSA_KEYGEN) || defined(FW_OP_ML_DSA_SIGN) \
                              || defined(FW_OP_ML_DSA_VERIFY))
#if PQ_DSA_LEVEL == 44
#define DSA_P PQCLEAN_MLDSA44_CLEAN
#define DSA_PK 1312
#define DSA_SK 2560
#define DSA_SIG 2420
#elif PQ_DSA_LEVEL == 65
#define DSA_P PQCLEAN_MLDSA65_CLEAN
#define DSA_PK 1952
#define DSA_SK 4032
#define DSA_SIG 3309
#elif PQ_DSA_LEVEL == 87
#define DSA_P PQCLEAN_MLDSA87_CLEAN
#define DSA_PK 2592
#define DSA_SK 4896
#define DSA_SIG 4627
#else
#error "PQ_DSA_LEVEL must be 44, 65 or 87"
#endif
#define DSA_CAT_(P, F) P##_##F
#define DSA_CAT(P, F) DSA_CAT_(P, F)
#define DSA_FN(F) DSA_CAT(DSA_P, F)
CB_PQCLEAN_DSA_DECL(PQCLEAN_MLDSA44_CLEAN)
CB_PQCLEAN_DSA_DECL(PQCLEAN_MLDSA65_CLEAN)
CB_PQCLEAN_DSA_DECL(PQCLEAN_MLDSA87_CLEAN)

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
    int rc = DSA_FN(crypto_sign_keypair)(io->out, io->out + DSA_PK);
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
    int rc = DSA_FN(crypto_sign_signature_ctx)(io->out, &siglen, io->msg, io->msg_len, NULL, 0, io->key);
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
    io->out[0] = DSA_FN(crypto_sign_verify_ctx)(io->sig, io->sig_len, io->msg, io->msg_len, NULL, 0,
                                                io->peer) == 0;
    io->out_len = 1;
    return FW_OK;
}
#define FW_GLUE_ML_DSA_VERIFY dsa_supports, dsa_verify_run
#endif

/* The op table: the rows of fw_ops_table.h (generated from the catalog) for the FW_GLUE_* above. */
#include "fw_ops_table.h"
