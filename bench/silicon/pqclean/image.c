/* image.c - a PQClean KEM's or signature scheme's "clean" code timed the way pqm3 and pqm4 time it,
 * for bench/sim_vs_silicon (run with `cryptobench sim run`).
 *
 * 1. Known answer: the NIST KAT entry PQClean's test/crypto_kem/nistkat.c (or, with -DSIGN,
 *    test/crypto_sign/nistkat.c) writes (count 0, its NIST CTR_DRBG seeded with bytes 0..47),
 *    hashed with SHA-256 and printed as "kat HEX"; the bench compares it with the scheme's META.yml
 *    `nistkat-sha256`. No cycles count unless it matches.
 * 2. Timing, as mupq's crypto_kem/speed.c (keypair, enc, dec) or crypto_sign/speed.c (keypair, a
 *    signature of a fresh random 59-byte message made in place, its opening in place): ITERATIONS rounds, each
 *    operation printed as "OP TOTAL HASH": TOTAL from the DWT cycle counter around the call, HASH
 *    the cycles spent inside the FIPS 202 functions (wrap.S, mupq's PROFILE_HASHING). Each KEM round
 *    checks that enc and dec agree on the shared secret, each signature round that the signature
 *    opens. Randomness while timing is a xorshift generator standing in for the board's hardware RNG
 *    (pqm3's and pqm4's randombytes read RNG_DR: a few cycles a word either way).
 *
 * Built with -DNS=PQCLEAN_LIGHTSABER_CLEAN (the scheme's namespace), -DITERATIONS=N and, for a
 * signature scheme, -DSIGN. With -DCCM_BUFFERS the image's own buffers (keys, ciphertext or signed
 * message, the KAT text) go to the STM32F4's 64 KiB CCM data RAM (link.ld): ML-DSA-87's signing
 * needs about 120 KiB of stack (pqm4's stack table), which with them would not fit the 128 KiB of SRAM. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "aes.h"
#include "api.h"
#include "randombytes.h"
#include "sha2.h"

#define CAT_(a, b) a##_##b
#define CAT(a, b) CAT_(a, b)
#define PK_BYTES CAT(NS, CRYPTO_PUBLICKEYBYTES)
#define SK_BYTES CAT(NS, CRYPTO_SECRETKEYBYTES)
#ifdef SIGN
#define SIG_BYTES CAT(NS, CRYPTO_BYTES)
#define MSG_KAT 33                  /* test/crypto_sign/nistkat.c's mlen */
#define MSG_TIMED 59                /* mupq crypto_sign/speed.c's MLEN */
#define sign_keypair CAT(NS, crypto_sign_keypair)
#define sign_make CAT(NS, crypto_sign)
#define sign_open CAT(NS, crypto_sign_open)
#define KAT_BYTES (48 + MSG_KAT + PK_BYTES + SK_BYTES + MSG_KAT + SIG_BYTES)
#else
#define CT_BYTES CAT(NS, CRYPTO_CIPHERTEXTBYTES)
#define SS_BYTES CAT(NS, CRYPTO_BYTES)
#define kem_keypair CAT(NS, crypto_kem_keypair)
#define kem_enc CAT(NS, crypto_kem_enc)
#define kem_dec CAT(NS, crypto_kem_dec)
#define KAT_BYTES (48 + PK_BYTES + SK_BYTES + CT_BYTES + SS_BYTES)
#endif

#define DWT_CYCCNT (*(volatile uint32_t *)0xE0001004u)
#define DWT_CTRL (*(volatile uint32_t *)0xE0001000u)
#define DEMCR (*(volatile uint32_t *)0xE000EDFCu)

volatile uint32_t hash_cycles;

/* With -DCOUNT_ATTEMPTS (signature schemes), the scheme's polyvecl_uniform_gamma1 is linked through
 * `-Wl,--wrap=` (bench/sim_vs_silicon): ML-DSA's sign.c calls it exactly once per attempt of its
 * rejection loop (it draws the masking vector y right after the `rej:` label), so `attempts`
 * counts the attempts of each signature; the bench prints "attempts N 0" after each "sign" line.
 * The count costs a few cycles an attempt inside the timed call (about 10 of ~2 million). */
volatile uint32_t attempts;
#ifdef COUNT_ATTEMPTS
#define UNIFORM_GAMMA1 CAT(NS, polyvecl_uniform_gamma1)
void CAT(__real, UNIFORM_GAMMA1)(void *y, const uint8_t *seed, uint16_t nonce);
void CAT(__wrap, UNIFORM_GAMMA1)(void *y, const uint8_t *seed, uint16_t nonce);
void CAT(__wrap, UNIFORM_GAMMA1)(void *y, const uint8_t *seed, uint16_t nonce)
{
    attempts++;
    CAT(__real, UNIFORM_GAMMA1)(y, seed, nonce);
}
#endif

