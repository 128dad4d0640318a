/* cryptoauthlib.c - the catalog's random, sha256, ecc-keygen, ecdsa-sign and ecdsa-verify (P-256) on a Microchip ATECC608
 * (or 508A) through Microchip's CryptoAuthLib, built unmodified from the `cryptoauthlib` Python
 * package's source distribution, over cryptobench's HAL for the Renesas RA IIC (polled,
 * drivers/ra6m4/ra_iic.c).
 *
 * cryptobench's own code: the HAL CryptoAuthLib asks of a platform (hal_i2c_init/post_init/send/
 * receive/control/release, hal_delay_ms/us) and the ops. The HAL sends CryptoAuthLib's bytes as it
 * asks (the word address first), reads what it asks, and answers ATCA_HAL_CHANGE_BAUD by setting the
 * IIC's bit rate, so CryptoAuthLib's own wake (a write to address 0 at 100 kHz, then 1500 us) is the
 * one that runs. Delays busy-wait on the cycle counter at the RA6M4's 200 MHz ICLK (RA_ICLK_HZ): the
 * core runs them, as the study's firmware did. CryptoAuthLib is initialised at start-up (fw_alt_init:
 * atcab_init wakes the device and reads its ChipMode, which picks its execution-time table); each op
 * is the one atcab_* call a user makes, with the wakes and polls CryptoAuthLib does inside it.
 *
 * Ops: random = atcab_random (32 bytes a command) until `bytes` are out; sha256 = atcab_sha (the
 * device's SHA start, updates of 64 bytes, end); ecdsa-verify = atcab_verify_extern (the digest
 * loaded into TempKey by Nonce pass-through, then Verify with the public key given); ecc-keygen =
 * atcab_genkey and ecdsa-sign = atcab_sign with the device's own key (below). */
#include <stdint.h>
#include <string.h>

#include "fw.h"
#include "hal.h"
#include "cryptoauthlib.h"
/* cryptobench's RA IIC driver, compiled into this unit: the recipe's library tree is CryptoAuthLib's */
#include "../drivers/ra6m4/ra_iic.c"

#ifndef RA_ICLK_HZ
#define RA_ICLK_HZ 200000000u
#endif
#ifndef RA_PCLKB_HZ
#define RA_PCLKB_HZ 50000000u
#endif

const char fw_lib_name[] = "atecc608";
const char fw_lib_version[] = "CryptoAuthLib " ATCA_LIBRARY_VERSION_DATE " on an ATECC608 over I2C (Renesas RA IIC, "
                              "polled) (served by peripheral: Renesas RA IIC)";

/* ---- the platform CryptoAuthLib asks for ---------------------------------------------------------- */
void hal_delay_us(uint32_t us)
{
    uint32_t start = hal_cycles(), wait = us * (RA_ICLK_HZ / 1000000u);
    while ((uint32_t)(hal_cycles() - start) < wait)
        ;
}

void hal_delay_ms(uint32_t ms)
{
    while (ms--)
        hal_delay_us(1000u);
}

/* The IIC's bit rate for `baud`: the first CKS whose IICphi = PCLKB / 2^CKS needs at most 64 clocks a
 * period ((ICBRH + 1) + (ICBRL + 1), each at most 32), rounded up (never faster than asked), the low
 * half the longer, as I2C asks of SCL. */
static void set_baud(uint32_t baud)
{
    for (unsigned cks = 0; cks < 8; cks++) {
        uint32_t phi = RA_PCLKB_HZ >> cks, total = (phi + baud - 1) / baud;
        if (total <= 64 && total >= 4) {
            unsigned low = (unsigned)((total + 1) / 2), high = (unsigned)(total - low);
            ra_iic_open(RA_IIC0_BASE, cks, high - 1, low - 1);
            return;
        }
    }
}

ATCA_STATUS hal_i2c_init(ATCAIface iface, ATCAIfaceCfg *cfg)
{
    (void)iface;
    set_baud(ATCA_IFACECFG_VALUE(cfg, atcai2c.baud));
    return ATCA_SUCCESS;
}

ATCA_STATUS hal_i2c_post_init(ATCAIface iface)
{
    (void)iface;
    return ATCA_SUCCESS;
}

static uint8_t address7(ATCAIface iface)
{
    return (uint8_t)(ATCA_IFACECFG_VALUE(iface->mIfaceCFG, atcai2c.address) >> 1);
}

