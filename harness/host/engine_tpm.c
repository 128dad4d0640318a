/* engine_tpm.c - the "tpm" engine: a TPM 2.0 through tpm2-tss (ESAPI over the TCTI loader).
 *
 * Which TPM: the TCTI configuration string in CRYPTOBENCH_TPM_TCTI, as tctildr takes it, e.g.
 * "device:/dev/tpmrm0" (the kernel's resource manager) or "swtpm:host=127.0.0.1,port=2321" (the
 * swtpm emulator; `cryptobench run` starts one and sets the variable when no TPM is configured).
 * The connection is opened on first use (Tss2_TctiLdr_Initialize, Esys_Initialize, then
 * TPM2_Startup(CLEAR), whose TPM_RC_INITIALIZE "already started" answer is normal). A TPM without
 * a resource manager (swtpm) keeps the transient objects of a client that died; when a load or
 * create finds the object memory full (TPM_RC_OBJECT_MEMORY), the objects that are not this
 * process's own are flushed and the command is tried once more. Behind /dev/tpmrm0 a client only
 * ever sees its own objects.
 *
 * Operations, and what one timed operation is (the setup of a slot is not timed):
 *  - random, source "library": TPM2_GetRandom. One call returns at most the TPM's largest digest
 *    size (TPM_PT_MAX_DIGEST: 64 bytes on swtpm, 32 or 48 on many chips), so `bytes` needs
 *    ceil(bytes / that) calls; one timed operation is all of them.
 *  - sha256: TPM2_Hash when `bytes` fits one input buffer (TPM_PT_INPUT_BUFFER, at most 1024 B);
 *    otherwise TPM2_HashSequenceStart, TPM2_SequenceUpdate per buffer and TPM2_SequenceComplete,
 *    all of them timed.
 *  - ecc-keygen p256, rsa-keygen: TPM2_Create of a signing key under a P-256 storage primary
 *    made once per slot in the NULL hierarchy (TPM2_CreatePrimary, not timed). The key pair is
 *    generated inside the TPM from its own RNG and comes back wrapped by the primary; nothing
 *    stays loaded, so the timed operation is that one TPM2_Create. The private part cannot leave
 *    the TPM: compute returns q (or n, e), and, when given an input `hash`, a signature over it
 *    made with the new key (TPM2_Load, TPM2_Sign, TPM2_FlushContext) so that the key pair can be
 *    checked from outside. RSA sizes other than 2048 only where TPM2_TestParms accepts them.
 *  - ecdsa-sign p256: the protocol's d is loaded with TPM2_LoadExternal (NULL hierarchy, public
 *    point computed with OpenSSL) once per slot; one timed operation is one TPM2_Sign (ECDSA,
 *    hash algorithm chosen by the digest's length) of a digest that changes every time.
 *  - ecdsa-verify p256: the public key loaded once (TPM2_LoadExternal, public part only); one
 *    timed operation is one TPM2_VerifySignature of 16 pre-made (digest, signature) pairs, cycling.
 *    TPM_RC_SIGNATURE is the answer "invalid" (ok 00), not an error.
 *  - rsa-sign: TPM2_LoadExternal takes one prime as the sensitive part, so the protocol's (n, e, d)
 *    is factored first (the randomized algorithm from k = de - 1, OpenSSL BN); one timed
 *    operation is one TPM2_Sign, RSASSA-PKCS1-v1_5 with SHA-256, of a changing digest.
 *  - rsa-verify: the public key loaded once; one TPM2_VerifySignature per operation, cycling
 *    through 16 pre-made signatures.
 * Authorizations are empty passwords (ESYS_TR_PASSWORD); no HMAC or parameter-encryption session
 * is used, so the timings are the bare commands.
 *
 * Any TSS2 error comes back as CB_ERR with Tss2_RC_Decode's text. A TCTI error (the TPM or
 * emulator went away) marks the connection lost: the slot's operation fails with the reason, and
 * the next compute or setup tries to connect again and fails with the connection's reason when
 * the TPM is still gone.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/obj_mac.h>
#include <openssl/rand.h>

#include <tss2/tss2_esys.h>
#include <tss2/tss2_rc.h>
#include <tss2/tss2_tctildr.h>

#include "engine.h"
#include "util.h"

#define TCTI_ENV "CRYPTOBENCH_TPM_TCTI"
#define POOL 16               /* pre-made signatures for the verify slots */
#define ROUND_TRIPS 200       /* commands timed for describe()'s round trip */

static const int rsa_sizes[] = {1024, 2048, 3072, 4096};
#define N_RSA_SIZES 4

/* The one connection of this harness process to the TPM. */
static struct {
    TSS2_TCTI_CONTEXT *tcti;
    ESYS_CONTEXT *esys;
    unsigned gen;              /* bumped on every connect: slots remember theirs */
    int lost;                  /* a TCTI error happened: reconnect before the next use */
    char lost_why[CB_ERRLEN];
    /* learned at connect */
    int facts_known;
    uint32_t input_buffer;     /* bytes per TPM2_Hash / TPM2_SequenceUpdate */
    uint16_t random_max;       /* bytes per TPM2_GetRandom */
    int rsa_ok[N_RSA_SIZES];   /* TPM2_TestParms: 1 accepted, 0 refused, -1 not asked */
    int p256_ok;
    unsigned stale_flushed;
} tpm = { .rsa_ok = {-1, -1, -1, -1}, .p256_ok = -1 };

