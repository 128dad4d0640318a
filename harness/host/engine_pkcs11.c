/* engine_pkcs11.c - the "pkcs11" engine: any PKCS#11 module (secure element, HSM, smart card, or
 * SoftHSM2 standing in for one), loaded with dlopen.
 *
 * Configuration, all from the environment (the orchestrator's targets/host/secure/pkcs11.py sets it up):
 *   CRYPTOBENCH_PKCS11_MODULE    path of the vendor's PKCS#11 module (.so)
 *   CRYPTOBENCH_PKCS11_TOKEN     token label, or
 *   CRYPTOBENCH_PKCS11_SLOT      slot id (decimal or 0x…); neither: the only token present
 *   CRYPTOBENCH_PKCS11_PIN       the user PIN, or
 *   CRYPTOBENCH_PKCS11_PIN_FILE  a file holding it (first line); empty (/dev/null): no login, for
 *                                a token that has none
 * The PIN is read once, used for C_Login and wiped (our copy and the environment string). It is
 * never printed, never part of describe() and never part of an error message.
 *
 * The module is opened on first use: C_Initialize, one R/W session on the token, C_Login as the
 * user. Every key this engine makes is a session object (CKA_TOKEN = false): compute() destroys
 * its keys before it returns, a timing slot destroys its keys in teardown, and closing the
 * session at exit destroys anything left.
 *
 * Ops, as the token's mechanism list offers them (supports() says which mechanism is missing):
 *  - random (source "library": the token's generator): C_GenerateRandom.
 *  - sha1, sha224, sha256, sha384, sha512: C_DigestInit + C_Digest.
 *  - aes-ecb/cbc/ctr/gcm-encrypt: the key imported once as a session object; one operation is
 *    C_EncryptInit (fresh IV / counter block / nonce) + C_Encrypt. rekey=1 is not offered.
 *  - ecc-keygen (p256, p521): C_GenerateKeyPair (CKM_EC_KEY_PAIR_GEN) + C_DestroyObject of both
 *    halves. A token does not export its private keys, so compute() returns q and no d; given an
 *    input `hash`, it also returns `sig`, an ECDSA signature made with the new private key inside
 *    the token, which the orchestrator verifies with another engine.
 *  - ecdsa-sign / ecdsa-verify: CKM_ECDSA over the given digest (signature r‖s). compute() imports
 *    d (or q) as a session key; a timing slot generates its key pair in the token.
 *  - rsa-keygen: CKM_RSA_PKCS_KEY_PAIR_GEN, e = 65537, + C_DestroyObject of both halves; compute()
 *    returns n and e (no d) and, given `hash`, `sig` (PKCS#1 v1.5 SHA-256) made with the new key.
 *  - rsa-sign / rsa-verify: CKM_RSA_PKCS over DigestInfo(SHA-256) ‖ digest, i.e. PKCS#1 v1.5 with
 *    SHA-256 on a digest computed elsewhere (the protocol's input is the digest).
 *
 * describe() reports the module (C_GetInfo), the token (C_GetTokenInfo), the relevant mechanisms
 * and two measured costs: call_ns (median C_GetSessionInfo: a call the module answers itself) and
 * round_trip_ns (median C_GenerateRandom of one byte: the cheapest call the token itself must
 * answer, i.e. the per-command host <-> secure element cost of the transport).
 *
 * A failing PKCS#11 call is an error naming the call and its CKR_ code; a removed or unreachable
 * token makes every later op fail that way, and the orchestrator marks those cells failed.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <p11-kit/pkcs11.h>

#include "engine.h"
#include "util.h"

#define POOL 16                 /* pre-made (digest, signature) pairs for verify slots */
#define PIN_MAX 256
#define RT_MAX 1000             /* round-trip measurement: at most this many calls … */
#define RT_BUDGET_NS 1000000000ull  /* … or this long */

/* ---- names ------------------------------------------------------------------------------- */

static const struct { CK_RV rv; const char *name; } rv_names[] = {
    {CKR_OK, "CKR_OK"}, {CKR_CANCEL, "CKR_CANCEL"}, {CKR_HOST_MEMORY, "CKR_HOST_MEMORY"},
    {CKR_SLOT_ID_INVALID, "CKR_SLOT_ID_INVALID"}, {CKR_GENERAL_ERROR, "CKR_GENERAL_ERROR"},
    {CKR_FUNCTION_FAILED, "CKR_FUNCTION_FAILED"}, {CKR_ARGUMENTS_BAD, "CKR_ARGUMENTS_BAD"},
    {CKR_ATTRIBUTE_READ_ONLY, "CKR_ATTRIBUTE_READ_ONLY"},
    {CKR_ATTRIBUTE_SENSITIVE, "CKR_ATTRIBUTE_SENSITIVE"},
    {CKR_ATTRIBUTE_TYPE_INVALID, "CKR_ATTRIBUTE_TYPE_INVALID"},
    {CKR_ATTRIBUTE_VALUE_INVALID, "CKR_ATTRIBUTE_VALUE_INVALID"},
    {CKR_DATA_INVALID, "CKR_DATA_INVALID"}, {CKR_DATA_LEN_RANGE, "CKR_DATA_LEN_RANGE"},
    {CKR_DEVICE_ERROR, "CKR_DEVICE_ERROR"}, {CKR_DEVICE_MEMORY, "CKR_DEVICE_MEMORY"},
    {CKR_DEVICE_REMOVED, "CKR_DEVICE_REMOVED"}, {CKR_FUNCTION_CANCELED, "CKR_FUNCTION_CANCELED"},
    {CKR_FUNCTION_NOT_SUPPORTED, "CKR_FUNCTION_NOT_SUPPORTED"},
    {CKR_KEY_HANDLE_INVALID, "CKR_KEY_HANDLE_INVALID"}, {CKR_KEY_SIZE_RANGE, "CKR_KEY_SIZE_RANGE"},
    {CKR_KEY_TYPE_INCONSISTENT, "CKR_KEY_TYPE_INCONSISTENT"},
    {CKR_KEY_FUNCTION_NOT_PERMITTED, "CKR_KEY_FUNCTION_NOT_PERMITTED"},
    {CKR_MECHANISM_INVALID, "CKR_MECHANISM_INVALID"},
    {CKR_MECHANISM_PARAM_INVALID, "CKR_MECHANISM_PARAM_INVALID"},
    {CKR_OBJECT_HANDLE_INVALID, "CKR_OBJECT_HANDLE_INVALID"},
    {CKR_OPERATION_ACTIVE, "CKR_OPERATION_ACTIVE"},
    {CKR_OPERATION_NOT_INITIALIZED, "CKR_OPERATION_NOT_INITIALIZED"},
    {CKR_PIN_INCORRECT, "CKR_PIN_INCORRECT"}, {CKR_PIN_INVALID, "CKR_PIN_INVALID"},
    {CKR_PIN_LEN_RANGE, "CKR_PIN_LEN_RANGE"}, {CKR_PIN_EXPIRED, "CKR_PIN_EXPIRED"},
    {CKR_PIN_LOCKED, "CKR_PIN_LOCKED"}, {CKR_SESSION_CLOSED, "CKR_SESSION_CLOSED"},
    {CKR_SESSION_COUNT, "CKR_SESSION_COUNT"},
    {CKR_SESSION_HANDLE_INVALID, "CKR_SESSION_HANDLE_INVALID"},
    {CKR_SESSION_READ_ONLY, "CKR_SESSION_READ_ONLY"},
    {CKR_SIGNATURE_INVALID, "CKR_SIGNATURE_INVALID"},
    {CKR_SIGNATURE_LEN_RANGE, "CKR_SIGNATURE_LEN_RANGE"},
    {CKR_TEMPLATE_INCOMPLETE, "CKR_TEMPLATE_INCOMPLETE"},
    {CKR_TEMPLATE_INCONSISTENT, "CKR_TEMPLATE_INCONSISTENT"},
    {CKR_TOKEN_NOT_PRESENT, "CKR_TOKEN_NOT_PRESENT"},
    {CKR_TOKEN_NOT_RECOGNIZED, "CKR_TOKEN_NOT_RECOGNIZED"},
    {CKR_TOKEN_WRITE_PROTECTED, "CKR_TOKEN_WRITE_PROTECTED"},
    {CKR_USER_ALREADY_LOGGED_IN, "CKR_USER_ALREADY_LOGGED_IN"},
    {CKR_USER_NOT_LOGGED_IN, "CKR_USER_NOT_LOGGED_IN"},
    {CKR_USER_PIN_NOT_INITIALIZED, "CKR_USER_PIN_NOT_INITIALIZED"},
    {CKR_USER_TYPE_INVALID, "CKR_USER_TYPE_INVALID"},
    {CKR_BUFFER_TOO_SMALL, "CKR_BUFFER_TOO_SMALL"},
    {CKR_CRYPTOKI_NOT_INITIALIZED, "CKR_CRYPTOKI_NOT_INITIALIZED"},
    {CKR_CRYPTOKI_ALREADY_INITIALIZED, "CKR_CRYPTOKI_ALREADY_INITIALIZED"},
    {CKR_DOMAIN_PARAMS_INVALID, "CKR_DOMAIN_PARAMS_INVALID"},
    {CKR_CURVE_NOT_SUPPORTED, "CKR_CURVE_NOT_SUPPORTED"},
};

