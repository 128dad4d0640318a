/* glue.c - the catalog's ops through TI's SimpleLink drivers for the CC13x2/CC26x2 (TRNGCC26XX,
 * SHA2CC26X2, AESECB/AESCBC/AESCTR/AESGCM/AESCCMCC26XX, AESCTRDRBGXX, ECDHCC26X2, ECDSACC26X2, ECJPAKECC26X2, with the driverlib
 * files they call), built unmodified from the user's SDK tree (--library-source), and the driver
 * porting layer they need under no RTOS. cryptobench's own code: the glue opens each driver once as
 * an application's board file and main would (CB_DEFINE_OPEN), with the hardware attributes TI's
 * SysConfig writes by default (samplesPerCycle TRNGCC26XX_SAMPLES_PER_CYCLE_DEFAULT, the lowest
 * interrupt priority), in the return mode the recipe names (CB_TI_RETURN: polling, blocking or
 * callback), and makes one driver call for each operation.
 *
 * The porting layer (TI's DPL API, ti/drivers/dpl, implemented here for one core and no scheduler):
 *   HwiP        PRIMASK for HwiP_disable/restore; HwiP_construct keeps the function of an exception
 *               number and enables its NVIC line; every external vector (harness/firmware/core/
 *               startup.c) reaches fw_external_irq, which calls the function of the IPSR's number
 *   SemaphoreP  a binary count; pend waits in WFI with interrupts masked between the test and the
 *               sleep (the interrupt that posts wakes the core, ARMv7-M ARM B1.5.19), as the nortos
 *               kernel's SemaphoreP does with its idle callback
 *   SwiP        SwiP_inISR only (AESCTRDRBG asks it): there are no software interrupts, so false
 *   Power       the TRNG's dependency and the standby constraint are counted, nothing more: the
 *               board start-up powers the peripheral domain and its clocks (PRCM), as for
 *               cryptobench's own cc26x2 drivers
 * No heap. */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "fw.h"
#include <ti/drivers/SHA2.h>
#include <ti/drivers/TRNG.h>
#include <ti/drivers/sha2/SHA2CC26X2.h>
#include <ti/drivers/trng/TRNGCC26XX.h>
#include <ti/drivers/dpl/HwiP.h>
#include <ti/drivers/dpl/SemaphoreP.h>
#include <ti/drivers/Power.h>
#include <ti/drivers/AESECB.h>
#include <ti/drivers/AESCBC.h>
#include <ti/drivers/AESCTR.h>
#include <ti/drivers/AESCTRDRBG.h>
#include <ti/drivers/aesctrdrbg/AESCTRDRBGXX.h>
#include <ti/drivers/dpl/SwiP.h>
#include <ti/drivers/AESGCM.h>
#include <ti/drivers/AESCCM.h>
#include <ti/drivers/aesecb/AESECBCC26XX.h>
#include <ti/drivers/aescbc/AESCBCCC26XX.h>
#include <ti/drivers/aesctr/AESCTRCC26XX.h>
#include <ti/drivers/aesgcm/AESGCMCC26XX.h>
#include <ti/drivers/aesccm/AESCCMCC26XX.h>
#include <ti/drivers/cryptoutils/cryptokey/CryptoKeyPlaintext.h>
#include <ti/drivers/ECDH.h>
#include <ti/drivers/ECDSA.h>
#include <ti/drivers/ecdh/ECDHCC26X2.h>
#include <ti/drivers/ecdsa/ECDSACC26X2.h>
#include <ti/drivers/ECJPAKE.h>
#include <ti/drivers/ecjpake/ECJPAKECC26X2.h>
#include <ti/drivers/cryptoutils/ecc/ECCParams.h>

/* CB_TI_RETURN, from the recipe: the return behaviour every driver is opened in (TI's
 * <DRIVER>_RETURN_BEHAVIOR_*, the same three for each driver) */
#define CB_POLLING 0
#define CB_BLOCKING 1
#define CB_CALLBACK_MODE 2
#if CB_TI_RETURN == CB_BLOCKING
#define CB_NAME "ti-drivers-blocking"
#define CB_MODE "blocking"
#define CB_RETURN(drv) drv##_RETURN_BEHAVIOR_BLOCKING
#elif CB_TI_RETURN == CB_CALLBACK_MODE
#define CB_NAME "ti-drivers-callback"
#define CB_MODE "callback"
#define CB_RETURN(drv) drv##_RETURN_BEHAVIOR_CALLBACK
#elif CB_TI_RETURN == CB_POLLING
#define CB_NAME "ti-drivers"
#define CB_MODE "polling"
#define CB_RETURN(drv) drv##_RETURN_BEHAVIOR_POLLING
#else
#error "CB_TI_RETURN must be 0 (polling), 1 (blocking) or 2 (callback)"
#endif

const char fw_lib_name[] = CB_NAME;              /* the recipe's name: a band holds for one build */
const char fw_lib_version[] = "TI Drivers TRNGCC26XX, SHA2CC26X2, AESECB/AESCBC/AESCTR/AESGCM/AESCCMCC26XX, AESCTRDRBGXX, ECDHCC26X2, "
                              "ECDSACC26X2, ECJPAKECC26X2 (" CB_MODE "), cryptobench DPL, DRIVERLIB_NOROM "
                              "(served by peripheral: TI CC26x2 TRNG for random; "
                              "peripheral: TI CC26x2 CRYPTO for aes-*, sha*, ctr-drbg-*; "
                              "peripheral: TI CC26x2 PKA for ecdh-*, ecdsa-*, ecjpake-*)";

/* ---- callback mode: the application's callback ends the wait ------------------------------------
 * In callback mode a driver returns once the engine is started and calls the application's
 * function from its interrupt. The glue stands for an application with nothing else to do: it
 * sleeps in WFI until the callback has run (masked between the test and the sleep, as
 * SemaphoreP_pend below), so the cell's time runs from the call to the callback. CB_DONE(call)
 * arms the flag before the call (the interrupt may come before the call returns) and gives the
 * call's status, or the callback's where the call started the operation. */
static volatile int cb_pending;
static volatile int_fast16_t cb_status;

static inline void cb_finish(int_fast16_t status) { cb_status = status; cb_pending = 0; }

#if CB_TI_RETURN == CB_CALLBACK_MODE
static int cb_arm(void) { cb_pending = 1; return 0; }

static int_fast16_t
cb_wait(int_fast16_t started)
{
    uint32_t key;
    if (started != 0)                        /* every driver's *_STATUS_SUCCESS is 0 */
        return started;
    __asm__ volatile("mrs %0, primask\n\tcpsid i" : "=r"(key) :: "memory");
    while (cb_pending) {
        __asm__ volatile("wfi");
        __asm__ volatile("msr primask, %0" :: "r"(key) : "memory");
        __asm__ volatile("cpsid i" ::: "memory");
    }
    __asm__ volatile("msr primask, %0" :: "r"(key) : "memory");
    return cb_status;
}
#define CB_DONE(call) (cb_arm(), cb_wait(call))
#define CB_CALLBACK(params, drv, field) ((params).field = cb_##drv##_done)
#else
#define CB_DONE(call) (call)
#define CB_CALLBACK(params, drv, field) ((void)0)
#endif

/* CB_DEFINE_OPEN(DRV, field) defines DRV_Handle cb_open_DRV(void): the one handle of TI's driver DRV,
 * opened at its first use (DRV_init, DRV_Params_init, DRV_open of instance 0) in the build's return
 * mode, with the glue's callback in `field` in callback mode (TRNG names it randomBytesCallbackFxn,
 * every other driver callbackFxn), as an application opens its driver once; NULL when the driver
 * refuses. The other parameters keep TI's defaults. */
