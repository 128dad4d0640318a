/* cc26x2_crypto.c - cryptobench's own register-level driver for the CC13x2/CC26x2 CRYPTO module,
 * written from TI SWCU185G's register descriptions (chapter "Cryptography"; no vendor code).
 *
 * The sequence the TRM describes for the engine's DMA path: a key goes to the key store through
 * DMA channel 0 (ALGSEL = KEY_STORE, KEYSIZE, KEYWRITEAREA), is read into the AES engine with
 * KEYREADAREA; an AES operation sets AESIV, AESCTL and AESDATALEN (AESAUTHLEN for GCM), moves the
 * associated data through channel 0 and the payload through channels 0 (in) and 1 (out), and waits
 * for IRQSTAT.RESULT_AVAIL; GCM's tag is read from AESTAGOUT once AESCTL.SAVED_CONTEXT_RDY is set. A
 * hash sets ALGSEL = HASH_SHA_256, HASHMODE, HASHINLEN and HASHIOBUFCTRL.PAD_DMA_MESSAGE and moves the
 * message through channel 0. Clocks and power domains (PRCM) are the board start-up's, not this
 * driver's.
 *
 * Completion: polled (IRQSTAT read until the bit is set), or with CC26X2_COMPLETION_IRQ by
 * interrupt: CRYPTO_RESULT_AVAIL_IRQ (NVIC interrupt 23, SWCU185G "Interrupts and Events") is
 * enabled, the core waits in WFI and the handler (cc26x2_crypto_irq, called by cc26x2_irq.c's
 * fw_external_irq) records and clears IRQSTAT's bits (IRQCLR). The
 * wait masks interrupts around its test of the flag so that an interrupt between the test and
 * the WFI cannot be lost: WFI wakes on a pending interrupt even with PRIMASK set (ARMv7-M ARM
 * B1.5.19), and CPSIE then takes it. */
#include <string.h>

#include "cc26x2_crypto.h"

#define CRYPTO 0x40024000u                          /* SWCU185G memory map */
#define R(o) (*(volatile uint32_t *)(CRYPTO + (o)))
#define DMACH0CTL 0x000u
#define DMACH0EXTADDR 0x004u
#define DMACH0LEN 0x00Cu
#define DMACH1CTL 0x020u
#define DMACH1EXTADDR 0x024u
#define DMACH1LEN 0x02Cu
#define KEYWRITEAREA 0x400u
#define KEYWRITTENAREA 0x404u
#define KEYSIZE 0x408u
#define KEYREADAREA 0x40Cu
#define AESIV(i) (0x540u + 4u * (i))
#define AESCTL 0x550u
#define AESDATALEN0 0x554u
#define AESDATALEN1 0x558u
#define AESAUTHLEN 0x55Cu
#define AESTAGOUT(i) (0x570u + 4u * (i))
#define HASHIOBUFCTRL 0x680u
#define HASHMODE 0x684u
#define HASHINLENL 0x688u
#define HASHINLENH 0x68Cu
#define HASHDIGEST(i) (0x6C0u + 4u * (i))
#define ALGSEL 0x700u
#define IRQTYPE 0x780u
#define IRQEN 0x784u
#define IRQCLR 0x788u
#define IRQSTAT 0x790u
#define RESULT_AVAIL 1u
#define DMA_IN_DONE 2u
#define ALG_KEY_STORE 1u
#define ALG_AES 2u
#define ALG_SHA256 4u
#define ALG_TAG (1u << 31)
#define CTL_DIR (1u << 2)
#define CTL_CBC (1u << 5)
#define CTL_CTR (1u << 6)
#define CTL_CTR_WIDTH_32 (0u << 7)
#define CTL_CTR_WIDTH_128 (3u << 7)
#define CTL_GCM (3u << 16)
#define CTL_CCM (1u << 18)
#define CTL_SAVE_CONTEXT (1u << 29)
#define CTL_SAVED_CONTEXT_RDY (1u << 30)
#define KEY_AREA 0u

#ifdef CC26X2_COMPLETION_IRQ
#include "cc26x2_irq.h"
static volatile uint32_t irq_seen;                  /* IRQSTAT bits the handler has taken */

/* CRYPTO_RESULT_AVAIL_IRQ, called by fw_external_irq (cc26x2_irq.c) */
void cc26x2_crypto_irq(void)
{
    uint32_t stat = R(IRQSTAT) & (RESULT_AVAIL | DMA_IN_DONE);
    irq_seen |= stat;
    R(IRQCLR) = stat;                               /* the line falls with its sources */
}

