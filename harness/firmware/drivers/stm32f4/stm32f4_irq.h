/* stm32f4_irq.h - interrupt completion for cryptobench's own STM32F4 crypto drivers (built with
 * STM32F4_COMPLETION_IRQ: the stm32-cryp-hash-irq recipe). See stm32f4_irq.c. */
#ifndef CB_STM32F4_IRQ_H
#define CB_STM32F4_IRQ_H

#include <stdint.h>

/* RM0090 12.2 'Interrupt and exception vectors' (STM32F42xxx/43xxx): NVIC interrupt positions */
#define STM32F4_CRYP_IRQ 79u                        /* CRYP: exception 95 */
#define STM32F4_HASH_RNG_IRQ 80u                    /* HASH and RNG, one shared line: exception 96 */

#ifdef STM32F4_COMPLETION_IRQ
/* Enables NVIC interrupt `irq` (NVIC_ISERn, ARMv7-M ARM B3.4.4). */
void stm32f4_irq_enable(uint32_t irq);
/* Sleeps in WFI until the handler has set any of `bits` in *seen; clears them. */
void stm32f4_irq_wait(volatile uint32_t *seen, uint32_t bits);

/* The drivers' handlers, called by fw_external_irq (stm32f4_irq.c) for their line: each reads
 * its own status, records what it found in its `seen` word and masks that source. */
void stm32f4_cryp_isr(void);
void stm32f4_hash_isr(void);
void stm32f4_rng_isr(void);
#endif

#endif