#define CB_DEFINE_OPEN(DRV, field)                                                                  \
    static DRV##_Handle cb_open_##DRV(void)                                                         \
    {                                                                                               \
        static DRV##_Handle handle;                                                                 \
        if (handle == NULL) {                                                                       \
            DRV##_Params params;                                                                    \
            DRV##_init();                                                                           \
            DRV##_Params_init(&params);                                                             \
            params.returnBehavior = CB_RETURN(DRV);                                                 \
            CB_CALLBACK(params, DRV, field);                                                        \
            handle = DRV##_open(0, &params);                                                        \
        }                                                                                           \
        return handle;                                                                              \
    }

/* ---- the board file: one TRNG instance, SysConfig's defaults ---------------------------------- */
static TRNGCC26XX_Object trng_object;
static const TRNGCC26XX_HWAttrs trng_hwattrs = {
    .intPriority = (uint8_t)~0,                              /* the lowest, SysConfig's default */
    .swiPriority = 0,
    .samplesPerCycle = TRNGCC26XX_SAMPLES_PER_CYCLE_DEFAULT, /* 240,000: "64 bits in 5ms" */
};
const TRNG_Config TRNG_config[1] = {{.object = &trng_object, .hwAttrs = &trng_hwattrs}};
const uint_least8_t TRNG_count = 1;
static SHA2CC26X2_Object sha2_object;
static const SHA2CC26X2_HWAttrs sha2_hwattrs = {.intPriority = (uint8_t)~0};
const SHA2_Config SHA2_config[1] = {{.object = &sha2_object, .hwAttrs = &sha2_hwattrs}};
const uint_least8_t SHA2_count = 1;
/* the AES drivers: one instance each, SysConfig's default (lowest) interrupt priority */
#define CB_AES_INSTANCE(drv, DRV)                                                                   \
    static DRV##CC26XX_Object drv##_object;                                                         \
    static const DRV##CC26XX_HWAttrs drv##_hwattrs = {.intPriority = (uint8_t)~0};                  \
    const DRV##_Config DRV##_config[1] = {{.object = &drv##_object, .hwAttrs = &drv##_hwattrs}};    \
    const uint_least8_t DRV##_count = 1;
CB_AES_INSTANCE(aesecb, AESECB)
CB_AES_INSTANCE(aescbc, AESCBC)
CB_AES_INSTANCE(aesctr, AESCTR)
CB_AES_INSTANCE(aesgcm, AESGCM)
CB_AES_INSTANCE(aesccm, AESCCM)
/* AESCTRDRBG on AESCTR instance 0 (SysConfig's default: the DRBG takes the CTR driver it is given) */
static AESCTRDRBGXX_Object aesctrdrbg_object;
static const AESCTRDRBGXX_HWAttrs aesctrdrbg_hwattrs = {.aesctrIndex = 0};
const AESCTRDRBG_Config AESCTRDRBG_config[1] = {{.object = &aesctrdrbg_object, .hwAttrs = &aesctrdrbg_hwattrs}};
const uint_least8_t AESCTRDRBG_count = 1;
/* the PKA drivers: ECDSA's sign draws its per-message secret from a TRNG it constructs itself */
static ECDHCC26X2_Object ecdh_object;
static const ECDHCC26X2_HWAttrs ecdh_hwattrs = {.intPriority = (uint8_t)~0};
const ECDH_Config ECDH_config[1] = {{.object = &ecdh_object, .hwAttrs = &ecdh_hwattrs}};
const uint_least8_t ECDH_count = 1;
static ECDSACC26X2_Object ecdsa_object;
static const ECDSACC26X2_HWAttrs ecdsa_hwattrs = {.intPriority = (uint8_t)~0, .trngIntPriority = (uint8_t)~0};
const ECDSA_Config ECDSA_config[1] = {{.object = &ecdsa_object, .hwAttrs = &ecdsa_hwattrs}};
const uint_least8_t ECDSA_count = 1;
static ECJPAKECC26X2_Object ecjpake_object;
static const ECJPAKECC26X2_HWAttrs ecjpake_hwattrs = {.intPriority = (uint8_t)~0};
const ECJPAKE_Config ECJPAKE_config[1] = {{.object = &ecjpake_object, .hwAttrs = &ecjpake_hwattrs}};
const uint_least8_t ECJPAKE_count = 1;

#if CB_TI_RETURN == CB_CALLBACK_MODE
/* the application's callbacks: each driver's signature, all ending the glue's wait */
static void cb_TRNG_done(TRNG_Handle h, int_fast16_t s, uint8_t *b, size_t n) { (void)h; (void)b; (void)n; cb_finish(s); }
static void cb_SHA2_done(SHA2_Handle h, int_fast16_t s) { (void)h; cb_finish(s); }
static void cb_AESECB_done(AESECB_Handle h, int_fast16_t s, AESECB_Operation *o, AESECB_OperationType t)
{ (void)h; (void)o; (void)t; cb_finish(s); }
static void cb_AESCBC_done(AESCBC_Handle h, int_fast16_t s, AESCBC_OperationUnion *o, AESCBC_OperationType t)
{ (void)h; (void)o; (void)t; cb_finish(s); }
static void cb_AESCTR_done(AESCTR_Handle h, int_fast16_t s, AESCTR_OperationUnion *o, AESCTR_OperationType t)
{ (void)h; (void)o; (void)t; cb_finish(s); }
static void cb_AESGCM_done(AESGCM_Handle h, int_fast16_t s, AESGCM_OperationUnion *o, AESGCM_OperationType t)
{ (void)h; (void)o; (void)t; cb_finish(s); }
static void cb_AESCCM_done(AESCCM_Handle h, int_fast16_t s, AESCCM_OperationUnion *o, AESCCM_OperationType t)
{ (void)h; (void)o; (void)t; cb_finish(s); }
static void cb_ECDH_done(ECDH_Handle h, int_fast16_t s, ECDH_Operation o, ECDH_OperationType t)
{ (void)h; (void)o; (void)t; cb_finish(s); }
static void cb_ECDSA_done(ECDSA_Handle h, int_fast16_t s, ECDSA_Operation o, ECDSA_OperationType t)
{ (void)h; (void)o; (void)t; cb_finish(s); }
static void cb_ECJPAKE_done(ECJPAKE_Handle h, int_fast16_t s, ECJPAKE_Operation o, ECJPAKE_OperationType t)
{ (void)h; (void)o; (void)t; cb_finish(s); }
#endif

/* ---- HwiP ----------------------------------------------------------------------------------------- */
#define CB_EXCEPTIONS 64
typedef struct { HwiP_Fxn fxn; uintptr_t arg; int number; } cb_hwi;
static cb_hwi *hwi_of[CB_EXCEPTIONS];
int HwiP_swiPIntNum = 0;

static void nvic(int exception, uint32_t base)
{
    if (exception >= 16 && exception < CB_EXCEPTIONS) {
        uint32_t n = (uint32_t)exception - 16u;
        *(volatile uint32_t *)(base + 4u * (n / 32u)) = 1u << (n % 32u);
    }
}

uintptr_t HwiP_disable(void)
{
    uint32_t key;
    __asm__ volatile("mrs %0, primask\n\tcpsid i" : "=r"(key) :: "memory");
    return key;
}

void HwiP_restore(uintptr_t key)
{
    __asm__ volatile("msr primask, %0" :: "r"((uint32_t)key) : "memory");
}

void HwiP_enable(void) { __asm__ volatile("cpsie i" ::: "memory"); }
void HwiP_enableInterrupt(int n) { nvic(n, 0xE000E100u); }      /* NVIC_ISER (ARMv7-M ARM B3.4.4) */
void HwiP_disableInterrupt(int n) { nvic(n, 0xE000E180u); }     /* NVIC_ICER */
void HwiP_clearInterrupt(int n) { nvic(n, 0xE000E280u); }       /* NVIC_ICPR */
void HwiP_post(int n) { nvic(n, 0xE000E200u); }                 /* NVIC_ISPR */