ATCA_STATUS hal_i2c_send(ATCAIface iface, uint8_t word_address, uint8_t *txdata, int txlength)
{
    static uint8_t buf[1 + 200];                 /* the word address and the largest command (CryptoAuthLib) */
    if (txlength < 0 || (size_t)txlength + 1 > sizeof buf)
        return ATCA_BAD_PARAM;
    buf[0] = word_address;
    if (txlength > 0)
        memcpy(buf + 1, txdata, (size_t)txlength);
    return ra_iic_write(RA_IIC0_BASE, address7(iface), buf, (size_t)txlength + 1) == 0 ? ATCA_SUCCESS
                                                                                       : ATCA_TX_FAIL;
}

ATCA_STATUS hal_i2c_receive(ATCAIface iface, uint8_t word_address, uint8_t *rxdata, uint16_t *rxlength)
{
    (void)word_address;                          /* the device address, which the configuration holds too */
    if (rxdata == NULL || rxlength == NULL || *rxlength == 0)
        return ATCA_BAD_PARAM;
    return ra_iic_read(RA_IIC0_BASE, address7(iface), rxdata, *rxlength) == 0 ? ATCA_SUCCESS : ATCA_RX_NO_RESPONSE;
}

ATCA_STATUS hal_i2c_control(ATCAIface iface, uint8_t option, void *param, size_t paramlen)
{
    (void)iface;
    if (option == (uint8_t)ATCA_HAL_CHANGE_BAUD && param != NULL && paramlen == sizeof(uint32_t)) {
        uint32_t baud;
        memcpy(&baud, param, sizeof baud);
        set_baud(baud);
        return ATCA_SUCCESS;
    }
    return ATCA_UNIMPLEMENTED;
}

ATCA_STATUS hal_i2c_release(void *hal_data)
{
    (void)hal_data;
    return ATCA_SUCCESS;
}

/* ---- what went wrong, in one line (fw.h fw_lib_error) ------------------------------------------------ */
static ATCA_STATUS last_status = ATCA_SUCCESS;
static const char *last_call = "";

static const char *status_text(ATCA_STATUS st)
{
    switch (st) {
    case ATCA_WAKE_FAILED: return "the device did not answer the wake (no wake token)";
    case ATCA_CHECKMAC_VERIFY_FAILED: return "the device answered status 0x01 (verify miscompare)";
    case ATCA_PARSE_ERROR: return "the device answered status 0x03 (parse error: length, opcode or parameter)";
    case ATCA_STATUS_CRC: return "the device answered status 0xFF (it received a bad CRC)";
    case ATCA_EXECUTION_ERROR: return "the device answered status 0x0F (execution error: the command cannot run now)";
    case ATCA_RX_CRC_ERROR: return "the device's response failed its CRC";
    case ATCA_RX_NO_RESPONSE: case ATCA_RX_TIMEOUT: case ATCA_TOO_MANY_COMM_RETRIES:
        return "the device did not acknowledge its address (asleep, busy or absent)";
    case ATCA_TX_FAIL: case ATCA_COMM_FAIL: return "the I2C transfer to the device was not acknowledged";
    case ATCA_BAD_OPCODE: return "CryptoAuthLib has no execution time for the opcode on this device";
    default: return "CryptoAuthLib returned an error status";
    }
}

const char *fw_lib_error(void)
{
    static char line[160];
    if (last_status == ATCA_SUCCESS)
        return NULL;
    size_t n = 0;
    for (const char *p = last_call; *p && n < 60; p++)
        line[n++] = *p;
    line[n++] = ':';
    line[n++] = ' ';
    for (const char *p = status_text(last_status); *p && n < sizeof line - 1; p++)
        line[n++] = *p;
    line[n] = 0;
    return line;
}

/* the call's status kept for fw_lib_error; FW_OK or FW_ERR */
static int checked(const char *call, ATCA_STATUS st)
{

    last_call = call;
    last_status = st;
    return st == ATCA_SUCCESS ? FW_OK : FW_ERR;
}

/* ---- start-up ----------------------------------------------------------------------------------------- */
static ATCAIfaceCfg cfg;
static ATCA_STATUS init_status = ATCA_NOT_INITIALIZED;

void fw_alt_init(void)
{
    cfg = cfg_ateccx08a_i2c_default;             /* 0xC0, 400 kHz, wake delay 1500 us, 20 retries */
    ATCA_IFACECFG_VALUE((&cfg), atcai2c.baud) = 400000u;
    init_status = atcab_init(&cfg);
}

static int ready(void)
{
    if (init_status != ATCA_SUCCESS)
        (void)checked("atcab_init", init_status);
    return init_status == ATCA_SUCCESS;
}

