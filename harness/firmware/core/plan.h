/* plan.h - what one firmware image runs: generated per build as plan.c by cryptobench
 * (src/cryptobench/targets/mcu/firmware/plan.py) from the run's cells and the known-answer vectors. */
#ifndef CB_PLAN_H
#define CB_PLAN_H

#include "fw.h"

typedef struct {
    const uint8_t *p;
    uint16_t len;
} fw_bytes;

typedef struct {
    const char *op;
    fw_params params;
    fw_bytes key, iv, aad, msg, peer, sig;
} fw_inputs;

typedef struct {
    const char *id;          /* the vector's id in src/cryptobench/catalog/vectors */
    fw_inputs in;
    fw_bytes expect;
} fw_kat;

typedef struct {
    fw_inputs in;
    uint16_t repeat;         /* timed operations (k = 1 each) */
    uint32_t seed;           /* where fw_random's stream starts for this cell (--seed; seeded.py) */
} fw_cell;

extern const fw_kat fw_kats[];       /* ends with an entry whose id is NULL */
extern const fw_cell fw_cells[];     /* ends with an entry whose in.op is NULL */
extern const char fw_board[], fw_cpu[], fw_build[];

#endif