void HwiP_setPriority(int n, uint32_t priority)
{
    if (n >= 16 && n < CB_EXCEPTIONS)                            /* NVIC_IPR: one byte per line */
        *(volatile uint8_t *)(0xE000E400u + (uint32_t)(n - 16)) = (uint8_t)priority;
}

bool SwiP_inISR(void) { return false; }

bool HwiP_inISR(void)
{
    uint32_t ipsr;
    __asm__ volatile("mrs %0, ipsr" : "=r"(ipsr));
    return (ipsr & 0x1FFu) != 0;
}

void HwiP_Params_init(HwiP_Params *params)
{
    memset(params, 0, sizeof *params);
    params->priority = ~0u;
    params->enableInt = true;
}

HwiP_Handle HwiP_construct(HwiP_Struct *hwiP, int interruptNum, HwiP_Fxn hwiFxn, HwiP_Params *params)
{
    _Static_assert(sizeof(cb_hwi) <= sizeof(HwiP_Struct), "the DPL's HwiP_Struct holds cb_hwi");
    cb_hwi *h = (cb_hwi *)hwiP;
    if (interruptNum < 16 || interruptNum >= CB_EXCEPTIONS)
        return NULL;
    h->fxn = hwiFxn;
    h->arg = params ? params->arg : 0;
    h->number = interruptNum;
    hwi_of[interruptNum] = h;
    if (params == NULL || params->priority != ~0u)
        HwiP_setPriority(interruptNum, params ? params->priority : 0xE0u);
    if (params == NULL || params->enableInt)
        HwiP_enableInterrupt(interruptNum);
    return h;
}

void HwiP_destruct(HwiP_Struct *hwiP)
{
    cb_hwi *h = (cb_hwi *)hwiP;
    HwiP_disableInterrupt(h->number);
    hwi_of[h->number] = NULL;
}

void HwiP_setFunc(HwiP_Handle hwiP, HwiP_Fxn fxn, uintptr_t arg)
{
    cb_hwi *h = hwiP;
    h->fxn = fxn;
    h->arg = arg;
}

/* every external vector of the image (startup.c's weak fw_external_irq) */
void fw_external_irq(void)
{
    uint32_t ipsr;
    __asm__ volatile("mrs %0, ipsr" : "=r"(ipsr));
    cb_hwi *h = hwi_of[(ipsr & 0x1FFu) % CB_EXCEPTIONS];
    if (h != NULL && h->fxn != NULL)
        h->fxn(h->arg);
}

/* ---- SemaphoreP ---------------------------------------------------------------------------------- */
typedef struct { volatile uint32_t count; uint32_t binary; } cb_sem;
SemaphoreP_Params SemaphoreP_defaultParams = {.mode = SemaphoreP_Mode_COUNTING, .callback = NULL};

void SemaphoreP_Params_init(SemaphoreP_Params *params) { *params = SemaphoreP_defaultParams; }

SemaphoreP_Handle SemaphoreP_construct(SemaphoreP_Struct *handle, unsigned int count, SemaphoreP_Params *params)
{
    _Static_assert(sizeof(cb_sem) <= sizeof(SemaphoreP_Struct), "the DPL's SemaphoreP_Struct holds cb_sem");
    cb_sem *s = (cb_sem *)handle;
    s->binary = params != NULL && params->mode == SemaphoreP_Mode_BINARY;
    s->count = s->binary && count > 1 ? 1 : count;
    return s;
}

SemaphoreP_Handle SemaphoreP_constructBinary(SemaphoreP_Struct *handle, unsigned int count)
{
    SemaphoreP_Params params = {.mode = SemaphoreP_Mode_BINARY, .callback = NULL};
    return SemaphoreP_construct(handle, count, &params);
}

void SemaphoreP_destruct(SemaphoreP_Struct *semP) { (void)semP; }

SemaphoreP_Status SemaphoreP_pend(SemaphoreP_Handle handle, uint32_t timeout)
{
    cb_sem *s = handle;
    (void)timeout;                          /* SemaphoreP_WAIT_FOREVER: the run's watchdog bounds it */
    uintptr_t key = HwiP_disable();
    while (s->count == 0) {
        __asm__ volatile("wfi");            /* a pending interrupt wakes the core even while masked */
        HwiP_restore(key);                  /* ... and is taken here */
        key = HwiP_disable();
    }
    s->count--;
    HwiP_restore(key);
    return SemaphoreP_OK;
}

void SemaphoreP_post(SemaphoreP_Handle handle)
{
    cb_sem *s = handle;
    uintptr_t key = HwiP_disable();
    if (!s->binary || s->count == 0)
        s->count++;
    HwiP_restore(key);
}

/* ---- Power: what the TRNG driver asks of it ------------------------------------------------------ */
static int_fast16_t dependencies, constraints;
int_fast16_t Power_setDependency(uint_fast16_t resourceId) { (void)resourceId; dependencies++; return Power_SOK; }
int_fast16_t Power_releaseDependency(uint_fast16_t resourceId) { (void)resourceId; dependencies--; return Power_SOK; }
int_fast16_t Power_setConstraint(uint_fast16_t constraintId) { (void)constraintId; constraints++; return Power_SOK; }
int_fast16_t Power_releaseConstraint(uint_fast16_t constraintId) { (void)constraintId; constraints--; return Power_SOK; }

/* ---- the ops --------------------------------------------------------------------------------------- */
#ifdef FW_OP_RANDOM
CB_DEFINE_OPEN(TRNG, randomBytesCallbackFxn)

static int
random_supports(const fw_params *p, const char **why)
{
	*why = "a negative byte count";
	return p->bytes >= 0 ? FW_OK : FW_UNSUPPORTED;     /* the driver opens at the first operation */
}

static int
random_run(const fw_params *p, fw_io *io)
{
	TRNG_Handle trng = cb_open_TRNG();
	if (io->out == NULL || io->out_cap < (size_t)p->bytes || trng == NULL)
		return FW_ERR;
	if (p->bytes > 0 && CB_DONE(TRNG_getRandomBytes(trng, io->out, (size_t)p->bytes)) != TRNG_STATUS_SUCCESS)
		return FW_ERR;
	io->out_len = (size_t)p->bytes;
	return FW_OK;
}
#define FW_GLUE_RANDOM random_supports, random_run
#endif

#if defined(FW_OP_SHA224) || defined(FW_OP_SHA256)
CB_DEFINE_OPEN(SHA2, callbackFxn)

static int
sha_supports(const fw_params *p, const char **why)
{
	*why = "a negative byte count";
	return p->bytes >= 0 ? FW_OK : FW_UNSUPPORTED;     /* the driver opens at the first operation */
}

/* SHA2_hashData of the message on the one SHA2_open'ed handle, set to the op's hash type */
static int
sha2_run(fw_io *io, SHA2_HashType type, size_t digest)
{
	static const uint8_t none[4];
	SHA2_Handle sha2 = cb_open_SHA2();
	if (io->out == NULL || io->out_cap < digest || sha2 == NULL)
		return FW_ERR;
	if (SHA2_setHashType(sha2, type) != SHA2_STATUS_SUCCESS)
		return FW_ERR;
	const void *msg = io->msg_len ? (const void *)io->msg : (const void *)none;   /* the DMA needs an address */
	if (CB_DONE(SHA2_hashData(sha2, msg, io->msg_len, io->out)) != SHA2_STATUS_SUCCESS)
		return FW_ERR;
	io->out_len = digest;
	return FW_OK;
}
#endif

#ifdef FW_OP_SHA224
static int
sha224_run(const fw_params *p, fw_io *io)
{
	(void)p;
	return sha2_run(io, SHA2_HASH_TYPE_224, SHA2_DIGEST_LENGTH_BYTES_224);
}
#define FW_GLUE_SHA224 sha_supports, sha224_run
#endif

