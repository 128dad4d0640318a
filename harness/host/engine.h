/* engine.h - the interface every host-harness engine implements.
 *
 * The protocol loop (main.c) parses requests, looks an engine up by name and calls it.
 * An engine never prints: it fills buffers and returns status codes.
 * See docs/protocol.md for what each op computes and what one timed operation is.
 */
#ifndef CBH_ENGINE_H
#define CBH_ENGINE_H

#include <stddef.h>
#include <stdint.h>

#include "cb_fill.h"    /* cb_fill: the benchmark filler, shared with the firmware (harness/common) */
#include "cb_ops.h"     /* the operation catalog, generated from catalog/ops.py (harness/common) */
#include "cb_chacha20.h" /* the chacha20-encrypt iv: its block counter, and the wrap every engine refuses */

#define CB_ERRLEN 256
#define CB_MAXKV 16

/* Operation parameters: one field per catalog parameter (cb_ops.h). A parameter a request leaves
 * out reads as cb_param()->absent: -1 for most integers, "" for most strings. main.c checks the
 * payload once for every engine: setup is called only with bytes >= 0 for an op with a payload
 * (cb_op()->payload), compute for `random` only with bytes >= 0. */
typedef struct {
    cb_op_id op;        /* the catalog op, resolved from the request's id once (main.c) */
    long key_bits;      /* 128/192/256 for AES */
    long bytes;         /* payload / output length */
    long aad_bytes;     /* AEAD associated data length */
    long tag_bytes;     /* CCM tag length (left out: CB_DEFAULT_TAG_BYTES) */
    long nonce_bytes;   /* CCM nonce length (left out: CB_DEFAULT_NONCE_BYTES) */
    long rekey;         /* ciphers: 1 = set the key again before every operation (left out: 0) */
    long rsa_bits;      /* 1024/2048/... */
    char curve[16];     /* "p256", "p521", "x25519" */
    char source[16];    /* random source: "library", "getrandom", "rdrand", "rdseed", "hwrng" */
    long level;         /* ML-KEM 512/768/1024, ML-DSA 44/65/87 */
} cb_params;

/* Named byte strings: inputs and outputs of `compute`. */
typedef struct {
    int n;
    char name[CB_MAXKV][24];
    uint8_t *val[CB_MAXKV];   /* malloc'd; freed by cb_kv_free */
    size_t len[CB_MAXKV];
} cb_kv;

/* kv helpers (implemented in util.c) */
const uint8_t *cb_kv_get(const cb_kv *kv, const char *name, size_t *len); /* NULL if absent */
/* Like cb_kv_get, but a missing input reads as empty (protocol: empty means absent); never NULL. */
const uint8_t *cb_kv_input(const cb_kv *kv, const char *name, size_t *len);
int  cb_kv_put(cb_kv *kv, const char *name, const uint8_t *val, size_t len); /* copies; 0 ok */
void cb_kv_free(cb_kv *kv);

/* The op's catalog id, e.g. "aes-gcm-encrypt", for messages. */
static inline const char *cb_op_name(const cb_params *p) { return cb_op(p->op)->id; }

/* Copy msg into err (CB_ERRLEN) and return code: `return cb_say(err, CB_UNSUPPORTED, "why");` */
int cb_say(char *err, int code, const char *msg);

/* A zeroed timing slot of `size` bytes for setup(), or NULL with err saying "out of memory". */
void *cb_slot_new(size_t size, char *err);

/* Status codes */
#define CB_OK 0
#define CB_ERR 1          /* operation failed: err filled */
#define CB_UNSUPPORTED 2  /* engine does not implement op/params: err filled with why */

typedef struct cb_engine {
    const char *name;     /* protocol engine name: "openssl", "mbedtls", "libsodium", "system" */
    const char *library;  /* human name, e.g. "OpenSSL" */
    /* Append engine facts as JSON members (without braces), e.g. "\"version\":\"…\",\"aesni\":1".
     * out is at least 2048 bytes. */
    void (*describe)(char *out, size_t outlen);
    /* CB_OK if supported, CB_UNSUPPORTED with why otherwise. Must be cheap. */
    int (*supports)(const cb_params *p, char *why);
    /* Run the op once on explicit inputs (see protocol.md table); CB_OK / CB_ERR / CB_UNSUPPORTED. */
    int (*compute)(const cb_params *p, const cb_kv *in, cb_kv *out, char *err);
    /* Prepare a timing slot: allocate inputs, keys, contexts. Returns NULL and fills err on failure. */
    void *(*setup)(const cb_params *p, char *err);
    /* Perform k timed operations. CB_OK or CB_ERR (err filled). Must not allocate per op where avoidable. */
    int (*run)(void *slot, uint64_t k, char *err);
    void (*teardown)(void *slot);
} cb_engine;

extern const cb_engine cb_engine_openssl;
extern const cb_engine cb_engine_mbedtls;
extern const cb_engine cb_engine_libsodium;
extern const cb_engine cb_engine_system;
extern const cb_engine cb_engine_pkcs11;   /* any PKCS#11 module: secure elements, HSMs, SoftHSM2 */
extern const cb_engine cb_engine_tpm;      /* TPM 2.0 through tpm2-tss ESAPI */
extern const cb_engine cb_engine_psa;      /* the PSA Crypto API of Mbed TLS 3.5 (cbh-psa only) */
extern const cb_engine cb_engine_pqclean;  /* ML-KEM / ML-DSA from PQClean's clean sources (cbh-pqclean only) */

#endif
