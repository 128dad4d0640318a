/* cc26x2_crypto.h - cryptobench's own register-level driver for the CC13x2/CC26x2 CRYPTO module
 * (AES and hash engine behind its own DMA), written from TI SWCU185G's register descriptions
 * (chapter "Cryptography"). See cc26x2_crypto.c. Completion is polled (IRQSTAT). */
#ifndef CB_CC26X2_CRYPTO_H
#define CB_CC26X2_CRYPTO_H

#include <stddef.h>
#include <stdint.h>

/* AES modes of cc26x2_aes() */
#define CC26X2_ECB 0
#define CC26X2_CBC 1
#define CC26X2_CTR 2          /* 128-bit big-endian counter in iv (CTR_WIDTH 128) */

/* One AES-ECB/CBC/CTR operation on len bytes (a multiple of 16 for ECB and CBC) with a 16/24/32-byte
 * key; iv is 16 bytes (unused for ECB). Returns 0, or -1 for sizes the engine does not take. */
int cc26x2_aes(int mode, int encrypt, const uint8_t *key, size_t key_len, const uint8_t *iv,
               const uint8_t *in, uint8_t *out, size_t len);

/* AES-GCM with a 12-byte nonce: out = ciphertext, tag = the 16-byte tag. Returns 0 or -1. */
int cc26x2_aes_gcm(const uint8_t *key, size_t key_len, const uint8_t *nonce, const uint8_t *aad, size_t aad_len,
                   const uint8_t *in, uint8_t *out, size_t len, uint8_t *tag);

/* AES-CCM (SP 800-38C) with a 7-13 byte nonce and a 4-16 byte tag (even): out = ciphertext, tag =
 * the tag_len-byte tag. Returns 0 or -1. */
int cc26x2_aes_ccm(const uint8_t *key, size_t key_len, const uint8_t *nonce, size_t nonce_len, const uint8_t *aad,
                   size_t aad_len, const uint8_t *in, uint8_t *out, size_t len, uint8_t *tag, size_t tag_len);

/* SHA-256 (or SHA-224 with sha224 = 1) of len bytes, through the engine's DMA, message padded by
 * the engine. Returns 0. */
int cc26x2_sha2(int sha224, const uint8_t *msg, size_t len, uint8_t *digest);

#endif
