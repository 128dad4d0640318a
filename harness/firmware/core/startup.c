/* startup.c - vector table and reset for any Cortex-M: copy .data, zero .bss, enable the FPU
 * where the build uses it, run main. A fault prints one protocol line and stops the target. */
#include <stdint.h>

#include "hal.h"

extern uint32_t __data_load, __data_start, __data_end, __bss_start, __bss_end, __stack_top;
int main(void);
void fw_fault(const char *kind, const uint32_t *frame);

void Reset_Handler(void)
{
    uint32_t *src = &__data_load, *dst = &__data_start;
    while (dst < &__data_end)
        *dst++ = *src++;
    for (dst = &__bss_start; dst < &__bss_end;)
        *dst++ = 0;
#if defined(__ARM_FP)
    *(volatile uint32_t *)0xE000ED88 |= 0xFu << 20;   /* CPACR: CP10, CP11 full access */
    __asm__ volatile("dsb\n\tisb");
#endif
    hal_exit(main());
}

/* The stacked exception frame (r0-r3, r12, lr, pc, xpsr) of whichever stack was in use. */
#define FAULT_HANDLER(name, kind)                                               \
    __attribute__((naked)) void name(void)                                      \
    {                                                                           \
        __asm__ volatile("mov r0, lr\n\t"                                       \
                         "movs r1, #4\n\t"                                      \
                         "tst r0, r1\n\t"                                       \
                         "beq 1f\n\t"                                           \
                         "mrs r1, psp\n\t"                                      \
                         "b 2f\n"                                               \
                         "1:\n\t"                                               \
                         "mrs r1, msp\n"                                        \
                         "2:\n\t"                                               \
                         "ldr r0, =" #kind "_str\n\t"                           \
                         "ldr r2, =fw_fault\n\t"                                \
                         "bx r2\n\t");                                          \
    }

const char hardfault_str[] = "hardfault";
const char nmi_str[] = "nmi";
const char unexpected_str[] = "unexpected-interrupt";
FAULT_HANDLER(HardFault_Handler, hardfault)
FAULT_HANDLER(NMI_Handler, nmi)
FAULT_HANDLER(Default_Handler, unexpected)

void SysTick_Handler(void) __attribute__((weak, alias("Default_Handler")));
/* every external interrupt: a driver that completes by interrupt defines it (reading IPSR for
 * which); otherwise it is an unexpected interrupt */
void fw_external_irq(void) __attribute__((weak, alias("Default_Handler")));

/* the part's external interrupts (the board's external_irqs, boards.toml); 32 by default */
#ifndef FW_EXTERNAL_IRQS
#define FW_EXTERNAL_IRQS 32
#endif

__attribute__((section(".isr_vector"), used))
void (*const vector_table[16 + FW_EXTERNAL_IRQS])(void) = {
    (void (*)(void))(uintptr_t)&__stack_top,
    Reset_Handler,
    NMI_Handler,
    HardFault_Handler,
    HardFault_Handler,      /* MemManage: reported as a hard fault */
    HardFault_Handler,      /* BusFault */
    HardFault_Handler,      /* UsageFault */
    0, 0, 0, 0,
    Default_Handler,        /* SVC */
    Default_Handler,        /* DebugMon */
    0,
    Default_Handler,        /* PendSV */
    SysTick_Handler,
    [16 ... 15 + FW_EXTERNAL_IRQS] = fw_external_irq,
};