#ifdef FW_OP_SHA256
static int
sha256_run(const fw_params *p, fw_io *io)
{
	(void)p;
	return sha2_run(io, SHA2_HASH_TYPE_256, SHA2_DIGEST_LENGTH_BYTES_256);
}
#define FW_GLUE_SHA256 sha_supports, sha256_run
#endif


/* ---- AES: one key object and one driver handle per mode --------------------------------------- */
#if defined(FW_OP_AES_ECB_ENCRYPT) || defined(FW_OP_AES_CBC_ENCRYPT) || defined(FW_OP_AES_CTR_ENCRYPT) \
    || defined(FW_OP_AES_GCM_ENCRYPT) || defined(FW_OP_AES_CCM_ENCRYPT)
static int
aes_supports(const fw_params *p, const char **why)
{
	if (p->rekey == 0) {
		*why = "TI's AES drivers load the key into the key store in every operation (no schedule to keep)";
		return FW_UNSUPPORTED;
	}
	if (p->key_bits != 128 && p->key_bits != 192 && p->key_bits != 256) {
		*why = "key_bits must be 128, 192 or 256";
		return FW_UNSUPPORTED;
	}
	return FW_OK;
}

/* the CryptoKey an application builds around its key bytes (CryptoKeyPlaintextCC26XX.c) */
static CryptoKey *
plaintext_key(fw_io *io)
{
	static CryptoKey key;
	return CryptoKeyPlaintext_initKey(&key, (uint8_t *)io->key, io->key_len) == CryptoKey_STATUS_SUCCESS ? &key : NULL;
}
#endif

#ifdef FW_OP_AES_ECB_ENCRYPT
CB_DEFINE_OPEN(AESECB, callbackFxn)

static int
ecb_run(const fw_params *p, fw_io *io)
{
	AESECB_Handle h = cb_open_AESECB();
	(void)p;
	if (h == NULL)
		return FW_ERR;
	AESECB_Operation op;
	AESECB_Operation_init(&op);
	op.key = plaintext_key(io);
	op.input = (uint8_t *)io->msg;
	op.output = io->out;
	op.inputLength = io->msg_len;
	if (op.key == NULL || io->out_cap < io->msg_len || CB_DONE(AESECB_oneStepEncrypt(h, &op)) != AESECB_STATUS_SUCCESS)
		return FW_ERR;
	io->out_len = io->msg_len;
	return FW_OK;
}
#define FW_GLUE_AES_ECB_ENCRYPT aes_supports, ecb_run
#endif

#ifdef FW_OP_AES_CBC_ENCRYPT
CB_DEFINE_OPEN(AESCBC, callbackFxn)

static int
cbc_run(const fw_params *p, fw_io *io)
{
	AESCBC_Handle h = cb_open_AESCBC();
	(void)p;
	if (h == NULL)
		return FW_ERR;
	AESCBC_OneStepOperation op;
	AESCBC_OneStepOperation_init(&op);
	op.key = plaintext_key(io);
	op.input = (uint8_t *)io->msg;
	op.output = io->out;
	op.inputLength = io->msg_len;
	op.iv = (uint8_t *)io->iv;
	if (op.key == NULL || io->iv_len != 16 || io->out_cap < io->msg_len
	    || CB_DONE(AESCBC_oneStepEncrypt(h, &op)) != AESCBC_STATUS_SUCCESS)
		return FW_ERR;
	io->out_len = io->msg_len;
	return FW_OK;
}
#define FW_GLUE_AES_CBC_ENCRYPT aes_supports, cbc_run
#endif

#ifdef FW_OP_AES_CTR_ENCRYPT
CB_DEFINE_OPEN(AESCTR, callbackFxn)

static int
ctr_run(const fw_params *p, fw_io *io)
{
	AESCTR_Handle h = cb_open_AESCTR();
	(void)p;
	if (h == NULL)
		return FW_ERR;
	AESCTR_OneStepOperation op;
	AESCTR_OneStepOperation_init(&op);
	op.key = plaintext_key(io);
	op.input = io->msg;
	op.output = io->out;
	op.inputLength = io->msg_len;
	op.initialCounter = io->iv;
	if (op.key == NULL || io->iv_len != 16 || io->out_cap < io->msg_len
	    || CB_DONE(AESCTR_oneStepEncrypt(h, &op)) != AESCTR_STATUS_SUCCESS)
		return FW_ERR;
	io->out_len = io->msg_len;
	return FW_OK;
}
#define FW_GLUE_AES_CTR_ENCRYPT aes_supports, ctr_run
#endif

#ifdef FW_OP_AES_GCM_ENCRYPT
CB_DEFINE_OPEN(AESGCM, callbackFxn)

static int
gcm_supports(const fw_params *p, const char **why)
{
	if (aes_supports(p, why) != FW_OK)
		return FW_UNSUPPORTED;
	if (p->bytes == 0 && p->aad_bytes == 0) {
		/* AESGCMCC26XX.c asserts "(aad && aadLength) || (input && inputLength)": with neither, no
		 * DMA transfer starts and its wait for RESULT_AVAIL never ends */
		*why = "TI's AESGCMCC26XX needs a payload or AAD (it starts no DMA transfer for neither)";
		return FW_UNSUPPORTED;
	}
	return FW_OK;
}

/* GCM's IV is the catalog's 12-byte nonce; the tag follows the ciphertext */
static int
gcm_run(const fw_params *p, fw_io *io)
{
	AESGCM_Handle h = cb_open_AESGCM();
	(void)p;
	if (h == NULL)
		return FW_ERR;
	AESGCM_OneStepOperation op;
	AESGCM_OneStepOperation_init(&op);
	op.key = plaintext_key(io);
	op.aad = (uint8_t *)io->aad;
	op.aadLength = io->aad_len;
	op.input = (uint8_t *)io->msg;
	op.output = io->out;
	op.inputLength = io->msg_len;
	op.iv = (uint8_t *)io->iv;
	op.ivLength = (uint8_t)io->iv_len;
	op.mac = io->out + io->msg_len;
	op.macLength = 16;
	if (op.key == NULL || io->iv_len != 12 || io->out_cap < io->msg_len + 16
	    || CB_DONE(AESGCM_oneStepEncrypt(h, &op)) != AESGCM_STATUS_SUCCESS)
		return FW_ERR;
	io->out_len = io->msg_len + 16;
	return FW_OK;
}
#define FW_GLUE_AES_GCM_ENCRYPT gcm_supports, gcm_run
#endif

#ifdef FW_OP_AES_CCM_ENCRYPT
CB_DEFINE_OPEN(AESCCM, callbackFxn)

static int
ccm_supports(const fw_params *p, const char **why)
{
	if (aes_supports(p, why) != FW_OK)
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
	AESCCM_Handle h = cb_open_AESCCM();
	size_t t = (size_t)p->tag_bytes;
	if (h == NULL)
		return FW_ERR;
	AESCCM_OneStepOperation op;
	AESCCM_OneStepOperation_init(&op);
	op.key = plaintext_key(io);
	op.aad = (uint8_t *)io->aad;
	op.aadLength = io->aad_len;
	op.input = (uint8_t *)io->msg;
	op.output = io->out;
	op.inputLength = io->msg_len;
	op.nonce = (uint8_t *)io->iv;
	op.nonceLength = (uint8_t)io->iv_len;
	op.mac = io->out + io->msg_len;
	op.macLength = (uint8_t)t;
	if (op.key == NULL || io->out_cap < io->msg_len + t
	    || CB_DONE(AESCCM_oneStepEncrypt(h, &op)) != AESCCM_STATUS_SUCCESS)
		return FW_ERR;
	io->out_len = io->msg_len + t;
	return FW_OK;
}
#define FW_GLUE_AES_CCM_ENCRYPT ccm_supports, ccm_run
#endif

