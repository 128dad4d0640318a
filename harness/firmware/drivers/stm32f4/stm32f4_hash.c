/* stm32f4_hash.c - cryptobench's own register-level driver for the STM32F4 hash processor,
 * written from ST RM0090 Rev 11 chapter 25 (no vendor code).
 *
 * The message goes in 32 bits at a time with DATATYPE = 8-bit data (25.3.2: the bytes of a word
 * as little-endian memory holds them). RM0090 25.3.3: a 512-bit block is processed once the next
 * block's first word is written, after which "the software must wait until the processor is
 * ready again (when DINIS=1) before writing new data into HASH_DIN"; the last word's valid bits go
 * to HASH_STR.NBLW and DCAL starts the final digest; DCIS says it is ready in HASH_HR0-7.
 * Completion is polled, or with STM32F4_COMPLETION_IRQ by interrupt (RM0090 25.3.6 and 25.4.6): DINIE
 * or DCIE in HASH_IMR, HASH_RNG (NVIC interrupt 80, shared with the RNG), the core waiting in WFI
 * (stm32f4_irq.c) and the handler masking the source it found. */
#include <string.h>

#include "stm32f4_hash.h"
#include "stm32f4_irq.h"

#define HASH_BASE 0x50060400u                      /* RM0090 2.3, AHB2 */
#define HASH_REG(o) (*(volatile uint32_t *)(HASH_BASE + (o)))
#define HASH_CR HASH_REG(0x00)
#define HASH_DIN HASH_REG(0x04)
#define HASH_STR HASH_REG(0x08)
#define HASH_IMR HASH_REG(0x20)
#define HASH_SR HASH_REG(0x24)
#define HASH_HR(i) HASH_REG(0x310 + 4u * (i))      /* HASH_HR0-7 (25.4.8) */
#define CR_INIT (1u << 2)
#define CR_DATATYPE_8 (2u << 4)
#define STR_DCAL (1u << 8)
#define SR_DINIS (1u << 0)
#define SR_DCIS (1u << 1)
#define IMR_DINIE (1u << 0)                        /* HASH_IMR (25.4.6): the same bits as DINIS, DCIS */
#define IMR_DCIE (1u << 1)

/* RCC_AHB2ENR.HASHEN (RM0090 6.3.11): the processor's clock; the model needs none, a part does. */
#define RCC_AHB2ENR (*(volatile uint32_t *)0x40023834u)
#define RCC_AHB2ENR_HASHEN (1u << 5)

#ifdef STM32F4_COMPLETION_IRQ
static volatile uint32_t hash_seen;                 /* HASH_SR bits the handler has taken */

void stm32f4_hash_isr(void)
{
    if (!(RCC_AHB2ENR & RCC_AHB2ENR_HASHEN))
        return;                                    /* the shared line was the RNG's; the HASH is off */
    uint32_t imr = HASH_IMR, found = HASH_SR & imr & (SR_DINIS | SR_DCIS);
    hash_seen |= found;
    HASH_IMR = imr & ~found;                       /* the line stays high while the status does: mask it */
}

/* until HASH_SR has `bit`: the matching HASH_IMR bit set, then WFI until the handler saw it */
static void wait_for(uint32_t bit)
{
    HASH_IMR = bit;
    stm32f4_irq_wait(&hash_seen, bit);
}
#else
static void wait_for(uint32_t bit)
{
    while (!(HASH_SR & bit)) {
    }
}
#endif

static uint32_t load_le(const uint8_t *p, size_t n)
{
    uint32_t w = 0;
    for (size_t k = 0; k < n; k++)
        w |= (uint32_t)p[k] << (8 * k);
    return w;
}

int stm32f4_hash(uint32_t algo, const uint8_t *msg, size_t len, uint8_t *digest, size_t digest_len)
{
    RCC_AHB2ENR |= RCC_AHB2ENR_HASHEN;
    HASH_IMR = 0;
#ifdef STM32F4_COMPLETION_IRQ
    hash_seen = 0;
    stm32f4_irq_enable(STM32F4_HASH_RNG_IRQ);
#endif
    HASH_CR = CR_INIT | CR_DATATYPE_8 | algo;
    size_t whole = len / 4, in_block = 0;
    for (size_t i = 0; i <= whole; i++) {
        uint32_t w;
        if (i < whole)      /* one (possibly unaligned) load: the Cortex-M4 is little-endian, as 8-bit data expects */
            memcpy(&w, msg + 4 * i, 4);
        else if (len % 4)
            w = load_le(msg + 4 * i, len % 4);
        else
            break;
        HASH_DIN = w;
        if (++in_block == 17) {                    /* the 17th word started the block's processing */
            wait_for(SR_DINIS);
            in_block = 1;
        }
    }
    HASH_STR = 8u * (uint32_t)(len % 4);           /* NBLW: valid bits of the last word, 0 = 32 */
#ifdef STM32F4_COMPLETION_IRQ
    HASH_IMR = IMR_DCIE;                           /* before DCAL: the digest's interrupt cannot be missed */
#endif
    HASH_STR = 8u * (uint32_t)(len % 4) | STR_DCAL;
    wait_for(SR_DCIS);
    for (size_t k = 0; k < digest_len / 4; k++) {
        uint32_t h = HASH_HR(k);
        digest[4 * k] = (uint8_t)(h >> 24);
        digest[4 * k + 1] = (uint8_t)(h >> 16);
        digest[4 * k + 2] = (uint8_t)(h >> 8);
        digest[4 * k + 3] = (uint8_t)h;
    }
    return 0;
}
