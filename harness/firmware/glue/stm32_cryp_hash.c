/* stm32_cryp_hash.c - glue for cryptobench's own register-level STM32F4 crypto drivers
 * (harness/firmware/drivers/stm32f4, written from ST RM0090 Rev 11): the catalog ops the STM32F43x's
 * HASH processor serves. On the simulator (`--device stm32f437`) the registers are the timing-
 * annotated model's (docs/accelerators.md); on an STM32F43x board they are the part's.
 *
 *   sha1 / sha224 / sha256    the HASH processor, fed by the core, completion polled
 *
 * No heap. rekey does not apply (a hash has no key). */

#include <string.h>

#include "fw.h"
#include "stm32f4_hash.h"

const char fw_lib_name[] = "stm32-cryp-hash";
const char fw_lib_version[] = "cryptobench STM32F4 register drivers, RM0090 Rev 11, polling "
                              "(served by peripheral: STM32F4 HASH)";
const uint8_t fw_lib_keeps_key = 1;     /* fw.h: nothing to keep */

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

/* The op table: the rows of fw_ops_table.h (generated from the catalog) for the FW_GLUE_* above. */
#include "fw_ops_table.h"