#ifdef CCM_BUFFERS
#define BUFFER __attribute__((section(".ccmram")))
#else
#define BUFFER
#endif

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

/* ---- randomness: NIST's CTR_DRBG (AES-256, no derivation function) for the KAT, then xorshift ---- */
static struct {
    uint8_t key[32], v[16];
} drbg;
static int timing;
static uint32_t xs = 0x2545F491u;

static void v_increment(void)
{
    for (int j = 15; j >= 0; j--) {
        if (++drbg.v[j] != 0)
            break;
    }
}

static void drbg_update(const uint8_t *provided)
{
    uint8_t temp[48];
    aes256ctx ctx;
    aes256_ecb_keyexp(&ctx, drbg.key);
    for (int i = 0; i < 3; i++) {
        v_increment();
        aes256_ecb(temp + 16 * i, drbg.v, 1, &ctx);
    }
    aes256_ctx_release(&ctx);
    if (provided)
        for (int i = 0; i < 48; i++)
            temp[i] ^= provided[i];
    memcpy(drbg.key, temp, 32);
    memcpy(drbg.v, temp + 32, 16);
}

static void drbg_init(const uint8_t seed[48])
{
    memset(&drbg, 0, sizeof drbg);
    drbg_update(seed);
}

int randombytes(uint8_t *out, size_t n)
{
    if (timing) {
        while (n--) {
            xs ^= xs << 13;
            xs ^= xs >> 17;
            xs ^= xs << 5;
            *out++ = (uint8_t)xs;
        }
        return 0;
    }
    aes256ctx ctx;
    uint8_t block[16];
    aes256_ecb_keyexp(&ctx, drbg.key);
    while (n) {
        v_increment();
        aes256_ecb(block, drbg.v, 1, &ctx);
        size_t take = n < 16 ? n : 16;
        memcpy(out, block, take);
        out += take;
        n -= take;
    }
    aes256_ctx_release(&ctx);
    drbg_update(NULL);
    return 0;
}

/* ---- the KAT entry, as text, hashed ---- */
BUFFER static char kat[2 * KAT_BYTES + 96];
static size_t kat_len;

static void kat_str(const char *s)
{
    while (*s)
        kat[kat_len++] = *s++;
}

static void kat_hex(const char *label, const uint8_t *a, size_t n)
{
    static const char digits[] = "0123456789ABCDEF";
    kat_str(label);
    for (size_t i = 0; i < n; i++) {
        kat[kat_len++] = digits[a[i] >> 4];
        kat[kat_len++] = digits[a[i] & 15];
    }
    kat[kat_len++] = '\n';
}

static void kat_digest(void)
{
    uint8_t digest[32];
    sha256(digest, (const uint8_t *)kat, kat_len);
    char line[4 + 64 + 1] = "kat ";
    for (int i = 0; i < 32; i++) {
        line[4 + 2 * i] = "0123456789abcdef"[digest[i] >> 4];
        line[5 + 2 * i] = "0123456789abcdef"[digest[i] & 15];
    }
    line[68] = '\0';
    put(line);
    put("\n");
}

/* Both nistkat.c programs begin alike: the DRBG seeded with bytes 0..47, "count = 0", and the
 * entry's own seed drawn from it (the caller seeds the DRBG with it when the entry needs it). */
static void kat_begin(uint8_t seed[48])
{
    uint8_t entropy[48];
    for (int i = 0; i < 48; i++)
        entropy[i] = (uint8_t)i;
    drbg_init(entropy);
    kat_str("count = 0\n");
    randombytes(seed, 48);
    kat_hex("seed = ", seed, 48);
}

BUFFER static uint8_t pk[PK_BYTES];
BUFFER static uint8_t sk[SK_BYTES];

#ifdef SIGN
BUFFER static uint8_t msg[MSG_KAT];
BUFFER static uint8_t sm[MSG_TIMED + SIG_BYTES];