/* ---- ECDH and ECDSA on the PKA: P-256 (ECDH and ECDSA) and Curve25519 (ECDH) ------------------ */
#define P256 32u                                   /* ECCParams_NISTP256.length */
#if defined(FW_OP_ECDH_KEYGEN) || defined(FW_OP_ECDH_SHARED_SECRET)
static int
is_x25519(const fw_params *p)
{
	return strncmp(p->curve, "x25519", sizeof p->curve) == 0;
}

static int
ecdh_supports(const fw_params *p, const char **why)
{
	if (is_x25519(p) || strncmp(p->curve, "p256", sizeof p->curve) == 0)
		return FW_OK;
	*why = "the glue runs TI's ECDHCC26X2 on NIST P-256 and Curve25519 (the study's curves)";
	return FW_UNSUPPORTED;
}

CB_DEFINE_OPEN(ECDH, callbackFxn)

/* the private key as TI's ECDH takes it, an octet string (big-endian): RFC 7748's X25519 scalar is a
 * little-endian string, so its bytes are reversed (the driver reverses them again and clamps) */
static int
ecdh_private_key(const fw_params *p, const fw_io *io, CryptoKey *key, uint8_t be[P256])
{
	if (io->key_len != P256)
		return FW_ERR;
	for (size_t i = 0; i < P256; i++)
		be[i] = is_x25519(p) ? io->key[P256 - 1 - i] : io->key[i];
	return CryptoKeyPlaintext_initKey(key, be, P256) == CryptoKey_STATUS_SUCCESS ? FW_OK : FW_ERR;
}
#endif

#ifdef FW_OP_ECDH_KEYGEN
/* P-256: out = 04 || X || Y; Curve25519: the RFC 7748 u string (TI's X-only little-endian format) */
static int
ecdh_keygen_run(const fw_params *p, fw_io *io)
{
	static uint8_t priv_be[P256];
	CryptoKey priv, pub;
	ECDH_Handle h = cb_open_ECDH();
	size_t n = is_x25519(p) ? P256 : 1 + 2 * P256;
	if (h == NULL || io->out == NULL || io->out_cap < n || ecdh_private_key(p, io, &priv, priv_be) != FW_OK)
		return FW_ERR;
	CryptoKeyPlaintext_initBlankKey(&pub, io->out, n);
	ECDH_OperationGeneratePublicKey op;
	ECDH_OperationGeneratePublicKey_init(&op);
	op.curve = is_x25519(p) ? &ECCParams_Curve25519 : &ECCParams_NISTP256;
	op.myPrivateKey = &priv;
	op.myPublicKey = &pub;
	if (is_x25519(p))
		op.publicKeyDataFormat = ECDH_PUBLIC_KEY_DATA_FORMAT_MONTGOMERY_X_ONLY;
	if (CB_DONE(ECDH_generatePublicKey(h, &op)) != ECDH_STATUS_SUCCESS)
		return FW_ERR;
	io->out_len = n;
	return FW_OK;
}
#define FW_GLUE_ECDH_KEYGEN ecdh_supports, ecdh_keygen_run
#endif

#ifdef FW_OP_ECDH_SHARED_SECRET
/* P-256: z = the x coordinate of TI's 04 || X || Y result; Curve25519: the u string. A peer TI's
 * driver rejects (not on the curve, the point at infinity) fails the call, as the catalog expects */
static int
ecdh_shared_run(const fw_params *p, fw_io *io)
{
	static uint8_t priv_be[P256], point[1 + 2 * P256];
	CryptoKey priv, peer, shared;
	ECDH_Handle h = cb_open_ECDH();
	int x = is_x25519(p);
	if (h == NULL || io->out == NULL || io->out_cap < P256 || io->peer == NULL
	    || io->peer_len != (x ? P256 : 1 + 2 * P256) || ecdh_private_key(p, io, &priv, priv_be) != FW_OK)
		return FW_ERR;
	CryptoKeyPlaintext_initKey(&peer, (uint8_t *)io->peer, io->peer_len);
	CryptoKeyPlaintext_initBlankKey(&shared, x ? io->out : point, x ? P256 : sizeof point);
	ECDH_OperationComputeSharedSecret op;
	ECDH_OperationComputeSharedSecret_init(&op);
	op.curve = x ? &ECCParams_Curve25519 : &ECCParams_NISTP256;
	op.myPrivateKey = &priv;
	op.theirPublicKey = &peer;
	op.sharedSecret = &shared;
	if (x) {                                /* the peer's u and the result, both X-only little-endian */
		op.publicKeyDataFormat = ECDH_PUBLIC_KEY_DATA_FORMAT_MONTGOMERY_X_ONLY;
		op.sharedSecretDataFormat = ECDH_PUBLIC_KEY_DATA_FORMAT_MONTGOMERY_X_ONLY;
	}
	if (CB_DONE(ECDH_computeSharedSecret(h, &op)) != ECDH_STATUS_SUCCESS)
		return FW_ERR;
	if (x) {
		uint8_t any = 0;                        /* the all-zero result refused, as RFC 7748 6.1 allows */
		for (size_t i = 0; i < P256; i++)
			any |= io->out[i];
		if (!any)
			return FW_ERR;
	} else {
		memcpy(io->out, point + 1, P256);
	}
	io->out_len = P256;
	return FW_OK;
}
#define FW_GLUE_ECDH_SHARED_SECRET ecdh_supports, ecdh_shared_run
#endif

#if defined(FW_OP_ECDSA_SIGN) || defined(FW_OP_ECDSA_VERIFY)
static int
ecdsa_supports(const fw_params *p, const char **why)
{
	if (strncmp(p->curve, "p256", sizeof p->curve) == 0)
		return FW_OK;
	*why = "the glue runs TI's ECDSACC26X2 on NIST P-256 (the study's curve)";
	return FW_UNSUPPORTED;
}

CB_DEFINE_OPEN(ECDSA, callbackFxn)

/* the hash as the curve-length number TI's driver reads: its leftmost 256 bits, a shorter one
 * zero-padded on the left (FIPS 186-4 6.4: e is the leftmost bits, taken as they are) */
static void
hash_field(const fw_io *io, uint8_t e[P256])
{
	size_t n = io->msg_len < P256 ? io->msg_len : P256;
	memset(e, 0, P256);
	memcpy(e + P256 - n, io->msg, n);
}
#endif

#ifdef FW_OP_ECDSA_SIGN
/* out = r || s; SDK 5.40's ECDSA_sign draws its per-message secret from the TRNG itself
 * (TRNG_generateEntropy on a TRNG it constructs, at the driver's default sampling), so the cell's
 * time holds it: SWRA667 6.2.2 says TI's Table 15 does not */
static int
ecdsa_sign_run(const fw_params *p, fw_io *io)
{
	static uint8_t priv[P256], e[P256];
	CryptoKey key;
	ECDSA_Handle h = cb_open_ECDSA();
	(void)p;
	if (h == NULL || io->key_len != P256 || io->out == NULL || io->out_cap < 2 * P256)
		return FW_ERR;
	memcpy(priv, io->key, P256);
	hash_field(io, e);
	CryptoKeyPlaintext_initKey(&key, priv, P256);
	ECDSA_OperationSign op;
	ECDSA_OperationSign_init(&op);
	op.curve = &ECCParams_NISTP256;
	op.myPrivateKey = &key;
	op.hash = e;
	op.r = io->out;
	op.s = io->out + P256;
	if (CB_DONE(ECDSA_sign(h, &op)) != ECDSA_STATUS_SUCCESS)
		return FW_ERR;
	io->out_len = 2 * P256;
	return FW_OK;
}
#define FW_GLUE_ECDSA_SIGN ecdsa_supports, ecdsa_sign_run
#endif

