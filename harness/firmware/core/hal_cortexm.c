/* hal_cortexm.c - console and cycle counter for any Cortex-M, selected at build time:
 *
 *   FW_CONSOLE_SEMIHOSTING   lines go out through SYS_WRITE0 (QEMU -semihosting, pyOCD, simulator)
 *   FW_CONSOLE_CMSDK_UART=a  ARM CMSDK APB UART at address a (MPS2 boards: UART0 0x40004000)
 *   FW_CONSOLE_NRF_UART=a    nRF51/nRF52 UART (legacy, non-DMA) at address a (micro:bit 0x40002000)
 *   FW_CONSOLE_STM32_USART=a STM32F1/F2/F4 USART (SR 0x00, DR 0x04, BRR 0x08, CR1 0x0C; RM0008 27.6,
 *                            RM0090 30.6, RM0368 19.6)
 *   FW_CONSOLE_STM32F0_USART=a  STM32F0/F3/F7/L4 USART (CR1 0x00, BRR 0x0C, ISR 0x1C, TDR 0x28;
 *                            RM0360 23.7)
 *   FW_CONSOLE_NRF_UARTE=a   nRF52 UARTE (EasyDMA) at address a (nRF52840 PS v1.7 6.34: UARTE0 0x40002000)
 *   FW_CONSOLE_CC26X2_UART=a CC13x2/CC26x2 UART0 (a PL011-style UART; TI SWCU185 chapter 19: 0x40001000)
 *   FW_CONSOLE_DIV           the baud divisor for the UART's clock (computed by targets/mcu/firmware/build.py:
 *                            STM32 BRR; PL011 64 * IBRD + FBRD; nRF BAUDRATE register value)
 *   FW_CONSOLE_INIT, _N      {address, clear, set, wait} steps run once before the console is used
 *                            (boards.toml console.init): clock gates, pin multiplexing, pin select.
 *                            wait = 0: read-modify-write; wait = 1: spin until (reg & clear) == set
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
#elif defined(FW_CONSOLE_STM32_USART)
#define USART_SR REG(FW_CONSOLE_STM32_USART + 0x00)
#define USART_DR REG(FW_CONSOLE_STM32_USART + 0x04)
#define USART_BRR REG(FW_CONSOLE_STM32_USART + 0x08)
#define USART_CR1 REG(FW_CONSOLE_STM32_USART + 0x0C)

static void console_init(void)
{
    USART_BRR = FW_CONSOLE_DIV;         /* oversampling by 16: BRR = f_ck / baud */
    USART_CR1 = (1u << 13) | (1u << 3) | (1u << 2);   /* UE, TE, RE; 8N1 */
}

static void console_putc(char c)
{
    while (!(USART_SR & (1u << 7)))     /* TXE */
        ;
    USART_DR = (uint8_t)c;
}

static void console_flush(void)
{
    while (!(USART_SR & (1u << 6)))     /* TC: the last byte has left the shift register */
        ;
}
#elif defined(FW_CONSOLE_STM32F0_USART)
#define USART_CR1 REG(FW_CONSOLE_STM32F0_USART + 0x00)
#define USART_BRR REG(FW_CONSOLE_STM32F0_USART + 0x0C)
#define USART_ISR REG(FW_CONSOLE_STM32F0_USART + 0x1C)
#define USART_TDR REG(FW_CONSOLE_STM32F0_USART + 0x28)

static void console_init(void)
{
    USART_CR1 = 0;                      /* BRR is written with the USART disabled */
    USART_BRR = FW_CONSOLE_DIV;
    USART_CR1 = (1u << 3) | (1u << 2) | 1u;           /* TE, RE, UE; 8N1 */
}

static void console_putc(char c)
{
    while (!(USART_ISR & (1u << 7)))    /* TXE */
        ;
    USART_TDR = (uint8_t)c;
}

static void console_flush(void)
{
    while (!(USART_ISR & (1u << 6)))    /* TC */
        ;
}
#elif defined(FW_CONSOLE_NRF_UARTE)
#define UARTE_STARTTX REG(FW_CONSOLE_NRF_UARTE + 0x008)
#define UARTE_ENDTX REG(FW_CONSOLE_NRF_UARTE + 0x120)
#define UARTE_ENABLE REG(FW_CONSOLE_NRF_UARTE + 0x500)
#define UARTE_BAUDRATE REG(FW_CONSOLE_NRF_UARTE + 0x524)
#define UARTE_CONFIG REG(FW_CONSOLE_NRF_UARTE + 0x56C)
#define UARTE_TXD_PTR REG(FW_CONSOLE_NRF_UARTE + 0x544)
#define UARTE_TXD_MAXCNT REG(FW_CONSOLE_NRF_UARTE + 0x548)

