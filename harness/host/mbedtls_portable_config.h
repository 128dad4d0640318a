/* mbedtls_portable_config.h - the user configuration of the `mbedtls-portable` harness
 * (build/host/cbh-mbedtls-portable): Mbed TLS 2.28 built from source as the portable C a
 * microcontroller runs, so that the host's "software Mbed TLS" is software on x86 as well.
 *
 * Included by the vendored mbedtls/config.h through MBEDTLS_USER_CONFIG_FILE, i.e. after the
 * defaults and before check_config.h. Against the defaults it
 *   - switches off the CPU-specific code: AES-NI (MBEDTLS_AESNI_C), VIA PadLock (MBEDTLS_PADLOCK_C)
 *     and the inline-assembly bignum multipliers (MBEDTLS_HAVE_ASM), so AES runs the table
 *     implementation and bignum the generic C multiply-accumulate;
 *   - switches on what Debian's system library (the `mbedtls` engine) also has, so that the two
 *     engines differ in the masked code only: threading (an uncontended mutex in RSA private-key
 *     operations) and EC-JPAKE, which cryptobench benchmarks.
 * The harness reports each of these settings (engine_mbedtls.c, mb_describe) and cryptobench
 * refuses the engine when any CPU-specific one is found on (targets/host/engines.py).
 */
#ifndef CBH_MBEDTLS_PORTABLE_CONFIG_H
#define CBH_MBEDTLS_PORTABLE_CONFIG_H

#undef MBEDTLS_AESNI_C
#undef MBEDTLS_PADLOCK_C
#undef MBEDTLS_HAVE_ASM

#define MBEDTLS_THREADING_C
#define MBEDTLS_THREADING_PTHREAD
#define MBEDTLS_ECJPAKE_C

#endif