static const char *rv_name(CK_RV rv)
{
    static char unknown[32];
    for (size_t i = 0; i < sizeof rv_names / sizeof rv_names[0]; i++)
        if (rv_names[i].rv == rv)
            return rv_names[i].name;
    snprintf(unknown, sizeof unknown, "CKR_0x%lx", (unsigned long)rv);
    return unknown;
}

/* The mechanisms our ops use; their presence and key-size range are read once at start. */
enum { M_SHA1, M_SHA224, M_SHA256, M_SHA384, M_SHA512, M_AES_ECB, M_AES_CBC, M_AES_CTR,
       M_AES_GCM, M_AES_CCM, M_EC_GEN, M_ECDSA, M_RSA_GEN, M_RSA_PKCS, M_SHA256_RSA, M_COUNT };

static const struct { CK_MECHANISM_TYPE type; const char *name; } mech_names[M_COUNT] = {
    {CKM_SHA_1, "CKM_SHA_1"}, {CKM_SHA224, "CKM_SHA224"}, {CKM_SHA256, "CKM_SHA256"},
    {CKM_SHA384, "CKM_SHA384"}, {CKM_SHA512, "CKM_SHA512"}, {CKM_AES_ECB, "CKM_AES_ECB"},
    {CKM_AES_CBC, "CKM_AES_CBC"}, {CKM_AES_CTR, "CKM_AES_CTR"}, {CKM_AES_GCM, "CKM_AES_GCM"},
    {CKM_AES_CCM, "CKM_AES_CCM"}, {CKM_EC_KEY_PAIR_GEN, "CKM_EC_KEY_PAIR_GEN"},
    {CKM_ECDSA, "CKM_ECDSA"}, {CKM_RSA_PKCS_KEY_PAIR_GEN, "CKM_RSA_PKCS_KEY_PAIR_GEN"},
    {CKM_RSA_PKCS, "CKM_RSA_PKCS"}, {CKM_SHA256_RSA_PKCS, "CKM_SHA256_RSA_PKCS"},
};

/* ---- ops ---------------------------------------------------------------------------------- */

/* The ops this engine has (by catalog id) and the mechanism each needs (random: none). */
static const struct { int has; int mech; } op_mech[CB_N_OPS] = {
    [CB_OP_RANDOM] = {1, -1},
    [CB_OP_SHA1] = {1, M_SHA1}, [CB_OP_SHA224] = {1, M_SHA224}, [CB_OP_SHA256] = {1, M_SHA256},
    [CB_OP_SHA384] = {1, M_SHA384}, [CB_OP_SHA512] = {1, M_SHA512},
    [CB_OP_AES_ECB_ENCRYPT] = {1, M_AES_ECB}, [CB_OP_AES_CBC_ENCRYPT] = {1, M_AES_CBC},
    [CB_OP_AES_CTR_ENCRYPT] = {1, M_AES_CTR}, [CB_OP_AES_GCM_ENCRYPT] = {1, M_AES_GCM},
    [CB_OP_AES_CCM_ENCRYPT] = {1, M_AES_CCM},
    [CB_OP_ECC_KEYGEN] = {1, M_EC_GEN}, [CB_OP_ECDSA_SIGN] = {1, M_ECDSA},
    [CB_OP_ECDSA_VERIFY] = {1, M_ECDSA},
    [CB_OP_RSA_KEYGEN] = {1, M_RSA_GEN}, [CB_OP_RSA_SIGN] = {1, M_RSA_PKCS},
    [CB_OP_RSA_VERIFY] = {1, M_RSA_PKCS},
};
/* The SHA ops share their code: one digest mechanism each. */
#define CASE_SHA case CB_OP_SHA1: case CB_OP_SHA224: case CB_OP_SHA256: case CB_OP_SHA384: \
    case CB_OP_SHA512

/* Curves by their DER-encoded OID (CKA_EC_PARAMS). */
typedef struct { const char *name; const uint8_t *oid; size_t oid_len; size_t bytes; CK_ULONG bits; } curve_t;
static const uint8_t OID_P256[] = {0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07};
static const uint8_t OID_P521[] = {0x06, 0x05, 0x2b, 0x81, 0x04, 0x00, 0x23};
static const curve_t curves[] = {
    {"p256", OID_P256, sizeof OID_P256, 32, 256},
    {"p521", OID_P521, sizeof OID_P521, 66, 521},
};

/* DER DigestInfo prefix for SHA-256 (RFC 8017, 9.2 note 1). */
static const uint8_t SHA256_DIGESTINFO[19] = {0x30, 0x31, 0x30, 0x0d, 0x06, 0x09, 0x60, 0x86,
    0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x01, 0x05, 0x00, 0x04, 0x20};
static const uint8_t RSA_E[3] = {0x01, 0x00, 0x01};

/* ---- module state ------------------------------------------------------------------------- */

static struct {
    int state;                      /* 0: not tried, 1: ready, -1: failed (why) */
    char why[CB_ERRLEN];
    void *dl;
    CK_FUNCTION_LIST_PTR f;
    CK_SLOT_ID slot;
    CK_SESSION_HANDLE session;
    CK_INFO info;
    CK_TOKEN_INFO token;
    int logged_in;
    int has[M_COUNT];
    CK_MECHANISM_INFO minfo[M_COUNT];
    uint64_t call_ns, round_trip_ns, rt_n;
    const char *rt_call;
    char module[PATH_MAX];
} P;

static CK_BBOOL yes = CK_TRUE, no = CK_FALSE;

/* A failed PKCS#11 call: "C_Sign: CKR_DEVICE_REMOVED (token removed or unreachable)". */
static int ck_fail(char *err, const char *call, CK_RV rv)
{
    int gone = rv == CKR_DEVICE_REMOVED || rv == CKR_TOKEN_NOT_PRESENT ||
               rv == CKR_SESSION_HANDLE_INVALID || rv == CKR_SESSION_CLOSED ||
               rv == CKR_DEVICE_ERROR || rv == CKR_TOKEN_NOT_RECOGNIZED;
    snprintf(err, CB_ERRLEN, "%s: %s%s", call, rv_name(rv),
             gone ? " (token removed or unreachable)" : "");
    return CB_ERR;
}

