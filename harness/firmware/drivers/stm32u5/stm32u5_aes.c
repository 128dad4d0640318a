/* stm32u5_aes.c - cryptobench's own register-level driver for the STM32U5's AES and SAES, written
 * from ST RM0456 ("AES hardware accelerator", "Secure AES coprocessor") with the register layout of
 * ST's STM32U585 SVD (no vendor code). The two engines share their programming model for ECB and
 * CBC encryption, so one function drives either, by its base address:
 *
 *   with EN clear: CR = KEYSIZE, CHMOD, MODE = 00 (encryption), DATATYPE = 10 (bytes: each word the
 *   4 message bytes as little-endian memory holds them); the key into KEYR0.. (KEYR0 its least
 *   significant word, KEYR3 or KEYR7 its first), written in that order; for CBC the IV into IVR0..3
 *   (IVR3 its first word); then EN. Each block: 4 words into DINR, CCF polled (SR), CCF cleared
 *   (ICR), 4 words out of DOUTR. EN is cleared at the end.
 *
 * The SAES may be busy after its reset (it fetches random numbers for its countermeasures), so the
 * driver waits for SR.BUSY = 0 before configuring either engine. */
#include <string.h>

#include "stm32u5_aes.h"

#define REG(base, o) (*(volatile uint32_t *)((base) + (o)))
#define AES_CR(b) REG(b, 0x00)
#define AES_SR(b) REG(b, 0x04)
#define AES_DINR(b) REG(b, 0x08)
#define AES_DOUTR(b) REG(b, 0x0C)
#define AES_KEYR(b, i) REG(b, (i) < 4 ? 0x10 + 4u * (i) : 0x30 + 4u * ((i) - 4))
#define AES_IVR(b, i) REG(b, 0x20 + 4u * (i))
#define AES_ISR(b) REG(b, 0x304)
#define AES_ICR(b) REG(b, 0x308)
#define CR_EN (1u << 0)
#define CR_DATATYPE_BYTE (2u << 1)
#define CR_CHMOD(m) ((m) << 5)
#define CR_KEYSIZE_256 (1u << 18)
#define SR_CCF (1u << 0)
#define SR_BUSY (1u << 3)
#define ISR_CCF (1u << 0)
#define ISR_KEIF (1u << 2)

/* RCC_AHB2ENR1 (RCC at 0x46020C00, offset 0x8C): AESEN bit 16, SAESEN bit 20 (STM32U585 SVD) */
#define RCC_AHB2ENR1 (*(volatile uint32_t *)0x46020C8Cu)
#define RCC_AHB2ENR1_AESEN (1u << 16)
#define RCC_AHB2ENR1_SAESEN (1u << 20)

static uint32_t be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

int stm32u5_aes_encrypt(uint32_t base, uint32_t chmod, const uint8_t *key, size_t key_len, const uint8_t *iv,
                        const uint8_t *in, uint8_t *out, size_t len)
{
    if ((key_len != 16 && key_len != 32) || len % 16 || (chmod != STM32U5_AES_ECB && chmod != STM32U5_AES_CBC))
        return -1;
    RCC_AHB2ENR1 |= base == STM32U5_SAES_BASE ? RCC_AHB2ENR1_SAESEN : RCC_AHB2ENR1_AESEN;
    while (AES_SR(base) & SR_BUSY) {
    }
    AES_CR(base) = 0;
    AES_ICR(base) = 0x7u;                              /* CCF, RWEIF, KEIF */
    AES_CR(base) = CR_CHMOD(chmod) | CR_DATATYPE_BYTE | (key_len == 32 ? CR_KEYSIZE_256 : 0);
    uint32_t words = (uint32_t)key_len / 4u;
    for (uint32_t i = 0; i < words; i++)
        AES_KEYR(base, i) = be32(key + key_len - 4u * (i + 1));
    if (chmod == STM32U5_AES_CBC)
        for (uint32_t i = 0; i < 4; i++)
            AES_IVR(base, i) = be32(iv + 12u - 4u * i);
    AES_CR(base) |= CR_EN;
    if (AES_ISR(base) & ISR_KEIF) {                    /* the key was not taken: EN stays clear */
        AES_ICR(base) = ISR_KEIF;
        return -1;
    }
    for (size_t i = 0; i < len; i += 16) {
        for (size_t k = 0; k < 16; k += 4) {
            uint32_t w;
            memcpy(&w, in + i + k, 4);
            AES_DINR(base) = w;
        }
        while (!(AES_SR(base) & SR_CCF)) {
        }
        AES_ICR(base) = ISR_CCF;
        for (size_t k = 0; k < 16; k += 4) {
            uint32_t w = AES_DOUTR(base);
            memcpy(out + i + k, &w, 4);
        }
    }
    AES_CR(base) = 0;
    return 0;
}