#ifdef FW_OP_ECDSA_VERIFY
/* out = 01 (valid) or 00: every refusal of TI's driver (r or s out of range, a key not on the curve,
 * a signature that does not verify) is a result 00; a busy or cancelled driver fails the call */
static int
ecdsa_verify_run(const fw_params *p, fw_io *io)
{
	static uint8_t e[P256];
	CryptoKey key;
	ECDSA_Handle h = cb_open_ECDSA();
	(void)p;
	if (h == NULL || io->sig == NULL || io->sig_len != 2 * P256 || io->peer == NULL || io->peer_len != 1 + 2 * P256
	    || io->out == NULL || io->out_cap < 1)
		return FW_ERR;
	hash_field(io, e);
	CryptoKeyPlaintext_initKey(&key, (uint8_t *)io->peer, io->peer_len);
	ECDSA_OperationVerify op;
	ECDSA_OperationVerify_init(&op);
	op.curve = &ECCParams_NISTP256;
	op.theirPublicKey = &key;
	op.hash = e;
	op.r = io->sig;
	op.s = io->sig + P256;
	int_fast16_t status = CB_DONE(ECDSA_verify(h, &op));
	if (status == ECDSA_STATUS_RESOURCE_UNAVAILABLE || status == ECDSA_STATUS_CANCELED)
		return FW_ERR;
	io->out[0] = status == ECDSA_STATUS_SUCCESS;
	io->out_len = 1;
	return FW_OK;
}
#define FW_GLUE_ECDSA_VERIFY ecdsa_supports, ecdsa_verify_run
#endif

/* ---- EC-JPAKE on the PKA: the whole exchange, P-256, SHA-256 ------------------------------------ */
#ifdef FW_OP_ECJPAKE_EXCHANGE
#define PT (1u + 2u * P256)                        /* an uncompressed point: 04 || X || Y */
CB_DEFINE_OPEN(ECJPAKE, callbackFxn)

static int
ecjpake_supports(const fw_params *p, const char **why)
{
	if (p->curve[0] != '\0' && strncmp(p->curve, "p256", sizeof p->curve) != 0) {
		*why = "the glue runs TI's ECJPAKECC26X2 on NIST P-256 (the study's curve)";
		return FW_UNSUPPORTED;
	}
	return FW_OK;
}

/* one side of the exchange: its private scalars, its points (the round messages), its ZKPs */
typedef struct {
	const char *id;                                /* the UserID its ZKPs are bound to */
	uint8_t x1[P256], x2[P256], v1[P256], v2[P256], v3[P256], s[P256], x5[P256];
	uint8_t X1[PT], X2[PT], V1[PT], V2[PT], V3[PT], G[PT], X5[PT], K[PT];
	uint8_t r1[P256], r2[P256], r3[P256];
	CryptoKey kx1, kx2, kv1, kv2, kv3, ks, kx5, kX1, kX2, kV1, kV2, kV3, kG, kX5, kK;
} jpake_side;

/* a scalar from fw_random below the group order: its top bit cleared (below 2^255 < n) and never 0 */
static void
scalar(uint8_t k[P256])
{
	fw_random(NULL, k, P256);
	k[0] &= 0x7F;
	k[P256 - 1] |= 1;
}

/* SHA-256 of m through TI's SHA2 driver (opened once, polling: a step inside the exchange) */
static int
jpake_sha256(const uint8_t *m, size_t n, uint8_t out[P256])
{
	static SHA2_Handle sha2;
	if (sha2 == NULL) {
		SHA2_Params params;
		SHA2_init();
		SHA2_Params_init(&params);
		params.returnBehavior = SHA2_RETURN_BEHAVIOR_POLLING;
		if ((sha2 = SHA2_open(0, &params)) == NULL)
			return FW_ERR;
	}
	return SHA2_hashData(sha2, m, n, out) == SHA2_STATUS_SUCCESS ? FW_OK : FW_ERR;
}

/* the ZKP hash of RFC 8236 as Mbed TLS forms it (ecjpake_hash): SHA-256 of G, V, X and the
 * prover's id, each after its 4-byte big-endian length; a null G is the curve's generator */
static int
zkp_hash(const uint8_t *G, const uint8_t *V, const uint8_t *X, const char *id, uint8_t h[P256])
{
	static uint8_t buf[3 * (4 + PT) + 4 + 8];
	size_t n = 0, idlen = strlen(id);
	const uint8_t *parts[3] = {G, V, X};
	uint8_t gen[PT];
	if (G == NULL) {
		gen[0] = 0x04;
		memcpy(gen + 1, ECCParams_NISTP256.generatorX, P256);
		memcpy(gen + 1 + P256, ECCParams_NISTP256.generatorY, P256);
		parts[0] = gen;
	}
	for (int i = 0; i < 3; i++) {
		buf[n] = 0, buf[n + 1] = 0, buf[n + 2] = 0, buf[n + 3] = PT;
		memcpy(buf + n + 4, parts[i], PT);
		n += 4 + PT;
	}
	buf[n] = 0, buf[n + 1] = 0, buf[n + 2] = 0, buf[n + 3] = (uint8_t)idlen;
	memcpy(buf + n + 4, id, idlen);
	return jpake_sha256(buf, n + 4 + idlen, h);
}

static void
side_init(jpake_side *d, const char *id, const uint8_t *password, size_t len)
{
	memset(d, 0, sizeof *d);
	d->id = id;
	scalar(d->x1), scalar(d->x2), scalar(d->v1), scalar(d->v2), scalar(d->v3);
	memcpy(d->s + P256 - len, password, len);      /* the password as a big-endian number */
	CryptoKeyPlaintext_initKey(&d->kx1, d->x1, P256);
	CryptoKeyPlaintext_initKey(&d->kx2, d->x2, P256);
	CryptoKeyPlaintext_initKey(&d->kv1, d->v1, P256);
	CryptoKeyPlaintext_initKey(&d->kv2, d->v2, P256);
	CryptoKeyPlaintext_initKey(&d->kv3, d->v3, P256);
	CryptoKeyPlaintext_initKey(&d->ks, d->s, P256);
	CryptoKeyPlaintext_initBlankKey(&d->kx5, d->x5, P256);
	CryptoKeyPlaintext_initBlankKey(&d->kX1, d->X1, PT);
	CryptoKeyPlaintext_initBlankKey(&d->kX2, d->X2, PT);
	CryptoKeyPlaintext_initBlankKey(&d->kV1, d->V1, PT);
	CryptoKeyPlaintext_initBlankKey(&d->kV2, d->V2, PT);
	CryptoKeyPlaintext_initBlankKey(&d->kV3, d->V3, PT);
	CryptoKeyPlaintext_initBlankKey(&d->kG, d->G, PT);
	CryptoKeyPlaintext_initBlankKey(&d->kX5, d->X5, PT);
	CryptoKeyPlaintext_initBlankKey(&d->kK, d->K, PT);
}

/* a ZKP of (X, x) on generator G (NULL: the curve's) with nonce v: r */
static int
prove(ECJPAKE_Handle h, const uint8_t *G, const CryptoKey *x, const CryptoKey *v, const uint8_t *V,
      const uint8_t *X, const char *id, uint8_t r[P256])
{
	uint8_t hash[P256];
	ECJPAKE_OperationGenerateZKP op;
	if (zkp_hash(G, V, X, id, hash) != FW_OK)
		return FW_ERR;
	ECJPAKE_OperationGenerateZKP_init(&op);
	op.curve = &ECCParams_NISTP256;
	op.myPrivateKey = x;
	op.myPrivateV = v;
	op.hash = hash;
	op.r = r;
	return CB_DONE(ECJPAKE_generateZKP(h, &op)) == ECJPAKE_STATUS_SUCCESS ? FW_OK : FW_ERR;
}