/* ---- ops ------------------------------------------------------------------------------------------------ */
#if defined(FW_OP_RANDOM) || defined(FW_OP_SHA256)
static int any_supports(const fw_params *p, const char **why)
{
    (void)p;
    (void)why;
    return FW_OK;
}
#endif

#ifdef FW_OP_RANDOM
static int random_run(const fw_params *p, fw_io *io)
{
    size_t n = p->bytes < 0 ? 32u : (size_t)p->bytes;
    uint8_t block[32];
    if (!ready() || io->out_cap < n)
        return FW_ERR;
    for (size_t done = 0; done < n; done += 32) {
        if (checked("atcab_random", atcab_random(block)) != FW_OK)
            return FW_ERR;
        memcpy(io->out + done, block, n - done < 32 ? n - done : 32);
    }
    io->out_len = n;
    return FW_OK;
}
#define FW_GLUE_RANDOM any_supports, random_run
#endif

#ifdef FW_OP_SHA256
static int sha256_run(const fw_params *p, fw_io *io)
{
    (void)p;
    if (!ready() || io->out_cap < 32 || io->msg_len > UINT16_MAX
        || checked("atcab_sha", atcab_sha((uint16_t)io->msg_len, io->msg, io->out)) != FW_OK)
        return FW_ERR;
    io->out_len = 32;
    return FW_OK;
}
#define FW_GLUE_SHA256 any_supports, sha256_run
#endif

#ifdef FW_OP_ECDSA_VERIFY
static int verify_supports(const fw_params *p, const char **why)
{
    if (strcmp(p->curve, "p256") != 0) {
        *why = "the ATECC608 has P-256 only";
        return FW_UNSUPPORTED;
    }
    return FW_OK;
}

static int verify_run(const fw_params *p, fw_io *io)
{
    bool verified = false;
    (void)p;
    if (!ready() || io->msg_len != 32 || io->sig_len != 64 || io->peer_len != 65 || io->peer[0] != 0x04
        || io->out_cap < 1)
        return FW_ERR;
    if (checked("atcab_verify_extern", atcab_verify_extern(io->msg, io->sig, io->peer + 1, &verified)) != FW_OK)
        return FW_ERR;
    io->out[0] = verified ? 1 : 0;
    io->out_len = 1;
    return FW_OK;
}
#define FW_GLUE_ECDSA_VERIFY verify_supports, verify_run
#endif

/* The device's own keys (recipe keys = "device"): slot 0 holds the cell's private key, made by GenKey
 * in the cell's first call (the untimed output run; fw_keyed); the public key is kept for the output. */
#if defined(FW_OP_ECDSA_SIGN) || defined(FW_OP_ECC_KEYGEN)
#define KEY_SLOT 0
static int p256_supports(const fw_params *p, const char **why)
{
    if (strcmp(p->curve, "p256") != 0) {
        *why = "the ATECC608 has P-256 only";
        return FW_UNSUPPORTED;
    }
    return FW_OK;
}
#endif

#ifdef FW_OP_ECC_KEYGEN
/* out = Q (04 || X || Y): a new private key in slot 0 (GenKey, create), its public key out */
static int keygen_run(const fw_params *p, fw_io *io)
{
    (void)p;
    if (!ready() || io->out_cap < 65 || checked("atcab_genkey", atcab_genkey(KEY_SLOT, io->out + 1)) != FW_OK)
        return FW_ERR;
    io->out[0] = 0x04;
    io->out_len = 65;
    return FW_OK;
}
#define FW_GLUE_ECC_KEYGEN p256_supports, keygen_run
#endif

#ifdef FW_OP_ECDSA_SIGN
/* out = r || s || Q: atcab_sign with slot 0's key (the digest into TempKey by Nonce pass-through, then
 * Sign external); Q, of the key GenKey made in the cell's first call, lets the host check the signature */
static int sign_run(const fw_params *p, fw_io *io)
{
    static uint8_t q[64];
    (void)p;
    if (!ready() || io->msg_len != 32 || io->out_cap < 64 + 65)
        return FW_ERR;
    if (!fw_keyed) {
        if (checked("atcab_genkey", atcab_genkey(KEY_SLOT, q)) != FW_OK)
            return FW_ERR;
        fw_keyed = 1;
    }
    if (checked("atcab_sign", atcab_sign(KEY_SLOT, io->msg, io->out)) != FW_OK)
        return FW_ERR;
    io->out[64] = 0x04;
    memcpy(io->out + 65, q, 64);
    io->out_len = 64 + 65;
    return FW_OK;
}
#define FW_GLUE_ECDSA_SIGN p256_supports, sign_run
#endif

#include "fw_ops_table.h"
