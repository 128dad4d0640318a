/* cb_cursor.h - seed material served in order: the source behind the Mbed TLS CTR_DRBG entropy
 * callback of the host harness (harness/host/engine_mbedtls.c) and of the firmware glue
 * (harness/firmware/glue/mbedtls.c).
 *
 * The CAVP flow hands CTR_DRBG fixed entropy: instantiate reads entropy then nonce (two calls of
 * the callback), reseed reads entropy_reseed. A cursor serves its bytes in that order and fails
 * when asked for more than it holds; timing sets `wrap` so that it serves its buffer round and
 * round and never fails (unless it holds nothing at all).
 */
#ifndef CB_CURSOR_H
#define CB_CURSOR_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef struct {
    const uint8_t *buf;
    size_t len, pos;
    int wrap;
} cb_cursor;

/* The next len bytes of c into out: 0, or -1 where c cannot give them. */
static inline int cb_cursor_read(cb_cursor *c, unsigned char *out, size_t len)
{
    if (c->wrap) {
        if (c->len == 0)
            return -1;
        for (size_t i = 0; i < len; i++) {
            if (c->pos >= c->len)
                c->pos = 0;
            out[i] = c->buf[c->pos++];
        }
        return 0;
    }
    if (len > c->len - c->pos)
        return -1;
    memcpy(out, c->buf + c->pos, len);
    c->pos += len;
    return 0;
}

#endif
