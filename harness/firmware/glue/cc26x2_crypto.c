/* cc26x2_crypto.c - glue for cryptobench's own register-level CC13x2/CC26x2 CRYPTO driver
 * (harness/firmware/drivers/cc26x2, written from TI SWCU185G): the catalog ops the AES and hash
 * engine serves. On the simulator (`--device cc2652`) the registers are the timing-annotated
 * model's (docs/accelerators.md); on a CC26x2 board they are the part's.
 *
 *   aes-ecb/cbc/ctr-encrypt   key store + AES engine through its DMA, RESULT_AVAIL polled
 *   aes-gcm-encrypt           the same with the AAD first; the tag from AESTAGOUT (12-byte nonce)
 *   aes-ccm-encrypt           the same in CCM (7-13 byte nonce, even 4-16 byte tag; A0 in AESIV)
 *   sha224 / sha256           the hash engine through its DMA, padded by the engine
 *
 * Every operation loads its key into the key store (rekey=1 and rekey=0 alike: the engine keeps
 * no schedule a glue could hold outside the timed region). No heap. */

#include <string.h>

#include "cc26x2_crypto.h"
#include "fw.h"

const char fw_lib_name[] = "cc26x2-crypto";
const char fw_lib_version[] = "cryptobench CC26x2 register driver, SWCU185G, polling "
                              "(served by peripheral: TI CC26x2 CRYPTO)";

#if defined(FW_OP_AES_ECB_ENCRYPT) || defined(FW_OP_AES_CBC_ENCRYPT) || defined(FW_OP_AES_CTR_ENCRYPT) \
    || defined(FW_OP_AES_GCM_ENCRYPT) || defined(FW_OP_AES_CCM_ENCRYPT)
static int
aes_supports(const fw_params *p, const char **why)
{
	if (p->rekey == 0) {
		*why = "the CC26x2 engine takes its key from the key store in every operation (no schedule to keep)";
		return FW_UNSUPPORTED;
	}
	if (p->key_bits != 128 && p->key_bits != 192 && p->key_bits != 256) {
		*why = "key_bits must be 128, 192 or 256";
		return FW_UNSUPPORTED;
	}
	return FW_OK;
}

static int
fits(const fw_io *io, size_t n)
{
	return io->out != NULL && io->out_cap >= n;
}

static int
aes_mode(fw_io *io, int mode)
{
	if (!fits(io, io->msg_len) || (mode != CC26X2_ECB && io->iv_len != 16))
		return FW_ERR;
	if (cc26x2_aes(mode, 1, io->key, io->key_len, io->iv, io->msg, io->out, io->msg_len))
		return FW_ERR;
	io->out_len = io->msg_len;
	return FW_OK;
}
#endif

#ifdef FW_OP_AES_ECB_ENCRYPT
static int
ecb_run(const fw_params *p, fw_io *io)
{
	(void)p;
	return aes_mode(io, CC26X2_ECB);
}
#define FW_GLUE_AES_ECB_ENCRYPT aes_supports, ecb_run
#endif

#ifdef FW_OP_AES_CBC_ENCRYPT
static int
cbc_run(const fw_params *p, fw_io *io)
{
	(void)p;
	return aes_mode(io, CC26X2_CBC);
}
#define FW_GLUE_AES_CBC_ENCRYPT aes_supports, cbc_run
#endif

#ifdef FW_OP_AES_CTR_ENCRYPT
static int
ctr_run(const fw_params *p, fw_io *io)
{
	(void)p;
	return aes_mode(io, CC26X2_CTR);
}
#define FW_GLUE_AES_CTR_ENCRYPT aes_supports, ctr_run
#endif

#if defined(FW_OP_AES_GCM_ENCRYPT) || defined(FW_OP_AES_CCM_ENCRYPT)
static int
gcm_supports(const fw_params *p, const char **why)
{
	if (aes_supports(p, why) != FW_OK)
		return FW_UNSUPPORTED;
	if (p->bytes == 0) {
		*why = "an empty payload starts no DMA transfer on the engine's DMA path this driver uses";
		return FW_UNSUPPORTED;
	}
	return FW_OK;
}

#endif

#ifdef FW_OP_AES_GCM_ENCRYPT
/* GCM's IV is the catalog's 12-byte nonce (J0 = nonce || 1); another length fails the call */
static int
gcm_run(const fw_params *p, fw_io *io)
{
	(void)p;
	if (io->iv_len != 12 || !fits(io, io->msg_len + 16))
		return FW_ERR;
	if (cc26x2_aes_gcm(io->key, io->key_len, io->iv, io->aad, io->aad_len, io->msg, io->out, io->msg_len,
	                   io->out + io->msg_len))
		return FW_ERR;
	io->out_len = io->msg_len + 16;
	return FW_OK;
}
#define FW_GLUE_AES_GCM_ENCRYPT gcm_supports, gcm_run
#endif

#ifdef FW_OP_AES_CCM_ENCRYPT
static int
ccm_supports(const fw_params *p, const char **why)
{
	if (gcm_supports(p, why) != FW_OK)
		return FW_UNSUPPORTED;
	if (p->nonce_bytes < 7 || p->nonce_bytes > 13 || p->tag_bytes < 4 || p->tag_bytes > 16 || p->tag_bytes % 2) {
		*why = "CCM takes a 7-13 byte nonce and an even 4-16 byte tag (SP 800-38C)";
		return FW_UNSUPPORTED;
	}
	return FW_OK;
}

static int
ccm_run(const fw_params *p, fw_io *io)
{
	size_t t = (size_t)p->tag_bytes;
	if (!fits(io, io->msg_len + t))
		return FW_ERR;
	if (cc26x2_aes_ccm(io->key, io->key_len, io->iv, io->iv_len, io->aad, io->aad_len, io->msg, io->out, io->msg_len,
	                   io->out + io->msg_len, t))
		return FW_ERR;
	io->out_len = io->msg_len + t;
	return FW_OK;
}
#define FW_GLUE_AES_CCM_ENCRYPT ccm_supports, ccm_run
#endif

#if defined(FW_OP_SHA224) || defined(FW_OP_SHA256)
static int
sha_supports(const fw_params *p, const char **why)
{
	if (p->bytes == 0) {
		*why = "an empty message starts no DMA transfer on the engine's DMA path this driver uses";
		return FW_UNSUPPORTED;
	}
	return FW_OK;
}
#endif

#ifdef FW_OP_SHA224
static int
sha224_run(const fw_params *p, fw_io *io)
{
	(void)p;
	if (io->out == NULL || io->out_cap < 28 || io->msg_len == 0)
		return FW_ERR;
	cc26x2_sha2(1, io->msg, io->msg_len, io->out);
	io->out_len = 28;
	return FW_OK;
}
#define FW_GLUE_SHA224 sha_supports, sha224_run
#endif

#ifdef FW_OP_SHA256
static int
sha256_run(const fw_params *p, fw_io *io)
{
	(void)p;
	if (io->out == NULL || io->out_cap < 32 || io->msg_len == 0)
		return FW_ERR;
	cc26x2_sha2(0, io->msg, io->msg_len, io->out);
	io->out_len = 32;
	return FW_OK;
}
#define FW_GLUE_SHA256 sha_supports, sha256_run
#endif

/* The op table: the rows of fw_ops_table.h (generated from the catalog) for the FW_GLUE_* above. */
#include "fw_ops_table.h"
