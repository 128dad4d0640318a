/* cc26x2_irq.c - the external-interrupt handler (harness/firmware/core/startup.c points every
 * external vector at the weak fw_external_irq) for cryptobench's CC13x2/CC26x2 drivers built with
 * CC26X2_COMPLETION_IRQ: one definition in the image, shared by the CRYPTO, PKA and TRNG drivers.
 * It dispatches on IPSR (the exception number, ARMv7-M ARM B1.4.2) to the handler of the line's
 * driver; a driver left out of the image leaves its weak reference null and its line unexpected.
 * Without CC26X2_COMPLETION_IRQ (the polling build) this file defines nothing. */
#include "cc26x2_irq.h"

#ifdef CC26X2_COMPLETION_IRQ
void cc26x2_crypto_irq(void) __attribute__((weak));
void cc26x2_pka_irq(void) __attribute__((weak));
void cc26x2_trng_irq(void) __attribute__((weak));

void fw_external_irq(void)
{
    uint32_t ipsr;
    __asm__ volatile("mrs %0, ipsr" : "=r"(ipsr));
    uint32_t irq = (ipsr & 0x1FFu) - 16u;
    void (*handler)(void) = irq == CC26X2_CRYPTO_IRQ ? cc26x2_crypto_irq
                            : irq == CC26X2_PKA_IRQ  ? cc26x2_pka_irq
                            : irq == CC26X2_TRNG_IRQ ? cc26x2_trng_irq
                                                     : 0;
    if (handler)
        handler();
}

void cc26x2_irq_sleep(void)
{
    __asm__ volatile("wfi");
    __asm__ volatile("cpsie i\n\tisb\n\tcpsid i" ::: "memory");
}
#else
typedef int cc26x2_irq_polling_build;      /* ISO C: a translation unit declares something */
#endif
