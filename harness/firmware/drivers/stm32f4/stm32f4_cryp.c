/* stm32f4_cryp.c - cryptobench's own register-level driver for the STM32F4 CRYP processor,
 * written from ST RM0090 Rev 11 chapter 23 (no vendor code).
 *
 * RM0090 23.3: with CRYPEN clear, the key goes to CRYP_K0LR..K3RR (its most significant word in
 * the highest register the key size uses), the IV to CRYP_IV0LR..IV1RR, CRYP_CR gets ALGOMODE,
 * KEYSIZE and DATATYPE = 8-bit data (each word the 4 message bytes as little-endian memory holds
 * them), FFLUSH empties the FIFOs, CRYPEN starts it; then each block is 4 words into CRYP_DIN
 * (waiting while the IN FIFO is full, IFNF = 0) and 4 words out of CRYP_DOUT (waiting for OFNE).
 * Encryption needs no key preparation (ALGOMODE = 111 is for decryption).
 *
 * Completion: OFNE polled, or with STM32F4_COMPLETION_IRQ by interrupt (RM0090 23.5 'CRYP
 * interrupts', 23.6.5-23.6.7): after a block's 4 words, OUTIM in CRYP_IMSCR, the core waiting in WFI
 * for CRYP (NVIC interrupt 79, stm32f4_irq.c) and the handler masking OUTIM once CRYP_MISR shows
 * OUTMIS (the output FIFO not empty). */
#include <string.h>

#include "stm32f4_cryp.h"
#include "stm32f4_irq.h"

#define CRYP_BASE 0x50060000u                      /* RM0090 2.3, AHB2 */
#define CRYP_REG(o) (*(volatile uint32_t *)(CRYP_BASE + (o)))
#define CRYP_CR CRYP_REG(0x00)
#define CRYP_SR CRYP_REG(0x04)
#define CRYP_DIN CRYP_REG(0x08)
#define CRYP_DOUT CRYP_REG(0x0C)
#define CRYP_IMSCR CRYP_REG(0x14)
#define CRYP_MISR CRYP_REG(0x1C)
#define CRYP_K(i) CRYP_REG(0x20 + 4u * (i))        /* K0LR .. K3RR */
#define CRYP_IV(i) CRYP_REG(0x40 + 4u * (i))       /* IV0LR .. IV1RR */
#define CR_DATATYPE_8 (2u << 6)
#define CR_FFLUSH (1u << 14)
#define CR_CRYPEN (1u << 15)
#define SR_IFNF (1u << 1)
#define SR_OFNE (1u << 2)
#define IM_OUT (1u << 1)                           /* CRYP_IMSCR OUTIM, CRYP_MISR OUTMIS */

/* RCC_AHB2ENR.CRYPEN (RM0090 6.3.11): the processor's clock */
#define RCC_AHB2ENR (*(volatile uint32_t *)0x40023834u)
#define RCC_AHB2ENR_CRYPEN (1u << 4)

#ifdef STM32F4_COMPLETION_IRQ
static volatile uint32_t cryp_seen;                 /* CRYP_MISR bits the handler has taken */

void stm32f4_cryp_isr(void)
{
    uint32_t mis = CRYP_MISR;
    cryp_seen |= mis;
    CRYP_IMSCR &= ~mis;                            /* OUTRIS stays high until DOUT is read: mask it */
}

/* until the block is in the OUT FIFO: OUTIM set, then WFI until the handler saw OUTMIS. The
 * processor puts a block's 4 words into the FIFO together, so they are read without polling. */
static void wait_block(void)
{
    CRYP_IMSCR = IM_OUT;
    stm32f4_irq_wait(&cryp_seen, IM_OUT);
}

static void wait_word(void)
{
}
#else
static void wait_block(void)
{
}

static void wait_word(void)
{
    while (!(CRYP_SR & SR_OFNE)) {
    }
}
#endif

static uint32_t be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

int stm32f4_cryp_encrypt(uint32_t mode, const uint8_t *key, size_t key_len, const uint8_t *iv, const uint8_t *in,
                         uint8_t *out, size_t len)
{
    uint32_t keysize = key_len == 16 ? 0u : key_len == 24 ? 1u : key_len == 32 ? 2u : 3u;
    if (keysize == 3u || len % 16)
        return -1;
    RCC_AHB2ENR |= RCC_AHB2ENR_CRYPEN;
    CRYP_CR = 0;
    CRYP_IMSCR = 0;
#ifdef STM32F4_COMPLETION_IRQ
    cryp_seen = 0;
    stm32f4_irq_enable(STM32F4_CRYP_IRQ);
#endif
    uint32_t words = (uint32_t)key_len / 4u;
    for (uint32_t i = 0; i < words; i++)
        CRYP_K(8u - words + i) = be32(key + 4 * i);
    if (mode == STM32F4_CRYP_CBC)
        for (uint32_t i = 0; i < 4; i++)
            CRYP_IV(i) = be32(iv + 4 * i);
    uint32_t cr = (mode << 3) | (keysize << 8) | CR_DATATYPE_8;
    CRYP_CR = cr | CR_FFLUSH;
    CRYP_CR = cr | CR_CRYPEN;
    for (size_t i = 0; i < len; i += 16) {
        for (size_t k = 0; k < 16; k += 4) {
            uint32_t w;
            memcpy(&w, in + i + k, 4);
            while (!(CRYP_SR & SR_IFNF)) {
            }
            CRYP_DIN = w;
        }
        wait_block();
        for (size_t k = 0; k < 16; k += 4) {
            wait_word();
            uint32_t w = CRYP_DOUT;
            memcpy(out + i + k, &w, 4);
        }
    }
    CRYP_CR = 0;
    return 0;
}
