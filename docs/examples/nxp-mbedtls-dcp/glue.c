/* glue.c - the catalog's AES-ECB/CBC (128-bit keys), SHA-1, SHA-256 and SHA-512 through the Mbed TLS
 * API of NXP's Mbed TLS port (middleware/mbedtls, port/ksdk/ksdk_mbedtls.c), built unmodified from the
 * user's MCUXpresso SDK tree (--library-source): the stack the NXP blog's mbedtls_benchmark timed.
 * With the SDK's ksdk_mbedtls_config.h on an i.MX RT1060 (FSL_FEATURE_SOC_DCP_COUNT 1) the port
 * sends AES-128 and SHA-1/SHA-256 to the DCP through fsl_dcp.c; SHA-512 stays Mbed TLS's software.
 * cryptobench's own code: it initialises the DCP at start-up as CRYPTO_InitHardware() does (its DCP
 * part: DCP_GetDefaultConfig, DCP_Init, in fw_alt_init; the TRNG part is left out, the simulator has
 * no i.MX RT TRNG model) and makes the calls mbedtls_benchmark makes. No heap. */
#include <stdint.h>
#include <string.h>

#include "fw.h"
#include "mbedtls/aes.h"
#include "mbedtls/sha1.h"
#include "mbedtls/sha256.h"
#include "mbedtls/sha512.h"
#include "mbedtls/version.h"
#include "fsl_dcp.h"

const char fw_lib_name[] = "nxp-mbedtls-dcp";
const char fw_lib_version[] = "Mbed TLS " MBEDTLS_VERSION_STRING " with NXP's ksdk port (ksdk_mbedtls.c) on "
                              "fsl_dcp.c (served by peripheral: i.MX RT1060 DCP for aes-*, sha1, sha256; "
                              "sha512 in software)";
const uint8_t fw_lib_keeps_key = 1;            /* fw.h: the AES ops honour rekey=0 */

/* the DCP's part of CRYPTO_InitHardware(), once at start-up (fw.h: the harness calls it first) */
void
fw_alt_init(void)
{
	dcp_config_t config;
	DCP_GetDefaultConfig(&config);
	DCP_Init(DCP, &config);
}

#if defined(FW_OP_AES_ECB_ENCRYPT) || defined(FW_OP_AES_CBC_ENCRYPT)
static int
aes_supports(const fw_params *p, const char **why)
{
	if (p->key_bits != 128) {
		*why = "the port sends AES-128 to the DCP (MBEDTLS_AES_ALT_NO_192, MBEDTLS_AES_ALT_NO_256)";
		return FW_UNSUPPORTED;
	}
	if (p->bytes % 16 != 0) {
		*why = "whole AES blocks only (mbedtls_aes_crypt_cbc and _ecb take 16-byte blocks)";
		return FW_UNSUPPORTED;
	}
	return FW_OK;
}

/* The cell's context: with rekey=1 keyed before every operation; with rekey=0 keyed at the cell's
 * first call (fw_keyed), as mbedtls_benchmark sets its key once before its timing loop. The port
 * loads the key into the DCP's key slot when a context first uses it (crypto_key_is_loaded). */
static mbedtls_aes_context *
aes_keyed(const fw_params *p, const fw_io *io)
{
	static mbedtls_aes_context ctx;
	if (p->rekey || !fw_keyed) {
		mbedtls_aes_free(&ctx);
		mbedtls_aes_init(&ctx);
		if (mbedtls_aes_setkey_enc(&ctx, io->key, 128) != 0)
			return NULL;
		fw_keyed = 1;
	}
	return &ctx;
}
#endif

#ifdef FW_OP_AES_ECB_ENCRYPT
static int
ecb_run(const fw_params *p, fw_io *io)
{
	mbedtls_aes_context *ctx;
	size_t i;
	int ret = 0;
	if (io->key_len != 16 || io->out_cap < io->msg_len || (ctx = aes_keyed(p, io)) == NULL)
		return FW_ERR;
	for (i = 0; ret == 0 && i < io->msg_len; i += 16)
		ret = mbedtls_aes_crypt_ecb(ctx, MBEDTLS_AES_ENCRYPT, io->msg + i, io->out + i);
	if (ret != 0)
		return FW_ERR;
	io->out_len = io->msg_len;
	return FW_OK;
}
#define FW_GLUE_AES_ECB_ENCRYPT aes_supports, ecb_run
#endif

#ifdef FW_OP_AES_CBC_ENCRYPT
static int
cbc_run(const fw_params *p, fw_io *io)
{
	mbedtls_aes_context *ctx;
	unsigned char iv[16];                      /* Mbed TLS updates the IV in place */
	if (io->key_len != 16 || io->iv_len != 16 || io->out_cap < io->msg_len || (ctx = aes_keyed(p, io)) == NULL)
		return FW_ERR;
	memcpy(iv, io->iv, 16);
	if (mbedtls_aes_crypt_cbc(ctx, MBEDTLS_AES_ENCRYPT, io->msg_len, iv, io->msg, io->out) != 0)
		return FW_ERR;
	io->out_len = io->msg_len;
	return FW_OK;
}
#define FW_GLUE_AES_CBC_ENCRYPT aes_supports, cbc_run
#endif

#if defined(FW_OP_SHA1) || defined(FW_OP_SHA256) || defined(FW_OP_SHA512)
static int
sha_supports(const fw_params *p, const char **why)
{
	*why = "a negative byte count";
	return p->bytes >= 0 ? FW_OK : FW_UNSUPPORTED;
}
#endif

#ifdef FW_OP_SHA1
static int
sha1_run(const fw_params *p, fw_io *io)
{
	(void)p;
	if (io->out_cap < 20 || mbedtls_sha1_ret(io->msg, io->msg_len, io->out) != 0)
		return FW_ERR;
	io->out_len = 20;
	return FW_OK;
}
#define FW_GLUE_SHA1 sha_supports, sha1_run
#endif

#ifdef FW_OP_SHA256
static int
sha256_run(const fw_params *p, fw_io *io)
{
	(void)p;
	if (io->out_cap < 32 || mbedtls_sha256_ret(io->msg, io->msg_len, io->out, 0) != 0)
		return FW_ERR;
	io->out_len = 32;
	return FW_OK;
}
#define FW_GLUE_SHA256 sha_supports, sha256_run
#endif

#ifdef FW_OP_SHA512
static int
sha512_run(const fw_params *p, fw_io *io)
{
	(void)p;
	if (io->out_cap < 64 || mbedtls_sha512_ret(io->msg, io->msg_len, io->out, 0) != 0)
		return FW_ERR;
	io->out_len = 64;
	return FW_OK;
}
#define FW_GLUE_SHA512 sha_supports, sha512_run
#endif

#include "fw_ops_table.h"
