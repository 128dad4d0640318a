/* stm32f4_irq.c - interrupt completion for cryptobench's own STM32F4 crypto drivers (written from
 * ST RM0090 Rev 11 and the ARMv7-M ARM; no vendor code).
 *
 * With STM32F4_COMPLETION_IRQ a driver enables its source in its peripheral (HASH_IMR, CRYP_IMSCR,
 * RNG_CR.IE) and its line in the NVIC, and waits in WFI; fw_external_irq (every external vector
 * of core/startup.c points at it) reads IPSR for the exception taken and calls the driver's
 * handler. The HASH and the RNG share interrupt 80 (RM0090 12.2, "HASH_RNG"): both handlers run,
 * each looking at its own status and mask, as a shared line needs. A handler masks the source it
 * found (as the line stays high while DCIS, DINIS, OFNE or DRDY do) and records it; the driver
 * then reads the data registers outside the handler.
 *
 * The wait masks interrupts around its test of the flag, so that an interrupt between the test
 * and the WFI cannot be lost: WFI wakes on a pending interrupt even with PRIMASK set (ARMv7-M ARM
 * B1.5.19), and CPSIE then takes it. Without STM32F4_COMPLETION_IRQ this file is empty (polling). */
#include "stm32f4_irq.h"

#ifdef STM32F4_COMPLETION_IRQ
#define NVIC_ISER(n) (*(volatile uint32_t *)(0xE000E100u + 4u * (n)))

void fw_external_irq(void)
{
    uint32_t ipsr;
    __asm__ volatile("mrs %0, ipsr" : "=r"(ipsr));
    if (ipsr == 16u + STM32F4_CRYP_IRQ) {
        stm32f4_cryp_isr();
    } else if (ipsr == 16u + STM32F4_HASH_RNG_IRQ) {
        stm32f4_hash_isr();
        stm32f4_rng_isr();
    }
}

void stm32f4_irq_enable(uint32_t irq)
{
    NVIC_ISER(irq / 32u) = 1u << (irq % 32u);
}

void stm32f4_irq_wait(volatile uint32_t *seen, uint32_t bits)
{
    __asm__ volatile("cpsid i" ::: "memory");
    while (!(*seen & bits)) {
        __asm__ volatile("wfi");
        __asm__ volatile("cpsie i\n\tisb\n\tcpsid i" ::: "memory");
    }
    *seen &= ~bits;
    __asm__ volatile("cpsie i" ::: "memory");
}
#endif
