/* cb_chacha20.h - the catalog's chacha20-encrypt iv, shared by the host harness (harness/host) and
 * the firmware glues (harness/firmware/glue).
 *
 * The op's 16-byte iv is RFC 8439 §2.3's state words 12-15 as OpenSSL's EVP_chacha20 takes them:
 * the 32-bit initial block counter, little-endian, then the 12-byte nonce. What happens when that
 * counter passes 2^32 - 1 differs between libraries (OpenSSL and Monocypher carry into the first
 * nonce word, Mbed TLS and BearSSL wrap to 0, libsodium aborts the process), and RFC 8439 leaves
 * such a message undefined; so every engine refuses it, and all agree on what they accept.
 */
#ifndef CB_CHACHA20_H
#define CB_CHACHA20_H

#include <stddef.h>
#include <stdint.h>

#define CB_CHACHA20_WRAP_MSG "chacha20-encrypt: the 32-bit block counter would pass 2^32 - 1 " \
                             "within this message (RFC 8439 leaves that undefined)"

/* The initial block counter: the iv's first four bytes, little-endian. */
static inline uint32_t cb_chacha20_counter(const uint8_t *iv)
{
    return (uint32_t)iv[0] | (uint32_t)iv[1] << 8 | (uint32_t)iv[2] << 16 | (uint32_t)iv[3] << 24;
}

/* Whether a message of len bytes from block `counter` needs a block counter above 2^32 - 1. */
static inline int cb_chacha20_wraps(uint32_t counter, size_t len)
{
    uint64_t blocks = ((uint64_t)len + 63) / 64;
    return (uint64_t)counter + blocks > ((uint64_t)1 << 32);
}

/* Whether a chacha20-encrypt call's inputs are usable: a 32-byte key, a 16-byte iv, and a
 * message the block counter covers without passing 2^32 - 1; *counter is the iv's counter. */
static inline int cb_chacha20_usable(size_t key_len, size_t iv_len, const uint8_t *iv, size_t len,
                                     uint32_t *counter)
{
    if (key_len != 32 || iv_len != 16)
        return 0;
    *counter = cb_chacha20_counter(iv);
    return !cb_chacha20_wraps(*counter, len);
}

#endif
