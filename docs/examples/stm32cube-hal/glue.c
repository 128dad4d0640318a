/* glue.c - catalog ops through ST's STM32Cube HAL for the STM32F4 (stm32f4xx_hal_hash.c,
 * stm32f4xx_hal_cryp.c), built unmodified from the user's SDK tree (--library-source). cryptobench's
 * own glue: it calls the HAL's public API as an application would, and nothing else touches the
 * HASH or CRYP registers. On the simulator (`--device stm32f437`) the registers are the timing-
 * annotated models' (docs/accelerators.md, "ST's HAL against the models"); on an STM32F43x board
 * they are the part's.
 *
 *   sha1 / sha224 / sha256    HAL_HASH_SHA1_Start / HAL_HASHEx_SHA224_Start / HAL_HASHEx_SHA256_Start
 *   aes-ecb/cbc-encrypt       HAL_CRYP_SetConfig + HAL_CRYP_Encrypt (polling)
 *
 * HAL_HASH_Init and HAL_CRYP_Init run once at start-up (fw_alt_init); their MspInit callbacks,
 * defined here as an application defines them, enable the processors' clocks in RCC_AHB2ENR. */
#include <string.h>

#include "fw.h"
#include "stm32f4xx_hal.h"

const char fw_lib_name[] = "stm32cube-hal";
const char fw_lib_version[] = "STM32CubeF4 HAL driver (HASH, CRYP), polling "
                              "(served by peripheral: STM32F4 HASH for sha*; peripheral: STM32F4 CRYP for aes-*)";

/* The timeout the HAL's polling loops are given, in HAL ticks (ms in an application). */
#define GLUE_TIMEOUT_MS 1000u

/* HAL_GetTick is the millisecond counter HAL_Init keeps with SysTick in an application. This image
 * has no HAL_Init (stm32f4xx_hal.c is not built), the harness owns the cycle counter, and a
 * library must not read DWT CYCCNT or SysTick itself (the simulator takes every read of them as
 * the harness's timing). So the tick here advances by one per call: a timeout of N ticks is N
 * polls of the flag, and the HAL's waits (tens of cycles on the models' latencies) never reach
 * GLUE_TIMEOUT_MS. Its cost is about a SysTick-kept HAL_GetTick's: a load and a return, plus a store. */
static volatile uint32_t glue_ticks;
uint32_t
HAL_GetTick(void)
{
	return glue_ticks++;
}

static HASH_HandleTypeDef hhash;
static CRYP_HandleTypeDef hcryp;

void
HAL_HASH_MspInit(HASH_HandleTypeDef *h)
{
	(void)h;
	__HAL_RCC_HASH_CLK_ENABLE();
}

void
HAL_CRYP_MspInit(CRYP_HandleTypeDef *h)
{
	(void)h;
	__HAL_RCC_CRYP_CLK_ENABLE();
}

void
fw_alt_init(void)
{
	hhash.Init.DataType = HASH_DATATYPE_8B;      /* the message is a byte string */
	(void)HAL_HASH_Init(&hhash);
	hcryp.Instance = CRYP;
	hcryp.Init.DataType = CRYP_DATATYPE_8B;
	hcryp.Init.KeySize = CRYP_KEYSIZE_128B;
	hcryp.Init.Algorithm = CRYP_AES_ECB;
	hcryp.Init.DataWidthUnit = CRYP_DATAWIDTHUNIT_BYTE;
	hcryp.Init.KeyIVConfigSkip = CRYP_KEYIVCONFIG_ALWAYS;
	(void)HAL_CRYP_Init(&hcryp);
}

#if defined(FW_OP_SHA1) || defined(FW_OP_SHA224) || defined(FW_OP_SHA256)
static int
hash_supports(const fw_params *p, const char **why)
{
	(void)p;
	(void)why;
	return FW_OK;
}

typedef HAL_StatusTypeDef (*hash_start)(HASH_HandleTypeDef *, const uint8_t *, uint32_t, uint8_t *, uint32_t);

static int
hash_run(fw_io *io, hash_start start, size_t digest_len)
{
	static const uint8_t none[4];
	uint32_t digest[8];                           /* the HAL stores the digest a word at a time */
	if (io->out == NULL || io->out_cap < digest_len)
		return FW_ERR;
	/* The HAL refuses a NULL buffer even for an empty message, which the harness may pass. */
	const uint8_t *msg = io->msg_len ? io->msg : none;
	if (start(&hhash, msg, (uint32_t)io->msg_len, (uint8_t *)digest, GLUE_TIMEOUT_MS) != HAL_OK)
		return FW_ERR;
	memcpy(io->out, digest, digest_len);
	io->out_len = digest_len;
	return FW_OK;
}
#endif

