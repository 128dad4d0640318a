/* glue.c - p256-m's four public functions as cryptobench catalog ops (P-256 only).
 *
 * p256-m draws its private keys and ECDSA nonces from p256_generate_random(), which Mbed TLS's
 * copy serves from psa_generate_random(): this file provides that one. It hands out the cell's private key once when a key pair is
 * generated (so ecdh-keygen computes the public key of a known d and is checked against the
 * host's), and the harness's deterministic bytes otherwise (ECDSA nonces; signatures are checked
 * by verifying them on the host). */
#include <string.h>
#include "fw.h"
#include "p256-m.h"
#include "psa/crypto.h"

const char fw_lib_name[] = "p256-m";
const char fw_lib_version[] = "Mbed TLS 3.5.1 copy";

static const uint8_t *next_random;     /* bytes to hand out once, else fw_random */

psa_status_t psa_generate_random(uint8_t *output, size_t output_size)
{
    if (next_random != NULL) {
        memcpy(output, next_random, output_size);
        next_random = NULL;
        return PSA_SUCCESS;
    }
    return fw_random(NULL, output, output_size) == 0 ? PSA_SUCCESS : PSA_ERROR_INSUFFICIENT_ENTROPY;
}

/* Mbed TLS's zeroize, which p256-m.c calls: a plain memset the compiler may not drop. */
void mbedtls_platform_zeroize(void *buf, size_t len)
{
    volatile uint8_t *p = buf;
    while (len--)
        *p++ = 0;
}

static int p256_only(const fw_params *p, const char **why)
{
    if (p->curve[0] != '\0' && strncmp(p->curve, "p256", sizeof p->curve) != 0) {
        *why = "p256-m implements P-256 only";
        return FW_UNSUPPORTED;
    }
    return FW_OK;
}

/* Public keys travel as 04 || X || Y (65 bytes); p256-m takes and gives X || Y. */
static int uncompressed(const fw_io *io, const uint8_t *point, size_t len)
{
    (void)io;
    return len == 65 && point[0] == 0x04;
}

#ifdef FW_OP_ECDH_KEYGEN
static int keygen_run(const fw_params *p, fw_io *io)
{
    uint8_t priv[32];
    (void)p;
    if (io->key_len != 32 || io->out_cap < 65)
        return FW_ERR;
    next_random = io->key;
    if (p256_gen_keypair(priv, io->out + 1) != P256_SUCCESS || memcmp(priv, io->key, 32) != 0)
        return FW_ERR;
    io->out[0] = 0x04;
    io->out_len = 65;
    return FW_OK;
}
#endif

#ifdef FW_OP_ECDH_SHARED_SECRET
static int shared_run(const fw_params *p, fw_io *io)
{
    (void)p;
    if (io->key_len != 32 || io->out_cap < 32 || !uncompressed(io, io->peer, io->peer_len))
        return FW_ERR;
    if (p256_ecdh_shared_secret(io->out, io->key, io->peer + 1) != P256_SUCCESS)
        return FW_ERR;
    io->out_len = 32;
    return FW_OK;
}
#endif

#ifdef FW_OP_ECDSA_SIGN
static int sign_run(const fw_params *p, fw_io *io)
{
    (void)p;
    if (io->key_len != 32 || io->out_cap < 64)
        return FW_ERR;
    if (p256_ecdsa_sign(io->out, io->key, io->msg, io->msg_len) != P256_SUCCESS)
        return FW_ERR;
    io->out_len = 64;
    return FW_OK;
}
#endif

#ifdef FW_OP_ECDSA_VERIFY
/* out = 01 (valid) or 00; a public key that is not an uncompressed point is a result 00. */
static int verify_run(const fw_params *p, fw_io *io)
{
    (void)p;
    if (io->sig_len != 64 || io->out_cap < 1)
        return FW_ERR;
    io->out[0] = uncompressed(io, io->peer, io->peer_len)
                 && p256_ecdsa_verify(io->sig, io->peer + 1, io->msg, io->msg_len) == P256_SUCCESS;
    io->out_len = 1;
    return FW_OK;
}
#endif

const fw_op fw_lib_ops[] = {
#ifdef FW_OP_ECDH_KEYGEN
    {"ecdh-keygen", p256_only, keygen_run},
#endif
#ifdef FW_OP_ECDH_SHARED_SECRET
    {"ecdh-shared-secret", p256_only, shared_run},
#endif
#ifdef FW_OP_ECDSA_SIGN
    {"ecdsa-sign", p256_only, sign_run},
#endif
#ifdef FW_OP_ECDSA_VERIFY
    {"ecdsa-verify", p256_only, verify_run},
#endif
    {NULL, NULL, NULL},
};
const int fw_lib_n_ops = (int)(sizeof fw_lib_ops / sizeof fw_lib_ops[0]) - 1;
