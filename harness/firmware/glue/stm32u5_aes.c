/* stm32u5_aes.c - glue for cryptobench's own register-level driver of the STM32U5's two AES engines
 * (harness/firmware/drivers/stm32u5, written from ST RM0456): aes-ecb-encrypt and aes-cbc-encrypt on
 * the AES hardware accelerator (recipe stm32u5-aes) or, built with STM32U5_USE_SAES, on the
 * side-channel-protected secure AES coprocessor (recipe stm32u5-saes). On the simulator
 * (`--device stm32u585`) the registers are the timing-annotated models' (docs/accelerators.md); on
 * an STM32U585 board they are the part's. Both engines take 128- or 256-bit keys, and the key in
 * every operation (rekey=0 is refused: there is no schedule to keep). No heap. */

#include "fw.h"
#include "stm32u5_aes.h"

#ifdef STM32U5_USE_SAES
#define ENGINE_BASE STM32U5_SAES_BASE
const char fw_lib_name[] = "stm32u5-saes";
const char fw_lib_version[] = "cryptobench STM32U5 SAES register driver (RM0456), polling "
                              "(served by peripheral: STM32U5 SAES for aes-*)";
#else
#define ENGINE_BASE STM32U5_AES_BASE
const char fw_lib_name[] = "stm32u5-aes";
const char fw_lib_version[] = "cryptobench STM32U5 AES register driver (RM0456), polling "
                              "(served by peripheral: STM32U5 AES for aes-*)";
#endif

#if defined(FW_OP_AES_ECB_ENCRYPT) || defined(FW_OP_AES_CBC_ENCRYPT)
static int
aes_supports(const fw_params *p, const char **why)
{
	if (p->key_bits != 128 && p->key_bits != 256) {
		*why = "the STM32U5's AES and SAES take 128- or 256-bit keys (RM0456)";
		return FW_UNSUPPORTED;
	}
	if (p->rekey == 0) {
		*why = "the engine takes its key in every operation (no schedule to keep)";
		return FW_UNSUPPORTED;
	}
	return FW_OK;
}

static int
aes_run(fw_io *io, uint32_t chmod)
{
	if (io->out == NULL || io->out_cap < io->msg_len || (chmod == STM32U5_AES_CBC && io->iv_len != 16))
		return FW_ERR;
	if (stm32u5_aes_encrypt(ENGINE_BASE, chmod, io->key, io->key_len, io->iv, io->msg, io->out, io->msg_len))
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
	return aes_run(io, STM32U5_AES_ECB);
}
#define FW_GLUE_AES_ECB_ENCRYPT aes_supports, ecb_run
#endif

#ifdef FW_OP_AES_CBC_ENCRYPT
static int
cbc_run(const fw_params *p, fw_io *io)
{
	(void)p;
	return aes_run(io, STM32U5_AES_CBC);
}
#define FW_GLUE_AES_CBC_ENCRYPT aes_supports, cbc_run
#endif

#include "fw_ops_table.h"
