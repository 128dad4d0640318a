/* cb_fill.h - the deterministic filler for benchmark inputs, shared by the host harness
 * (harness/host) and the firmware (harness/firmware).
 *
 * xorshift64*: plenty for non-secret payloads, keys and nonces, and 8 bytes per step keeps set-up
 * fast. Each step's 64-bit output is written little-endian, whatever the machine's byte order.
 * Its Python twin is cryptobench.targets.mcu.firmware.plan.fill; tests/test_catalog_c.py checks that the two
 * give the same bytes. Not a secure random generator: benchmark inputs only.
 */
#ifndef CB_FILL_H
#define CB_FILL_H

#include <stddef.h>
#include <stdint.h>

/* Fill buf with len bytes that depend only on seed. */
static inline void cb_fill(uint8_t *buf, size_t len, uint64_t seed)
{
    uint64_t x = seed ^ 0x9e3779b97f4a7c15ull;
    if (x == 0)
        x = 1;                  /* xorshift never leaves the all-zero state */
    while (len > 0) {
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        uint64_t v = x * 0x2545f4914f6cdd1dull;
        for (int i = 0; i < 8 && len > 0; i++, len--)
            *buf++ = (uint8_t)(v >> (8 * i));
    }
}

#endif