static void wait(uint32_t bits)
{
    __asm__ volatile("cpsid i" ::: "memory");
    while (!(irq_seen & bits)) {
        cc26x2_irq_sleep();
    }
    irq_seen &= ~bits;
    __asm__ volatile("cpsie i" ::: "memory");
}
#else
static void wait(uint32_t bits)
{
    while (!(R(IRQSTAT) & bits)) {
    }
}
#endif

static void select(uint32_t algsel)
{
    R(IRQTYPE) = 1u;                                /* level */
    R(IRQEN) = RESULT_AVAIL | DMA_IN_DONE;
    R(ALGSEL) = algsel;
    R(IRQCLR) = RESULT_AVAIL | DMA_IN_DONE;
#ifdef CC26X2_COMPLETION_IRQ
    irq_seen = 0;
    CC26X2_NVIC_ENABLE(CC26X2_CRYPTO_IRQ);
#endif
}

static void done(void)
{
    R(IRQCLR) = RESULT_AVAIL | DMA_IN_DONE;
    R(ALGSEL) = 0;
}

/* DMACHxLEN last: a nonzero length starts the channel */
static void dma(const void *in, uint32_t inlen, void *out, uint32_t outlen)
{
    R(DMACH0CTL) = 1u;
    R(DMACH0EXTADDR) = (uint32_t)(uintptr_t)in;
    R(DMACH0LEN) = inlen;
    if (outlen) {
        R(DMACH1CTL) = 1u;
        R(DMACH1EXTADDR) = (uint32_t)(uintptr_t)out;
        R(DMACH1LEN) = outlen;
    }
}

static int load_key(const uint8_t *key, size_t key_len)
{
    uint32_t size = key_len == 16 ? 1u : key_len == 24 ? 2u : key_len == 32 ? 3u : 0u;
    if (!size)
        return -1;
    R(KEYWRITTENAREA) = 0xFFu;                      /* clear the areas' written flags */
    select(ALG_KEY_STORE);
    R(KEYSIZE) = size;
    R(KEYWRITEAREA) = 1u << KEY_AREA;
    if (key_len == 24) {
        /* a 192-bit key is written as 256 bits, its top 64 zero (the key store's rule and its
         * source: docs/accelerators.md, TI CC26x2 CRYPTO) */
        static uint8_t padded[32];
        memcpy(padded, key, 24);
        memset(padded + 24, 0, 8);
        dma(padded, 32, 0, 0);
    } else {
        dma(key, (uint32_t)key_len, 0, 0);
    }
    wait(RESULT_AVAIL | DMA_IN_DONE);
    done();
    return 0;
}

static void key_into_engine(void)
{
    R(KEYREADAREA) = KEY_AREA;
    while (R(KEYREADAREA) & 0x80000000u) {          /* BUSY */
    }
}

static void set_iv(const uint8_t *iv)
{
    for (uint32_t i = 0; i < 4; i++)
        R(AESIV(i)) = (uint32_t)iv[4 * i] | (uint32_t)iv[4 * i + 1] << 8 | (uint32_t)iv[4 * i + 2] << 16 |
                      (uint32_t)iv[4 * i + 3] << 24;
}

int cc26x2_aes(int mode, int encrypt, const uint8_t *key, size_t key_len, const uint8_t *iv,
               const uint8_t *in, uint8_t *out, size_t len)
{
    if ((mode != CC26X2_CTR && len % 16) || load_key(key, key_len))
        return -1;
    if (len == 0)
        return 0;
    select(ALG_AES);
    key_into_engine();
    uint32_t ctl = encrypt ? CTL_DIR : 0u;
    if (mode == CC26X2_CBC) {
        set_iv(iv);
        ctl |= CTL_CBC;
    } else if (mode == CC26X2_CTR) {
        set_iv(iv);
        ctl |= CTL_CTR | CTL_CTR_WIDTH_128 | CTL_DIR;  /* CTR encrypts either way */
    }
    R(AESCTL) = ctl;
    R(AESDATALEN0) = (uint32_t)len;
    R(AESDATALEN1) = 0;
    dma(in, (uint32_t)len, out, (uint32_t)len);
    wait(RESULT_AVAIL);
    done();
    return 0;
}

