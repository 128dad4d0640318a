/* stm32f4xx_hal_conf.h - the HAL configuration of this benchmark (cryptobench's own file, not ST's
 * template): only the modules the glue uses are enabled; the clocks and callbacks the HAL headers
 * ask for are set. */
#ifndef CB_STM32F4XX_HAL_CONF_H
#define CB_STM32F4XX_HAL_CONF_H

#define HAL_MODULE_ENABLED
#define HAL_RCC_MODULE_ENABLED      /* the __HAL_RCC_<periph>_CLK_ENABLE macros (headers only) */
#define HAL_CORTEX_MODULE_ENABLED
#define HAL_DMA_MODULE_ENABLED      /* the HASH and CRYP handles hold DMA handles (the DMA paths are not used) */
#define HAL_HASH_MODULE_ENABLED
#define HAL_CRYP_MODULE_ENABLED

/* Oscillator values the RCC header refers to (Hz); nothing here configures a clock. */
#define HSE_VALUE 8000000U
#define HSE_STARTUP_TIMEOUT 100U
#define HSI_VALUE 16000000U
#define LSI_VALUE 32000U
#define LSE_VALUE 32768U
#define LSE_STARTUP_TIMEOUT 5000U
#define EXTERNAL_CLOCK_VALUE 12288000U

#define VDD_VALUE 3300U
#define TICK_INT_PRIORITY 0x0FU
#define USE_RTOS 0U
#define PREFETCH_ENABLE 1U
#define INSTRUCTION_CACHE_ENABLE 1U
#define DATA_CACHE_ENABLE 1U

#define USE_HAL_CRYP_REGISTER_CALLBACKS 0U
#define USE_HAL_HASH_REGISTER_CALLBACKS 0U

#include "stm32f4xx_hal_rcc.h"
#include "stm32f4xx_hal_cortex.h"
#include "stm32f4xx_hal_dma.h"
#include "stm32f4xx_hal_hash.h"
#include "stm32f4xx_hal_cryp.h"

#define assert_param(expr) ((void)0U)   /* USE_FULL_ASSERT off */

#endif
