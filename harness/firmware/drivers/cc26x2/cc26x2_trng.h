/* cc26x2_trng.h - cryptobench's own register-level driver for the CC13x2/CC26x2 TRNG, written from
 * TI SWCU185G's chapter "TRNG" (no vendor code). See cc26x2_trng.c. Completion is polled
 * (IRQFLAGSTAT.RDY), or by TRNG_IRQ in WFI with CC26X2_COMPLETION_IRQ. */
#ifndef CB_CC26X2_TRNG_H
#define CB_CC26X2_TRNG_H

#include <stddef.h>
#include <stdint.h>

/* len bytes from the TRNG, 8 (one 64-bit number) at a time; the engine is enabled on the first
 * call and kept running. Returns 0. */
int cc26x2_trng_read(uint8_t *out, size_t len);

#endif
