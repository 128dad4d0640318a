/* image.c - jnk0le's cortexm-AES assembly timed the way its own ECB unit test times it, for
 * bench/sim_vs_silicon (run with `cryptobench sim run`).
 *
 * 1. Known answer: FIPS 197 Appendix C.1 (AES-128) and C.3 (AES-256): the key schedule, then the
 *    block encrypted to the published ciphertext and decrypted back, by every function timed here
 *    (rolled and, with -DUNROLLED, unrolled). Any mismatch prints "ERROR ..." and no cycles count.
 * 2. Timing, as aes/tests/aes_deprecated_tests.cpp's aes_ecb_test: one call first (its "cache train
 *    run"), then RUNS calls, each read as DWT_CYCCNT after - before - 1 and summed; printed as
 *    "OP SUM RUNS" (the bench divides: the source prints the mean). The source calls through its C++
 *    wrapper (aes::CipherContext), which inlines to the same one call with the context's round-key
 *    array and the round count as arguments that this file makes.
 *
 * Built with -DIMPL=CM3_1T (or CM7_1T, CM33_1T), -DRUNS=N and optionally -DDECKEY (the decryption
 * key schedule is timed), -DUNROLLED (CM3_1T's unrolled functions), and for a variant that only
 * encrypts (CM7_DSPsBOX, CM33_d4T) -DENCRYPT_ONLY with -DKEY_IMPL=... naming the key schedule its
 * C++ wrapper uses (cipher_impl_CM7.hpp, cipher_impl_CM33.hpp). After each timed operation the
 * block is checked again, so a cycle count always belongs to a correct result. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define CAT_(a, b) a##_##b
#define CAT(a, b) CAT_(a, b)
#define F(name) CAT(IMPL, name)

#ifdef KEY_IMPL
#define KEY_F(name) CAT(KEY_IMPL, name)
#else
#define KEY_F(name) F(name)
#endif
void KEY_F(AES128_keyschedule_enc)(uint8_t *rk, const uint8_t *key);
void KEY_F(AES256_keyschedule_enc)(uint8_t *rk, const uint8_t *key);
void F(AES_encrypt)(const uint8_t *rk, const uint8_t *in, uint8_t *out, size_t rounds);
#ifndef ENCRYPT_ONLY
void F(AES_decrypt)(const uint8_t *rk, const uint8_t *in, uint8_t *out, size_t rounds);
/* the decryption key schedule: CM33_1T has none of its own and uses CM3_1T's (cipher_impl_CM33.hpp) */
#ifdef DECKEY_IMPL
#define DECKEY_F(name) CAT(DECKEY_IMPL, name)
#else
#define DECKEY_F(name) F(name)
#endif
void DECKEY_F(AES_keyschedule_dec)(uint8_t *rk, size_t rounds);
#endif
#ifdef UNROLLED
void F(AES128_encrypt_unrolled)(const uint8_t *rk, const uint8_t *in, uint8_t *out);
void F(AES256_encrypt_unrolled)(const uint8_t *rk, const uint8_t *in, uint8_t *out);
void F(AES128_decrypt_unrolled)(const uint8_t *rk, const uint8_t *in, uint8_t *out);
void F(AES256_decrypt_unrolled)(const uint8_t *rk, const uint8_t *in, uint8_t *out);
#endif

#define DWT_CYCCNT (*(volatile uint32_t *)0xE0001004u)
#define DWT_CTRL (*(volatile uint32_t *)0xE0001000u)
#define DEMCR (*(volatile uint32_t *)0xE000EDFCu)

/* ---- semihosting: the image's only output ---- */
static int semihost(int call, const void *arg)
{
    register int r0 __asm__("r0") = call;
    register const void *r1 __asm__("r1") = arg;
    __asm__ volatile("bkpt 0xab" : "+r"(r0) : "r"(r1) : "memory");
    return r0;
}

static void put(const char *s) { semihost(0x04, s); }                 /* SYS_WRITE0 */

static void finish(int failed)
{
    semihost(0x18, (const void *)(failed ? 0x20024u : 0x20026u));    /* SYS_EXIT: RunTimeError / ApplicationExit */
    for (;;) {
    }
}

static char *utoa10(char *p, uint32_t v)
{
    char tmp[10];
    int n = 0;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    while (n)
        *p++ = tmp[--n];
    return p;
}

static void fail(const char *what)
{
    put("ERROR ");
    put(what);
    put("\n");
    finish(1);
}

/* ---- FIPS 197 Appendix C ---- */
static const uint8_t key[32] = {0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a,
                                0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0x10, 0x11, 0x12, 0x13, 0x14, 0x15,
                                0x16, 0x17, 0x18, 0x19, 0x1a, 0x1b, 0x1c, 0x1d, 0x1e, 0x1f};
static const uint8_t plain[16] = {0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77,
                                  0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff};
static const uint8_t cipher128[16] = {0x69, 0xc4, 0xe0, 0xd8, 0x6a, 0x7b, 0x04, 0x30,
                                      0xd8, 0xcd, 0xb7, 0x80, 0x70, 0xb4, 0xc5, 0x5a};
