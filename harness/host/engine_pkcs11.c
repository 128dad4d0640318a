/* engine_pkcs11.c - placeholder until the pkcs11 engine lands: every op is unsupported. */
#include <stdio.h>
#include "engine.h"

static void describe(char *out, size_t outlen) { snprintf(out, outlen, "\"version\":\"not built\""); }
static int supports(const cb_params *p, char *why) { (void)p; snprintf(why, CB_ERRLEN, "pkcs11 engine not built"); return CB_UNSUPPORTED; }
static int compute(const cb_params *p, const cb_kv *in, cb_kv *out, char *err) { (void)in; (void)out; return supports(p, err); }
static void *setup(const cb_params *p, char *err) { supports(p, err); return NULL; }
static int run(void *slot, uint64_t k, char *err) { (void)slot; (void)k; snprintf(err, CB_ERRLEN, "not built"); return CB_ERR; }
static void teardown(void *slot) { (void)slot; }

const cb_engine cb_engine_pkcs11 = { "pkcs11", "pkcs11", describe, supports, compute, setup, run, teardown };
