/* stm32f4_rng.h - cryptobench's own register-level driver for the STM32F4 random number
 * generator (RNG), written from ST RM0090 Rev 11 chapter 24. See stm32f4_rng.c. */
#ifndef CB_STM32F4_RNG_H
#define CB_STM32F4_RNG_H

#include <stddef.h>
#include <stdint.h>

/* Fills len bytes at out with RNG_DR values (4 bytes each, the last one's first len % 4). Returns
 * 0, or -1 when RNG_SR reports a seed or clock error (SECS/CECS, RM0090 24.3.2). */
int stm32f4_rng_read(uint8_t *out, size_t len);

#endif
