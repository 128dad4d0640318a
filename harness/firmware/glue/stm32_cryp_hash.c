/* stm32_cryp_hash.c - glue for cryptobench's own register-level STM32F4 crypto drivers
 * (harness/firmware/drivers/stm32f4, written from ST RM0090 Rev 11): the catalog ops the STM32F43x's
 * HASH processor serves. On the simulator (`--device stm32f437`) the registers are the timing-
 * annotated model's (docs/accelerators.md); on an STM32F43x board they are the part's.
 *
 *   sha1 / sha224 / sha256    the HASH processor, fed by the core
 *   aes-ecb/cbc-encrypt       the CRYP processor, fed and read by the core through its FIFOs
 *   random                    the RNG's 32-bit values (RM0090 ch. 24); the catalog's source
 *                             parameter is not read: the bytes are always the RNG's
 *
 * Completion polled (stm32-cryp-hash), or by interrupt with STM32F4_COMPLETION_IRQ
 * (stm32-cryp-hash-irq: the drivers wait in WFI for CRYP, interrupt 79, and HASH_RNG, 80).
 *
 * No heap. The CRYP takes its key in every operation (rekey=0 is refused: no schedule to keep). */

#include <string.h>

#include "fw.h"
#include "stm32f4_cryp.h"
#include "stm32f4_hash.h"
#include "stm32f4_rng.h"

#ifdef STM32F4_COMPLETION_IRQ          /* the stm32-cryp-hash-irq recipe: the drivers wait in WFI */
const char fw_lib_name[] = "stm32-cryp-hash-irq";
const char fw_lib_version[] = "cryptobench STM32F4 register drivers, RM0090 Rev 11, interrupt completion "
                              "(served by peripheral: STM32F4 HASH for sha*; peripheral: STM32F4 CRYP for aes-*; "
                              "peripheral: STM32F4 RNG for random)";
#else
const char fw_lib_name[] = "stm32-cryp-hash";
const char fw_lib_version[] = "cryptobench STM32F4 register drivers, RM0090 Rev 11, polling "
                              "(served by peripheral: STM32F4 HASH for sha*; peripheral: STM32F4 CRYP for aes-*; "
                              "peripheral: STM32F4 RNG for random)";
#endif

#if defined(FW_OP_SHA1) || defined(FW_OP_SHA224) || defined(FW_OP_SHA256)
static int
supports_any(const fw_params *p, const char **why)
{
	(void)p;
	(void)why;
	return FW_OK;
}

static int
hash_run(fw_io *io, uint32_t algo, size_t digest_len)
{
	if (io->out == NULL || io->out_cap < digest_len) {
		return FW_ERR;
	}
	stm32f4_hash(algo, io->msg, io->msg_len, io->out, digest_len);
	io->out_len = digest_len;
	return FW_OK;
}
#endif

#ifdef FW_OP_SHA1
static int
sha1_run(const fw_params *p, fw_io *io)
{
	(void)p;
	return hash_run(io, STM32F4_HASH_SHA1, 20);
}
#define FW_GLUE_SHA1 supports_any, sha1_run
#endif

#ifdef FW_OP_SHA224
static int
sha224_run(const fw_params *p, fw_io *io)
{
	(void)p;
	return hash_run(io, STM32F4_HASH_SHA224, 28);
}
#define FW_GLUE_SHA224 supports_any, sha224_run
#endif

#ifdef FW_OP_SHA256
static int
sha256_run(const fw_params *p, fw_io *io)
{
	(void)p;
	return hash_run(io, STM32F4_HASH_SHA256, 32);
}
#define FW_GLUE_SHA256 supports_any, sha256_run
#endif

#if defined(FW_OP_AES_ECB_ENCRYPT) || defined(FW_OP_AES_CBC_ENCRYPT)
static int
aes_supports(const fw_params *p, const char **why)
{
	if (p->key_bits != 128 && p->key_bits != 192 && p->key_bits != 256) {
		*why = "key_bits must be 128, 192 or 256";
		return FW_UNSUPPORTED;
	}
	return FW_OK;
}

static int
aes_run(fw_io *io, uint32_t mode)
{
	if (io->out == NULL || io->out_cap < io->msg_len || (mode == STM32F4_CRYP_CBC && io->iv_len != 16))
		return FW_ERR;
	if (stm32f4_cryp_encrypt(mode, io->key, io->key_len, io->iv, io->msg, io->out, io->msg_len))
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
	return aes_run(io, STM32F4_CRYP_ECB);
}
#define FW_GLUE_AES_ECB_ENCRYPT aes_supports, ecb_run
#endif

#ifdef FW_OP_AES_CBC_ENCRYPT
static int
cbc_run(const fw_params *p, fw_io *io)
{
	(void)p;
	return aes_run(io, STM32F4_CRYP_CBC);
}
#define FW_GLUE_AES_CBC_ENCRYPT aes_supports, cbc_run
#endif

#ifdef FW_OP_RANDOM
static int
random_supports(const fw_params *p, const char **why)
{
	(void)p;
	(void)why;
	return FW_OK;
}

static int
random_run(const fw_params *p, fw_io *io)
{
	size_t n = p->bytes > 0 ? (size_t)p->bytes : 0;
	if (io->out == NULL || io->out_cap < n || stm32f4_rng_read(io->out, n))
		return FW_ERR;
	io->out_len = n;
	return FW_OK;
}
#define FW_GLUE_RANDOM random_supports, random_run
#endif

/* The op table: the rows of fw_ops_table.h (generated from the catalog) for the FW_GLUE_* above. */
#include "fw_ops_table.h"
