/* glue.c - catalog ops through TI's CC13x2/CC26x2 driverlib (aes.c, sha2.c; interrupt.c and cpu.c
 * for the IntEnable/IntDisable and CPUdelay they call), built unmodified from the user's SDK tree
 * (--library-source) with DRIVERLIB_NOROM. cryptobench's own glue: it calls driverlib's public API
 * as a NoRTOS polling application would, and nothing else touches the CRYPTO registers. On the
 * simulator (`--device cc2652`) the registers are the timing-annotated model's (docs/accelerators.md,
 * "TI's driverlib against the models"); on a CC26x2 board they are the part's.
 *
 *   sha256                 SHA2ComputeHash (the digest comes back through DMA channel 1) and
 *                          SHA2WaitForIRQFlags(SHA2_RESULT_RDY | SHA2_DMA_BUS_ERR)
 *   aes-ecb/cbc-encrypt    AESWriteToKeyStore + AESReadFromKeyStore, AESSelectAlgorithm, AESSetCtrl,
 *                          AESSetDataLength, AESStartDMAOperation, AESWaitForIRQFlags(AES_RESULT_RDY)
 *   ecdh-keygen            P-256 (pka.c): d checked against the order (PKABigNumCmpStart), then
 *                          PKAEccMultiplyStart(d, G), PKAGetOpsStatus polled, PKAEccMultiplyGetResult;
 *                          out = 04 || X || Y
 *   ecdh-shared-secret     the peer point checked with PKAEccVerifyPublicKeyWeierstrassStart, then
 *                          PKAEccMultiplyStart(d, peer); out = X
 *
 * Power domains and clocks (PRCM) are the board start-up's, as for cryptobench's own cc26x2-crypto
 * driver. No heap. */
#include <string.h>

#include "fw.h"
#include "aes.h"
#include "sha2.h"
#include "interrupt.h"
#include "pka.h"

const char fw_lib_name[] = "ti-driverlib";
const char fw_lib_version[] = "TI CC13x2/CC26x2 driverlib (aes, sha2), DRIVERLIB_NOROM, polling "
                              "(served by peripheral: TI CC26x2 CRYPTO for aes-*, sha*; "
                              "peripheral: TI CC26x2 PKA for ecdh-*)";

#ifdef FW_OP_SHA256
static int
sha256_supports(const fw_params *p, const char **why)
{
	(void)p;
	(void)why;
	return FW_OK;
}

static int
sha256_run(const fw_params *p, fw_io *io)
{
	static const uint8_t none[4];
	(void)p;
	if (io->out == NULL || io->out_cap < SHA2_SHA256_DIGEST_LENGTH_BYTES)
		return FW_ERR;
	const uint8_t *msg = io->msg_len ? io->msg : none;    /* the DMA needs an address even for 0 bytes */
	if (SHA2ComputeHash(msg, io->out, (uint32_t)io->msg_len, SHA2_MODE_SELECT_SHA256) != SHA2_SUCCESS)
		return FW_ERR;
	if (SHA2WaitForIRQFlags(SHA2_RESULT_RDY | SHA2_DMA_BUS_ERR) & SHA2_DMA_BUS_ERR)
		return FW_ERR;
	io->out_len = SHA2_SHA256_DIGEST_LENGTH_BYTES;
	return FW_OK;
}
#define FW_GLUE_SHA256 sha256_supports, sha256_run
#endif

#if defined(FW_OP_AES_ECB_ENCRYPT) || defined(FW_OP_AES_CBC_ENCRYPT)
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
aes_run(fw_io *io, uint32_t mode)
{
	uint32_t iv[4];
	if (io->out == NULL || io->out_cap < io->msg_len || (mode == CRYPTO_AESCTL_CBC && io->iv_len != 16))
		return FW_ERR;
	if (AESWriteToKeyStore(io->key, (uint32_t)io->key_len, AES_KEY_AREA_0) != AES_SUCCESS)
		return FW_ERR;
	/* AESWriteToKeyStore leaves INT_CRYPTO_RESULT_AVAIL_IRQ enabled in the NVIC for an interrupt-
	 * driven caller; this polling application has no handler for it, so it turns the line off. */
	IntDisable(INT_CRYPTO_RESULT_AVAIL_IRQ);
	if (AESReadFromKeyStore(AES_KEY_AREA_0) != AES_SUCCESS)
		return FW_ERR;
	if (mode == CRYPTO_AESCTL_CBC) {
		memcpy(iv, io->iv, 16);                  /* AESIV0-3 take the IV's bytes in order, LSB first */
		AESSetInitializationVector(iv);
	}
	AESSelectAlgorithm(AES_ALGSEL_AES);
	AESIntClear(AES_RESULT_RDY | AES_DMA_IN_DONE);
	AESIntEnable(AES_RESULT_RDY | AES_DMA_IN_DONE);
	AESSetCtrl(CRYPTO_AESCTL_DIR | mode);        /* DIR = encrypt; the key size comes from the key store */
	AESSetDataLength((uint32_t)io->msg_len);
	AESSetAuthLength(0);
	AESStartDMAOperation(io->msg, (uint32_t)io->msg_len, io->out, (uint32_t)io->msg_len);
	uint32_t irq = AESWaitForIRQFlags(AES_RESULT_RDY | AES_DMA_BUS_ERR);
	AESSelectAlgorithm(0);                       /* the engine idle again, as TI's drivers leave it */
	if (irq & AES_DMA_BUS_ERR)
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
	return aes_run(io, 0);
}
#define FW_GLUE_AES_ECB_ENCRYPT aes_supports, ecb_run
#endif