/* the peer's ZKP of X with V and r on generator G (a CryptoKey, NULL: the curve's) */
static int
check(ECJPAKE_Handle h, const CryptoKey *G, const uint8_t *Graw, CryptoKey *X, CryptoKey *V, const uint8_t *r,
      const char *id)
{
	uint8_t hash[P256];
	ECJPAKE_OperationVerifyZKP op;
	if (zkp_hash(Graw, V->u.plaintext.keyMaterial, X->u.plaintext.keyMaterial, id, hash) != FW_OK)
		return FW_ERR;
	ECJPAKE_OperationVerifyZKP_init(&op);
	op.curve = &ECCParams_NISTP256;
	op.theirGenerator = G;
	op.theirPublicKey = X;
	op.theirPublicV = V;
	op.hash = hash;
	op.r = r;
	return CB_DONE(ECJPAKE_verifyZKP(h, &op)) == ECJPAKE_STATUS_SUCCESS ? FW_OK : FW_ERR;
}

static int
round_one(ECJPAKE_Handle h, jpake_side *d)
{
	ECJPAKE_OperationRoundOneGenerateKeys op;
	ECJPAKE_OperationRoundOneGenerateKeys_init(&op);
	op.curve = &ECCParams_NISTP256;
	op.myPrivateKey1 = &d->kx1, op.myPrivateKey2 = &d->kx2;
	op.myPublicKey1 = &d->kX1, op.myPublicKey2 = &d->kX2;
	op.myPrivateV1 = &d->kv1, op.myPrivateV2 = &d->kv2;
	op.myPublicV1 = &d->kV1, op.myPublicV2 = &d->kV2;
	if (CB_DONE(ECJPAKE_roundOneGenerateKeys(h, &op)) != ECJPAKE_STATUS_SUCCESS)
		return FW_ERR;
	if (prove(h, NULL, &d->kx1, &d->kv1, d->V1, d->X1, d->id, d->r1) != FW_OK)
		return FW_ERR;
	return prove(h, NULL, &d->kx2, &d->kv2, d->V2, d->X2, d->id, d->r2);
}

/* d's round two from the peer's round one: its generator G = X1 + X3 + X4 (d's two, the peer's
 * first), x5 = x2 * s, X5 = x5 * G, and the ZKP of X5 on G; `theirs` gets the peer's generator */
static int
round_two(ECJPAKE_Handle h, jpake_side *d, jpake_side *peer, CryptoKey *theirs, uint8_t *theirs_raw)
{
	ECJPAKE_OperationRoundTwoGenerateKeys op;
	ECJPAKE_OperationRoundTwoGenerateKeys_init(&op);
	CryptoKeyPlaintext_initBlankKey(theirs, theirs_raw, PT);
	op.curve = &ECCParams_NISTP256;
	op.myPrivateKey2 = &d->kx2;
	op.myPublicKey1 = &d->kX1, op.myPublicKey2 = &d->kX2;
	op.theirPublicKey1 = &peer->kX1, op.theirPublicKey2 = &peer->kX2;
	op.preSharedSecret = &d->ks;
	op.theirNewGenerator = theirs;
	op.myNewGenerator = &d->kG;
	op.myCombinedPrivateKey = &d->kx5;
	op.myCombinedPublicKey = &d->kX5;
	op.myPrivateV = &d->kv3;
	op.myPublicV = &d->kV3;
	if (CB_DONE(ECJPAKE_roundTwoGenerateKeys(h, &op)) != ECJPAKE_STATUS_SUCCESS)
		return FW_ERR;
	return prove(h, d->G, &d->kx5, &d->kv3, d->V3, d->X5, d->id, d->r3);
}

/* K = (X6 - x5 * X4) * x2, then the premaster secret SHA-256(K.x) as Mbed TLS derives it */
static int
shared(ECJPAKE_Handle h, jpake_side *d, jpake_side *peer, uint8_t pms[P256])
{
	ECJPAKE_OperationComputeSharedSecret op;
	ECJPAKE_OperationComputeSharedSecret_init(&op);
	op.curve = &ECCParams_NISTP256;
	op.myCombinedPrivateKey = &d->kx5;
	op.theirCombinedPublicKey = &peer->kX5;
	op.theirPublicKey2 = &peer->kX2;
	op.myPrivateKey2 = &d->kx2;
	op.sharedSecret = &d->kK;
	if (CB_DONE(ECJPAKE_computeSharedSecret(h, &op)) != ECJPAKE_STATUS_SUCCESS)
		return FW_ERR;
	return jpake_sha256(d->K + 1, P256, pms);
}

/* The whole exchange between a fresh client and server, as the Mbed TLS glue runs it: round one
 * both ways (each side's keys and ZKPs, the other side's ZKPs checked), round two both ways, each
 * side's premaster secret. key = the client's password, iv = the server's; out = pms_client ||
 * pms_server, equal for equal passwords (else the call fails: a broken build cannot pass). Every
 * scalar comes from fw_random; TI's drivers return every step to the glue, which carries the
 * messages between the sides. */
static int
ecjpake_run(const fw_params *p, fw_io *io)
{
	static jpake_side cli, srv;
	static uint8_t srv_gen_by_cli[PT], cli_gen_by_srv[PT];
	CryptoKey srv_gen, cli_gen;                    /* each side's view of the other's generator */
	ECJPAKE_Handle h = cb_open_ECJPAKE();
	(void)p;
	if (h == NULL || io->key_len == 0 || io->key_len > P256 || io->iv_len == 0 || io->iv_len > P256
	    || io->out == NULL || io->out_cap < 2 * P256)
		return FW_ERR;
	side_init(&cli, "client", io->key, io->key_len);
	side_init(&srv, "server", io->iv, io->iv_len);
	int ok = round_one(h, &cli) == FW_OK                                   /* client -> server */
	    && check(h, NULL, NULL, &cli.kX1, &cli.kV1, cli.r1, cli.id) == FW_OK
	    && check(h, NULL, NULL, &cli.kX2, &cli.kV2, cli.r2, cli.id) == FW_OK
	    && round_one(h, &srv) == FW_OK                                     /* server -> client */
	    && check(h, NULL, NULL, &srv.kX1, &srv.kV1, srv.r1, srv.id) == FW_OK
	    && check(h, NULL, NULL, &srv.kX2, &srv.kV2, srv.r2, srv.id) == FW_OK
	    && round_two(h, &srv, &cli, &cli_gen, cli_gen_by_srv) == FW_OK     /* server -> client */
	    && round_two(h, &cli, &srv, &srv_gen, srv_gen_by_cli) == FW_OK
	    && check(h, &srv_gen, srv_gen_by_cli, &srv.kX5, &srv.kV3, srv.r3, srv.id) == FW_OK
	    && check(h, &cli_gen, cli_gen_by_srv, &cli.kX5, &cli.kV3, cli.r3, cli.id) == FW_OK  /* client -> server */
	    && shared(h, &cli, &srv, io->out) == FW_OK
	    && shared(h, &srv, &cli, io->out + P256) == FW_OK;
	if (!ok)
		return FW_ERR;
	if (io->key_len == io->iv_len && memcmp(io->key, io->iv, io->key_len) == 0
	    && memcmp(io->out, io->out + P256, P256) != 0)
		return FW_ERR;
	io->out_len = 2 * P256;
	return FW_OK;
}
#define FW_GLUE_ECJPAKE_EXCHANGE ecjpake_supports, ecjpake_run
#endif

