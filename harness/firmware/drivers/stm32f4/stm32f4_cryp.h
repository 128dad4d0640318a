/* stm32f4_cryp.h - cryptobench's own register-level driver for the STM32F4 cryptographic
 * processor (CRYP), written from ST RM0090 Rev 11 chapter 23. See stm32f4_cryp.c. */
#ifndef CB_STM32F4_CRYP_H
#define CB_STM32F4_CRYP_H

#include <stddef.h>
#include <stdint.h>

#define STM32F4_CRYP_ECB 4u       /* CRYP_CR ALGOMODE[2:0] (RM0090 23.6.1) */
#define STM32F4_CRYP_CBC 5u

/* AES encryption of len bytes (a multiple of 16) in ECB or CBC with a 16/24/32-byte key; iv is
 * 16 bytes (CBC). The core feeds CRYP_DIN and reads CRYP_DOUT, IFNF/OFNE polled. Returns 0, or -1
 * for a size the processor does not take. */
int stm32f4_cryp_encrypt(uint32_t mode, const uint8_t *key, size_t key_len, const uint8_t *iv, const uint8_t *in,
                         uint8_t *out, size_t len);

#endif
