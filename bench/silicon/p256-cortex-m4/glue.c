/* glue.c - P256-Cortex-M4's ECDH and ECDSA functions as cryptobench catalog ops (P-256 only).
 *
 * The library works on little-endian arrays of 32-bit words; the catalog's keys, points and
 * signatures are big-endian bytes (04 || X || Y for points, r || s for signatures). The
 * conversions here cost a few hundred cycles against the library's 300k to 1M. */
#include <string.h>
#include "fw.h"
#include "p256-cortex-m4.h"

const char fw_lib_name[] = "p256-cortex-m4";
const char fw_lib_version[] = "p256-cortex-m4-sys 0.1.0";

static int p256_only(const fw_params *p, const char **why)
{
    if (p->curve[0] != '\0' && strncmp(p->curve, "p256", sizeof p->curve) != 0) {
        *why = "P256-Cortex-M4 implements P-256 only";
        return FW_UNSUPPORTED;
    }
    return FW_OK;
}

static void words_from_bytes(uint32_t w[8], const uint8_t *be)
{
    p256_convert_endianness(w, be, 32);
}

#ifdef FW_OP_ECDH_KEYGEN
static int keygen_run(const fw_params *p, fw_io *io)
{
    uint32_t d[8], x[8], y[8];
    (void)p;
    if (io->key_len != 32 || io->out_cap < 65)
        return FW_ERR;
    words_from_bytes(d, io->key);
    if (!p256_keygen(x, y, d))
        return FW_ERR;
    p256_point_to_octet_string_uncompressed(io->out, x, y);
    io->out_len = 65;
    return FW_OK;
}
#endif

#ifdef FW_OP_ECDH_SHARED_SECRET
static int shared_run(const fw_params *p, fw_io *io)
{
    uint32_t d[8], x[8], y[8];
    (void)p;
    if (io->key_len != 32 || io->out_cap < 32)
        return FW_ERR;
    words_from_bytes(d, io->key);
    if (!p256_octet_string_to_point(x, y, io->peer, (uint32_t)io->peer_len)
        || !p256_ecdh_calc_shared_secret(io->out, d, x, y))
        return FW_ERR;
    io->out_len = 32;
    return FW_OK;
}
#endif

#ifdef FW_OP_ECDSA_SIGN
/* A k the library rejects (probability about 2^-32) is replaced by the next one, as its
 * documentation asks. */
static int sign_run(const fw_params *p, fw_io *io)
{
    uint32_t d[8], k[8], r[8], s[8];
    (void)p;
    if (io->key_len != 32 || io->out_cap < 64)
        return FW_ERR;
    words_from_bytes(d, io->key);
    do {
        if (fw_random(NULL, (unsigned char *)k, sizeof k) != 0)
            return FW_ERR;
    } while (!p256_sign(r, s, io->msg, (uint32_t)io->msg_len, d, k));
    p256_convert_endianness(io->out, r, 32);
    p256_convert_endianness(io->out + 32, s, 32);
    io->out_len = 64;
    return FW_OK;
}
#endif

#ifdef FW_OP_ECDSA_VERIFY
/* out = 01 (valid) or 00; a public key that does not decode to a point of the curve is a 00. */
static int verify_run(const fw_params *p, fw_io *io)
{
    uint32_t x[8], y[8], r[8], s[8];
    (void)p;
    if (io->sig_len != 64 || io->out_cap < 1)
        return FW_ERR;
    words_from_bytes(r, io->sig);
    words_from_bytes(s, io->sig + 32);
    io->out[0] = p256_octet_string_to_point(x, y, io->peer, (uint32_t)io->peer_len)
                 && p256_verify(x, y, io->msg, (uint32_t)io->msg_len, r, s);
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
