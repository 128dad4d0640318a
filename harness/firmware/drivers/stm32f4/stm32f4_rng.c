/* stm32f4_rng.c - cryptobench's own register-level driver for the STM32F4 random number
 * generator, written from ST RM0090 Rev 11 chapter 24 (no vendor code).
 *
 * RM0090 24.3.1: with RNGEN set, a new 32-bit value is in RNG_DR once DRDY is set (40 periods of
 * the RNG clock after the last); reading RNG_DR clears DRDY. 24.3.2: SECS (a seed error: too few
 * or too many transitions) or CECS (the RNG clock too slow) mean the values must not be used. The
 * generator is left running between calls, as a driver initialised once would leave it.
 *
 * Completion: DRDY polled, or with STM32F4_COMPLETION_IRQ by interrupt (RM0090 24.3.3 and 24.4.1:
 * RNG_CR.IE raises HASH_RNG, NVIC interrupt 80, shared with the HASH, while DRDY, SEIS or CEIS is
 * set), the core waiting in WFI (stm32f4_irq.c) and the handler clearing IE once it saw the
 * status, as DRDY stays set until RNG_DR is read. */
#include <string.h>

#include "stm32f4_irq.h"
#include "stm32f4_rng.h"

#define RNG_BASE 0x50060800u                        /* RM0090 2.3, AHB2 */
#define RNG_CR (*(volatile uint32_t *)(RNG_BASE + 0x0))
#define RNG_SR (*(volatile uint32_t *)(RNG_BASE + 0x4))
#define RNG_DR (*(volatile uint32_t *)(RNG_BASE + 0x8))
#define CR_RNGEN (1u << 2)
#define CR_IE (1u << 3)
#define SR_DRDY (1u << 0)
#define SR_CECS (1u << 1)
#define SR_SECS (1u << 2)
#define SR_CEIS (1u << 5)
#define SR_SEIS (1u << 6)

/* RCC_AHB2ENR.RNGEN (RM0090 6.3.11): the generator's clock */
#define RCC_AHB2ENR (*(volatile uint32_t *)0x40023834u)
#define RCC_AHB2ENR_RNGEN (1u << 6)

#ifdef STM32F4_COMPLETION_IRQ
static volatile uint32_t rng_seen;                  /* RNG_SR bits the handler has taken */

void stm32f4_rng_isr(void)
{
    if (!(RCC_AHB2ENR & RCC_AHB2ENR_RNGEN))
        return;                                    /* the shared line was the HASH's; the RNG is off */
    uint32_t cr = RNG_CR;
    if (!(cr & CR_IE))
        return;
    uint32_t sr = RNG_SR & (SR_DRDY | SR_CEIS | SR_SEIS);
    if (sr) {
        rng_seen |= sr;
        RNG_CR = cr & ~CR_IE;                      /* DRDY stays set until RNG_DR is read: mask it */
    }
}

static uint32_t wait_ready(void)
{
    rng_seen = 0;
    RNG_CR = CR_RNGEN | CR_IE;
    stm32f4_irq_wait(&rng_seen, SR_DRDY | SR_CEIS | SR_SEIS);
    return RNG_SR;
}
#else
static uint32_t wait_ready(void)
{
    uint32_t sr;
    while (!((sr = RNG_SR) & (SR_DRDY | SR_CECS | SR_SECS))) {
    }
    return sr;
}
#endif

int stm32f4_rng_read(uint8_t *out, size_t len)
{
    RCC_AHB2ENR |= RCC_AHB2ENR_RNGEN;
#ifdef STM32F4_COMPLETION_IRQ
    stm32f4_irq_enable(STM32F4_HASH_RNG_IRQ);
#endif
    if (!(RNG_CR & CR_RNGEN))
        RNG_CR = CR_RNGEN;
    for (size_t i = 0; i < len; i += 4) {
        uint32_t sr = wait_ready();
        if (sr & (SR_CECS | SR_SECS) || !(sr & SR_DRDY))
            return -1;
        uint32_t w = RNG_DR;
        memcpy(out + i, &w, len - i < 4 ? len - i : 4);
    }
    return 0;
}