#define CK(call, args) do { CK_RV rv_ = P.f->call args; \
                            if (rv_ != CKR_OK) return ck_fail(err, #call, rv_); } while (0)

/* A blank-padded PKCS#11 text field as a C string. */
static void padded(char *dst, const unsigned char *src, size_t n)
{
    while (n > 0 && (src[n - 1] == ' ' || src[n - 1] == '\0'))
        n--;
    memcpy(dst, src, n);
    dst[n] = '\0';
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* ---- start-up: module, token, session, login ----------------------------------------------- */

/* The user PIN from CRYPTOBENCH_PKCS11_PIN or CRYPTOBENCH_PKCS11_PIN_FILE; 1 found, 0 none,
 * -1 error (why filled, never with the PIN). The environment string is wiped in place. */
static int read_pin(char *pin, size_t cap, size_t *len, char *why)
{
    char *env = getenv("CRYPTOBENCH_PKCS11_PIN");
    const char *file = getenv("CRYPTOBENCH_PKCS11_PIN_FILE");
    *len = 0;
    if (env != NULL && env[0] != '\0') {
        size_t n = strlen(env);
        if (n >= cap) {
            explicit_bzero(env, n);
            snprintf(why, CB_ERRLEN, "CRYPTOBENCH_PKCS11_PIN is too long");
            return -1;
        }
        memcpy(pin, env, n);
        explicit_bzero(env, n);         /* also gone from /proc/self/environ */
        *len = n;
        return 1;
    }
    if (file != NULL && file[0] != '\0') {
        /* read(2), not stdio: no library buffer keeps a copy of the PIN */
        int fd = open(file, O_RDONLY | O_CLOEXEC);
        ssize_t got;
        size_t n = 0;
        if (fd < 0) {
            snprintf(why, CB_ERRLEN, "CRYPTOBENCH_PKCS11_PIN_FILE: cannot read %s: %s", file,
                     strerror(errno));
            return -1;
        }
        while (n < cap - 1 && (got = read(fd, pin + n, cap - 1 - n)) > 0)
            n += (size_t)got;
        close(fd);
        while (n > 0 && (pin[n - 1] == '\n' || pin[n - 1] == '\r'))
            n--;
        for (size_t i = 0; i < n; i++)
            if (pin[i] == '\n' || pin[i] == '\r') {     /* first line only */
                n = i;
                break;
            }
        *len = n;
        return 1;
    }
    return 0;
}

static void shutdown_module(void)
{
    if (P.f != NULL) {
        if (P.session != CK_INVALID_HANDLE) {
            if (P.logged_in)
                P.f->C_Logout(P.session);
            P.f->C_CloseSession(P.session);   /* destroys every session object left */
        }
        P.f->C_Finalize(NULL);
        P.f = NULL;
    }
    /* the module stays mapped: some register their own exit handlers */
}

/* Start-up failed: remember why (every later request answers with it). */
__attribute__((format(printf, 1, 2)))
static int fail_init(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(P.why, sizeof P.why, fmt, ap);
    va_end(ap);
    P.state = -1;
    return CB_UNSUPPORTED;
}

static int find_slot(void)
{
    const char *label = getenv("CRYPTOBENCH_PKCS11_TOKEN");
    const char *slot_env = getenv("CRYPTOBENCH_PKCS11_SLOT");
    CK_ULONG n = 0;
    CK_SLOT_ID *ids;
    CK_RV rv = P.f->C_GetSlotList(CK_TRUE, NULL, &n);
    char text[64];
    if (rv != CKR_OK)
        return fail_init("C_GetSlotList: %s", rv_name(rv));
    if (n == 0)
        return fail_init("no token present in any slot of %s", P.module);
    ids = calloc(n, sizeof *ids);
    if (ids == NULL)
        return fail_init("out of memory");
    rv = P.f->C_GetSlotList(CK_TRUE, ids, &n);
    if (rv != CKR_OK) {
        free(ids);
        return fail_init("C_GetSlotList: %s", rv_name(rv));
    }
    int found = -1, matches = 0;
    for (CK_ULONG i = 0; i < n; i++) {
        CK_TOKEN_INFO ti;
        char l[33];
        if (slot_env != NULL && slot_env[0] != '\0') {
            if (ids[i] == strtoul(slot_env, NULL, 0)) {
                found = (int)i;
                matches++;
            }
            continue;
        }
        if (P.f->C_GetTokenInfo(ids[i], &ti) != CKR_OK)
            continue;
        padded(l, ti.label, sizeof ti.label);
        if (label == NULL || label[0] == '\0' || strcmp(l, label) == 0) {
            if (found < 0)
                found = (int)i;
            matches++;
        }
    }
    if (found >= 0)
        P.slot = ids[found];
    free(ids);
    if (slot_env != NULL && slot_env[0] != '\0' && found < 0)
        return fail_init("CRYPTOBENCH_PKCS11_SLOT=%s: no token present in that slot of %s",
                         slot_env, P.module);
    if (found < 0)
        return fail_init("CRYPTOBENCH_PKCS11_TOKEN: no token labelled \"%s\" in %s",
                         label ? label : "", P.module);
    if (matches > 1 && (label == NULL || label[0] == '\0')) {
        snprintf(text, sizeof text, "%lu", (unsigned long)n);
        return fail_init("%s tokens present in %s; choose one with CRYPTOBENCH_PKCS11_TOKEN (label) "
                         "or CRYPTOBENCH_PKCS11_SLOT", text, P.module);
    }
    return CB_OK;
}

/* Median cost of a call, over at most RT_MAX calls or RT_BUDGET_NS. */
static uint64_t measure(int random, uint64_t *count)
{
    static uint64_t t[RT_MAX];
    CK_SESSION_INFO si;
    CK_BYTE b;
    uint64_t start = now_ns(), n = 0;
    while (n < RT_MAX && now_ns() - start < RT_BUDGET_NS) {
        uint64_t t0 = now_ns();
        CK_RV rv = random ? P.f->C_GenerateRandom(P.session, &b, 1)
                          : P.f->C_GetSessionInfo(P.session, &si);
        uint64_t t1 = now_ns();
        if (rv != CKR_OK)
            break;
        t[n++] = t1 - t0;
    }
    *count = n;
    if (n == 0)
        return 0;
    qsort(t, n, sizeof t[0], cmp_u64);
    return n % 2 ? t[n / 2] : (t[n / 2 - 1] + t[n / 2]) / 2;
}

static int init(char *err)
{
    CK_C_GetFunctionList get;
    CK_RV rv;
    char pin[PIN_MAX];
    size_t pin_len = 0;
    int have_pin;

    if (P.state == 1)
        return CB_OK;
    if (P.state == -1)
        return cb_say(err, CB_UNSUPPORTED, P.why);
    P.session = CK_INVALID_HANDLE;
    const char *module = getenv("CRYPTOBENCH_PKCS11_MODULE");
    if (module == NULL || module[0] == '\0') {
        fail_init("CRYPTOBENCH_PKCS11_MODULE is not set (the path of the token's PKCS#11 module; "
                  "cryptobench sets it for a throw-away SoftHSM2 token)");
        return cb_say(err, CB_UNSUPPORTED, P.why);
    }
    snprintf(P.module, sizeof P.module, "%s", module);
    P.dl = dlopen(P.module, RTLD_NOW | RTLD_LOCAL);
    if (P.dl == NULL) {
        fail_init("CRYPTOBENCH_PKCS11_MODULE: cannot load %s: %s", P.module, dlerror());
        return cb_say(err, CB_UNSUPPORTED, P.why);
    }
    *(void **)&get = dlsym(P.dl, "C_GetFunctionList");
    if (get == NULL || get(&P.f) != CKR_OK || P.f == NULL) {
        P.f = NULL;
        fail_init("%s is not a PKCS#11 module (no C_GetFunctionList)", P.module);
        return cb_say(err, CB_UNSUPPORTED, P.why);
    }
    rv = P.f->C_Initialize(NULL);
    if (rv != CKR_OK && rv != CKR_CRYPTOKI_ALREADY_INITIALIZED) {
        P.f = NULL;
        fail_init("C_Initialize: %s", rv_name(rv));
        return cb_say(err, CB_UNSUPPORTED, P.why);
    }
    atexit(shutdown_module);
    if ((rv = P.f->C_GetInfo(&P.info)) != CKR_OK) {
        fail_init("C_GetInfo: %s", rv_name(rv));
        return cb_say(err, CB_UNSUPPORTED, P.why);
    }
    if (find_slot() != CB_OK)
        return cb_say(err, CB_UNSUPPORTED, P.why);
    if ((rv = P.f->C_GetTokenInfo(P.slot, &P.token)) != CKR_OK) {
        fail_init("C_GetTokenInfo: %s", rv_name(rv));
        return cb_say(err, CB_UNSUPPORTED, P.why);
    }
    rv = P.f->C_OpenSession(P.slot, CKF_SERIAL_SESSION | CKF_RW_SESSION, NULL, NULL, &P.session);
    if (rv != CKR_OK) {
        P.session = CK_INVALID_HANDLE;
        fail_init("C_OpenSession: %s", rv_name(rv));
        return cb_say(err, CB_UNSUPPORTED, P.why);
    }
    have_pin = read_pin(pin, sizeof pin, &pin_len, P.why);
    if (have_pin < 0) {
        P.state = -1;
        explicit_bzero(pin, sizeof pin);
        return cb_say(err, CB_UNSUPPORTED, P.why);
    }
    if (have_pin && pin_len == 0 && (P.token.flags & CKF_LOGIN_REQUIRED)) {
        fail_init("the token needs the user PIN, but the PIN given (CRYPTOBENCH_PKCS11_PIN_FILE or "
                  "CRYPTOBENCH_PKCS11_PIN) is empty");
        return cb_say(err, CB_UNSUPPORTED, P.why);
    }
    if (have_pin && pin_len > 0) {      /* an empty PIN: a token without login (e.g. SE05x) */
        rv = P.f->C_Login(P.session, CKU_USER, (CK_UTF8CHAR_PTR)pin, (CK_ULONG)pin_len);
        explicit_bzero(pin, sizeof pin);
        if (rv != CKR_OK && rv != CKR_USER_ALREADY_LOGGED_IN) {
            fail_init("C_Login: %s", rv_name(rv));
            return cb_say(err, CB_UNSUPPORTED, P.why);
        }
        P.logged_in = rv == CKR_OK;
    } else if (P.token.flags & CKF_LOGIN_REQUIRED) {
        fail_init("the token needs the user PIN: set CRYPTOBENCH_PKCS11_PIN_FILE (a file holding "
                  "it) or CRYPTOBENCH_PKCS11_PIN");
        return cb_say(err, CB_UNSUPPORTED, P.why);
    }
    for (int m = 0; m < M_COUNT; m++)
        P.has[m] = P.f->C_GetMechanismInfo(P.slot, mech_names[m].type, &P.minfo[m]) == CKR_OK;
    P.call_ns = measure(0, &P.rt_n);
    if (P.token.flags & CKF_RNG) {
        P.round_trip_ns = measure(1, &P.rt_n);
        P.rt_call = "C_GenerateRandom(1 byte)";
    } else {
        P.round_trip_ns = P.call_ns;
        P.rt_call = "C_GetSessionInfo (the token has no RNG)";
    }
    P.state = 1;
    return CB_OK;
}

/* ---- supports ----------------------------------------------------------------------------- */

static const curve_t *curve_of(const char *name)
{
    for (size_t i = 0; i < sizeof curves / sizeof curves[0]; i++)
        if (strcmp(curves[i].name, name) == 0)
            return &curves[i];
    return NULL;
}

static int need(int m, char *why)
{
    if (P.has[m])
        return CB_OK;
    snprintf(why, CB_ERRLEN, "the token offers no %s", mech_names[m].name);
    return CB_UNSUPPORTED;
}

/* Key size within the mechanism's range (when the token states one). */
static int key_size(int m, CK_ULONG size, const char *unit, char *why)
{
    CK_MECHANISM_INFO *mi = &P.minfo[m];
    if (mi->ulMaxKeySize == 0 || (size >= mi->ulMinKeySize && size <= mi->ulMaxKeySize))
        return CB_OK;
    snprintf(why, CB_ERRLEN, "the token's %s takes %lu..%lu %s keys, not %lu", mech_names[m].name,
             (unsigned long)mi->ulMinKeySize, (unsigned long)mi->ulMaxKeySize, unit,
             (unsigned long)size);
    return CB_UNSUPPORTED;
}

static int check(const cb_params *p, char *why)
{
    int rc;
    if (init(why) != CB_OK)
        return CB_UNSUPPORTED;
    if (!op_mech[p->op].has)
        return cb_say(why, CB_UNSUPPORTED, "not among the pkcs11 engine's ops (random, SHA-1/2, "
                   "AES-ECB/CBC/CTR/GCM, ECDSA and EC key generation on P-256/P-521, RSA PKCS#1 "
                   "v1.5 with SHA-256)");
    int op = p->op, m = op_mech[op].mech;
    switch (op) {
    case CB_OP_RANDOM:
        if (strcmp(p->source, "library") != 0)
            return cb_say(why, CB_UNSUPPORTED, "a PKCS#11 token offers its own generator only: "
                       "source \"library\" (C_GenerateRandom)");
        if (!(P.token.flags & CKF_RNG))
            return cb_say(why, CB_UNSUPPORTED, "the token has no random number generator (CKF_RNG)");
        return CB_OK;
    CASE_SHA:
        return need(m, why);
    case CB_OP_AES_CCM_ENCRYPT:
        if (need(m, why) != CB_OK)
            return CB_UNSUPPORTED;
        return cb_say(why, CB_UNSUPPORTED, "the pkcs11 engine does not drive CKM_AES_CCM (its "
                   "parameters are PKCS#11 3.0; not tested here)");
    case CB_OP_AES_ECB_ENCRYPT: case CB_OP_AES_CBC_ENCRYPT: case CB_OP_AES_CTR_ENCRYPT: case CB_OP_AES_GCM_ENCRYPT:
        if (need(m, why) != CB_OK)
            return CB_UNSUPPORTED;
        if (p->key_bits != 128 && p->key_bits != 192 && p->key_bits != 256)
            return cb_say(why, CB_UNSUPPORTED, "key_bits must be 128, 192 or 256");
        if (p->rekey > 0)
            return cb_say(why, CB_UNSUPPORTED, "rekey=1 is not offered: a PKCS#11 key is an object in "
                       "the token, set up once per slot (C_CreateObject is not a key schedule)");
        if ((op == CB_OP_AES_ECB_ENCRYPT || op == CB_OP_AES_CBC_ENCRYPT) && p->bytes > 0 && p->bytes % 16 != 0)
            return cb_say(why, CB_UNSUPPORTED, "AES-ECB/CBC without padding needs a multiple of 16 bytes");
        /* AES key sizes are in bytes (PKCS#11 2.40, 2.8); some modules state bits */
        if (P.minfo[m].ulMaxKeySize != 0 && P.minfo[m].ulMaxKeySize <= 32)
            return key_size(m, (CK_ULONG)(p->key_bits / 8), "byte", why);
        return key_size(m, (CK_ULONG)p->key_bits, "bit", why);
    case CB_OP_ECC_KEYGEN: case CB_OP_ECDSA_SIGN: case CB_OP_ECDSA_VERIFY: {
        const curve_t *c = curve_of(p->curve);
        if (c == NULL)
            return cb_say(why, CB_UNSUPPORTED, "the pkcs11 engine drives the NIST curves p256 and "
                       "p521 (CKK_EC); x25519 is not an ECDSA curve");
        if ((rc = need(m, why)) != CB_OK)
            return rc;
        return key_size(m, c->bits, "bit", why);
    }
    case CB_OP_RSA_KEYGEN: case CB_OP_RSA_SIGN: case CB_OP_RSA_VERIFY:
        if (op != CB_OP_RSA_KEYGEN && !P.has[M_RSA_PKCS] && P.has[M_SHA256_RSA])
            return cb_say(why, CB_UNSUPPORTED, "the token offers CKM_SHA256_RSA_PKCS but no "
                       "CKM_RSA_PKCS: it hashes the message itself and cannot sign a given digest");
        if ((rc = need(m, why)) != CB_OK)
            return rc;
        if (op == CB_OP_RSA_SIGN && (rc = need(M_RSA_GEN, why)) != CB_OK)
            return rc;      /* a timing slot generates its key in the token */
        return p->rsa_bits > 0 ? key_size(m, (CK_ULONG)p->rsa_bits, "bit", why) : CB_OK;
    }
    return cb_say(why, CB_UNSUPPORTED, "pkcs11 engine does not implement this op");
}

static int pk_supports(const cb_params *p, char *why)
{
    return check(p, why);
}

/* Untimed liveness check before a compute or a slot's setup. A token that went away (a secure
 * element unplugged, a SoftHSM2 token store deleted) fails C_GetTokenInfo, even where the module
 * would still sign with the session keys it holds in host memory. */
static int alive(char *err)
{
    CK_TOKEN_INFO ti;
    CK_RV rv = P.f->C_GetTokenInfo(P.slot, &ti);
    if (rv == CKR_OK)
        return CB_OK;
    snprintf(err, CB_ERRLEN, "the token is gone or unreachable (C_GetTokenInfo: %s)", rv_name(rv));
    return CB_ERR;
}

/* ---- keys --------------------------------------------------------------------------------- */

static int put(cb_kv *out, const char *name, const uint8_t *val, size_t len, char *err)
{
    return cb_kv_put(out, name, val, len) == 0 ? CB_OK : cb_say(err, CB_ERR, "out of memory");
}

static void destroy(CK_OBJECT_HANDLE *h)
{
    if (*h != CK_INVALID_HANDLE && P.f != NULL)
        P.f->C_DestroyObject(P.session, *h);
    *h = CK_INVALID_HANDLE;
}

/* DER OCTET STRING around an uncompressed point (CKA_EC_POINT); out holds >= len + 3. */
static size_t der_octets(uint8_t *out, const uint8_t *p, size_t len)
{
    size_t h = 0;
    out[h++] = 0x04;
    if (len < 128) {
        out[h++] = (uint8_t)len;
    } else {
        out[h++] = 0x81;
        out[h++] = (uint8_t)len;
    }
    memcpy(out + h, p, len);
    return h + len;
}

/* CKA_EC_POINT as 04‖X‖Y: DER-unwrapped where the module wraps it (PKCS#11 says it must). */
static int ec_point(CK_OBJECT_HANDLE pub, const curve_t *c, uint8_t *q, char *err)
{
    uint8_t buf[160];
    size_t want = 1 + 2 * c->bytes;
    CK_ATTRIBUTE a = {CKA_EC_POINT, buf, sizeof buf};
    CK(C_GetAttributeValue, (P.session, pub, &a, 1));
    const uint8_t *p = buf;
    size_t n = a.ulValueLen;
    if (n == want + 2 && p[0] == 0x04 && p[1] == want) {
        p += 2;
        n -= 2;
    } else if (n == want + 3 && p[0] == 0x04 && p[1] == 0x81 && p[2] == want) {
        p += 3;
        n -= 3;
    }
    if (n != want || p[0] != 0x04)
        return cb_say(err, CB_ERR, "CKA_EC_POINT is not an uncompressed point of the curve");
    memcpy(q, p, want);
    return CB_OK;
}

static int ec_generate(const curve_t *c, CK_OBJECT_HANDLE *pub, CK_OBJECT_HANDLE *priv, char *err)
{
    CK_MECHANISM mech = {CKM_EC_KEY_PAIR_GEN, NULL, 0};
    CK_ATTRIBUTE pt[] = {
        {CKA_TOKEN, &no, sizeof no}, {CKA_VERIFY, &yes, sizeof yes},
        {CKA_EC_PARAMS, (void *)c->oid, c->oid_len},
    };
    CK_ATTRIBUTE kt[] = {
        {CKA_TOKEN, &no, sizeof no}, {CKA_PRIVATE, &yes, sizeof yes},
        {CKA_SENSITIVE, &yes, sizeof yes}, {CKA_SIGN, &yes, sizeof yes},
    };
    CK(C_GenerateKeyPair, (P.session, &mech, pt, 3, kt, 4, pub, priv));
    return CB_OK;
}

static int ec_import(const curve_t *c, const uint8_t *d, size_t dlen, const uint8_t *q,
                     size_t qlen, CK_OBJECT_HANDLE *h, char *err)
{
    CK_OBJECT_CLASS cls = d ? CKO_PRIVATE_KEY : CKO_PUBLIC_KEY;
    CK_KEY_TYPE kt = CKK_EC;
    uint8_t point[160];
    CK_ATTRIBUTE t[] = {
        {CKA_CLASS, &cls, sizeof cls}, {CKA_KEY_TYPE, &kt, sizeof kt},
        {CKA_TOKEN, &no, sizeof no}, {CKA_EC_PARAMS, (void *)c->oid, c->oid_len},
        {d ? CKA_SIGN : CKA_VERIFY, &yes, sizeof yes},
        {CKA_VALUE, (void *)d, dlen},
    };
    if (d == NULL) {
        if (qlen != 1 + 2 * c->bytes || q[0] != 0x04)
            return cb_say(err, CB_ERR, "q must be an uncompressed point 04‖X‖Y of the curve");
        t[5].type = CKA_EC_POINT;
        t[5].pValue = point;
        t[5].ulValueLen = der_octets(point, q, qlen);
    } else if (dlen != c->bytes) {
        snprintf(err, CB_ERRLEN, "d must be %zu bytes on %s", c->bytes, c->name);
        return CB_ERR;
    }
    CK(C_CreateObject, (P.session, t, 6, h));
    return CB_OK;
}

static int rsa_generate(CK_ULONG bits, CK_OBJECT_HANDLE *pub, CK_OBJECT_HANDLE *priv, char *err)
{
    CK_MECHANISM mech = {CKM_RSA_PKCS_KEY_PAIR_GEN, NULL, 0};
    CK_ATTRIBUTE pt[] = {
        {CKA_TOKEN, &no, sizeof no}, {CKA_VERIFY, &yes, sizeof yes},
        {CKA_MODULUS_BITS, &bits, sizeof bits},
        {CKA_PUBLIC_EXPONENT, (void *)RSA_E, sizeof RSA_E},
    };
    CK_ATTRIBUTE kt[] = {
        {CKA_TOKEN, &no, sizeof no}, {CKA_PRIVATE, &yes, sizeof yes},
        {CKA_SENSITIVE, &yes, sizeof yes}, {CKA_SIGN, &yes, sizeof yes},
    };
    CK(C_GenerateKeyPair, (P.session, &mech, pt, 4, kt, 4, pub, priv));
    return CB_OK;
}

static int bit_length(const uint8_t *v, size_t len)
{
    while (len > 0 && *v == 0) {
        v++;
        len--;
    }
    if (len == 0)
        return 0;
    int bits = (int)(len - 1) * 8;
    for (uint8_t b = *v; b; b >>= 1)
        bits++;
    return bits;
}

/* n, e and (private) d from `in` as a session key object. */
static int rsa_import(const cb_params *p, const cb_kv *in, int private, CK_OBJECT_HANDLE *h,
                      char *err)
{
    size_t nlen, elen, dlen;
    const uint8_t *n = cb_kv_input(in, "n", &nlen);
    const uint8_t *e = cb_kv_input(in, "e", &elen);
    const uint8_t *d = cb_kv_input(in, "d", &dlen);
    CK_OBJECT_CLASS cls = private ? CKO_PRIVATE_KEY : CKO_PUBLIC_KEY;
    CK_KEY_TYPE kt = CKK_RSA;
    CK_ATTRIBUTE t[] = {
        {CKA_CLASS, &cls, sizeof cls}, {CKA_KEY_TYPE, &kt, sizeof kt},
        {CKA_TOKEN, &no, sizeof no}, {private ? CKA_SIGN : CKA_VERIFY, &yes, sizeof yes},
        {CKA_MODULUS, (void *)n, nlen}, {CKA_PUBLIC_EXPONENT, (void *)e, elen},
        {CKA_PRIVATE_EXPONENT, (void *)d, dlen},
    };
    if (nlen == 0 || elen == 0 || (private && dlen == 0))
        return cb_say(err, CB_ERR, private ? "needs n, e and d" : "needs n and e");
    if (p->rsa_bits > 0 && bit_length(n, nlen) != p->rsa_bits) {
        snprintf(err, CB_ERRLEN, "n has %d bits but rsa_bits is %ld", bit_length(n, nlen),
                 p->rsa_bits);
        return CB_ERR;
    }
    CK(C_CreateObject, (P.session, t, private ? 7 : 6, h));
    return CB_OK;
}

static int aes_import(const uint8_t *key, size_t len, CK_OBJECT_HANDLE *h, char *err)
{
    CK_OBJECT_CLASS cls = CKO_SECRET_KEY;
    CK_KEY_TYPE kt = CKK_AES;
    CK_ATTRIBUTE t[] = {
        {CKA_CLASS, &cls, sizeof cls}, {CKA_KEY_TYPE, &kt, sizeof kt},
        {CKA_TOKEN, &no, sizeof no}, {CKA_ENCRYPT, &yes, sizeof yes},
        {CKA_VALUE, (void *)key, len},
    };
    if (len != 16 && len != 24 && len != 32)
        return cb_say(err, CB_ERR, "AES key must be 16, 24 or 32 bytes");
    CK(C_CreateObject, (P.session, t, 5, h));
    return CB_OK;
}

/* One signature over data (C_SignInit + C_Sign). */
static int sign(CK_MECHANISM_TYPE type, CK_OBJECT_HANDLE key, const uint8_t *data, size_t len,
                uint8_t *sig, CK_ULONG *siglen, char *err)
{
    CK_MECHANISM mech = {type, NULL, 0};
    CK(C_SignInit, (P.session, &mech, key));
    CK(C_Sign, (P.session, (CK_BYTE_PTR)data, (CK_ULONG)len, sig, siglen));
    return CB_OK;
}

/* One verification: ok = 1 valid, 0 invalid; CB_ERR on any other failure. */
static int verify(CK_MECHANISM_TYPE type, CK_OBJECT_HANDLE key, const uint8_t *data, size_t len,
                  const uint8_t *sig, size_t siglen, int *ok, char *err)
{
    CK_MECHANISM mech = {type, NULL, 0};
    CK(C_VerifyInit, (P.session, &mech, key));
    CK_RV rv = P.f->C_Verify(P.session, (CK_BYTE_PTR)data, (CK_ULONG)len, (CK_BYTE_PTR)sig,
                             (CK_ULONG)siglen);
    *ok = rv == CKR_OK;
    if (rv == CKR_OK || rv == CKR_SIGNATURE_INVALID || rv == CKR_SIGNATURE_LEN_RANGE)
        return CB_OK;
    return ck_fail(err, "C_Verify", rv);
}

/* DigestInfo(SHA-256) ‖ digest: what CKM_RSA_PKCS signs for PKCS#1 v1.5 with SHA-256. */
static int digest_info(uint8_t out[51], const uint8_t *hash, size_t len, char *err)
{
    if (len != 32)
        return cb_say(err, CB_ERR, "hash must be a 32-byte SHA-256 digest");
    memcpy(out, SHA256_DIGESTINFO, sizeof SHA256_DIGESTINFO);
    memcpy(out + sizeof SHA256_DIGESTINFO, hash, 32);
    return CB_OK;
}

/* ---- symmetric: one C_EncryptInit + C_Encrypt ---------------------------------------------- */

typedef struct {
    CK_MECHANISM mech;
    CK_GCM_PARAMS gcm;
    CK_AES_CTR_PARAMS ctr;
    uint8_t iv[16];
} aes_mech;

static void aes_mech_init(aes_mech *a, int op, const uint8_t *iv, size_t ivlen,
                          const uint8_t *aad, size_t aadlen)
{
    memset(a, 0, sizeof *a);
    memcpy(a->iv, iv, ivlen > 16 ? 16 : ivlen);
    switch (op) {
    case CB_OP_AES_ECB_ENCRYPT:
        a->mech.mechanism = CKM_AES_ECB;
        break;
    case CB_OP_AES_CBC_ENCRYPT:
        a->mech.mechanism = CKM_AES_CBC;
        a->mech.pParameter = a->iv;
        a->mech.ulParameterLen = 16;
        break;
    case CB_OP_AES_CTR_ENCRYPT:
        a->mech.mechanism = CKM_AES_CTR;
        a->ctr.ulCounterBits = 128;        /* the whole block is the counter (protocol.md) */
        memcpy(a->ctr.cb, a->iv, 16);
        a->mech.pParameter = &a->ctr;
        a->mech.ulParameterLen = sizeof a->ctr;
        break;
    case CB_OP_AES_GCM_ENCRYPT:
        a->mech.mechanism = CKM_AES_GCM;
        a->gcm.pIv = a->iv;
        a->gcm.ulIvLen = 12;
        a->gcm.ulIvBits = 96;
        a->gcm.pAAD = (CK_BYTE_PTR)aad;
        a->gcm.ulAADLen = (CK_ULONG)aadlen;
        a->gcm.ulTagBits = 128;
        a->mech.pParameter = &a->gcm;
        a->mech.ulParameterLen = sizeof a->gcm;
        break;
    }
}

static int aes_encrypt(aes_mech *a, CK_OBJECT_HANDLE key, const uint8_t *msg, size_t len,
                       uint8_t *out, CK_ULONG *outlen, char *err)
{
    CK(C_EncryptInit, (P.session, &a->mech, key));
    CK(C_Encrypt, (P.session, (CK_BYTE_PTR)msg, (CK_ULONG)len, out, outlen));
    return CB_OK;
}

static int digest(CK_MECHANISM_TYPE type, const uint8_t *msg, size_t len, uint8_t *out,
                  CK_ULONG *outlen, char *err)
{
    CK_MECHANISM mech = {type, NULL, 0};
    CK(C_DigestInit, (P.session, &mech));
    CK(C_Digest, (P.session, (CK_BYTE_PTR)msg, (CK_ULONG)len, out, outlen));
    return CB_OK;
}

/* ---- compute ------------------------------------------------------------------------------ */

static int compute_keygen(const cb_params *p, int op, const cb_kv *in, cb_kv *out, char *err)
{
    CK_OBJECT_HANDLE pub = CK_INVALID_HANDLE, priv = CK_INVALID_HANDLE;
    size_t hlen;
    const uint8_t *hash = cb_kv_get(in, "hash", &hlen);
    uint8_t buf[1024], sig[1024];
    CK_ULONG siglen = sizeof sig;
    int rc;

    if (op == CB_OP_ECC_KEYGEN) {
        const curve_t *c = curve_of(p->curve);
        rc = ec_generate(c, &pub, &priv, err);
        if (rc == CB_OK)
            rc = ec_point(pub, c, buf, err);
        if (rc == CB_OK)
            rc = put(out, "q", buf, 1 + 2 * c->bytes, err);
        if (rc == CB_OK && hash != NULL && hlen > 0) {
            if (!P.has[M_ECDSA])
                rc = cb_say(err, CB_ERR, "the token offers no CKM_ECDSA to prove the new key with");
            else if ((rc = sign(CKM_ECDSA, priv, hash, hlen, sig, &siglen, err)) == CB_OK)
                rc = put(out, "sig", sig, siglen, err);
        }
    } else {
        CK_ULONG bits = p->rsa_bits > 0 ? (CK_ULONG)p->rsa_bits : 2048;
        CK_ATTRIBUTE a[] = {{CKA_MODULUS, buf, 512}, {CKA_PUBLIC_EXPONENT, buf + 512, 16}};
        uint8_t di[51];
        rc = rsa_generate(bits, &pub, &priv, err);
        if (rc == CB_OK) {
            CK_RV rv = P.f->C_GetAttributeValue(P.session, pub, a, 2);
            rc = rv == CKR_OK ? CB_OK : ck_fail(err, "C_GetAttributeValue", rv);
        }
        if (rc == CB_OK)
            rc = put(out, "n", buf, a[0].ulValueLen, err);
        if (rc == CB_OK)
            rc = put(out, "e", buf + 512, a[1].ulValueLen, err);
        if (rc == CB_OK && hash != NULL && hlen > 0) {
            if (!P.has[M_RSA_PKCS])
                rc = cb_say(err, CB_ERR, "the token offers no CKM_RSA_PKCS to prove the new key with");
            else if ((rc = digest_info(di, hash, hlen, err)) == CB_OK &&
                     (rc = sign(CKM_RSA_PKCS, priv, di, sizeof di, sig, &siglen, err)) == CB_OK)
                rc = put(out, "sig", sig, siglen, err);
        }
    }
    destroy(&pub);
    destroy(&priv);
    return rc;
}

static int pk_compute(const cb_params *p, const cb_kv *in, cb_kv *out, char *err)
{
    int rc = check(p, err);
    if (rc != CB_OK || (rc = alive(err)) != CB_OK)
        return rc;
    int op = p->op;
    size_t mlen, klen, ivlen, alen, hlen, slen, dlen, qlen;
    const uint8_t *msg = cb_kv_input(in, "msg", &mlen);
    const uint8_t *hash = cb_kv_input(in, "hash", &hlen);
    const uint8_t *sig = cb_kv_input(in, "sig", &slen);
    CK_OBJECT_HANDLE key = CK_INVALID_HANDLE;
    uint8_t buf[1024];
    CK_ULONG len = sizeof buf;
    int ok;

    switch (op) {
    case CB_OP_RANDOM: {
        uint8_t *r;
        CK_RV rv;
        if ((r = malloc((size_t)p->bytes + 1)) == NULL)
            return cb_say(err, CB_ERR, "out of memory");
        rv = P.f->C_GenerateRandom(P.session, r, (CK_ULONG)p->bytes);
        rc = rv != CKR_OK ? ck_fail(err, "C_GenerateRandom", rv)
                          : put(out, "bits", r, (size_t)p->bytes, err);
        free(r);
        return rc;
    }
    CASE_SHA:
        rc = digest(mech_names[op_mech[op].mech].type, msg, mlen, buf, &len, err);
        return rc == CB_OK ? put(out, "digest", buf, len, err) : rc;
    case CB_OP_AES_ECB_ENCRYPT: case CB_OP_AES_CBC_ENCRYPT: case CB_OP_AES_CTR_ENCRYPT: case CB_OP_AES_GCM_ENCRYPT: {
        const uint8_t *k = cb_kv_input(in, "key", &klen);
        const uint8_t *iv = cb_kv_input(in, "iv", &ivlen);
        const uint8_t *aad = cb_kv_input(in, "aad", &alen);
        aes_mech a;
        uint8_t *ct;
        if ((op == CB_OP_AES_CBC_ENCRYPT || op == CB_OP_AES_CTR_ENCRYPT) && ivlen != 16)
            return cb_say(err, CB_ERR, "iv must be 16 bytes");
        if (op == CB_OP_AES_GCM_ENCRYPT && ivlen != 12)
            return cb_say(err, CB_ERR, "iv must be 12 bytes");
        if ((rc = aes_import(k, klen, &key, err)) != CB_OK)
            return rc;
        aes_mech_init(&a, op, iv, ivlen, aad, alen);
        ct = malloc(mlen + 32);
        len = (CK_ULONG)(mlen + 32);
        rc = ct == NULL ? cb_say(err, CB_ERR, "out of memory") : aes_encrypt(&a, key, msg, mlen, ct, &len, err);
        if (rc == CB_OK)
            rc = put(out, "ct", ct, len, err);
        free(ct);
        destroy(&key);
        return rc;
    }
    case CB_OP_ECC_KEYGEN: case CB_OP_RSA_KEYGEN:
        return compute_keygen(p, op, in, out, err);
    case CB_OP_ECDSA_SIGN: case CB_OP_ECDSA_VERIFY: {
        const curve_t *c = curve_of(p->curve);
        const uint8_t *d = cb_kv_input(in, "d", &dlen);
        const uint8_t *q = cb_kv_input(in, "q", &qlen);
        if (op == CB_OP_ECDSA_SIGN)
            rc = ec_import(c, d, dlen, NULL, 0, &key, err);
        else
            rc = ec_import(c, NULL, 0, q, qlen, &key, err);
        if (rc == CB_OK && op == CB_OP_ECDSA_SIGN) {
            rc = sign(CKM_ECDSA, key, hash, hlen, buf, &len, err);
            if (rc == CB_OK)
                rc = put(out, "sig", buf, len, err);
        } else if (rc == CB_OK) {
            rc = verify(CKM_ECDSA, key, hash, hlen, sig, slen, &ok, err);
            if (rc == CB_OK)
                rc = put(out, "ok", (const uint8_t *)(ok ? "\x01" : "\x00"), 1, err);
        }
        destroy(&key);
        return rc;
    }
    case CB_OP_RSA_SIGN: case CB_OP_RSA_VERIFY: {
        uint8_t di[51];
        if ((rc = digest_info(di, hash, hlen, err)) != CB_OK)
            return rc;
        if ((rc = rsa_import(p, in, op == CB_OP_RSA_SIGN, &key, err)) != CB_OK)
            return rc;
        if (op == CB_OP_RSA_SIGN) {
            rc = sign(CKM_RSA_PKCS, key, di, sizeof di, buf, &len, err);
            if (rc == CB_OK)
                rc = put(out, "sig", buf, len, err);
        } else {
            rc = verify(CKM_RSA_PKCS, key, di, sizeof di, sig, slen, &ok, err);
            if (rc == CB_OK)
                rc = put(out, "ok", (const uint8_t *)(ok ? "\x01" : "\x00"), 1, err);
        }
        destroy(&key);
        return rc;
    }
    }
    return cb_say(err, CB_UNSUPPORTED, "pkcs11 engine does not implement this op");
}

/* ---- timing slots ------------------------------------------------------------------------- */

typedef struct {
    int op;
    CK_MECHANISM_TYPE mech;         /* digest / sign / verify mechanism */
    const curve_t *curve;
    CK_ULONG rsa_bits;
    CK_OBJECT_HANDLE key, pub;      /* session objects, destroyed in teardown */
    uint64_t counter;
    uint8_t *msg, *out, *aad;
    size_t len, aad_len, out_cap;
    aes_mech aes;
    uint8_t data[64];               /* the digest (ECDSA) or DigestInfo ‖ digest (RSA) signed */
    size_t data_len;
    uint8_t hash[POOL][64];         /* verify: pre-made (data, signature) pairs */
    uint8_t sig[POOL][512];
    CK_ULONG sig_len[POOL];
} slot;

static void pk_teardown(void *handle)
{
    slot *s = handle;
    if (s == NULL)
        return;
    destroy(&s->key);
    destroy(&s->pub);
    free(s->msg);
    free(s->out);
    free(s->aad);
    explicit_bzero(s, sizeof *s);
    free(s);
}

static void *setup_fail(slot *s, char *err, const char *msg)
{
    if (msg != NULL)
        cb_say(err, CB_ERR, msg);
    pk_teardown(s);
    return NULL;
}

static void *pk_setup(const cb_params *p, char *err)
{
    slot *s;
    int op = p->op;

    if (check(p, err) != CB_OK || alive(err) != CB_OK)
        return NULL;
    if ((s = cb_slot_new(sizeof *s, err)) == NULL)
        return NULL;
    s->op = op;
    s->key = s->pub = CK_INVALID_HANDLE;
    s->len = p->bytes < 0 ? 0 : (size_t)p->bytes;
    s->aad_len = p->aad_bytes < 0 ? 0 : (size_t)p->aad_bytes;
    s->out_cap = s->len + 64;
    s->msg = malloc(s->len + 1);
    s->out = malloc(s->out_cap);
    s->aad = malloc(s->aad_len + 1);
    if (s->msg == NULL || s->out == NULL || s->aad == NULL)
        return setup_fail(s, err, "out of memory");
    cb_fill(s->msg, s->len, 1);
    cb_fill(s->aad, s->aad_len, 2);

    switch (op) {
    CASE_SHA:
        s->mech = mech_names[op_mech[op].mech].type;
        break;
    case CB_OP_AES_ECB_ENCRYPT: case CB_OP_AES_CBC_ENCRYPT: case CB_OP_AES_CTR_ENCRYPT: case CB_OP_AES_GCM_ENCRYPT: {
        uint8_t key[32], iv[16];
        cb_fill(key, sizeof key, 3);
        cb_fill(iv, sizeof iv, 4);
        if (aes_import(key, (size_t)p->key_bits / 8, &s->key, err) != CB_OK)
            return setup_fail(s, err, NULL);
        aes_mech_init(&s->aes, op, iv, sizeof iv, s->aad, s->aad_len);
        break;
    }
    case CB_OP_ECC_KEYGEN:
        s->curve = curve_of(p->curve);
        break;
    case CB_OP_RSA_KEYGEN:
        s->rsa_bits = (CK_ULONG)(p->rsa_bits > 0 ? p->rsa_bits : 2048);
        break;
    case CB_OP_ECDSA_SIGN: case CB_OP_ECDSA_VERIFY: case CB_OP_RSA_SIGN: case CB_OP_RSA_VERIFY: {
        int ecdsa = op == CB_OP_ECDSA_SIGN || op == CB_OP_ECDSA_VERIFY;
        uint8_t di[51];
        s->curve = ecdsa ? curve_of(p->curve) : NULL;
        s->mech = ecdsa ? CKM_ECDSA : CKM_RSA_PKCS;
        /* the key pair is made in the token, as a secure element's keys are */
        if ((ecdsa ? ec_generate(s->curve, &s->pub, &s->key, err)
                   : rsa_generate((CK_ULONG)(p->rsa_bits > 0 ? p->rsa_bits : 2048), &s->pub,
                                  &s->key, err)) != CB_OK)
            return setup_fail(s, err, NULL);
        /* ECDSA signs a digest of the curve's hash size; RSA signs DigestInfo ‖ SHA-256 digest */
        s->data_len = ecdsa ? (s->curve->bytes > 32 ? 64 : 32) : sizeof di;
        cb_fill(di + sizeof SHA256_DIGESTINFO, 32, 5);
        memcpy(di, SHA256_DIGESTINFO, sizeof SHA256_DIGESTINFO);
        if (ecdsa)
            cb_fill(s->data, s->data_len, 5);
        else
            memcpy(s->data, di, sizeof di);
        if (op == CB_OP_ECDSA_VERIFY || op == CB_OP_RSA_VERIFY) {
            for (int j = 0; j < POOL; j++) {
                memcpy(s->hash[j], s->data, s->data_len);
                s->hash[j][s->data_len - 1] ^= (uint8_t)j;
                s->hash[j][s->data_len - 2] ^= (uint8_t)(j * 7 + 1);
                s->sig_len[j] = sizeof s->sig[j];
                if (sign(s->mech, s->key, s->hash[j], s->data_len, s->sig[j], &s->sig_len[j],
                         err) != CB_OK)
                    return setup_fail(s, err, NULL);
            }
            destroy(&s->key);           /* verify needs the public half only */
        }
        break;
    }
    }
    return s;
}

static int pk_run(void *handle, uint64_t k, char *err)
{
    slot *s = handle;
    CK_OBJECT_HANDLE pub, priv;
    CK_ULONG len;
    CK_RV rv;
    int ok;

    for (uint64_t i = 0; i < k; i++) {
        int j = (int)(s->counter % POOL);
        s->counter++;
        switch (s->op) {
        case CB_OP_RANDOM:
            if ((rv = P.f->C_GenerateRandom(P.session, s->out, (CK_ULONG)s->len)) != CKR_OK)
                return ck_fail(err, "C_GenerateRandom", rv);
            break;
        CASE_SHA:
            len = (CK_ULONG)s->out_cap;
            if (digest(s->mech, s->msg, s->len, s->out, &len, err) != CB_OK)
                return CB_ERR;
            break;
        case CB_OP_AES_ECB_ENCRYPT: case CB_OP_AES_CBC_ENCRYPT: case CB_OP_AES_CTR_ENCRYPT: case CB_OP_AES_GCM_ENCRYPT:
            /* fresh IV / initial counter block / nonce: the counter in bytes 4..11 */
            for (int b = 0; b < 8; b++)
                s->aes.iv[11 - b] = (uint8_t)(s->counter >> (8 * b));
            memcpy(s->aes.ctr.cb, s->aes.iv, 16);
            len = (CK_ULONG)s->out_cap;
            if (aes_encrypt(&s->aes, s->key, s->msg, s->len, s->out, &len, err) != CB_OK)
                return CB_ERR;
            break;
        case CB_OP_ECC_KEYGEN:
        case CB_OP_RSA_KEYGEN:
            pub = priv = CK_INVALID_HANDLE;
            if ((s->op == CB_OP_ECC_KEYGEN ? ec_generate(s->curve, &pub, &priv, err)
                                        : rsa_generate(s->rsa_bits, &pub, &priv, err)) != CB_OK)
                return CB_ERR;
            if ((rv = P.f->C_DestroyObject(P.session, priv)) != CKR_OK ||
                (rv = P.f->C_DestroyObject(P.session, pub)) != CKR_OK)
                return ck_fail(err, "C_DestroyObject", rv);
            break;
        case CB_OP_ECDSA_SIGN:
        case CB_OP_RSA_SIGN:
            /* a digest that changes every operation */
            for (int b = 0; b < 8; b++)
                s->data[s->data_len - 1 - b] = (uint8_t)(s->counter >> (8 * b));
            len = sizeof s->sig[0];
            if (sign(s->mech, s->key, s->data, s->data_len, s->sig[0], &len, err) != CB_OK)
                return CB_ERR;
            break;
        case CB_OP_ECDSA_VERIFY:
        case CB_OP_RSA_VERIFY:
            if (verify(s->mech, s->pub, s->hash[j], s->data_len, s->sig[j], s->sig_len[j], &ok,
                       err) != CB_OK)
                return CB_ERR;
            if (!ok)
                return cb_say(err, CB_ERR, "a pre-made signature did not verify");
            break;
        }
    }
    return CB_OK;
}

/* ---- describe ----------------------------------------------------------------------------- */

static void pk_describe(char *out, size_t outlen)
{
    char why[CB_ERRLEN], text[80], mechs[512] = "";
    out[0] = '\0';
    if (init(why) != CB_OK) {
        cb_member_str(out, outlen, "version", "not usable");
        if (P.module[0])
            cb_member_str(out, outlen, "module", P.module);
        cb_member_str(out, outlen, "unusable", why);
        return;
    }
    char manuf[33], desc[33];
    padded(manuf, P.info.manufacturerID, sizeof P.info.manufacturerID);
    padded(desc, P.info.libraryDescription, sizeof P.info.libraryDescription);
    snprintf(text, sizeof text, "%s %s %u.%u", manuf, desc, P.info.libraryVersion.major,
             P.info.libraryVersion.minor);
    cb_member_str(out, outlen, "version", text);
    cb_member_str(out, outlen, "module", P.module);
    cb_member_str(out, outlen, "library_manufacturer", manuf);
    cb_member_str(out, outlen, "library_description", desc);
    snprintf(text, sizeof text, "%u.%u", P.info.libraryVersion.major, P.info.libraryVersion.minor);
    cb_member_str(out, outlen, "library_version", text);
    snprintf(text, sizeof text, "%u.%u", P.info.cryptokiVersion.major, P.info.cryptokiVersion.minor);
    cb_member_str(out, outlen, "cryptoki_version", text);
    cb_member_int(out, outlen, "slot", P.slot);
    padded(text, P.token.label, sizeof P.token.label);
    cb_member_str(out, outlen, "token_label", text);
    padded(text, P.token.manufacturerID, sizeof P.token.manufacturerID);
    cb_member_str(out, outlen, "token_manufacturer", text);
    padded(text, P.token.model, sizeof P.token.model);
    cb_member_str(out, outlen, "token_model", text);
    padded(text, P.token.serialNumber, sizeof P.token.serialNumber);
    cb_member_str(out, outlen, "token_serial", text);
    snprintf(text, sizeof text, "%u.%u", P.token.hardwareVersion.major,
             P.token.hardwareVersion.minor);
    cb_member_str(out, outlen, "token_hardware", text);
    snprintf(text, sizeof text, "%u.%u", P.token.firmwareVersion.major,
             P.token.firmwareVersion.minor);
    cb_member_str(out, outlen, "token_firmware", text);
    cb_member_int(out, outlen, "token_rng", (P.token.flags & CKF_RNG) != 0);
    cb_member_int(out, outlen, "logged_in", P.logged_in);
    for (int m = 0; m < M_COUNT; m++) {
        if (!P.has[m])
            continue;
        size_t n = strlen(mechs);
        snprintf(mechs + n, sizeof mechs - n, "%s%s", n ? " " : "", mech_names[m].name);
    }
    cb_member_str(out, outlen, "mechanisms", mechs);
    cb_member_int(out, outlen, "call_ns", P.call_ns);
    cb_member_int(out, outlen, "round_trip_ns", P.round_trip_ns);
    cb_member_str(out, outlen, "round_trip_call", P.rt_call);
    cb_member_int(out, outlen, "round_trip_n", P.rt_n);
    cb_member_str(out, outlen, "keys", "session objects (CKA_TOKEN false), destroyed after use");
}

const cb_engine cb_engine_pkcs11 = {
    "pkcs11",
    "PKCS#11",
    pk_describe,
    pk_supports,
    pk_compute,
    pk_setup,
    pk_run,
    pk_teardown,
};
