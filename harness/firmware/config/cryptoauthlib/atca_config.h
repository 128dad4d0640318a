/* atca_config.h - CryptoAuthLib's build configuration for cryptobench's firmware (the file its CMake
 * build writes from atca_config.h.in): one ATECC608 (or 508A) on I2C through cryptobench's HAL for the
 * modelled Renesas RA IIC (glue/cryptoauthlib.c), polling for results, no printf, CryptoAuthLib's own
 * heap use through fw_calloc/fw_free. */
#ifndef ATCA_CONFIG_H
#define ATCA_CONFIG_H

#include <stddef.h>

#define ATCA_HAL_I2C
#define ATCA_ATECC608_SUPPORT
#define ATCA_ATECC508A_SUPPORT

/* ATCA_NO_POLL left undefined: the library polls the device (its default since the 608B) */
#define ATCA_POST_DELAY_MSEC 25
#define ATCA_PREPROCESSOR_WARNING 0
#define ATCA_CHECK_PARAMS_EN 1
#define ATCA_TA_SUPPORT 0
#define ATCAC_SHA384_EN 0
#define ATCAC_SHA512_EN 0
#define ATCACERT_COMPCERT_EN 0
#define ATCACERT_FULLSTOREDCERT_EN 0
#define ATCACERT_INTEGRATION_EN 0
#define CALIB_DELETE_EN 0
#define MULTIPART_BUF_EN 0
#define ATCA_USE_ATCAB_FUNCTIONS

void *fw_calloc(size_t n, size_t size);
void fw_free(void *p);
static inline void *cb_atca_malloc(size_t size) { return fw_calloc(1, size); }
#define ATCA_PLATFORM_MALLOC cb_atca_malloc
#define ATCA_PLATFORM_FREE fw_free

#define atca_delay_ms hal_delay_ms
#define atca_delay_us hal_delay_us

#endif
