/* stm32f4_hash.h - cryptobench's own register-level driver for the STM32F4 hash processor
 * (HASH), written from ST RM0090 Rev 11 chapter 25. See stm32f4_hash.c. */
#ifndef CB_STM32F4_HASH_H
#define CB_STM32F4_HASH_H

#include <stddef.h>
#include <stdint.h>

/* HASH_CR ALGO[1:0] (bits 18 and 7), RM0090 25.4.1 */
#define STM32F4_HASH_SHA1 0x00000000u
#define STM32F4_HASH_MD5 0x00000080u
#define STM32F4_HASH_SHA224 0x00040000u
#define STM32F4_HASH_SHA256 0x00040080u

/* Hashes len bytes at msg with the given algorithm and writes digest_len bytes (the algorithm's
 * digest size) to digest. The core feeds HASH_DIN and polls HASH_SR. Returns 0. */
int stm32f4_hash(uint32_t algo, const uint8_t *msg, size_t len, uint8_t *digest, size_t digest_len);

#endif
