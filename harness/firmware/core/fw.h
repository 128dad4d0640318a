/* fw.h - what the bare-metal benchmark harness and a library's glue agree on.
 *
 * The harness (core/) owns the console, the cycle counter, stack painting, the known-answer tests
 * and the protocol. A glue file (glue/<library>.c) only says which catalog ops it has and runs one
 * operation on explicit inputs. One operation on a microcontroller includes the key schedule
 * (the catalog's rekey=1), as the Cifra and TI measurements do, unless the cell asks rekey=0 and
 * the glue keeps a schedule (fw_lib_keeps_key, fw_keyed below).
 */
#ifndef CB_FW_H
#define CB_FW_H

#include <stddef.h>
#include <stdint.h>

#include "cb_fill.h"    /* cb_fill: the benchmark filler, shared with the host (harness/common) */
#include "cb_ops.h"     /* the operation catalog, generated from catalog/ops.py (harness/common) */

#define FW_OK 0
#define FW_ERR (-1)
#define FW_UNSUPPORTED (-2)

/* The catalog parameters an op may use. One the plan leaves out reads as on the host harness
 * (cb_param()->absent): integers -1, curve "", but tag_bytes and nonce_bytes CB_DEFAULT_*. */
typedef struct {
    int32_t key_bits;       /* AES: 128/192/256 */
    int32_t bytes;          /* payload length */
    int32_t aad_bytes;      /* AEAD associated data length */
    int32_t tag_bytes;      /* CCM tag length */
    int32_t nonce_bytes;    /* CCM nonce length */
    int32_t level;          /* ML-KEM 512/768/1024, ML-DSA 44/65/87 */
    char curve[8];          /* "p256", "x25519" */
    int32_t rekey;          /* 1: set the key in every operation; 0: keep the schedule (fw_keyed) */
} fw_params;

/* Inputs and outputs of one operation; names as in docs/protocol.md ("compute"). The harness
 * sets every pointer an op may read; `out` has room for `out_cap` bytes and the op sets
 * `out_len`. Encodings as in the host protocol: AEAD out = ciphertext || tag, hash out = digest,
 * CBC/CTR out = ciphertext, ecdh-keygen out = public key, ecdh-shared-secret out = z,
 * ecdsa-sign out = r||s, ecdsa-verify out = one byte 01/00. ML-KEM / ML-DSA (compute names in
 * brackets): keygen key = d [or seed], iv = z; encaps peer = ek, msg = m; decaps key = dk, sig = c;
 * sign key = sk, msg, iv = rnd; verify peer = pk, msg, sig; out = the op's outputs in catalog order,
 * concatenated (ek||dk, c||k, k, pk||sk, sig, ok: firmware/plan.py OUT_NAMES). */
typedef struct {
    const uint8_t *key;   size_t key_len;     /* AES/ChaCha key; ECC private key d */
    const uint8_t *iv;    size_t iv_len;      /* IV / nonce */
    const uint8_t *aad;   size_t aad_len;
    const uint8_t *msg;   size_t msg_len;     /* plaintext; message to hash; ECDSA hash */
    const uint8_t *peer;  size_t peer_len;    /* ECDH peer public key; ECDSA public key q */
    const uint8_t *sig;   size_t sig_len;     /* ECDSA signature to verify */
    uint8_t *out;         size_t out_cap;
    size_t out_len;
} fw_io;

typedef struct {
    const char *op;                                   /* catalog op id */
    /* FW_OK, or FW_UNSUPPORTED with *why set to a static reason */
    int (*supports)(const fw_params *p, const char **why);
    /* one operation; FW_OK or FW_ERR */
    int (*run)(const fw_params *p, fw_io *io);
} fw_op;

/* Provided by the glue of the library linked into this image. */
extern const char fw_lib_name[];
extern const char fw_lib_version[];
extern const fw_op fw_lib_ops[];
extern const int fw_lib_n_ops;

/* rekey=0: the key schedule is set up once per cell, outside the timed region. The harness
 * clears fw_keyed before each cell and known-answer test and calls the op once, untimed, before
 * its output run; an op with rekey=0 sets its schedule up (in storage it keeps) only while
 * fw_keyed is 0, then sets fw_keyed = 1 and reuses the schedule in every later call. A glue that
 * does this defines fw_lib_keeps_key (any value); without it the harness refuses rekey=0 cells
 * as unsupported, and an op of such a glue that cannot keep a schedule refuses in supports(). */
extern uint8_t fw_keyed;
extern const uint8_t fw_lib_keeps_key __attribute__((weak));

/* Provided by the harness: deterministic bytes (cb_fill) for ops that need randomness (ECDSA
 * nonces, key generation). Not a secure RNG: benchmark inputs only. */
int fw_random(void *ctx, unsigned char *buf, size_t len);

/* Fixed heap arena for libraries that need malloc (mbedTLS ECC); peak use is reported. */
void *fw_calloc(size_t n, size_t size);
void fw_free(void *p);

/* Optional, for replacement code such as Mbed TLS _ALT modules (docs/firmware.md, "Mbed TLS
 * _ALT"): code linked into the image may define fw_alt_calls() to return a running count of the
 * calls made into it; the harness then reports, per cell, how many calls the cell made
 * ("alt_calls"), which shows that the replacement is the code measured. Undefined: no field. */
uint32_t fw_alt_calls(void) __attribute__((weak));
/* Optional too: called once at start-up, before anything is printed, where replacement code
 * defines it (an accelerator's clock and driver set-up, e.g. an SDK's CRYPTO_InitHardware()). The
 * linker takes an object from the library archive only for a symbol the image needs, so define
 * it in the file that holds the replacement functions. */
void fw_alt_init(void) __attribute__((weak));
/* Optional too: a glue whose op returned FW_ERR may say why in one line (a static text: what the
 * device or library answered); the harness reports it in place of "operation returned an error". */
const char *fw_lib_error(void) __attribute__((weak));

#endif
