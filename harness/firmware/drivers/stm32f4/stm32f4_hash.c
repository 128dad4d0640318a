/* stm32f4_hash.c - cryptobench's own register-level driver for the STM32F4 hash processor,
 * written from ST RM0090 Rev 11 chapter 25 (no vendor code).
 *
 * The message goes in 32 bits at a time with DATATYPE = 8-bit data (25.3.2: the bytes of a word
 * as little-endian memory holds them). RM0090 25.3.3: a 512-bit block is processed once the next
 * block's first word is written, after which "the software must wait until the processor is
 * ready again (when DINIS=1) before writing new data into HASH_DIN"; the last word's valid bits go
 * to HASH_STR.NBLW and DCAL starts the final digest; DCIS says it is ready in HASH_HR0-7.
 * Completion is polled (the interrupt mode comes with the interrupt model). */
#include <string.h>

#include "stm32f4_hash.h"

#define HASH_BASE 0x50060400u                      /* RM0090 2.3, AHB2 */
#define HASH_REG(o) (*(volatile uint32_t *)(HASH_BASE + (o)))
#define HASH_CR HASH_REG(0x00)
#define HASH_DIN HASH_REG(0x04)
#define HASH_STR HASH_REG(0x08)
#define HASH_SR HASH_REG(0x24)
#define HASH_HR(i) HASH_REG(0x310 + 4u * (i))      /* HASH_HR0-7 (25.4.8) */
#define CR_INIT (1u << 2)
#define CR_DATATYPE_8 (2u << 4)
#define STR_DCAL (1u << 8)
#define SR_DINIS (1u << 0)
#define SR_DCIS (1u << 1)

/* RCC_AHB2ENR.HASHEN (RM0090 6.3.11): the processor's clock; the model needs none, a part does. */
#define RCC_AHB2ENR (*(volatile uint32_t *)0x40023834u)
#define RCC_AHB2ENR_HASHEN (1u << 5)

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
            while (!(HASH_SR & SR_DINIS)) {
            }
            in_block = 1;
        }
    }
    HASH_STR = 8u * (uint32_t)(len % 4);           /* NBLW: valid bits of the last word, 0 = 32 */
    HASH_STR = 8u * (uint32_t)(len % 4) | STR_DCAL;
    while (!(HASH_SR & SR_DCIS)) {
    }
    for (size_t k = 0; k < digest_len / 4; k++) {
        uint32_t h = HASH_HR(k);
        digest[4 * k] = (uint8_t)(h >> 24);
        digest[4 * k + 1] = (uint8_t)(h >> 16);
        digest[4 * k + 2] = (uint8_t)(h >> 8);
        digest[4 * k + 3] = (uint8_t)h;
    }
    return 0;
}