#ifdef FW_OP_AES_CBC_ENCRYPT
static int
cbc_run(const fw_params *p, fw_io *io)
{
	(void)p;
	return aes_run(io, CRYPTO_AESCTL_CBC);
}
#define FW_GLUE_AES_CBC_ENCRYPT aes_supports, cbc_run
#endif

#if defined(FW_OP_ECDH_KEYGEN) || defined(FW_OP_ECDH_SHARED_SECRET)
#define P256 NISTP256_PARAM_SIZE_BYTES

static int
p256_supports(const fw_params *p, const char **why)
{
	if (strncmp(p->curve, "p256", sizeof p->curve) != 0) {
		*why = "this glue drives driverlib's P-256 (NISTP256_*) only";
		return FW_UNSUPPORTED;
	}
	return FW_OK;
}

/* driverlib takes its numbers as little-endian byte strings (the PKA RAM's order); the harness's
 * are big-endian. */
static void
reverse(uint8_t *dst, const uint8_t *src, size_t n)
{
	for (size_t i = 0; i < n; i++)
		dst[i] = src[n - 1 - i];
}

/* 1 <= d < n, as SP 800-56A 5.6.1.2 requires of a private key */
static int
scalar_ok(const PKA_EccParam256 *d)
{
	if (PKAArrayAllZeros(d->byte, P256))
		return 0;
	if (PKABigNumCmpStart(d->byte, NISTP256_order.byte, P256) != PKA_STATUS_SUCCESS)
		return 0;
	while (PKAGetOpsStatus() == PKA_STATUS_OPERATION_BUSY)
		;
	return PKABigNumCmpGetResult() == PKA_STATUS_A_LESS_THAN_B;
}

/* Q = d x P through PKAEccMultiplyStart, FUNCTION.RUN polled through PKAGetOpsStatus */
static int
ecc_mul(const PKA_EccParam256 *d, const PKA_EccParam256 *px, const PKA_EccParam256 *py, PKA_EccPoint256 *q)
{
	uint32_t at;
	if (PKAEccMultiplyStart(d->byte, px->byte, py->byte, NISTP256_prime.byte, NISTP256_a.byte, NISTP256_b.byte,
	                        P256, &at) != PKA_STATUS_SUCCESS)
		return 0;
	while (PKAGetOpsStatus() == PKA_STATUS_OPERATION_BUSY)
		;
	return PKAEccMultiplyGetResult(q->x.byte, q->y.byte, at, P256) == PKA_STATUS_SUCCESS;
}
#endif

#ifdef FW_OP_ECDH_KEYGEN
static int
ecdh_keygen_run(const fw_params *p, fw_io *io)
{
	static PKA_EccParam256 d;
	static PKA_EccPoint256 q;
	(void)p;
	if (io->key_len != P256 || io->out == NULL || io->out_cap < 1 + 2 * P256)
		return FW_ERR;
	reverse(d.byte, io->key, P256);
	if (!scalar_ok(&d) || !ecc_mul(&d, &NISTP256_generator.x, &NISTP256_generator.y, &q))
		return FW_ERR;
	io->out[0] = 4;
	reverse(io->out + 1, q.x.byte, P256);
	reverse(io->out + 1 + P256, q.y.byte, P256);
	io->out_len = 1 + 2 * P256;
	return FW_OK;
}
#define FW_GLUE_ECDH_KEYGEN p256_supports, ecdh_keygen_run
#endif

#ifdef FW_OP_ECDH_SHARED_SECRET
static int
ecdh_shared_run(const fw_params *p, fw_io *io)
{
	static PKA_EccParam256 d, px, py;
	static PKA_EccPoint256 z;
	(void)p;
	if (io->key_len != P256 || io->out == NULL || io->out_cap < P256 || io->peer == NULL
	    || io->peer_len != 1 + 2 * P256 || io->peer[0] != 4)
		return FW_ERR;
	reverse(d.byte, io->key, P256);
	reverse(px.byte, io->peer + 1, P256);
	reverse(py.byte, io->peer + 1 + P256, P256);
	if (!scalar_ok(&d))
		return FW_ERR;
	if (PKAEccVerifyPublicKeyWeierstrassStart(px.byte, py.byte, NISTP256_prime.byte, NISTP256_a.byte,
	                                          NISTP256_b.byte, NISTP256_order.byte, P256) != PKA_STATUS_SUCCESS)
		return FW_ERR;
	if (!ecc_mul(&d, &px, &py, &z))
		return FW_ERR;
	reverse(io->out, z.x.byte, P256);
	io->out_len = P256;
	return FW_OK;
}
#define FW_GLUE_ECDH_SHARED_SECRET p256_supports, ecdh_shared_run
#endif

#include "fw_ops_table.h"