static const char *tcti_conf(void)
{
    const char *conf = getenv(TCTI_ENV);
    return conf != NULL ? conf : "";
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Errors below the TPM itself: the transport is gone (or ESAPI is out of step after one). */
static int is_transport_error(TSS2_RC rc)
{
    TSS2_RC base = rc & ~TSS2_RC_LAYER_MASK;
    if ((rc & TSS2_RC_LAYER_MASK) == TSS2_TCTI_RC_LAYER)
        return 1;
    return (rc & TSS2_RC_LAYER_MASK) != 0 &&
           (base == TSS2_BASE_RC_IO_ERROR || base == TSS2_BASE_RC_NO_CONNECTION ||
            base == TSS2_BASE_RC_BAD_SEQUENCE);
}

/* A failed TSS2 call: CB_ERR with the command and the decoded response code. */
static int tss_fail(char *err, const char *what, TSS2_RC rc)
{
    if (is_transport_error(rc)) {
        snprintf(err, CB_ERRLEN, "%s: %s (0x%x): the TPM at %s=%s stopped answering", what,
                 Tss2_RC_Decode(rc), (unsigned)rc, TCTI_ENV, tcti_conf());
        if (!tpm.lost) {
            tpm.lost = 1;
            snprintf(tpm.lost_why, sizeof tpm.lost_why, "%s", err);
        }
    } else {
        snprintf(err, CB_ERRLEN, "%s: %s (0x%x)", what, Tss2_RC_Decode(rc), (unsigned)rc);
    }
    return CB_ERR;
}

/* ---- connection ----------------------------------------------------------------------------- */

static void disconnect(void)
{
    if (tpm.esys != NULL)
        Esys_Finalize(&tpm.esys);
    if (tpm.tcti != NULL)
        Tss2_TctiLdr_Finalize(&tpm.tcti);
    tpm.esys = NULL;
    tpm.tcti = NULL;
}

static int get_properties(TPM2_PT first, UINT32 count, TPMS_CAPABILITY_DATA **data, char *err)
{
    TSS2_RC rc = Esys_GetCapability(tpm.esys, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE,
                                    TPM2_CAP_TPM_PROPERTIES, first, count, NULL, data);
    return rc == TSS2_RC_SUCCESS ? CB_OK : tss_fail(err, "TPM2_GetCapability", rc);
}

static uint32_t property(const TPMS_CAPABILITY_DATA *data, TPM2_PT pt, uint32_t dflt)
{
    const TPML_TAGGED_TPM_PROPERTY *l = &data->data.tpmProperties;
    for (UINT32 i = 0; i < l->count; i++)
        if (l->tpmProperty[i].property == pt)
            return l->tpmProperty[i].value;
    return dflt;
}

/* The transient objects this process has loaded and not flushed yet (slot keys, primaries). */
#define MAX_OWN 32
static ESYS_TR own[MAX_OWN];
static int n_own;

static void own_add(ESYS_TR h)
{
    if (n_own < MAX_OWN)
        own[n_own++] = h;
}

static void own_del(ESYS_TR h)
{
    for (int i = 0; i < n_own; i++)
        if (own[i] == h) {
            own[i] = own[--n_own];
            return;
        }
}

/* TPM_RC_OBJECT_MEMORY: the TPM holds no more transient objects. A TPM without a resource manager
 * (swtpm) keeps the objects of a client that died; flush every transient object that is not this
 * process's own and say whether the command is worth trying again. */
static int flushed_foreign_objects(TSS2_RC rc)
{
    TPMS_CAPABILITY_DATA *data = NULL;
    unsigned before = tpm.stale_flushed;

    if (rc != TPM2_RC_OBJECT_MEMORY ||
        Esys_GetCapability(tpm.esys, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, TPM2_CAP_HANDLES,
                           TPM2_TRANSIENT_FIRST, TPM2_MAX_CAP_HANDLES, NULL, &data)
        != TSS2_RC_SUCCESS)
        return 0;
    for (UINT32 i = 0; i < data->data.handles.count; i++) {
        TPM2_HANDLE h = data->data.handles.handle[i];
        int mine = 0;
        for (int j = 0; j < n_own && !mine; j++) {
            TPM2_HANDLE t;
            mine = Esys_TR_GetTpmHandle(tpm.esys, own[j], &t) == TSS2_RC_SUCCESS && t == h;
        }
        ESYS_TR tr;
        if (!mine && Esys_TR_FromTPMPublic(tpm.esys, h, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE,
                                           &tr) == TSS2_RC_SUCCESS &&
            Esys_FlushContext(tpm.esys, tr) == TSS2_RC_SUCCESS)
            tpm.stale_flushed++;
    }
    Esys_Free(data);
    return tpm.stale_flushed > before;
}

/* Which key types this TPM takes (TPM2_TestParms), asked once per connection. */
static void learn_key_types(void)
{
    TPMT_PUBLIC_PARMS parms;
    for (int i = 0; i < N_RSA_SIZES; i++) {
        memset(&parms, 0, sizeof parms);
        parms.type = TPM2_ALG_RSA;
        parms.parameters.rsaDetail.symmetric.algorithm = TPM2_ALG_NULL;
        parms.parameters.rsaDetail.scheme.scheme = TPM2_ALG_NULL;
        parms.parameters.rsaDetail.keyBits = (TPMI_RSA_KEY_BITS)rsa_sizes[i];
        TSS2_RC rc = Esys_TestParms(tpm.esys, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, &parms);
        if (!is_transport_error(rc))
            tpm.rsa_ok[i] = rc == TSS2_RC_SUCCESS;
    }
    memset(&parms, 0, sizeof parms);
    parms.type = TPM2_ALG_ECC;
    parms.parameters.eccDetail.symmetric.algorithm = TPM2_ALG_NULL;
    parms.parameters.eccDetail.scheme.scheme = TPM2_ALG_NULL;
    parms.parameters.eccDetail.curveID = TPM2_ECC_NIST_P256;
    parms.parameters.eccDetail.kdf.scheme = TPM2_ALG_NULL;
    TSS2_RC rc = Esys_TestParms(tpm.esys, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, &parms);
    if (!is_transport_error(rc))
        tpm.p256_ok = rc == TSS2_RC_SUCCESS;
}

/* Open the connection (or re-open it after it was lost). */
static int tpm_connect(char *err)
{
    const char *conf = tcti_conf();
    TSS2_RC rc;

    if (tpm.esys != NULL && !tpm.lost)
        return CB_OK;
    disconnect();
    if (conf[0] == '\0')
        return cb_say(err, CB_ERR, TCTI_ENV " is not set: it names the TPM's TCTI, e.g. "
                   "device:/dev/tpmrm0 or swtpm:host=127.0.0.1,port=2321 "
                   "(cryptobench run sets it itself)");
    /* A TPM or emulator that closes its socket must fail a write, not kill the harness. */
    signal(SIGPIPE, SIG_IGN);
    rc = Tss2_TctiLdr_Initialize(conf, &tpm.tcti);
    if (rc != TSS2_RC_SUCCESS) {
        tpm.tcti = NULL;
        snprintf(err, CB_ERRLEN, "cannot reach the TPM at %s=%s: %s (0x%x)", TCTI_ENV, conf,
                 Tss2_RC_Decode(rc), (unsigned)rc);
        return CB_ERR;
    }
    rc = Esys_Initialize(&tpm.esys, tpm.tcti, NULL);
    if (rc != TSS2_RC_SUCCESS) {
        tpm.esys = NULL;
        disconnect();
        snprintf(err, CB_ERRLEN, "cannot talk to the TPM at %s=%s: %s (0x%x)", TCTI_ENV, conf,
                 Tss2_RC_Decode(rc), (unsigned)rc);
        return CB_ERR;
    }
    /* TPM_RC_INITIALIZE: already started (the OS, swtpm's startup-clear). A resource manager may
     * answer Startup itself with another code; only a transport failure ends the attempt here,
     * anything else shows in the next command. */
    rc = Esys_Startup(tpm.esys, TPM2_SU_CLEAR);
    if (rc != TSS2_RC_SUCCESS && rc != TPM2_RC_INITIALIZE && is_transport_error(rc)) {
        disconnect();
        snprintf(err, CB_ERRLEN, "TPM2_Startup on the TPM at %s=%s: %s (0x%x)", TCTI_ENV, conf,
                 Tss2_RC_Decode(rc), (unsigned)rc);
        return CB_ERR;
    }
    tpm.lost = 0;
    tpm.lost_why[0] = '\0';
    tpm.gen++;
    n_own = 0;              /* the handles of an earlier connection mean nothing on this one */

    TPMS_CAPABILITY_DATA *data = NULL;
    if (get_properties(TPM2_PT_FIXED, TPM2_MAX_TPM_PROPERTIES, &data, err) != CB_OK) {
        disconnect();
        return CB_ERR;
    }
    tpm.input_buffer = property(data, TPM2_PT_INPUT_BUFFER, TPM2_MAX_DIGEST_BUFFER);
    if (tpm.input_buffer == 0 || tpm.input_buffer > TPM2_MAX_DIGEST_BUFFER)
        tpm.input_buffer = TPM2_MAX_DIGEST_BUFFER;
    tpm.random_max = (uint16_t)property(data, TPM2_PT_MAX_DIGEST, 32);
    if (tpm.random_max == 0 || tpm.random_max > sizeof(TPMU_HA))
        tpm.random_max = 32;
    Esys_Free(data);
    learn_key_types();
    tpm.facts_known = 1;
    return CB_OK;
}

/* The connection a slot's handles belong to is still the live one. */
static int slot_alive(unsigned gen, char *err)
{
    if (tpm.esys == NULL || gen != tpm.gen)
        return cb_say(err, CB_ERR, "the TPM connection this slot was set up on is gone");
    if (tpm.lost)
        return cb_say(err, CB_ERR, tpm.lost_why);
    return CB_OK;
}

static void flush(ESYS_TR *h, unsigned gen)
{
    if (*h != ESYS_TR_NONE && tpm.esys != NULL && !tpm.lost && gen == tpm.gen) {
        Esys_FlushContext(tpm.esys, *h);
        own_del(*h);
    }
    *h = ESYS_TR_NONE;
}

/* ---- supports ------------------------------------------------------------------------------ */

static int rsa_size_index(long bits)
{
    for (int i = 0; i < N_RSA_SIZES; i++)
        if (rsa_sizes[i] == bits)
            return i;
    return -1;
}

static int check(const cb_params *p, char *why)
{
    int op = p->op;
    char ignored[CB_ERRLEN];

    /* Connect once to learn which key sizes the TPM takes; a TPM that cannot be reached
     * yet leaves every op "supported", so that the cell fails later with the reason. */
    if (!tpm.facts_known && !tpm.lost)
        (void)tpm_connect(ignored);
    switch (op) {
    case CB_OP_RANDOM:
        if (strcmp(p->source, "library") != 0)
            return cb_say(why, CB_UNSUPPORTED, "the tpm engine offers only source \"library\" "
                       "(TPM2_GetRandom, the TPM's own generator)");
        return CB_OK;
    case CB_OP_SHA256:
        return CB_OK;
    case CB_OP_ECC_KEYGEN: case CB_OP_ECDSA_SIGN: case CB_OP_ECDSA_VERIFY:
        if (strcmp(p->curve, "p256") != 0)
            return cb_say(why, CB_UNSUPPORTED, strcmp(p->curve, "x25519") == 0
                       ? "TPM 2.0 has no Curve25519"
                       : "the tpm engine uses NIST P-256 only (TPMs rarely implement P-521)");
        if (tpm.p256_ok == 0)
            return cb_say(why, CB_UNSUPPORTED, "this TPM refuses NIST P-256 keys (TPM2_TestParms)");
        return CB_OK;
    case CB_OP_RSA_KEYGEN: case CB_OP_RSA_SIGN: case CB_OP_RSA_VERIFY: {
        int i = rsa_size_index(p->rsa_bits);
        if (i < 0) {
            snprintf(why, CB_ERRLEN, "TPM 2.0 RSA keys are 1024, 2048, 3072 or 4096 bits, not %ld",
                     p->rsa_bits);
            return CB_UNSUPPORTED;
        }
        if (tpm.rsa_ok[i] == 0) {
            snprintf(why, CB_ERRLEN, "this TPM does not support RSA-%ld keys (TPM2_TestParms "
                     "refused them)", p->rsa_bits);
            return CB_UNSUPPORTED;
        }
        return CB_OK;
    }
    }
    if (cb_op(p->op)->family == CB_FAMILY_SHA)
        return cb_say(why, CB_UNSUPPORTED, "the tpm engine implements SHA-256 only");
    return cb_say(why, CB_UNSUPPORTED, "the tpm engine implements random, sha256 and P-256 / RSA "
               "key generation, signing and verification only");
}

static int tpm_supports(const cb_params *p, char *why)
{
    return check(p, why);
}

/* ---- TPM commands used by both compute and the timing slots -------------------------------- */

static TPMI_ALG_HASH hash_alg_for(size_t digest_len)
{
    switch (digest_len) {
    case 20: return TPM2_ALG_SHA1;
    case 48: return TPM2_ALG_SHA384;
    case 64: return TPM2_ALG_SHA512;
    default: return TPM2_ALG_SHA256;
    }
}

/* GetRandom calls until len bytes are filled. */
static int tpm_random(uint8_t *out, size_t len, char *err)
{
    size_t got = 0;
    while (got < len) {
        TPM2B_DIGEST *r = NULL;
        size_t want = len - got < tpm.random_max ? len - got : tpm.random_max;
        TSS2_RC rc = Esys_GetRandom(tpm.esys, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE,
                                    (UINT16)want, &r);
        if (rc != TSS2_RC_SUCCESS)
            return tss_fail(err, "TPM2_GetRandom", rc);
        size_t n = r->size < want ? r->size : want;
        memcpy(out + got, r->buffer, n);
        Esys_Free(r);
        if (n == 0)
            return cb_say(err, CB_ERR, "TPM2_GetRandom returned no bytes");
        got += n;
    }
    return CB_OK;
}

/* SHA-256 in the TPM: one TPM2_Hash, or a hash sequence when msg exceeds one input buffer. */
static int tpm_sha256(const uint8_t *msg, size_t len, uint8_t digest[32], char *err)
{
    TPM2B_MAX_BUFFER buf;
    TPM2B_DIGEST *out = NULL;
    TSS2_RC rc;

    if (len <= tpm.input_buffer) {
        buf.size = (UINT16)len;
        if (len)
            memcpy(buf.buffer, msg, len);
        rc = Esys_Hash(tpm.esys, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, &buf, TPM2_ALG_SHA256,
                       ESYS_TR_RH_NULL, &out, NULL);
        if (rc != TSS2_RC_SUCCESS)
            return tss_fail(err, "TPM2_Hash", rc);
    } else {
        TPM2B_AUTH auth = { .size = 0 };
        ESYS_TR seq = ESYS_TR_NONE;
        size_t off = 0;
        rc = Esys_HashSequenceStart(tpm.esys, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, &auth,
                                    TPM2_ALG_SHA256, &seq);
        if (flushed_foreign_objects(rc))
            rc = Esys_HashSequenceStart(tpm.esys, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, &auth,
                                        TPM2_ALG_SHA256, &seq);
        if (rc != TSS2_RC_SUCCESS)
            return tss_fail(err, "TPM2_HashSequenceStart", rc);
        /* Keep the last (partial or full) buffer for SequenceComplete. */
        while (len - off > tpm.input_buffer) {
            buf.size = (UINT16)tpm.input_buffer;
            memcpy(buf.buffer, msg + off, tpm.input_buffer);
            rc = Esys_SequenceUpdate(tpm.esys, seq, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE,
                                     &buf);
            if (rc != TSS2_RC_SUCCESS) {
                int r = tss_fail(err, "TPM2_SequenceUpdate", rc);
                if (!tpm.lost)
                    Esys_FlushContext(tpm.esys, seq);
                return r;
            }
            off += tpm.input_buffer;
        }
        buf.size = (UINT16)(len - off);
        memcpy(buf.buffer, msg + off, len - off);
        rc = Esys_SequenceComplete(tpm.esys, seq, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE,
                                   &buf, ESYS_TR_RH_NULL, &out, NULL);
        if (rc != TSS2_RC_SUCCESS) {
            int r = tss_fail(err, "TPM2_SequenceComplete", rc);
            if (!tpm.lost)
                Esys_FlushContext(tpm.esys, seq);
            return r;
        }
    }
    if (out->size != 32) {
        Esys_Free(out);
        return cb_say(err, CB_ERR, "the TPM returned a SHA-256 digest that is not 32 bytes");
    }
    memcpy(digest, out->buffer, 32);
    Esys_Free(out);
    return CB_OK;
}

/* Templates ----------------------------------------------------------------------------------- */

/* A P-256 storage key (restricted decrypt, AES-128-CFB): the parent of generated keys. */
static TPM2B_PUBLIC storage_template(void)
{
    TPM2B_PUBLIC t;
    memset(&t, 0, sizeof t);
    t.publicArea.type = TPM2_ALG_ECC;
    t.publicArea.nameAlg = TPM2_ALG_SHA256;
    t.publicArea.objectAttributes = TPMA_OBJECT_RESTRICTED | TPMA_OBJECT_DECRYPT |
        TPMA_OBJECT_FIXEDTPM | TPMA_OBJECT_FIXEDPARENT | TPMA_OBJECT_SENSITIVEDATAORIGIN |
        TPMA_OBJECT_USERWITHAUTH | TPMA_OBJECT_NODA;
    t.publicArea.parameters.eccDetail.symmetric.algorithm = TPM2_ALG_AES;
    t.publicArea.parameters.eccDetail.symmetric.keyBits.aes = 128;
    t.publicArea.parameters.eccDetail.symmetric.mode.aes = TPM2_ALG_CFB;
    t.publicArea.parameters.eccDetail.scheme.scheme = TPM2_ALG_NULL;
    t.publicArea.parameters.eccDetail.curveID = TPM2_ECC_NIST_P256;
    t.publicArea.parameters.eccDetail.kdf.scheme = TPM2_ALG_NULL;
    return t;
}

/* An unrestricted signing key. external = 1: for TPM2_LoadExternal (no fixedTPM / fixedParent /
 * sensitiveDataOrigin, which a key from outside cannot claim). rsa_bits 0 means ECC P-256. */
static TPM2B_PUBLIC signing_template(int rsa_bits, int external)
{
    TPM2B_PUBLIC t;
    memset(&t, 0, sizeof t);
    t.publicArea.nameAlg = TPM2_ALG_SHA256;
    t.publicArea.objectAttributes = TPMA_OBJECT_SIGN_ENCRYPT | TPMA_OBJECT_USERWITHAUTH |
        TPMA_OBJECT_NODA;
    if (!external)
        t.publicArea.objectAttributes |= TPMA_OBJECT_FIXEDTPM | TPMA_OBJECT_FIXEDPARENT |
            TPMA_OBJECT_SENSITIVEDATAORIGIN;
    if (rsa_bits) {
        t.publicArea.type = TPM2_ALG_RSA;
        t.publicArea.parameters.rsaDetail.symmetric.algorithm = TPM2_ALG_NULL;
        t.publicArea.parameters.rsaDetail.scheme.scheme = TPM2_ALG_NULL;
        t.publicArea.parameters.rsaDetail.keyBits = (TPMI_RSA_KEY_BITS)rsa_bits;
        t.publicArea.parameters.rsaDetail.exponent = 0;      /* 0 means 65537 */
    } else {
        t.publicArea.type = TPM2_ALG_ECC;
        t.publicArea.parameters.eccDetail.symmetric.algorithm = TPM2_ALG_NULL;
        t.publicArea.parameters.eccDetail.scheme.scheme = TPM2_ALG_NULL;
        t.publicArea.parameters.eccDetail.curveID = TPM2_ECC_NIST_P256;
        t.publicArea.parameters.eccDetail.kdf.scheme = TPM2_ALG_NULL;
    }
    return t;
}

static int create_storage_primary(ESYS_TR *primary, char *err)
{
    TPM2B_SENSITIVE_CREATE sens;
    TPM2B_PUBLIC pub = storage_template();
    TPM2B_DATA outside = { .size = 0 };
    TPML_PCR_SELECTION pcrs = { .count = 0 };
    memset(&sens, 0, sizeof sens);
    TSS2_RC rc = Esys_CreatePrimary(tpm.esys, ESYS_TR_RH_NULL, ESYS_TR_PASSWORD, ESYS_TR_NONE,
                                    ESYS_TR_NONE, &sens, &pub, &outside, &pcrs, primary, NULL,
                                    NULL, NULL, NULL);
    if (flushed_foreign_objects(rc))
        rc = Esys_CreatePrimary(tpm.esys, ESYS_TR_RH_NULL, ESYS_TR_PASSWORD, ESYS_TR_NONE,
                                ESYS_TR_NONE, &sens, &pub, &outside, &pcrs, primary, NULL, NULL,
                                NULL, NULL);
    if (rc != TSS2_RC_SUCCESS) {
        *primary = ESYS_TR_NONE;
        return tss_fail(err, "TPM2_CreatePrimary (P-256 storage key, NULL hierarchy)", rc);
    }
    own_add(*primary);
    return CB_OK;
}

/* TPM2_Create of a signing key under primary: the key generation that is timed. */
static int create_key(ESYS_TR primary, const TPM2B_PUBLIC *tmpl, TPM2B_PRIVATE **priv,
                      TPM2B_PUBLIC **pub, char *err)
{
    TPM2B_SENSITIVE_CREATE sens;
    TPM2B_DATA outside = { .size = 0 };
    TPML_PCR_SELECTION pcrs = { .count = 0 };
    memset(&sens, 0, sizeof sens);
    TSS2_RC rc = Esys_Create(tpm.esys, primary, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE,
                             &sens, tmpl, &outside, &pcrs, priv, pub, NULL, NULL, NULL);
    return rc == TSS2_RC_SUCCESS ? CB_OK : tss_fail(err, "TPM2_Create", rc);
}

/* LoadExternal into the NULL hierarchy; sens NULL loads the public part only. */
static int load_external(const TPM2B_SENSITIVE *sens, const TPM2B_PUBLIC *pub, ESYS_TR *key,
                         char *err)
{
    TSS2_RC rc = Esys_LoadExternal(tpm.esys, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, sens, pub,
                                   ESYS_TR_RH_NULL, key);
    if (flushed_foreign_objects(rc))
        rc = Esys_LoadExternal(tpm.esys, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, sens, pub,
                               ESYS_TR_RH_NULL, key);
    if (rc != TSS2_RC_SUCCESS) {
        *key = ESYS_TR_NONE;
        return tss_fail(err, "TPM2_LoadExternal", rc);
    }
    own_add(*key);
    return CB_OK;
}

/* TPM2_Sign of a digest: ECDSA (r||s, each 32 bytes) or RSASSA-PKCS1-v1_5 (the modulus' length). */
static int tpm_sign(ESYS_TR key, int rsa, const uint8_t *hash, size_t hlen, uint8_t *sig,
                    size_t *siglen, char *err)
{
    TPM2B_DIGEST digest;
    TPMT_SIG_SCHEME scheme;
    TPMT_TK_HASHCHECK ticket = { .tag = TPM2_ST_HASHCHECK, .hierarchy = TPM2_RH_NULL };
    TPMT_SIGNATURE *s = NULL;
    TSS2_RC rc;

    if (hlen == 0 || hlen > sizeof digest.buffer)
        return cb_say(err, CB_ERR, "the digest to sign is empty or longer than 64 bytes");
    digest.size = (UINT16)hlen;
    memcpy(digest.buffer, hash, hlen);
    memset(&scheme, 0, sizeof scheme);
    scheme.scheme = rsa ? TPM2_ALG_RSASSA : TPM2_ALG_ECDSA;
    scheme.details.any.hashAlg = hash_alg_for(hlen);
    rc = Esys_Sign(tpm.esys, key, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE, &digest, &scheme,
                   &ticket, &s);
    if (rc != TSS2_RC_SUCCESS)
        return tss_fail(err, "TPM2_Sign", rc);
    if (rsa) {
        memcpy(sig, s->signature.rsassa.sig.buffer, s->signature.rsassa.sig.size);
        *siglen = s->signature.rsassa.sig.size;
    } else {
        /* r and s as 32-byte big-endian numbers (the TPM may drop leading zero bytes). */
        const TPM2B_ECC_PARAMETER *r = &s->signature.ecdsa.signatureR;
        const TPM2B_ECC_PARAMETER *sv = &s->signature.ecdsa.signatureS;
        if (r->size > 32 || sv->size > 32) {
            Esys_Free(s);
            return cb_say(err, CB_ERR, "the TPM returned an ECDSA signature wider than P-256");
        }
        memset(sig, 0, 64);
        memcpy(sig + 32 - r->size, r->buffer, r->size);
        memcpy(sig + 64 - sv->size, sv->buffer, sv->size);
        *siglen = 64;
    }
    Esys_Free(s);
    return CB_OK;
}

/* TPM2_VerifySignature: *valid 1 or 0; a rejected signature is an answer, not an error. */
static int tpm_verify(ESYS_TR key, int rsa, const uint8_t *hash, size_t hlen, const uint8_t *sig,
                      size_t siglen, int *valid, char *err)
{
    TPM2B_DIGEST digest;
    TPMT_SIGNATURE s;
    TPMT_TK_VERIFIED *ticket = NULL;

    if (hlen == 0 || hlen > sizeof digest.buffer)
        return cb_say(err, CB_ERR, "the digest is empty or longer than 64 bytes");
    digest.size = (UINT16)hlen;
    memcpy(digest.buffer, hash, hlen);
    memset(&s, 0, sizeof s);
    if (rsa) {
        if (siglen > sizeof s.signature.rsassa.sig.buffer)
            return cb_say(err, CB_ERR, "RSA signature longer than the TPM's largest modulus");
        s.sigAlg = TPM2_ALG_RSASSA;
        s.signature.rsassa.hash = hash_alg_for(hlen);
        s.signature.rsassa.sig.size = (UINT16)siglen;
        memcpy(s.signature.rsassa.sig.buffer, sig, siglen);
    } else {
        if (siglen != 64)
            return cb_say(err, CB_ERR, "a P-256 signature is r||s, 64 bytes");
        s.sigAlg = TPM2_ALG_ECDSA;
        s.signature.ecdsa.hash = hash_alg_for(hlen);
        s.signature.ecdsa.signatureR.size = 32;
        memcpy(s.signature.ecdsa.signatureR.buffer, sig, 32);
        s.signature.ecdsa.signatureS.size = 32;
        memcpy(s.signature.ecdsa.signatureS.buffer, sig + 32, 32);
    }
    TSS2_RC rc = Esys_VerifySignature(tpm.esys, key, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE,
                                      &digest, &s, &ticket);
    if (rc == TSS2_RC_SUCCESS) {
        Esys_Free(ticket);
        *valid = 1;
        return CB_OK;
    }
    /* TPM_RC_SIGNATURE (format 1: a parameter number may be added in bits 6..11). */
    if ((rc & TSS2_RC_LAYER_MASK) == 0 && (rc & TPM2_RC_FMT1) &&
        (rc & (TPM2_RC_FMT1 | 0x3f)) == TPM2_RC_SIGNATURE) {
        *valid = 0;
        return CB_OK;
    }
    return tss_fail(err, "TPM2_VerifySignature", rc);
}

/* Keys from protocol inputs -------------------------------------------------------------------- */

/* q = d*G on P-256 (OpenSSL): LoadExternal wants the public point beside the private scalar. */
static int p256_public(const uint8_t *d, size_t dlen, uint8_t q[65], char *err)
{
    EC_GROUP *g = EC_GROUP_new_by_curve_name(NID_X9_62_prime256v1);
    EC_POINT *pt = g ? EC_POINT_new(g) : NULL;
    BIGNUM *bn = BN_bin2bn(d, (int)dlen, NULL);
    int ok = g && pt && bn && !BN_is_zero(bn) && BN_cmp(bn, EC_GROUP_get0_order(g)) < 0 &&
             EC_POINT_mul(g, pt, bn, NULL, NULL, NULL) == 1 &&
             EC_POINT_point2oct(g, pt, POINT_CONVERSION_UNCOMPRESSED, q, 65, NULL) == 65;
    BN_clear_free(bn);
    EC_POINT_free(pt);
    EC_GROUP_free(g);
    return ok ? CB_OK : cb_say(err, CB_ERR, "d is not a valid P-256 private key");
}

/* A P-256 key for LoadExternal: q = 04||X||Y; d (32 bytes) or NULL for the public part only. */
static int load_p256(const uint8_t *d, const uint8_t q[65], ESYS_TR *key, char *err)
{
    TPM2B_PUBLIC pub = signing_template(0, 1);
    TPM2B_SENSITIVE sens;
    pub.publicArea.unique.ecc.x.size = 32;
    memcpy(pub.publicArea.unique.ecc.x.buffer, q + 1, 32);
    pub.publicArea.unique.ecc.y.size = 32;
    memcpy(pub.publicArea.unique.ecc.y.buffer, q + 33, 32);
    if (d == NULL)
        return load_external(NULL, &pub, key, err);
    memset(&sens, 0, sizeof sens);
    sens.sensitiveArea.sensitiveType = TPM2_ALG_ECC;
    sens.sensitiveArea.sensitive.ecc.size = 32;
    memcpy(sens.sensitiveArea.sensitive.ecc.buffer, d, 32);
    int rc = load_external(&sens, &pub, key, err);
    OPENSSL_cleanse(&sens, sizeof sens);
    return rc;
}

/* Factor n from (n, e, d): k = de - 1 = 2^t r; a random g whose g^r has a non-trivial square
 * root of 1 in its squaring chain gives p = gcd(y - 1, n). Succeeds with probability >= 1/2 per g. */
static BIGNUM *rsa_factor(const BIGNUM *n, const BIGNUM *e, const BIGNUM *d)
{
    BN_CTX *ctx = BN_CTX_new();
    BIGNUM *k = BN_new(), *r = BN_new(), *g = BN_new(), *y = BN_new(), *x = BN_new();
    BIGNUM *nm1 = BN_new(), *p = NULL;
    int t = 0;

    if (!ctx || !k || !r || !g || !y || !x || !nm1 || !BN_mul(k, d, e, ctx) ||
        !BN_sub_word(k, 1) || BN_is_zero(k) || BN_is_odd(k) || !BN_copy(nm1, n) ||
        !BN_sub_word(nm1, 1))
        goto done;
    BN_copy(r, k);
    while (!BN_is_odd(r)) {
        BN_rshift1(r, r);
        t++;
    }
    for (int tries = 0; tries < 200 && p == NULL; tries++) {
        if (!BN_rand_range(g, nm1) || BN_cmp(g, BN_value_one()) <= 0)
            continue;
        if (!BN_mod_exp(y, g, r, n, ctx))
            break;
        if (BN_is_one(y) || BN_cmp(y, nm1) == 0)
            continue;
        for (int i = 0; i < t; i++) {
            if (!BN_mod_sqr(x, y, n, ctx))
                break;
            if (BN_is_one(x)) {            /* y is a non-trivial square root of 1 */
                p = BN_new();
                if (p && BN_sub_word(y, 1) && BN_gcd(p, y, n, ctx) && !BN_is_one(p) &&
                    BN_cmp(p, n) != 0)
                    break;
                BN_free(p);
                p = NULL;
                break;
            }
            if (BN_cmp(x, nm1) == 0)
                break;                     /* trivial root: try another g */
            BN_copy(y, x);
        }
    }
done:
    BN_clear_free(k);
    BN_clear_free(r);
    BN_clear_free(g);
    BN_clear_free(y);
    BN_clear_free(x);
    BN_free(nm1);
    BN_CTX_free(ctx);
    return p;
}

/* e as the TPM stores it: a 32-bit exponent, 0 for 65537. 0 with err filled if it does not fit. */
static int rsa_exponent(const uint8_t *e, size_t elen, UINT32 *out, char *err)
{
    uint64_t v = 0;
    for (size_t i = 0; i < elen; i++) {
        if (v >> 32)
            break;
        v = v << 8 | e[i];
    }
    if (elen == 0 || v == 0 || v > 0xffffffffu || !(v & 1))
        return cb_say(err, CB_ERR, "the TPM takes odd public exponents of at most 32 bits only");
    *out = v == 65537 ? 0 : (UINT32)v;
    return CB_OK;
}

/* An RSA key for LoadExternal: n, e and, for a private key, one prime p. */
static int load_rsa(const uint8_t *n, size_t nlen, UINT32 exponent, const uint8_t *p, size_t plen,
                    ESYS_TR *key, char *err)
{
    TPM2B_PUBLIC pub;
    TPM2B_SENSITIVE sens;
    int bits;

    while (nlen > 0 && n[0] == 0) {
        n++;
        nlen--;
    }
    bits = (int)nlen * 8;
    if (nlen == 0 || nlen > sizeof pub.publicArea.unique.rsa.buffer)
        return cb_say(err, CB_ERR, "the modulus is empty or longer than the TPM takes");
    pub = signing_template(bits, 1);
    pub.publicArea.parameters.rsaDetail.exponent = exponent;
    pub.publicArea.unique.rsa.size = (UINT16)nlen;
    memcpy(pub.publicArea.unique.rsa.buffer, n, nlen);
    if (p == NULL)
        return load_external(NULL, &pub, key, err);
    if (plen > sizeof sens.sensitiveArea.sensitive.rsa.buffer)
        return cb_say(err, CB_ERR, "the RSA prime is longer than the TPM takes");
    memset(&sens, 0, sizeof sens);
    sens.sensitiveArea.sensitiveType = TPM2_ALG_RSA;
    sens.sensitiveArea.sensitive.rsa.size = (UINT16)plen;
    memcpy(sens.sensitiveArea.sensitive.rsa.buffer, p, plen);
    int rc = load_external(&sens, &pub, key, err);
    OPENSSL_cleanse(&sens, sizeof sens);
    return rc;
}

/* Load the protocol's RSA private key (n, e, d): factor n, LoadExternal with a prime. */
static int load_rsa_private(const uint8_t *n, size_t nlen, const uint8_t *e, size_t elen,
                            const uint8_t *d, size_t dlen, ESYS_TR *key, char *err)
{
    UINT32 exponent;
    uint8_t pbuf[512];
    int rc;

    if (rsa_exponent(e, elen, &exponent, err) != CB_OK)
        return CB_ERR;
    BIGNUM *bn = BN_bin2bn(n, (int)nlen, NULL), *be = BN_bin2bn(e, (int)elen, NULL);
    BIGNUM *bd = BN_bin2bn(d, (int)dlen, NULL);
    BIGNUM *p = (bn && be && bd) ? rsa_factor(bn, be, bd) : NULL;
    int plen = p ? BN_num_bytes(p) : 0;
    if (p == NULL || plen > (int)sizeof pbuf) {
        rc = cb_say(err, CB_ERR, "could not factor n from (n, e, d): d is not e's inverse for n");
    } else {
        BN_bn2bin(p, pbuf);
        rc = load_rsa(n, nlen, exponent, pbuf, (size_t)plen, key, err);
    }
    OPENSSL_cleanse(pbuf, sizeof pbuf);
    BN_clear_free(p);
    BN_free(bn);
    BN_free(be);
    BN_clear_free(bd);
    return rc;
}

static int put(cb_kv *out, const char *name, const uint8_t *val, size_t len, char *err)
{
    return cb_kv_put(out, name, val, len) == 0 ? CB_OK : cb_say(err, CB_ERR, "out of memory");
}

/* ---- compute ------------------------------------------------------------------------------ */

/* A key generated inside the TPM: q or (n, e) out; with a `hash` input also a signature over it
 * by the new key, since the private part cannot leave the TPM. */
static int compute_keygen(const cb_params *p, int rsa, const cb_kv *in, cb_kv *out, char *err)
{
    size_t hlen;
    const uint8_t *hash = cb_kv_input(in, "hash", &hlen);
    ESYS_TR primary = ESYS_TR_NONE, key = ESYS_TR_NONE;
    TPM2B_PRIVATE *priv = NULL;
    TPM2B_PUBLIC *pub = NULL;
    TPM2B_PUBLIC tmpl = signing_template(rsa ? (int)p->rsa_bits : 0, 0);
    unsigned gen = tpm.gen;
    uint8_t buf[520];
    size_t len;
    int rc;

    rc = create_storage_primary(&primary, err);
    if (rc == CB_OK)
        rc = create_key(primary, &tmpl, &priv, &pub, err);
    if (rc == CB_OK && rsa) {
        static const uint8_t e65537[3] = {0x01, 0x00, 0x01};
        UINT32 e = pub->publicArea.parameters.rsaDetail.exponent;
        uint8_t ebuf[4] = {(uint8_t)(e >> 24), (uint8_t)(e >> 16), (uint8_t)(e >> 8), (uint8_t)e};
        rc = put(out, "n", pub->publicArea.unique.rsa.buffer, pub->publicArea.unique.rsa.size, err);
        if (rc == CB_OK)
            rc = e == 0 ? put(out, "e", e65537, 3, err) : put(out, "e", ebuf, 4, err);
    } else if (rc == CB_OK) {
        const TPMS_ECC_POINT *pt = &pub->publicArea.unique.ecc;
        if (pt->x.size > 32 || pt->y.size > 32) {
            rc = cb_say(err, CB_ERR, "the TPM returned a public point wider than P-256");
        } else {
            memset(buf, 0, 65);
            buf[0] = 0x04;
            memcpy(buf + 33 - pt->x.size, pt->x.buffer, pt->x.size);
            memcpy(buf + 65 - pt->y.size, pt->y.buffer, pt->y.size);
            rc = put(out, "q", buf, 65, err);
        }
    }
    if (rc == CB_OK && hlen > 0) {
        TSS2_RC trc = Esys_Load(tpm.esys, primary, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE,
                                priv, pub, &key);
        if (flushed_foreign_objects(trc))
            trc = Esys_Load(tpm.esys, primary, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE, priv,
                            pub, &key);
        if (trc != TSS2_RC_SUCCESS) {
            key = ESYS_TR_NONE;
            rc = tss_fail(err, "TPM2_Load", trc);
        } else {
            own_add(key);
        }
        if (rc == CB_OK)
            rc = tpm_sign(key, rsa, hash, hlen, buf, &len, err);
        if (rc == CB_OK)
            rc = put(out, "sig", buf, len, err);
    }
    flush(&key, gen);
    flush(&primary, gen);
    Esys_Free(priv);
    Esys_Free(pub);
    return rc;
}

static int tpm_compute(const cb_params *p, const cb_kv *in, cb_kv *out, char *err)
{
    int op = p->op;
    int rc = check(p, err);
    size_t mlen, dlen, qlen, hlen, slen, nlen, elen;
    const uint8_t *msg = cb_kv_input(in, "msg", &mlen);
    const uint8_t *d = cb_kv_input(in, "d", &dlen);
    const uint8_t *q = cb_kv_input(in, "q", &qlen);
    const uint8_t *hash = cb_kv_input(in, "hash", &hlen);
    const uint8_t *sig = cb_kv_input(in, "sig", &slen);
    const uint8_t *n = cb_kv_input(in, "n", &nlen);
    const uint8_t *e = cb_kv_input(in, "e", &elen);
    ESYS_TR key = ESYS_TR_NONE;
    uint8_t buf[520], qbuf[65];
    size_t len;
    int valid;

    if (rc != CB_OK)
        return rc;
    if (tpm_connect(err) != CB_OK)
        return CB_ERR;
    unsigned gen = tpm.gen;
    switch (op) {
    case CB_OP_RANDOM: {
        uint8_t *r = malloc((size_t)p->bytes + 1);
        if (r == NULL)
            return cb_say(err, CB_ERR, "out of memory");
        rc = tpm_random(r, (size_t)p->bytes, err);
        if (rc == CB_OK)
            rc = put(out, "bits", r, (size_t)p->bytes, err);
        free(r);
        return rc;
    }
    case CB_OP_SHA256:
        rc = tpm_sha256(msg, mlen, buf, err);
        return rc == CB_OK ? put(out, "digest", buf, 32, err) : rc;
    case CB_OP_ECC_KEYGEN:
        return compute_keygen(p, 0, in, out, err);
    case CB_OP_RSA_KEYGEN:
        return compute_keygen(p, 1, in, out, err);
    case CB_OP_ECDSA_SIGN:
        if (dlen != 32)
            return cb_say(err, CB_ERR, "a P-256 private key d is 32 bytes");
        if (p256_public(d, dlen, qbuf, err) != CB_OK || load_p256(d, qbuf, &key, err) != CB_OK)
            return CB_ERR;
        rc = tpm_sign(key, 0, hash, hlen, buf, &len, err);
        if (rc == CB_OK)
            rc = put(out, "sig", buf, len, err);
        flush(&key, gen);
        return rc;
    case CB_OP_ECDSA_VERIFY:
        if (qlen != 65 || q[0] != 0x04)
            return cb_say(err, CB_ERR, "q must be an uncompressed P-256 point (04||X||Y, 65 bytes)");
        if (load_p256(NULL, q, &key, err) != CB_OK)
            return CB_ERR;
        rc = tpm_verify(key, 0, hash, hlen, sig, slen, &valid, err);
        flush(&key, gen);
        if (rc == CB_OK)
            rc = put(out, "ok", (const uint8_t *)(valid ? "\x01" : "\x00"), 1, err);
        return rc;
    case CB_OP_RSA_SIGN:
        if (load_rsa_private(n, nlen, e, elen, d, dlen, &key, err) != CB_OK)
            return CB_ERR;
        rc = tpm_sign(key, 1, hash, hlen, buf, &len, err);
        if (rc == CB_OK)
            rc = put(out, "sig", buf, len, err);
        flush(&key, gen);
        return rc;
    case CB_OP_RSA_VERIFY: {
        UINT32 exponent;
        if (rsa_exponent(e, elen, &exponent, err) != CB_OK ||
            load_rsa(n, nlen, exponent, NULL, 0, &key, err) != CB_OK)
            return CB_ERR;
        rc = tpm_verify(key, 1, hash, hlen, sig, slen, &valid, err);
        flush(&key, gen);
        if (rc == CB_OK)
            rc = put(out, "ok", (const uint8_t *)(valid ? "\x01" : "\x00"), 1, err);
        return rc;
    }
    }
    return cb_say(err, CB_UNSUPPORTED, "the tpm engine does not implement this op");
}

/* ---- timing slots ------------------------------------------------------------------------- */

typedef struct {
    int op;
    unsigned gen;             /* the connection the handles belong to */
    uint64_t counter;
    size_t len;
    uint8_t *msg, *out;
    ESYS_TR primary, key;
    TPM2B_PUBLIC tmpl;        /* keygen: the template of the key created per operation */
    size_t siglen;
    uint8_t digest[POOL][32];
    uint8_t sig[POOL][512];
} slot;

static void tpm_teardown(void *handle)
{
    slot *s = handle;
    if (s == NULL)
        return;
    flush(&s->key, s->gen);
    flush(&s->primary, s->gen);
    free(s->msg);
    free(s->out);
    OPENSSL_cleanse(s, sizeof *s);
    free(s);
}

/* A fresh P-256 key pair (d from OpenSSL's generator, q = d*G). */
static int fresh_p256(uint8_t d[32], uint8_t q[65], char *err)
{
    for (int tries = 0; tries < 16; tries++) {
        char ignored[CB_ERRLEN];
        if (RAND_bytes(d, 32) != 1)
            return cb_say(err, CB_ERR, "RAND_bytes failed");
        if (p256_public(d, 32, q, ignored) == CB_OK)
            return CB_OK;
    }
    return cb_say(err, CB_ERR, "could not make a P-256 key");
}

/* A fresh RSA key from OpenSSL: n (nlen bytes) and the first prime p. */
static int fresh_rsa(int bits, uint8_t *n, size_t *nlen, uint8_t *p, size_t *plen, char *err)
{
    EVP_PKEY *pkey = EVP_PKEY_Q_keygen(NULL, NULL, "RSA", (size_t)bits);
    BIGNUM *bn = NULL, *bp = NULL;
    int ok = pkey && EVP_PKEY_get_bn_param(pkey, OSSL_PKEY_PARAM_RSA_N, &bn) == 1 &&
             EVP_PKEY_get_bn_param(pkey, OSSL_PKEY_PARAM_RSA_FACTOR1, &bp) == 1 &&
             BN_num_bytes(bn) <= 512 && BN_num_bytes(bp) <= 256;
    if (ok) {
        *nlen = (size_t)BN_bn2bin(bn, n);
        *plen = (size_t)BN_bn2bin(bp, p);
    }
    BN_free(bn);
    BN_clear_free(bp);
    EVP_PKEY_free(pkey);
    return ok ? CB_OK : cb_say(err, CB_ERR, "OpenSSL could not make an RSA key for the slot");
}

/* Sign slots: load a private key; verify slots: load it, sign POOL digests, reload public only. */
static int setup_keys(slot *s, const cb_params *p, char *err)
{
    int rsa = s->op == CB_OP_RSA_SIGN || s->op == CB_OP_RSA_VERIFY;
    int verify = s->op == CB_OP_ECDSA_VERIFY || s->op == CB_OP_RSA_VERIFY;
    uint8_t d[32], q[65], n[512], prime[256];
    size_t nlen = 0, plen = 0;
    int rc;

    if (rsa)
        rc = fresh_rsa((int)p->rsa_bits, n, &nlen, prime, &plen, err);
    else
        rc = fresh_p256(d, q, err);
    if (rc == CB_OK)
        rc = rsa ? load_rsa(n, nlen, 0, prime, plen, &s->key, err) : load_p256(d, q, &s->key, err);
    OPENSSL_cleanse(d, sizeof d);
    OPENSSL_cleanse(prime, sizeof prime);
    if (rc != CB_OK || !verify)
        return rc;
    for (int i = 0; i < POOL && rc == CB_OK; i++) {
        cb_fill(s->digest[i], 32, 100 + (uint64_t)i);
        rc = tpm_sign(s->key, rsa, s->digest[i], 32, s->sig[i], &s->siglen, err);
    }
    flush(&s->key, s->gen);
    if (rc == CB_OK)
        rc = rsa ? load_rsa(n, nlen, 0, NULL, 0, &s->key, err) : load_p256(NULL, q, &s->key, err);
    return rc;
}

static void *tpm_setup(const cb_params *p, char *err)
{
    int op = p->op;
    slot *s;
    int rc = CB_OK;

    if (check(p, err) != CB_OK || tpm_connect(err) != CB_OK)
        return NULL;
    if ((s = cb_slot_new(sizeof *s, err)) == NULL)
        return NULL;
    s->op = op;
    s->gen = tpm.gen;
    s->primary = s->key = ESYS_TR_NONE;
    s->len = p->bytes < 0 ? 0 : (size_t)p->bytes;
    s->msg = malloc(s->len + 1);
    s->out = malloc(s->len + 64);
    if (s->msg == NULL || s->out == NULL) {
        tpm_teardown(s);
        cb_say(err, CB_ERR, "out of memory");
        return NULL;
    }
    cb_fill(s->msg, s->len, 1);
    switch (op) {
    case CB_OP_ECC_KEYGEN:
    case CB_OP_RSA_KEYGEN:
        s->tmpl = signing_template(op == CB_OP_RSA_KEYGEN ? (int)p->rsa_bits : 0, 0);
        rc = create_storage_primary(&s->primary, err);
        break;
    case CB_OP_ECDSA_SIGN: case CB_OP_ECDSA_VERIFY: case CB_OP_RSA_SIGN: case CB_OP_RSA_VERIFY:
        rc = setup_keys(s, p, err);
        break;
    }
    if (rc != CB_OK) {
        tpm_teardown(s);
        return NULL;
    }
    return s;
}

static int tpm_run(void *handle, uint64_t k, char *err)
{
    slot *s = handle;
    int rsa = s->op == CB_OP_RSA_SIGN || s->op == CB_OP_RSA_VERIFY;
    uint8_t digest[32], sig[512];
    size_t siglen;
    int valid;

    if (slot_alive(s->gen, err) != CB_OK)
        return CB_ERR;
    for (uint64_t i = 0; i < k; i++) {
        int j = (int)(s->counter % POOL);
        int rc = CB_OK;
        s->counter++;
        switch (s->op) {
        case CB_OP_RANDOM:
            rc = tpm_random(s->out, s->len, err);
            break;
        case CB_OP_SHA256:
            rc = tpm_sha256(s->msg, s->len, s->out, err);
            break;
        case CB_OP_ECC_KEYGEN:
        case CB_OP_RSA_KEYGEN: {
            TPM2B_PRIVATE *priv = NULL;
            TPM2B_PUBLIC *pub = NULL;
            rc = create_key(s->primary, &s->tmpl, &priv, &pub, err);
            Esys_Free(priv);
            Esys_Free(pub);
            break;
        }
        case CB_OP_ECDSA_SIGN:
        case CB_OP_RSA_SIGN:
            /* A digest that changes every operation: the counter in its first 8 bytes. */
            memset(digest, 0x5a, sizeof digest);
            for (int b = 0; b < 8; b++)
                digest[b] = (uint8_t)(s->counter >> (8 * b));
            rc = tpm_sign(s->key, rsa, digest, 32, sig, &siglen, err);
            break;
        case CB_OP_ECDSA_VERIFY:
        case CB_OP_RSA_VERIFY:
            rc = tpm_verify(s->key, rsa, s->digest[j], 32, s->sig[j], s->siglen, &valid, err);
            if (rc == CB_OK && !valid)
                rc = cb_say(err, CB_ERR, "the TPM rejected a signature it made itself");
            break;
        }
        if (rc != CB_OK)
            return CB_ERR;
    }
    return CB_OK;
}

/* ---- describe ----------------------------------------------------------------------------- */

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* 4 bytes of a property as text (vendor strings, manufacturer ID), trailing NULs and spaces cut. */
static void prop_text(char *dst, uint32_t v)
{
    int n = 0;
    for (int i = 3; i >= 0; i--) {
        char c = (char)(v >> (8 * i));
        if (c >= 0x20 && c < 0x7f)
            dst[n++] = c;
    }
    while (n > 0 && dst[n - 1] == ' ')
        n--;
    dst[n] = '\0';
}

static void tpm_describe(char *out, size_t outlen)
{
    char err[CB_ERRLEN], text[64], part[8], manuf[8], vendor[20];
    TPMS_CAPABILITY_DATA *data = NULL;

    cb_member_str(out, outlen, "tcti", tcti_conf());
    cb_member_str(out, outlen, "tcti_variable", TCTI_ENV);
    if (tpm_connect(err) != CB_OK || get_properties(TPM2_PT_FIXED, TPM2_MAX_TPM_PROPERTIES,
                                                    &data, err) != CB_OK) {
        cb_member_str(out, outlen, "unusable", err);
        return;
    }
    prop_text(manuf, property(data, TPM2_PT_MANUFACTURER, 0));
    cb_member_str(out, outlen, "manufacturer", manuf);
    vendor[0] = '\0';
    for (TPM2_PT pt = TPM2_PT_VENDOR_STRING_1; pt <= TPM2_PT_VENDOR_STRING_4; pt++) {
        prop_text(part, property(data, pt, 0));
        strcat(vendor, part);
    }
    cb_member_str(out, outlen, "vendor", vendor);
    uint32_t fw1 = property(data, TPM2_PT_FIRMWARE_VERSION_1, 0);
    uint32_t fw2 = property(data, TPM2_PT_FIRMWARE_VERSION_2, 0);
    snprintf(text, sizeof text, "%u.%u.%u.%u", fw1 >> 16, fw1 & 0xffff, fw2 >> 16, fw2 & 0xffff);
    cb_member_str(out, outlen, "firmware_version", text);      /* vendors' own reading varies: */
    snprintf(text, sizeof text, "0x%08x 0x%08x", fw1, fw2);   /* the two raw words as well */
    cb_member_str(out, outlen, "firmware_version_raw", text);
    uint32_t rev = property(data, TPM2_PT_REVISION, 0);
    snprintf(text, sizeof text, "TPM 2.0 library level %u revision %u.%02u (%u)",
             property(data, TPM2_PT_LEVEL, 0), rev / 100, rev % 100, property(data, TPM2_PT_YEAR, 0));
    cb_member_str(out, outlen, "spec", text);
    Esys_Free(data);
    {   /* one line for `cryptobench list engines`: which TPM, reached how */
        char line[256];
        snprintf(line, sizeof line, "%s (%s), firmware %u.%u.%u.%u, TPM 2.0 revision %u.%02u, at %s",
                 manuf, vendor, fw1 >> 16, fw1 & 0xffff, fw2 >> 16, fw2 & 0xffff, rev / 100,
                 rev % 100, tcti_conf());
        cb_member_str(out, outlen, "version", line);
    }

    cb_member_int(out, outlen, "random_bytes_per_call", tpm.random_max);
    cb_member_int(out, outlen, "hash_bytes_per_call", tpm.input_buffer);
    text[0] = '\0';
    for (int i = 0; i < N_RSA_SIZES; i++)
        if (tpm.rsa_ok[i] == 1)
            snprintf(text + strlen(text), sizeof text - strlen(text), "%s%d", text[0] ? "," : "",
                     rsa_sizes[i]);
    cb_member_str(out, outlen, "rsa_bits", text);
    cb_member_int(out, outlen, "p256", tpm.p256_ok == 1);
    if (tpm.stale_flushed)
        cb_member_int(out, outlen, "foreign_objects_flushed", tpm.stale_flushed);

    /* Round trip: the median of ROUND_TRIPS trivial commands (one fixed property read). */
    uint64_t t[ROUND_TRIPS];
    int n = 0;
    for (int i = 0; i < ROUND_TRIPS; i++) {
        uint64_t t0 = now_ns();
        TSS2_RC rc = Esys_GetCapability(tpm.esys, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE,
                                        TPM2_CAP_TPM_PROPERTIES, TPM2_PT_MANUFACTURER, 1, NULL,
                                        &data);
        uint64_t t1 = now_ns();
        if (rc != TSS2_RC_SUCCESS) {
            tss_fail(err, "TPM2_GetCapability", rc);
            break;
        }
        Esys_Free(data);
        t[n++] = t1 - t0;
    }
    if (n == ROUND_TRIPS) {
        qsort(t, (size_t)n, sizeof t[0], cmp_u64);
        cb_member_int(out, outlen, "round_trip_ns", (t[n / 2 - 1] + t[n / 2]) / 2);
        cb_member_str(out, outlen, "round_trip_command",
                      "TPM2_GetCapability(TPM_PROPERTIES, TPM_PT_MANUFACTURER, 1), median of 200");
    } else {
        cb_member_str(out, outlen, "unusable", err);
    }
}

const cb_engine cb_engine_tpm = {
    "tpm",
    "tpm2-tss",
    tpm_describe,
    tpm_supports,
    tpm_compute,
    tpm_setup,
    tpm_run,
    tpm_teardown,
};