/* ---- AESCTRDRBG: SP 800-90A CTR_DRBG without a derivation function ------------------------------
 * TI's AESCTRDRBGXX over AESCTRCC26XX, AES-256 (as SWRA667's Table 9). TI's driver has no derivation
 * function (AESCTRDRBG.h, "Derivation Function ... not presently supported"): its seed is seedlen =
 * 48 bytes of entropy used as given, XORed with the personalization (instantiate) or the additional
 * data (reseed), and AESCTRDRBG_getRandomBytes takes no additional input; the recipe says
 * ctr_drbg = "no-df", so the run gives it the catalog's no-df vectors. The inputs are those of the
 * Mbed TLS glue (docs/firmware.md, "CTR_DRBG inputs on the firmware"): key = entropy (48 B; the
 * no-df vectors have no nonce), msg = perso, iv = entropy_reseed, aad = add_reseed; peer and sig
 * (add1, add2) must be empty.
 *  - Known-answer call (iv present): AESCTRDRBG_open(seed = key, personalization = msg);
 *    AESCTRDRBG_reseed(iv, aad); two AESCTRDRBG_getRandomBytes, the second one's bytes returned;
 *    AESCTRDRBG_close.
 *  - Timing cell (iv empty), one call one step on the instance kept between calls:
 *      ctr-drbg-instantiate: AESCTRDRBG_close (when open) and AESCTRDRBG_open (its AESCTR_open
 *        and the first state update: TI's "Initialize");
 *      ctr-drbg-reseed: AESCTRDRBG_reseed with the key input as the new seed, aad as additional data;
 *      ctr-drbg-generate: AESCTRDRBG_getRandomBytes of params.bytes.
 *    reseed and generate open the instance in their cell's first call, which the harness runs
 *    untimed. reseedInterval is UINT32_MAX, not TI's default 10,000 requests: a long generate cell
 *    would otherwise end in AESCTRDRBG_STATUS_RESEED_REQUIRED; TI's Table 9 times one generate.
 * AESCTRDRBG returns by polling or blocking only (AESCTRDRBG_ReturnBehavior): the callback build
 * refuses these ops. */
#if defined(FW_OP_CTR_DRBG_INSTANTIATE) || defined(FW_OP_CTR_DRBG_RESEED) || defined(FW_OP_CTR_DRBG_GENERATE)
#define CB_DRBG_SEED AESCTRDRBG_SEED_LENGTH_AES_256              /* 48: key (32) + block (16) */

enum { CB_DRBG_INSTANTIATE, CB_DRBG_RESEED, CB_DRBG_GENERATE };
static AESCTRDRBG_Handle drbg_handle;

static int
drbg_supports(const fw_params *p, const char **why)
{
	(void)p;
#if CB_TI_RETURN == CB_CALLBACK_MODE
	*why = "AESCTRDRBG returns by polling or blocking only (AESCTRDRBG_ReturnBehavior has no callback)";
	return FW_UNSUPPORTED;
#else
	(void)why;
	return FW_OK;
#endif
}

#if CB_TI_RETURN != CB_CALLBACK_MODE
/* (re)open the instance: seed (48 B) and personalization; NULL when TI's driver refuses */
static AESCTRDRBG_Handle
drbg_open(const uint8_t *seed, const uint8_t *perso, size_t perso_len)
{
	static uint32_t seed_words[CB_DRBG_SEED / 4];          /* the driver XORs the seed a word at a time */
	static uint8_t perso_copy[CB_DRBG_SEED];
	AESCTRDRBG_Params params;
	if (perso_len > sizeof perso_copy)
		return NULL;
	if (drbg_handle != NULL) {
		AESCTRDRBG_close(drbg_handle);
		drbg_handle = NULL;
	}
	memcpy(seed_words, seed, CB_DRBG_SEED);
	memcpy(perso_copy, perso, perso_len);
	AESCTRDRBG_init();
	AESCTRDRBG_Params_init(&params);
	params.keyLength = AESCTRDRBG_AES_KEY_LENGTH_256;
	params.reseedInterval = UINT32_MAX;
	params.seed = seed_words;
	params.personalizationData = perso_len ? perso_copy : NULL;
	params.personalizationDataLength = perso_len;
	params.returnBehavior = CB_RETURN(AESCTRDRBG);
	drbg_handle = AESCTRDRBG_open(0, &params);
	return drbg_handle;
}

static int
drbg_reseed(const uint8_t *seed, const uint8_t *add, size_t add_len)
{
	static uint32_t seed_words[CB_DRBG_SEED / 4];
	static uint8_t add_copy[CB_DRBG_SEED];
	if (add_len > sizeof add_copy)
		return FW_ERR;
	memcpy(seed_words, seed, CB_DRBG_SEED);
	memcpy(add_copy, add, add_len);
	return AESCTRDRBG_reseed(drbg_handle, seed_words, add_copy, add_len) == AESCTRDRBG_STATUS_SUCCESS ? FW_OK : FW_ERR;
}

static int
drbg_run(int which, const fw_params *p, fw_io *io)
{
	size_t nbytes = p->bytes < 0 ? 64 : (size_t)p->bytes;
	io->out_len = 0;
	if (io->key_len != CB_DRBG_SEED || io->peer_len > 0 || io->sig_len > 0)
		return FW_ERR;                                       /* no-df: a 48-byte seed, no additional input to generate */
	if (io->iv_len > 0) {                                     /* known-answer call */
		int ok = io->iv_len == CB_DRBG_SEED && io->out_cap >= nbytes
		         && drbg_open(io->key, io->msg, io->msg_len) != NULL
		         && drbg_reseed(io->iv, io->aad, io->aad_len) == FW_OK
		         && AESCTRDRBG_getRandomBytes(drbg_handle, io->out, nbytes) == AESCTRDRBG_STATUS_SUCCESS
		         && AESCTRDRBG_getRandomBytes(drbg_handle, io->out, nbytes) == AESCTRDRBG_STATUS_SUCCESS;
		if (drbg_handle != NULL) {
			AESCTRDRBG_close(drbg_handle);
			drbg_handle = NULL;
		}
		if (!ok)
			return FW_ERR;
		io->out_len = nbytes;
		return FW_OK;
	}
	if (which == CB_DRBG_INSTANTIATE || drbg_handle == NULL) {   /* timing cells */
		if (drbg_open(io->key, io->msg, io->msg_len) == NULL)
			return FW_ERR;
		if (which == CB_DRBG_INSTANTIATE)
			return FW_OK;
	}
	if (which == CB_DRBG_RESEED)
		return drbg_reseed(io->key, io->aad, io->aad_len);
	if (io->out_cap < nbytes || AESCTRDRBG_getRandomBytes(drbg_handle, io->out, nbytes) != AESCTRDRBG_STATUS_SUCCESS)
		return FW_ERR;
	io->out_len = nbytes;
	return FW_OK;
}
#else
static int
drbg_run(int which, const fw_params *p, fw_io *io)
{
	(void)which;
	(void)p;
	(void)io;
	return FW_ERR;
}
#endif
#endif

#ifdef FW_OP_CTR_DRBG_INSTANTIATE
static int
drbg_instantiate_run(const fw_params *p, fw_io *io)
{
	return drbg_run(CB_DRBG_INSTANTIATE, p, io);
}
#define FW_GLUE_CTR_DRBG_INSTANTIATE drbg_supports, drbg_instantiate_run
#endif

#ifdef FW_OP_CTR_DRBG_RESEED
static int
drbg_reseed_run(const fw_params *p, fw_io *io)
{
	return drbg_run(CB_DRBG_RESEED, p, io);
}
#define FW_GLUE_CTR_DRBG_RESEED drbg_supports, drbg_reseed_run
#endif

#ifdef FW_OP_CTR_DRBG_GENERATE
static int
drbg_generate_run(const fw_params *p, fw_io *io)
{
	return drbg_run(CB_DRBG_GENERATE, p, io);
}
#define FW_GLUE_CTR_DRBG_GENERATE drbg_supports, drbg_generate_run
#endif

#include "fw_ops_table.h"