static int known_answer(void)
{
    uint8_t seed[48];
    size_t smlen, mlen;
    kat_begin(seed);
    kat_str("mlen = 33\n");
    randombytes(msg, MSG_KAT);
    kat_hex("msg = ", msg, MSG_KAT);
    drbg_init(seed);
    if (sign_keypair(pk, sk) != 0)
        return -1;
    kat_hex("pk = ", pk, PK_BYTES);
    kat_hex("sk = ", sk, SK_BYTES);
    if (sign_make(sm, &smlen, msg, MSG_KAT, sk) != 0)
        return -1;
    char line[32] = "smlen = ";
    *utoa10(line + 8, (uint32_t)smlen) = '\0';
    kat_str(line);
    kat_str("\n");
    kat_hex("sm = ", sm, smlen);
    if (sign_open(sm, &mlen, sm, smlen, pk) != 0 || mlen != MSG_KAT || memcmp(sm, msg, MSG_KAT) != 0)
        return -1;
    kat_digest();
    return 0;
}
#else
BUFFER static uint8_t ct[CT_BYTES];
static uint8_t ss_enc[SS_BYTES], ss_dec[SS_BYTES];

static int known_answer(void)
{
    uint8_t seed[48];
    kat_begin(seed);
    drbg_init(seed);
    if (kem_keypair(pk, sk) != 0)
        return -1;
    kat_hex("pk = ", pk, PK_BYTES);
    kat_hex("sk = ", sk, SK_BYTES);
    if (kem_enc(ct, ss_enc, pk) != 0)
        return -1;
    kat_hex("ct = ", ct, CT_BYTES);
    kat_hex("ss = ", ss_enc, SS_BYTES);
    if (kem_dec(ss_dec, ct, sk) != 0 || memcmp(ss_enc, ss_dec, SS_BYTES) != 0)
        return -1;
    kat_digest();
    return 0;
}
#endif

static void report(const char *op, uint32_t total, uint32_t hash)
{
    char line[48], *p = line;
    while (*op)
        *p++ = *op++;
    *p++ = ' ';
    p = utoa10(p, total);
    *p++ = ' ';
    p = utoa10(p, hash);
    *p++ = '\n';
    *p = '\0';
    put(line);
}

#define TIMED(op, call)                                                                            \
    do {                                                                                           \
        hash_cycles = 0;                                                                           \
        uint32_t t0 = DWT_CYCCNT;                                                                  \
        int rc_ = (call);                                                                          \
        uint32_t t1 = DWT_CYCCNT;                                                                  \
        if (rc_ != 0)                                                                              \
            return -1;                                                                             \
        report(op, t1 - t0, hash_cycles);                                                          \
    } while (0)

static int timed_rounds(void)
{
    timing = 1;
    for (int i = 0; i < ITERATIONS; i++) {
#ifdef SIGN
        size_t smlen, mlen;
        TIMED("keypair", sign_keypair(pk, sk));
        randombytes(sm, MSG_TIMED);         /* mupq's speed.c: a new message each round */
        attempts = 0;
        TIMED("sign", sign_make(sm, &smlen, sm, MSG_TIMED, sk));
#ifdef COUNT_ATTEMPTS
        report("attempts", attempts, 0);
#endif
        TIMED("verify", sign_open(sm, &mlen, sm, smlen, pk));
        if (mlen != MSG_TIMED) {
            put("ERROR the signature did not open to its message\n");
            return -1;
        }
#else
        TIMED("keypair", kem_keypair(pk, sk));
        TIMED("encaps", kem_enc(ct, ss_enc, pk));
        TIMED("decaps", kem_dec(ss_dec, ct, sk));
        if (memcmp(ss_enc, ss_dec, SS_BYTES) != 0) {
            put("ERROR shared secrets differ\n");
            return -1;
        }
#endif
    }
    return 0;
}

int main(void)
{
    DEMCR |= 1u << 24;          /* TRCENA */
    DWT_CYCCNT = 0;
    DWT_CTRL |= 1u;             /* CYCCNTENA */
    if (known_answer() != 0) {
        put("ERROR known-answer run failed\n");
        finish(1);
    }
    finish(timed_rounds() != 0);
    return 0;
}

/* ---- start-up: vector table, .data and .bss, a heap for malloc ---- */
extern uint32_t _sidata[], _sdata[], _edata[], _sbss[], _ebss[], _heap_start[], _estack[];

void *_sbrk(ptrdiff_t incr)
{
    static char *brk = (char *)_heap_start;
    char *prev = brk;
    if (brk + incr > (char *)_estack - 32 * 1024) {      /* keep 32 KiB for the stack */
        put("ERROR heap exhausted\n");
        finish(1);
    }
    brk += incr;
    return prev;
}

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
    put("ERROR fault\n");
    finish(1);
}

__attribute__((section(".isr_vector"), used)) static void (*const vectors[16])(void) = {
    (void (*)(void))_estack, reset_handler, fault_handler, fault_handler, fault_handler, fault_handler,
    fault_handler, 0, 0, 0, 0, fault_handler, fault_handler, 0, fault_handler, fault_handler,
};
