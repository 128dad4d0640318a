/* wrap.S - the hashing profile of pqm3 (mupq's PROFILE_HASHING), without touching PQClean's code.
 *
 * Each public FIPS 202 function the scheme calls is linked through `-Wl,--wrap=NAME`: the
 * scheme's call lands here, which reads the DWT cycle counter, calls the real function and adds
 * the cycles it took to `hash_cycles`. mupq times the same public functions from inside
 * (hal_get_time around their bodies); calls between them inside fips202.c are not wrapped, so
 * nothing is counted twice. Every wrapped function takes at most four arguments (all in r0-r3)
 * and returns nothing, so the wrapper can move the stack by 8 bytes and clobber r1-r3. */
    .syntax unified
    .thumb
    .text

    .macro WRAP name
    .global __wrap_\name
    .thumb_func
__wrap_\name:
    push    {r4, lr}
    ldr     r4, =0xE0001004         @ DWT_CYCCNT
    ldr     r4, [r4]
    bl      __real_\name
    ldr     r1, =0xE0001004
    ldr     r1, [r1]
    subs    r1, r1, r4
    ldr     r2, =hash_cycles
    ldr     r3, [r2]
    adds    r3, r3, r1
    str     r3, [r2]
    pop     {r4, pc}
    .ltorg
    .endm

    WRAP shake128_absorb
    WRAP shake128_squeezeblocks
    WRAP shake128_ctx_release
    WRAP shake128
    WRAP shake128_inc_init
    WRAP shake128_inc_absorb
    WRAP shake128_inc_finalize
    WRAP shake128_inc_squeeze
    WRAP shake128_inc_ctx_release
    WRAP shake256_absorb
    WRAP shake256_squeezeblocks
    WRAP shake256_ctx_release
    WRAP shake256
    WRAP shake256_inc_init
    WRAP shake256_inc_absorb
    WRAP shake256_inc_finalize
    WRAP shake256_inc_squeeze
    WRAP shake256_inc_ctx_release
    WRAP sha3_256
    WRAP sha3_512