static const uint8_t cipher256[16] = {0x8e, 0xa2, 0xb7, 0xca, 0x51, 0x67, 0x45, 0xbf,
                                      0xea, 0xfc, 0x49, 0x90, 0x4b, 0x49, 0x60, 0x89};

/* the round keys and blocks in RAM, as the source's globals are (its results "assume that input,
 * expanded round key and stack lie in the same memory block") */
static uint8_t enc_rk[15 * 16] __attribute__((aligned(8)));
static uint8_t dec_rk[15 * 16] __attribute__((aligned(8)));
static uint8_t in[16] __attribute__((aligned(8)));
static uint8_t out[16] __attribute__((aligned(8)));

static void report(const char *op, uint32_t sum)
{
    char line[64], *p = line;
    while (*op)
        *p++ = *op++;
    *p++ = ' ';
    p = utoa10(p, sum);
    *p++ = ' ';
    p = utoa10(p, RUNS);
    *p++ = '\n';
    *p = '\0';
    put(line);
}

/* one call to train, then RUNS timed calls: the source's loop */
#define TIMED(op, call)                                                                            \
    do {                                                                                           \
        uint32_t sum_ = 0;                                                                         \
        call;                                                                                      \
        for (int i_ = 0; i_ < RUNS; i_++) {                                                        \
            uint32_t tick_ = DWT_CYCCNT;                                                           \
            call;                                                                                  \
            sum_ += DWT_CYCCNT - tick_ - 1;                                                        \
        }                                                                                          \
        report(op, sum_);                                                                          \
    } while (0)

static void expect(const uint8_t *got, const uint8_t *want, const char *what)
{
    if (memcmp(got, want, 16) != 0)
        fail(what);
}

static void one_size(int bits)
{
    const size_t rounds = bits == 128 ? 10 : 14;
    const uint8_t *want = bits == 128 ? cipher128 : cipher256;
    const char *const *names;
    static const char *const n128[] = {"setEncKey<128>", "encrypt<128>", "setDecKey<128>", "decrypt<128>",
                                       "encrypt_unrolled<128>", "decrypt_unrolled<128>"};
    static const char *const n256[] = {"setEncKey<256>", "encrypt<256>", "setDecKey<256>", "decrypt<256>",
                                       "encrypt_unrolled<256>", "decrypt_unrolled<256>"};
    names = bits == 128 ? n128 : n256;

#define KEY_ENC(rk) (bits == 128 ? KEY_F(AES128_keyschedule_enc)(rk, key) : KEY_F(AES256_keyschedule_enc)(rk, key))
#ifdef ENCRYPT_ONLY
    KEY_ENC(enc_rk);
#else
    TIMED(names[0], KEY_ENC(enc_rk));
#endif
    memcpy(in, plain, 16);
    TIMED(names[1], F(AES_encrypt)(enc_rk, in, out, rounds));
    expect(out, want, names[1]);
#ifndef ENCRYPT_ONLY

    /* setDecKey: the source times `setDecKey()`, the inversion alone, repeated in place on the
     * same schedule (aes/cipher.hpp; its test then calls setDecKey(key) to decrypt correctly) */
#ifdef DECKEY
    KEY_ENC(dec_rk);
    TIMED(names[2], DECKEY_F(AES_keyschedule_dec)(dec_rk, rounds));
#endif
    KEY_ENC(dec_rk);
    DECKEY_F(AES_keyschedule_dec)(dec_rk, rounds);
    memcpy(in, want, 16);
    TIMED(names[3], F(AES_decrypt)(dec_rk, in, out, rounds));
    expect(out, plain, names[3]);
#ifdef UNROLLED
    memcpy(in, plain, 16);
    if (bits == 128)
        TIMED(names[4], F(AES128_encrypt_unrolled)(enc_rk, in, out));
    else
        TIMED(names[4], F(AES256_encrypt_unrolled)(enc_rk, in, out));
    expect(out, want, names[4]);
    memcpy(in, want, 16);
    if (bits == 128)
        TIMED(names[5], F(AES128_decrypt_unrolled)(dec_rk, in, out));
    else
        TIMED(names[5], F(AES256_decrypt_unrolled)(dec_rk, in, out));
    expect(out, plain, names[5]);
#endif
#endif
    (void)dec_rk;
}

int main(void)
{
    DEMCR |= 1u << 24;          /* TRCENA */
    DWT_CYCCNT = 0;
    DWT_CTRL |= 1u;             /* CYCCNTENA */
    one_size(128);
    one_size(256);
    put("kat pass\n");
    return 0;
}

/* ---- start-up: vector table, .data (the lookup tables) and .bss ---- */
extern uint32_t _sidata[], _sdata[], _edata[], _sbss[], _ebss[], _estack[];

void reset_handler(void)
{
    for (uint32_t *s = _sidata, *d = _sdata; d < _edata;)
        *d++ = *s++;
    for (uint32_t *d = _sbss; d < _ebss;)
        *d++ = 0;
    finish(main() != 0);
}

static void fault_handler(void)
{
    fail("fault");
}

__attribute__((section(".isr_vector"), used)) static void (*const vectors[16])(void) = {
    (void (*)(void))_estack, reset_handler, fault_handler, fault_handler, fault_handler, fault_handler,
    fault_handler, 0, 0, 0, 0, fault_handler, fault_handler, 0, fault_handler, fault_handler,
};