/* The AAD, then the payload through the engine; the tag from AESTAGOUT once SAVED_CONTEXT_RDY */
static void aead_run(const uint8_t *aad, size_t aad_len, const uint8_t *in, uint8_t *out, size_t len, uint8_t *tag,
                     size_t tag_len)
{
    R(AESDATALEN0) = (uint32_t)len;
    R(AESDATALEN1) = 0;
    R(AESAUTHLEN) = (uint32_t)aad_len;
    if (aad_len) {
        dma(aad, (uint32_t)aad_len, 0, 0);
        wait(DMA_IN_DONE);
        R(IRQCLR) = DMA_IN_DONE;
    }
    if (len)
        dma(in, (uint32_t)len, out, (uint32_t)len);
    wait(RESULT_AVAIL);
    while (!(R(AESCTL) & CTL_SAVED_CONTEXT_RDY)) {
    }
    uint8_t t[16];
    for (uint32_t i = 0; i < 4; i++) {
        uint32_t w = R(AESTAGOUT(i));
        for (uint32_t b = 0; b < 4; b++)
            t[4 * i + b] = (uint8_t)(w >> (8 * b));
    }
    for (size_t i = 0; i < tag_len; i++)
        tag[i] = t[i];
    done();
}

int cc26x2_aes_gcm(const uint8_t *key, size_t key_len, const uint8_t *nonce, const uint8_t *aad, size_t aad_len,
                   const uint8_t *in, uint8_t *out, size_t len, uint8_t *tag)
{
    if (load_key(key, key_len))
        return -1;
    uint8_t j0[16];
    for (int i = 0; i < 12; i++)
        j0[i] = nonce[i];
    j0[12] = j0[13] = j0[14] = 0;
    j0[15] = 1;                                     /* J0 = nonce || 0^31 || 1 (SP 800-38D 7.1) */
    select(ALG_AES | ALG_TAG);
    key_into_engine();
    set_iv(j0);
    R(AESCTL) = CTL_DIR | CTL_CTR | CTL_CTR_WIDTH_32 | CTL_GCM | CTL_SAVE_CONTEXT;
    aead_run(aad, aad_len, in, out, len, tag, 16);
    return 0;
}

int cc26x2_aes_ccm(const uint8_t *key, size_t key_len, const uint8_t *nonce, size_t nonce_len, const uint8_t *aad,
                   size_t aad_len, const uint8_t *in, uint8_t *out, size_t len, uint8_t *tag, size_t tag_len)
{
    if (nonce_len < 7 || nonce_len > 13 || tag_len < 4 || tag_len > 16 || tag_len % 2 || load_key(key, key_len))
        return -1;
    uint32_t l = 15u - (uint32_t)nonce_len;         /* the length field's bytes (SP 800-38C A.2) */
    uint8_t a0[16] = {0};
    a0[0] = (uint8_t)(l - 1u);                      /* CTR0's flags: L - 1; counter 0 */
    for (size_t i = 0; i < nonce_len; i++)
        a0[1 + i] = nonce[i];
    select(ALG_AES | ALG_TAG);
    key_into_engine();
    set_iv(a0);
    R(AESCTL) = CTL_DIR | CTL_CTR | CTL_CCM | ((l - 1u) << 19) | ((uint32_t)(tag_len - 2) / 2u << 22) | CTL_SAVE_CONTEXT;
    aead_run(aad, aad_len, in, out, len, tag, tag_len);
    return 0;
}

int cc26x2_sha2(int sha224, const uint8_t *msg, size_t len, uint8_t *digest)
{
    select(ALG_SHA256);
    R(HASHMODE) = 1u | (sha224 ? (1u << 4) : (1u << 3));   /* NEW_HASH, SHA224_MODE or SHA256_MODE */
    R(HASHINLENL) = 8u * (uint32_t)len;
    R(HASHINLENH) = (uint32_t)(((uint64_t)len * 8u) >> 32);
    R(HASHIOBUFCTRL) = 1u << 7;                     /* PAD_DMA_MESSAGE: the whole message, padded */
    dma(msg, (uint32_t)len, 0, 0);
    wait(RESULT_AVAIL);
    size_t words = sha224 ? 7 : 8;
    for (size_t i = 0; i < words; i++) {
        uint32_t w = R(HASHDIGEST(i));
        for (uint32_t b = 0; b < 4; b++)
            digest[4 * i + b] = (uint8_t)(w >> (8 * b));
    }
    R(HASHIOBUFCTRL) = 1u;                          /* release OUTPUT_FULL */
    done();
    return 0;
}