#ifdef FW_OP_SHA1
static int
sha1_run(const fw_params *p, fw_io *io)
{
	(void)p;
	return hash_run(io, HAL_HASH_SHA1_Start, 20);
}
#define FW_GLUE_SHA1 hash_supports, sha1_run
#endif

#ifdef FW_OP_SHA224
static int
sha224_run(const fw_params *p, fw_io *io)
{
	(void)p;
	return hash_run(io, HAL_HASHEx_SHA224_Start, 28);
}
#define FW_GLUE_SHA224 hash_supports, sha224_run
#endif

#ifdef FW_OP_SHA256
static int
sha256_run(const fw_params *p, fw_io *io)
{
	(void)p;
	return hash_run(io, HAL_HASHEx_SHA256_Start, 32);
}
#define FW_GLUE_SHA256 hash_supports, sha256_run
#endif

#if defined(FW_OP_AES_ECB_ENCRYPT) || defined(FW_OP_AES_CBC_ENCRYPT)
static int
aes_supports(const fw_params *p, const char **why)
{
	if (p->key_bits != 128 && p->key_bits != 192 && p->key_bits != 256) {
		*why = "key_bits must be 128, 192 or 256";
		return FW_UNSUPPORTED;
	}
	if (p->bytes > 65535) {
		*why = "HAL_CRYP_Encrypt takes a 16-bit size (at most 65535 bytes)";
		return FW_UNSUPPORTED;
	}
	return FW_OK;
}

/* The HAL takes the key and IV as 32-bit words, the first word holding the first four bytes as
 * its most significant ones (it writes them to CRYP_K0LR.. and CRYP_IV0LR.., RM0090 23.6). */
static void
load_be_words(uint32_t *w, const uint8_t *b, size_t n)
{
	for (size_t i = 0; i < n / 4; i++)
		w[i] = (uint32_t)b[4 * i] << 24 | (uint32_t)b[4 * i + 1] << 16 | (uint32_t)b[4 * i + 2] << 8 | b[4 * i + 3];
}

static int
aes_run(fw_io *io, uint32_t algorithm)
{
	static uint32_t key[8], iv[4];
	static const uint32_t sizes[3] = {CRYP_KEYSIZE_128B, CRYP_KEYSIZE_192B, CRYP_KEYSIZE_256B};
	CRYP_ConfigTypeDef conf;
	if (io->out == NULL || io->out_cap < io->msg_len || (algorithm == CRYP_AES_CBC && io->iv_len != 16))
		return FW_ERR;
	load_be_words(key, io->key, io->key_len);
	if (algorithm == CRYP_AES_CBC)
		load_be_words(iv, io->iv, 16);
	memset(&conf, 0, sizeof conf);
	conf.DataType = CRYP_DATATYPE_8B;            /* the data are byte strings */
	conf.KeySize = sizes[io->key_len / 8 - 2];   /* 16, 24, 32 bytes */
	conf.pKey = key;
	conf.pInitVect = iv;
	conf.Algorithm = algorithm;
	conf.DataWidthUnit = CRYP_DATAWIDTHUNIT_BYTE;
	conf.KeyIVConfigSkip = CRYP_KEYIVCONFIG_ALWAYS;
	if (HAL_CRYP_SetConfig(&hcryp, &conf) != HAL_OK)
		return FW_ERR;
	if (HAL_CRYP_Encrypt(&hcryp, (uint32_t *)(uintptr_t)io->msg, (uint16_t)io->msg_len, (uint32_t *)io->out,
	                     GLUE_TIMEOUT_MS) != HAL_OK)
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
	return aes_run(io, CRYP_AES_ECB);
}
#define FW_GLUE_AES_ECB_ENCRYPT aes_supports, ecb_run
#endif

#ifdef FW_OP_AES_CBC_ENCRYPT
static int
cbc_run(const fw_params *p, fw_io *io)
{
	(void)p;
	return aes_run(io, CRYP_AES_CBC);
}
#define FW_GLUE_AES_CBC_ENCRYPT aes_supports, cbc_run
#endif

#include "fw_ops_table.h"
