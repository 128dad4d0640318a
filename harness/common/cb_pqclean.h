/* cb_pqclean.h - PQClean's ML-KEM (FIPS 203) and ML-DSA (FIPS 204) "clean" entry points, for the host
 * engine (harness/host/engine_pqclean.c) and the firmware glue (harness/firmware/glue/pqclean.c).
 * Declared here, by namespace, because the schemes' own api.h / kem.h share macro names (KYBER_K and
 * the like) and cannot all be included in one file. ML-DSA is called through the *_ctx functions
 * (pure ML-DSA with a context string; cryptobench passes an empty one). */
#ifndef CB_PQCLEAN_H
#define CB_PQCLEAN_H

#include <stddef.h>
#include <stdint.h>

#define CB_PQCLEAN_KEM_DECL(P)                                                                        \
    int P##_crypto_kem_keypair_derand(uint8_t *pk, uint8_t *sk, const uint8_t *coins);               \
    int P##_crypto_kem_keypair(uint8_t *pk, uint8_t *sk);                                            \
    int P##_crypto_kem_enc_derand(uint8_t *ct, uint8_t *ss, const uint8_t *pk, const uint8_t *coins); \
    int P##_crypto_kem_enc(uint8_t *ct, uint8_t *ss, const uint8_t *pk);                             \
    int P##_crypto_kem_dec(uint8_t *ss, const uint8_t *ct, const uint8_t *sk);

#define CB_PQCLEAN_DSA_DECL(P)                                                                        \
    int P##_crypto_sign_keypair(uint8_t *pk, uint8_t *sk);                                           \
    int P##_crypto_sign_signature_ctx(uint8_t *sig, size_t *siglen, const uint8_t *m, size_t mlen,  \
                                      const uint8_t *ctx, size_t ctxlen, const uint8_t *sk);        \
    int P##_crypto_sign_verify_ctx(const uint8_t *sig, size_t siglen, const uint8_t *m, size_t mlen, \
                                   const uint8_t *ctx, size_t ctxlen, const uint8_t *pk);

#endif
