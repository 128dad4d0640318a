/* stm32u5_aes.h - cryptobench's own register-level driver for the STM32U5's AES hardware
 * accelerator (AES) and secure AES coprocessor (SAES), written from ST RM0456 and the STM32U585
 * SVD's register layout. See stm32u5_aes.c. */
#ifndef CB_STM32U5_AES_H
#define CB_STM32U5_AES_H

#include <stddef.h>
#include <stdint.h>

#define STM32U5_AES_BASE 0x420C0000u     /* AHB2, non-secure alias (STM32U585 SVD) */
#define STM32U5_SAES_BASE 0x420C0C00u
#define STM32U5_AES_ECB 0u               /* AES_CR CHMOD[1:0] */
#define STM32U5_AES_CBC 1u

/* AES encryption of len bytes (a multiple of 16) in ECB or CBC on the engine at `base`, with a 16-
 * or 32-byte key; iv is 16 bytes (CBC). The core writes AES_DINR and reads AES_DOUTR, CCF polled.
 * Returns 0, or -1 for a size the engine does not take or a key error (ISR.KEIF). */
int stm32u5_aes_encrypt(uint32_t base, uint32_t chmod, const uint8_t *key, size_t key_len, const uint8_t *iv,
                        const uint8_t *in, uint8_t *out, size_t len);

#endif
