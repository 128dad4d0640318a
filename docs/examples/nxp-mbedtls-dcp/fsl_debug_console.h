/* fsl_debug_console.h - cryptobench's stand-in for the SDK's debug console header, which NXP's
 * ksdk_mbedtls_config.h includes for PRINTF. The firmware harness reports over its own channel
 * and nothing in the Mbed TLS port prints, so PRINTF is a no-op here. cryptobench's own code. */
#ifndef CRYPTOBENCH_FSL_DEBUG_CONSOLE_H
#define CRYPTOBENCH_FSL_DEBUG_CONSOLE_H
#define PRINTF(...) ((void)0)
#endif
