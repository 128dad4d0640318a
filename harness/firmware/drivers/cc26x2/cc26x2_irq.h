/* cc26x2_irq.h - the one external-interrupt handler of cryptobench's CC13x2/CC26x2 drivers built
 * with CC26X2_COMPLETION_IRQ (cc26x2_irq.c): it reads IPSR and calls the handler of the driver whose
 * line it is. Each driver defines its handler; one that is not linked into the image is skipped. */
#ifndef CB_CC26X2_IRQ_H
#define CB_CC26X2_IRQ_H

#include <stdint.h>

/* NVIC interrupt numbers (SWCU185G "Interrupts and Events": exception number - 16) */
#define CC26X2_PKA_IRQ 3u          /* PKA_IRQ, exception 19 */
#define CC26X2_CRYPTO_IRQ 23u      /* CRYPTO_RESULT_AVAIL_IRQ, exception 39 */
#define CC26X2_TRNG_IRQ 33u        /* TRNG_IRQ, exception 49 */

/* NVIC set-enable / clear-enable words (ARMv7-M ARM B3.4.4, B3.4.5): interrupt n is bit n % 32 of
 * word n / 32 */
#define CC26X2_NVIC_ENABLE(n) (*(volatile uint32_t *)(0xE000E100u + 4u * ((n) / 32u)) = 1u << ((n) % 32u))
#define CC26X2_NVIC_DISABLE(n) (*(volatile uint32_t *)(0xE000E180u + 4u * ((n) / 32u)) = 1u << ((n) % 32u))

/* One sleep of a driver's masked wait (called with PRIMASK set, returns with it set): WFI, then
 * unmask for the pending interrupt to be taken. It lives in cc26x2_irq.c so that a driver that
 * waits pulls the handler below into the image (a library archive's member is linked only for a
 * symbol it defines that is still undefined, and startup.c's weak fw_external_irq is defined). */
void cc26x2_irq_sleep(void);

void cc26x2_crypto_irq(void);
void cc26x2_pka_irq(void);
void cc26x2_trng_irq(void);

#endif
