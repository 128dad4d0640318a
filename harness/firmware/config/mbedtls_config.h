/* mbedtls_config.h - mbedTLS 2.28 configuration of the bare-metal benchmark firmware.
 *
 * Used instead of mbedtls/config.h through -DMBEDTLS_CONFIG_FILE='"mbedtls_config.h"'. Only the
 * primitives the glue (glue/mbedtls.c) measures are on, all in portable C (no AES-NI, no
 * padlock, no hardware ALT). Speed options keep the library defaults unless noted, so the numbers
 * are those of a stock mbedTLS; the options below only trim features and RAM.
 */
#ifndef CB_MBEDTLS_CONFIG_H
#define CB_MBEDTLS_CONFIG_H

/* --- System --------------------------------------------------------------------------------- */
#define MBEDTLS_HAVE_ASM                /* bignum multiply-accumulate in inline asm (Thumb/Thumb-2) */
#define MBEDTLS_NO_PLATFORM_ENTROPY     /* no /dev/urandom; nothing here gathers entropy anyway */

/* Heap: every mbedTLS allocation goes to the harness's fixed arena (peak use is reported). */
#define MBEDTLS_PLATFORM_C
#define MBEDTLS_PLATFORM_MEMORY
#define MBEDTLS_PLATFORM_CALLOC_MACRO fw_calloc
#define MBEDTLS_PLATFORM_FREE_MACRO   fw_free

/* --- Symmetric ------------------------------------------------------------------------------ */
#define MBEDTLS_AES_C
#define MBEDTLS_AES_ROM_TABLES          /* the AES tables live in flash (const), not in RAM */
#define MBEDTLS_CIPHER_C                /* CCM and GCM reach AES through the cipher layer */
#define MBEDTLS_CIPHER_MODE_CBC
#define MBEDTLS_CIPHER_MODE_CTR
#define MBEDTLS_CCM_C
#define MBEDTLS_GCM_C
#define MBEDTLS_CHACHA20_C
#define MBEDTLS_POLY1305_C
#define MBEDTLS_CHACHAPOLY_C

/* --- Hashes --------------------------------------------------------------------------------- */
#define MBEDTLS_SHA1_C
#define MBEDTLS_SHA256_C                /* SHA-224 and SHA-256 */
#define MBEDTLS_SHA512_C                /* SHA-384 and SHA-512 */
#define MBEDTLS_MD_C                    /* EC-JPAKE reaches SHA-256 through the MD layer */

/* --- Random bit generator ---------------------------------------------------------------------- */
/* AES-256 CTR_DRBG with the derivation function (the library default; MBEDTLS_CTR_DRBG_USE_128_BIT_KEY
 * stays off). The glue feeds it fixed entropy through its own callback: no ENTROPY_C. */
#define MBEDTLS_CTR_DRBG_C

/* --- Elliptic curves ------------------------------------------------------------------------ */
#define MBEDTLS_BIGNUM_C
#define MBEDTLS_ECP_C
#define MBEDTLS_ECP_DP_SECP256R1_ENABLED
#define MBEDTLS_ECP_DP_CURVE25519_ENABLED
#define MBEDTLS_ECP_NIST_OPTIM          /* fast P-256 reduction (library default) */
#define MBEDTLS_ECDH_C
#define MBEDTLS_ECDSA_C
#define MBEDTLS_ECJPAKE_C               /* needs ECP (P-256 above) and MD with SHA-256 */
/* Every point multiplication gets the caller's RNG (fw_random) for blinding; verification runs
 * without one. So ECP needs no internal DRBG (the CTR_DRBG above is only measured, never used
 * by ECP). */
#define MBEDTLS_ECP_NO_INTERNAL_RNG
/* The glue loads the group for every operation, so a generator table kept in the group would be
 * rebuilt each time anyway: skip keeping it (saves heap, costs no time here). */
#define MBEDTLS_ECP_FIXED_POINT_OPTIM 0
/* The glue passes r and s directly, but ecdsa.c also holds the DER wrappers and check_config.h
 * insists on ASN.1 for ECDSA; with -ffunction-sections/--gc-sections none of it is linked. */
#define MBEDTLS_ASN1_PARSE_C
#define MBEDTLS_ASN1_WRITE_C

/* Off on purpose (not defined): NET_C, FS_IO, TIMING_C, HAVE_TIME, HAVE_TIME_DATE, SELF_TEST,
 * ERROR_C, ENTROPY_C, HMAC_DRBG_C, MD5_C, RIPEMD160_C, AESNI_C, PADLOCK_C, ECDSA_DETERMINISTIC,
 * ECP_RESTARTABLE, all other curves (P-521 included), all CBC padding modes. */

/* The calloc/free macros above are used by every library file: declare them here (as in fw.h). */
#if !defined(__ASSEMBLER__)
#include <stddef.h>
void *fw_calloc(size_t n, size_t size);
void fw_free(void *p);
#endif

#include "mbedtls/check_config.h"

#endif /* CB_MBEDTLS_CONFIG_H */
