/* hal_cortexm.c - console and cycle counter for any Cortex-M, selected at build time:
 *
 *   FW_CONSOLE_SEMIHOSTING   lines go out through SYS_WRITE0 (QEMU -semihosting, pyOCD, simulator)
 *   FW_CONSOLE_CMSDK_UART=a  ARM CMSDK APB UART at address a (MPS2 boards: UART0 0x40004000)
 *   FW_CONSOLE_NRF_UART=a    nRF51/nRF52 UART (legacy, non-DMA) at address a (micro:bit 0x40002000)
 *   FW_COUNTER_DWT           DWT CYCCNT (Cortex-M3/M4/M7)
 *   FW_COUNTER_SYSTICK       SysTick, 24-bit, counting down, extended by an overflow count
 *                            kept by its interrupt (Cortex-M0/M0+, which have no DWT counter)
 *   FW_MARKER_*              a GPIO raised around every timed repetition (boards.toml `marker`):
 *                            FW_MARKER_INIT read-modify-writes {addr, clear, set} at start, then
 *                            plain writes FW_MARKER_SET_VAL / FW_MARKER_CLR_VAL to the set / clear
 *                            registers (STM32 BSRR, nRF OUTSET/OUTCLR style)
 */
#include "hal.h"
#include "semihost.h"

#define REG(a) (*(volatile uint32_t *)(a))

/* ---- console ------------------------------------------------------------------------------ */

#if defined(FW_CONSOLE_CMSDK_UART)
#define UART_DATA REG(FW_CONSOLE_CMSDK_UART + 0x00)
#define UART_STATE REG(FW_CONSOLE_CMSDK_UART + 0x04)
#define UART_CTRL REG(FW_CONSOLE_CMSDK_UART + 0x08)
#define UART_BAUDDIV REG(FW_CONSOLE_CMSDK_UART + 0x10)

static void console_init(void)
{
    UART_BAUDDIV = 16;
    UART_CTRL = 1;                      /* TX enable */
}

static void console_putc(char c)
{
    while (UART_STATE & 1)              /* TX buffer full */
        ;
    UART_DATA = (uint8_t)c;
}
#elif defined(FW_CONSOLE_NRF_UART)
#define NRF_STARTTX REG(FW_CONSOLE_NRF_UART + 0x008)
#define NRF_TXDRDY REG(FW_CONSOLE_NRF_UART + 0x11C)
#define NRF_ENABLE REG(FW_CONSOLE_NRF_UART + 0x500)
#define NRF_TXD REG(FW_CONSOLE_NRF_UART + 0x51C)

static void console_init(void)
{
    NRF_ENABLE = 4;
    NRF_STARTTX = 1;
}

static void console_putc(char c)
{
    NRF_TXDRDY = 0;
    NRF_TXD = (uint8_t)c;
    while (!NRF_TXDRDY)
        ;
}
#endif

void hal_puts(const char *s)
{
#if defined(FW_CONSOLE_SEMIHOSTING)
    semihost_call(SH_SYS_WRITE0, s);
#else
    while (*s)
        console_putc(*s++);
#endif
}

/* ---- cycle counter ------------------------------------------------------------------------ */

#if defined(FW_COUNTER_DWT)
#define DEMCR REG(0xE000EDFC)
#define DWT_CTRL REG(0xE0001000)
#define DWT_CYCCNT REG(0xE0001004)

static void counter_init(void)
{
    DEMCR |= 1u << 24;                  /* TRCENA */
    DWT_CYCCNT = 0;
    DWT_CTRL |= 1u;                     /* CYCCNTENA */
}

uint32_t hal_cycles(void)
{
    return DWT_CYCCNT;
}

const char *hal_counter_name(void)
{
    return "dwt";
}
#elif defined(FW_COUNTER_SYSTICK)
#define SYST_CSR REG(0xE000E010)
#define SYST_RVR REG(0xE000E014)
#define SYST_CVR REG(0xE000E018)
#define SYST_TOP 0x00FFFFFFu

static volatile uint32_t systick_wraps;

void SysTick_Handler(void)
{
    systick_wraps++;
}

static void counter_init(void)
{
    SYST_RVR = SYST_TOP;
    SYST_CVR = 0;
    SYST_CSR = 7;                       /* processor clock, interrupt, enable */
}

uint32_t hal_cycles(void)
{
    uint32_t hi, lo;
    do {                                /* a wrap between the two reads: read again */
        hi = systick_wraps;
        lo = SYST_CVR;
    } while (hi != systick_wraps);
    return hi * (SYST_TOP + 1) + (SYST_TOP - lo);
}

const char *hal_counter_name(void)
{
    return "systick";
}
#else
static void counter_init(void)
{
}

uint32_t hal_cycles(void)
{
    return 0;
}

const char *hal_counter_name(void)
{
    return "none";
}
#endif

/* ---- marker GPIO --------------------------------------------------------------------------- */

#if defined(FW_MARKER_SET_ADDR)
static void marker_init(void)
{
    static const uint32_t ops[][3] = FW_MARKER_INIT;
    for (int i = 0; i < FW_MARKER_INIT_N; i++)
        REG(ops[i][0]) = (REG(ops[i][0]) & ~ops[i][1]) | ops[i][2];
    REG(FW_MARKER_CLR_ADDR) = FW_MARKER_CLR_VAL;
}

void hal_marker(int high)
{
    if (high)
        REG(FW_MARKER_SET_ADDR) = FW_MARKER_SET_VAL;
    else
        REG(FW_MARKER_CLR_ADDR) = FW_MARKER_CLR_VAL;
}
#else
static void marker_init(void)
{
}

void hal_marker(int high)
{
    (void)high;
}
#endif

void hal_init(void)
{
    marker_init();
#if !defined(FW_CONSOLE_SEMIHOSTING)
    console_init();
#endif
    counter_init();
}

void hal_exit(int code)
{
#if defined(FW_EXIT_SEMIHOSTING)
    semihost_call(SH_SYS_EXIT, (const void *)(uintptr_t)(code == 0 ? SH_ADP_STOPPED_APPLICATION_EXIT
                                                                    : SH_ADP_STOPPED_RUNTIME_ERROR));
#endif
    (void)code;
    for (;;)
        __asm__ volatile("wfi");
}
