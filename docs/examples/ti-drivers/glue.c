/* glue.c - the catalog's `random` through TI's TRNG driver (TI Drivers: TRNG.c, TRNGCC26XX.c, with
 * the driverlib trng.c, interrupt.c and cpu.c it calls), built unmodified from the user's SDK tree
 * (--library-source), and the driver porting layer it needs under no RTOS. cryptobench's own code:
 * the glue opens each driver as an application's board file and main would, with the hardware
 * attributes TI's SysConfig writes by default (samplesPerCycle TRNGCC26XX_SAMPLES_PER_CYCLE_DEFAULT,
 * the lowest interrupt priority), in the return mode the recipe names (CB_TI_BLOCKING: polling or
 * blocking), and calls TRNG_getRandomBytes or SHA2_hashData for each operation.
 *
 * The porting layer (TI's DPL API, ti/drivers/dpl, implemented here for one core and no scheduler):
 *   HwiP        PRIMASK for HwiP_disable/restore; HwiP_construct keeps the function of an exception
 *               number and enables its NVIC line; every external vector (harness/firmware/core/
 *               startup.c) reaches fw_external_irq, which calls the function of the IPSR's number
 *   SemaphoreP  a binary count; pend waits in WFI with interrupts masked between the test and the
 *               sleep (the interrupt that posts wakes the core, ARMv7-M ARM B1.5.19), as the nortos
 *               kernel's SemaphoreP does with its idle callback
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

#if CB_TI_BLOCKING
#define CB_NAME "ti-drivers-blocking"
#define CB_MODE "blocking"
#define CB_TRNG_RETURN TRNG_RETURN_BEHAVIOR_BLOCKING
#define CB_SHA2_RETURN SHA2_RETURN_BEHAVIOR_BLOCKING
#else
#define CB_NAME "ti-drivers"
#define CB_MODE "polling"
#define CB_TRNG_RETURN TRNG_RETURN_BEHAVIOR_POLLING
#define CB_SHA2_RETURN SHA2_RETURN_BEHAVIOR_POLLING
#endif

const char fw_lib_name[] = CB_NAME;              /* the recipe's name: a band holds for one build */
const char fw_lib_version[] = "TI Drivers TRNGCC26XX, SHA2CC26X2 (" CB_MODE "), cryptobench DPL, DRIVERLIB_NOROM "
                              "(served by peripheral: TI CC26x2 TRNG for random; "
                              "peripheral: TI CC26x2 CRYPTO for sha*)";

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
static TRNG_Handle trng;

/* TRNG_open on first use, as an application opens its driver once: NULL when the driver refuses */
static TRNG_Handle
trng_handle(void)
{
	if (trng == NULL) {
		TRNG_Params params;
		TRNG_init();
		TRNG_Params_init(&params);
		params.returnBehavior = CB_TRNG_RETURN;
		trng = TRNG_open(0, &params);
	}
	return trng;
}

static int
random_supports(const fw_params *p, const char **why)
{
	*why = "a negative byte count";
	return p->bytes >= 0 ? FW_OK : FW_UNSUPPORTED;     /* the driver opens at the first operation */
}

static int
random_run(const fw_params *p, fw_io *io)
{
	if (io->out == NULL || io->out_cap < (size_t)p->bytes || trng_handle() == NULL)
		return FW_ERR;
	if (p->bytes > 0 && TRNG_getRandomBytes(trng, io->out, (size_t)p->bytes) != TRNG_STATUS_SUCCESS)
		return FW_ERR;
	io->out_len = (size_t)p->bytes;
	return FW_OK;
}
#define FW_GLUE_RANDOM random_supports, random_run
#endif

#ifdef FW_OP_SHA256
static SHA2_Handle sha2;

static int
sha256_supports(const fw_params *p, const char **why)
{
	*why = "a negative byte count";
	return p->bytes >= 0 ? FW_OK : FW_UNSUPPORTED;     /* the driver opens at the first operation */
}

static int
sha256_run(const fw_params *p, fw_io *io)
{
	static const uint8_t none[4];
	if (io->out == NULL || io->out_cap < SHA2_DIGEST_LENGTH_BYTES_256)
		return FW_ERR;
	if (sha2 == NULL) {
		SHA2_Params params;
		SHA2_init();
		SHA2_Params_init(&params);
		params.returnBehavior = CB_SHA2_RETURN;
		params.hashType = SHA2_HASH_TYPE_256;
		sha2 = SHA2_open(0, &params);
		if (sha2 == NULL)
			return FW_ERR;
	}
	const void *msg = io->msg_len ? (const void *)io->msg : (const void *)none;   /* the DMA needs an address */
	if (SHA2_hashData(sha2, msg, io->msg_len, io->out) != SHA2_STATUS_SUCCESS)
		return FW_ERR;
	io->out_len = SHA2_DIGEST_LENGTH_BYTES_256;
	(void)p;
	return FW_OK;
}
#define FW_GLUE_SHA256 sha256_supports, sha256_run
#endif

#include "fw_ops_table.h"
