/* psa_mbedtls_config.h - Mbed TLS 3.5 configured for the PSA Crypto API on bare metal.
 *
 * Used by the `psa` firmware recipe (recipes/psa.toml, glue/psa.c) and, with PSA_CB_HOST defined,
 * by the `psa` host engine (harness/host/engine_psa.c), so both measure the same configuration.
 * MBEDTLS_PSA_CRYPTO_CONFIG is off: the PSA_WANT_* symbols follow from the classic module
 * options below (include/mbedtls/config_psa.h), and every mechanism is served by Mbed TLS's
 * builtin software unless a driver is compiled in (PSA_CRYPTO_DRIVER_TEST: the test driver of
 * tests/src/drivers, which stands in for an accelerator; see docs/psa.md).
 *
 * Bare metal: no file system (no key storage, no ITS), no threads, no entropy module. The PSA
 * random generator is MBEDTLS_PSA_CRYPTO_EXTERNAL_RNG: mbedtls_psa_external_get_random(), which
 * the glue implements with the harness's deterministic fw_random (benchmark inputs only).
 */
#ifndef CB_PSA_MBEDTLS_CONFIG_H
#define CB_PSA_MBEDTLS_CONFIG_H

#if !defined(PSA_CB_HOST)
#define MBEDTLS_HAVE_ASM                /* bignum multiply-accumulate in inline asm (Thumb-2) */
#define MBEDTLS_PLATFORM_C
#define MBEDTLS_PLATFORM_MEMORY
#define MBEDTLS_PLATFORM_CALLOC_MACRO fw_calloc
#define MBEDTLS_PLATFORM_FREE_MACRO   fw_free
#define MBEDTLS_PSA_KEY_SLOT_COUNT 4    /* one op holds at most one key */
#else
#define MBEDTLS_PLATFORM_C              /* host: the C library's calloc/free, portable C (no asm) */
#define MBEDTLS_PSA_KEY_SLOT_COUNT 8
#endif
#define MBEDTLS_NO_PLATFORM_ENTROPY
#define MBEDTLS_PSA_CRYPTO_EXTERNAL_RNG /* no entropy module, no DRBG inside the library */
#define MBEDTLS_PSA_CRYPTO_C            /* no MBEDTLS_PSA_CRYPTO_STORAGE_C: volatile keys only */

#define MBEDTLS_AES_C
#define MBEDTLS_AES_ROM_TABLES          /* the AES tables live in flash (const), not in RAM */
#define MBEDTLS_CIPHER_C                /* the PSA cipher layer is built on mbedtls_cipher */
#define MBEDTLS_CIPHER_MODE_CBC
#define MBEDTLS_CIPHER_MODE_CTR
#define MBEDTLS_CCM_C
#define MBEDTLS_GCM_C
#define MBEDTLS_CHACHA20_C
#define MBEDTLS_POLY1305_C
#define MBEDTLS_CHACHAPOLY_C

#define MBEDTLS_MD_C
#define MBEDTLS_SHA1_C
#define MBEDTLS_SHA224_C
#define MBEDTLS_SHA256_C
#define MBEDTLS_SHA384_C
#define MBEDTLS_SHA512_C

#define MBEDTLS_BIGNUM_C
#define MBEDTLS_ECP_C
#define MBEDTLS_ECP_DP_SECP256R1_ENABLED
#define MBEDTLS_ECP_DP_CURVE25519_ENABLED
#define MBEDTLS_ECP_NIST_OPTIM          /* fast P-256 reduction (library default) */
/* The library default of 3.5, spelled out: precomputed comb tables of each curve's generator are
 * const data in flash (ecp_curves.c), so d*G is faster. Simulated on sim:cortex-m4 (cc2652, -Os):
 * P-256 ecdsa-sign 7.7 M cycles with the tables, 19.7 M without; ecdh-keygen 6.7 M vs 18.6 M; the
 * image grows by about 1.6 KB of flash and the heap peak falls by about 2 KB. Mbed TLS 2.28 (the
 * mbedtls recipe) has no flash tables: its option builds the table in RAM, which that recipe
 * turns off; this, not the PSA layer, is why psa signs faster than mbedtls in the table. */
#define MBEDTLS_ECP_FIXED_POINT_OPTIM 1
#define MBEDTLS_ECDH_C
#define MBEDTLS_ECDSA_C                 /* randomized ECDSA (PSA_ALG_ECDSA); no HMAC_DRBG, so no deterministic ECDSA */
#define MBEDTLS_ASN1_PARSE_C
#define MBEDTLS_ASN1_WRITE_C

#if !defined(__ASSEMBLER__) && !defined(PSA_CB_HOST)
#include <stddef.h>
void *fw_calloc(size_t n, size_t size);
void fw_free(void *p);
#endif

#endif /* CB_PSA_MBEDTLS_CONFIG_H */
