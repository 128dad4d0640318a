/* cc26x2_trng.c - cryptobench's own register-level driver for the CC13x2/CC26x2 TRNG, written from
 * TI SWCU185G's chapter "TRNG" and its register descriptions (no vendor code).
 *
 * The TRM's sequence: with CTL.TRNG_EN = 0, CFG0 sets the samples per number (MIN_REFILL_CYCLES x
 * 2^6 when nonzero, MAX_REFILL_CYCLES x 2^8) and SMPL_DIV; CTL sets STARTUP_CYCLES (x 2^8 samples for
 * the first number) and TRNG_EN. A 64-bit number is in OUT0/OUT1 while IRQFLAGSTAT.RDY = 1; writing
 * RDY to IRQFLAGCLR takes it and starts the next. Clocks and power domains (PRCM) are the board
 * start-up's.
 *
 * Configuration: 256 samples a number (MIN_REFILL_CYCLES 4, MAX_REFILL_CYCLES 1) and 256 to start,
 * one sample a clock (SMPL_DIV 0). This is the driver's choice, not a TRM recommendation and not
 * TI's driver's setting: a `random` cell's duration scales with it (docs/accelerators.md).
 *
 * Completion: polled (IRQFLAGSTAT read until RDY), or with CC26X2_COMPLETION_IRQ by interrupt:
 * TRNG_IRQ (NVIC interrupt 33, SWCU185G "Interrupts and Events") is RDY gated by IRQFLAGMASK, a level
 * that stays high until the number is taken; the driver unmasks RDY (IRQFLAGMASK) and waits in WFI,
 * and the handler (cc26x2_trng_irq, called by cc26x2_irq.c's fw_external_irq) masks it again so the
 * line falls before the driver reads OUT0/OUT1. Interrupts are masked around the test of RDY so an
 * end between the test and the WFI is not lost (ARMv7-M ARM B1.5.19). */
#include "cc26x2_trng.h"

#define TRNG 0x40028000u                            /* SWCU185G memory map */
#define R(o) (*(volatile uint32_t *)(TRNG + (o)))
#define OUT0 0x00u
#define OUT1 0x04u
#define IRQFLAGSTAT 0x08u
#define IRQFLAGMASK 0x0Cu
#define IRQFLAGCLR 0x10u
#define CTL 0x14u
#define CFG0 0x18u
#define RDY 1u
#define CTL_TRNG_EN (1u << 10)
#define STARTUP_CYCLES 1u                           /* x 2^8 samples: the first number */
#define MIN_REFILL_CYCLES 4u                        /* x 2^6 samples: each next number */
#define MAX_REFILL_CYCLES 1u                        /* x 2^8 samples (not below MIN's count) */
#define SMPL_DIV 0u                                 /* a sample every clock */

#ifdef CC26X2_COMPLETION_IRQ
#include "cc26x2_irq.h"

static volatile uint32_t ready;

/* TRNG_IRQ, called by fw_external_irq (cc26x2_irq.c): the line is RDY & IRQFLAGMASK and RDY stays
 * until the number is taken, so the handler masks it */
void cc26x2_trng_irq(void)
{
    R(IRQFLAGMASK) = 0;
    ready = 1;
}

static void wait_ready(void)
{
    __asm__ volatile("cpsid i" ::: "memory");
    ready = 0;
    CC26X2_NVIC_ENABLE(CC26X2_TRNG_IRQ);
    R(IRQFLAGMASK) = RDY;
    while (!ready)
        cc26x2_irq_sleep();
    __asm__ volatile("cpsie i" ::: "memory");
}
#else
static void wait_ready(void)
{
    while (!(R(IRQFLAGSTAT) & RDY)) {
    }
}
#endif

static void start(void)
{
    if (R(CTL) & CTL_TRNG_EN)
        return;
    R(CFG0) = MAX_REFILL_CYCLES << 16 | SMPL_DIV << 8 | MIN_REFILL_CYCLES;
    R(CTL) = STARTUP_CYCLES << 16 | CTL_TRNG_EN;
}

int cc26x2_trng_read(uint8_t *out, size_t len)
{
    start();
    while (len) {
        wait_ready();
        uint32_t w[2] = {R(OUT0), R(OUT1)};
        R(IRQFLAGCLR) = RDY;                        /* take it: the next number starts */
        for (size_t i = 0; i < 8 && len; i++, len--)
            *out++ = (uint8_t)(w[i / 4] >> (8 * (i % 4)));
    }
    return 0;
}