/* EasyDMA reads RAM only: a line is copied here (from flash or stack) and sent in chunks */
static uint8_t uarte_buf[64];
static unsigned uarte_n;

static void console_init(void)
{
    UARTE_BAUDRATE = FW_CONSOLE_DIV;
    UARTE_CONFIG = 0;                   /* no parity, no flow control */
    UARTE_ENABLE = 8;                   /* ENABLE = Enabled (UARTE) */
}

static void console_flush(void)
{
    if (!uarte_n)
        return;
    UARTE_ENDTX = 0;
    UARTE_TXD_PTR = (uint32_t)(uintptr_t)uarte_buf;
    UARTE_TXD_MAXCNT = uarte_n;
    UARTE_STARTTX = 1;
    while (!UARTE_ENDTX)
        ;
    uarte_n = 0;
}

static void console_putc(char c)
{
    uarte_buf[uarte_n++] = (uint8_t)c;
    if (uarte_n == sizeof uarte_buf)
        console_flush();
}
#elif defined(FW_CONSOLE_CC26X2_UART)
#define UART0_DR REG(FW_CONSOLE_CC26X2_UART + 0x000)
#define UART0_FR REG(FW_CONSOLE_CC26X2_UART + 0x018)
#define UART0_IBRD REG(FW_CONSOLE_CC26X2_UART + 0x024)
#define UART0_FBRD REG(FW_CONSOLE_CC26X2_UART + 0x028)
#define UART0_LCRH REG(FW_CONSOLE_CC26X2_UART + 0x02C)
#define UART0_CTL REG(FW_CONSOLE_CC26X2_UART + 0x030)

static void console_init(void)
{
    UART0_CTL = 0;
    UART0_IBRD = (FW_CONSOLE_DIV) >> 6;                /* divisor in 64ths of f / (16 baud) */
    UART0_FBRD = (FW_CONSOLE_DIV) & 63;
    UART0_LCRH = (3u << 5) | (1u << 4);                /* 8 bits, FIFOs on (LCRH after the divisors) */
    UART0_CTL = (1u << 9) | (1u << 8) | 1u;            /* RXE, TXE, UARTEN */
}

static void console_putc(char c)
{
    while (UART0_FR & (1u << 5))        /* TXFF */
        ;
    UART0_DR = (uint8_t)c;
}

static void console_flush(void)
{
    while (UART0_FR & (1u << 3))        /* BUSY */
        ;
}
#endif

#if !defined(FW_CONSOLE_SEMIHOSTING) && !defined(FW_CONSOLE_STM32_USART) && !defined(FW_CONSOLE_STM32F0_USART) \
    && !defined(FW_CONSOLE_NRF_UARTE) && !defined(FW_CONSOLE_CC26X2_UART)
static void console_flush(void)
{
}
#endif

#if defined(FW_CONSOLE_INIT_N)
/* The board's console set-up steps (boards.toml console.init): clocks, pins, pin select. */
static void console_board_init(void)
{
    static const uint32_t steps[][4] = FW_CONSOLE_INIT;
    for (int i = 0; i < FW_CONSOLE_INIT_N; i++) {
        if (steps[i][3])
            while ((REG(steps[i][0]) & steps[i][1]) != steps[i][2])
                ;
        else
            REG(steps[i][0]) = (REG(steps[i][0]) & ~steps[i][1]) | steps[i][2];
    }
}
#elif !defined(FW_CONSOLE_SEMIHOSTING)
static void console_board_init(void)
{
}
#endif

void hal_puts(const char *s)
{
#if defined(FW_CONSOLE_SEMIHOSTING)
    semihost_call(SH_SYS_WRITE0, s);
#else
    while (*s)
        console_putc(*s++);
    console_flush();                    /* a line is out before the next step (or the exit) */
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
#if !defined(FW_CONSOLE_SEMIHOSTING)
    console_board_init();               /* first: on the CC26x2 it also powers the marker's GPIO */
#endif
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
