/* glue.c - the catalog's AES-ECB/CBC (128-bit keys), SHA-1 and SHA-256 through NXP's MCUXpresso SDK
 * DCP driver (fsl_dcp.c), built unmodified from the user's SDK tree (--library-source).
 * cryptobench's own code: the glue initialises the DCP once as an application's main would
 * (DCP_GetDefaultConfig, DCP_Init: all channels, no interrupt, context switching on), takes
 * channel 0 and key slot 0 with no byte swapping, and makes one blocking driver call per
 * operation; with rekey=0 it loads the key slot once per cell (as NXP's Mbed TLS port does for a
 * context), with rekey=1 before every call. No heap. */
#include <stdint.h>
#include <string.h>

#include "fw.h"
#include "fsl_dcp.h"

const char fw_lib_name[] = "nxp-dcp";
const char fw_lib_version[] = "NXP MCUXpresso SDK fsl_dcp.c, blocking API, channel 0, key slot 0 "
                              "(served by peripheral: i.MX RT1060 DCP for aes-*, sha*)";

/* the handle, with the DCP initialised at its first use */
static dcp_handle_t *
dcp_handle(void)
{
	static dcp_handle_t handle;
	static int ready;
	if (!ready) {
		dcp_config_t config;
		DCP_GetDefaultConfig(&config);
		DCP_Init(DCP, &config);
		handle.channel = kDCP_Channel0;
		handle.keySlot = kDCP_KeySlot0;
		handle.swapConfig = kDCP_NoSwap;
		ready = 1;
	}
	return &handle;
}

#if defined(FW_OP_AES_ECB_ENCRYPT) || defined(FW_OP_AES_CBC_ENCRYPT)
static int
aes_supports(const fw_params *p, const char **why)
{
	if (p->key_bits != 128) {
		*why = "the DCP has AES-128 only";
		return FW_UNSUPPORTED;
	}
	if (p->bytes < 16) {
		*why = "fsl_dcp.c takes whole AES blocks, at least one (16 bytes)";
		return FW_UNSUPPORTED;
	}
	return FW_OK;
}

const uint8_t fw_lib_keeps_key = 1;            /* fw.h: rekey=0 keeps the key in its slot */

static int
aes_run(const fw_params *p, fw_io *io, int cbc)
{
	static uint32_t key[4], iv[4];                 /* DCP_AES_SetKey takes a word-aligned key */
	dcp_handle_t *h = dcp_handle();
	if (io->key_len != 16 || io->out_cap < io->msg_len || (cbc && io->iv_len != 16))
		return FW_ERR;
	if (p->rekey || !fw_keyed) {                   /* rekey=0: the cell's first, untimed call only */
		memcpy(key, io->key, 16);
		if (DCP_AES_SetKey(DCP, h, (const uint8_t *)key, 16) != kStatus_Success)
			return FW_ERR;
		fw_keyed = 1;
	}
	status_t s;
	if (cbc) {
		memcpy(iv, io->iv, 16);
		s = DCP_AES_EncryptCbc(DCP, h, io->msg, io->out, io->msg_len, (const uint8_t *)iv);
	} else {
		s = DCP_AES_EncryptEcb(DCP, h, io->msg, io->out, io->msg_len);
	}
	if (s != kStatus_Success)
		return FW_ERR;
	io->out_len = io->msg_len;
	return FW_OK;
}
#endif

#ifdef FW_OP_AES_ECB_ENCRYPT
static int
ecb_run(const fw_params *p, fw_io *io)
{
	return aes_run(p, io, 0);
}
#define FW_GLUE_AES_ECB_ENCRYPT aes_supports, ecb_run
#endif

#ifdef FW_OP_AES_CBC_ENCRYPT
static int
cbc_run(const fw_params *p, fw_io *io)
{
	return aes_run(p, io, 1);
}
#define FW_GLUE_AES_CBC_ENCRYPT aes_supports, cbc_run
#endif

#if defined(FW_OP_SHA1) || defined(FW_OP_SHA256)
static int
sha_supports(const fw_params *p, const char **why)
{
	*why = "a negative byte count";
	return p->bytes >= 0 ? FW_OK : FW_UNSUPPORTED;
}

static int
sha_run(fw_io *io, dcp_hash_algo_t algo, size_t digest)
{
	size_t n = digest;
	if (io->out == NULL || io->out_cap < digest)
		return FW_ERR;
	if (DCP_HASH(DCP, dcp_handle(), algo, io->msg, io->msg_len, io->out, &n) != kStatus_Success || n != digest)
		return FW_ERR;
	io->out_len = digest;
	return FW_OK;
}
#endif

#ifdef FW_OP_SHA1
static int
sha1_run(const fw_params *p, fw_io *io)
{
	(void)p;
	return sha_run(io, kDCP_Sha1, 20);
}
#define FW_GLUE_SHA1 sha_supports, sha1_run
#endif

#ifdef FW_OP_SHA256
static int
sha256_run(const fw_params *p, fw_io *io)
{
	(void)p;
	return sha_run(io, kDCP_Sha256, 32);
}
#define FW_GLUE_SHA256 sha_supports, sha256_run
#endif

#include "fw_ops_table.h"
