/* mbedtls_ecjpake_config.h - configuration for compiling mbedTLS 2.28's library/ecjpake.c
 * against the system libmbedcrypto.
 *
 * Debian's libmbedcrypto is built without MBEDTLS_ECJPAKE_C. We compile ecjpake.c ourselves
 * (from the vendored source of the mbedtls-sys-auto crate) with this file as
 * MBEDTLS_CONFIG_FILE. It takes the system configuration unchanged, so that every struct the
 * system library shares with us (mbedtls_ecp_group, mbedtls_mpi, mbedtls_md_info_t users...)
 * has the same layout, and only switches the EC-JPAKE module on. The system include directory
 * must come before the vendored one on the compiler's command line.
 */
#ifndef CBH_MBEDTLS_ECJPAKE_CONFIG_H
#define CBH_MBEDTLS_ECJPAKE_CONFIG_H

#include <mbedtls/config.h>

#ifndef MBEDTLS_ECJPAKE_C
#define MBEDTLS_ECJPAKE_C
#endif

/* The module's self test (mbedtls_ecjpake_self_test) is compiled only with MBEDTLS_SELF_TEST;
 * it pulls in nothing beyond the public API, so leaving the system setting is harmless. */

#endif
