/* cbcpu_int.h - the executor's internals shared by its decoder (cbdecode.c) and its execution
 * loop (cbcpu.c). Not an API. */
#ifndef CBCPU_INT_H
#define CBCPU_INT_H

#include "cbcpu.h"
#include "cbsim_int.h"

#define COND_AL 14
#define MAX_BLOCK_INSNS 512     /* QEMU's TCG_MAX_INSNS: Unicorn's blocks are no longer */
#define PAGE_BITS 10            /* QEMU's page for M-profile cores (1 KiB): its blocks stop at one */

/* data-processing operations, each in three operand forms: _I immediate, _R register, _S register
 * shifted by an immediate */
#define ALU_LIST X(AND) X(BIC) X(ORR) X(ORN) X(EOR) X(ADD) X(ADC) X(SBC) X(SUB) X(RSB) X(TST) X(TEQ) \
    X(CMP) X(CMN) X(MOV) X(MVN)

/* every other kind; the executor's dispatch table is built from this list */
#define KINDS(K) \
    K(K_END) K(K_UNDEF) K(K_NOP) K(K_SHIFT_REG) K(K_MOV_PC) K(K_ADD_PC) K(K_MUL) K(K_MLA) K(K_MLS) \
    K(K_UMULL) K(K_SMULL) K(K_UMLAL) K(K_SMLAL) K(K_UMAAL) K(K_UDIV) K(K_SDIV) K(K_SMULXY) \
    K(K_SMLAXY) K(K_SMULWY) K(K_SMLAWY) K(K_SMLAD) K(K_SMLSD) K(K_SMLALD) K(K_SMLSLD) K(K_SMLALXY) \
    K(K_SMMLA) K(K_SMMLS) K(K_USADA8) K(K_LDR) K(K_LDRB) K(K_LDRH) K(K_LDRSB) K(K_LDRSH) K(K_STR) \
    K(K_STRB) K(K_STRH) K(K_LDRR) K(K_LDRBR) K(K_LDRHR) K(K_LDRSBR) K(K_LDRSHR) K(K_STRR) K(K_STRBR) \
    K(K_STRHR) K(K_LDRX) K(K_STRX) K(K_LDR_PC) K(K_LDRX_PC) K(K_LDRR_PC) K(K_LDRD) K(K_STRD) \
    K(K_LDREX) K(K_STREX) K(K_CLREX) K(K_LDM) K(K_STM) K(K_LDMDB) K(K_STMDB) K(K_LDM_PC) \
    K(K_LDMDB_PC) K(K_B) K(K_BCOND) K(K_BL) K(K_BX) K(K_BLX) K(K_CBZ) K(K_CBNZ) K(K_TBB) K(K_TBH) \
    K(K_BKPT) K(K_SVC) K(K_UDF) K(K_MRS) K(K_MSR) K(K_CPS) K(K_WFI) K(K_SXTB) K(K_SXTH) K(K_UXTB) \
    K(K_UXTH) K(K_SXTAB) K(K_SXTAH) K(K_UXTAB) K(K_UXTAH) K(K_SXTB16) K(K_UXTB16) K(K_SXTAB16) \
    K(K_UXTAB16) K(K_REV) K(K_REV16) K(K_REVSH) K(K_RBIT) K(K_CLZ) K(K_MOVW) K(K_MOVT) K(K_BFI) \
    K(K_BFC) K(K_SBFX) K(K_UBFX) K(K_SSAT) K(K_USAT) K(K_SSAT16) K(K_USAT16) K(K_PKHBT) K(K_PKHTB) \
    K(K_SEL) K(K_QADD) K(K_QSUB) K(K_QDADD) K(K_QDSUB) K(K_PAR) K(K_VMOV_RS) K(K_VMOV_SR) \
    K(K_VMOV_RRS) K(K_VMOV_SRR) K(K_VMOV_RRD) K(K_VMOV_DRR) K(K_VMRS) K(K_VMSR) K(K_VLDR) K(K_VSTR) \
    K(K_VLDM) K(K_VSTM) K(K_VFP)

enum {
#define X(n) K_##n##_I, K_##n##_R, K_##n##_S,
    ALU_LIST
#undef X
#define K(x) x,
    KINDS(K)
#undef K
    K_COUNT
};

/* the floating-point data-processing operations (op->sht of K_VFP) */
enum { F_MLA, F_MLS, F_NMLA, F_NMLS, F_MUL, F_NMUL, F_ADD, F_SUB, F_DIV, F_FMA, F_FMS, F_FNMA,
       F_FNMS, F_MOVI, F_MOV, F_ABS, F_NEG, F_SQRT, F_CMP, F_CMPZ, F_CVT_DS, F_TOF_S, F_TOF_U,
       F_TOI_S, F_TOI_U, F_TOIR_S, F_TOIR_U };

typedef struct op {
    uint16_t k;             /* K_* */
    uint8_t cond;           /* condition (IT or B<c>), COND_AL when none */
    uint8_t len;            /* 2 or 4 bytes */
    uint8_t d, n, m, a;     /* registers */
    uint8_t s;              /* sets flags (for K_VFP: double precision) */
    uint8_t sht, shn;       /* shift type (0 LSL 1 LSR 2 ASR 3 ROR 4 RRX) and amount; other uses per kind */
    uint8_t cf;             /* immediate's carry out: 0, 1, or 2 = carry unchanged */
    uint16_t dyn;           /* cbsim DYN_* kind when the model charges this one by its operands */
    uint16_t pad;
    uint32_t imm;
    uint32_t pc;            /* the instruction's address */
    uint32_t raw;           /* its encoding (hw1 << 16 | hw2, or the halfword) */
} op_t;

#define CBCPU_HOLDS 8
#define CBCPU_CONSOLE_BYTES 256

typedef struct blk {
    uint32_t addr, size;    /* the bytes cbsim_account_block is told */
    uint32_t insns, nops;
    uint32_t its;           /* IT instructions among them (QEMU counts none: see cbcpu_last_steps) */
    struct blk *succ[2];    /* the blocks last entered from here */
    struct blk *chain;      /* every block, for freeing */
    /* a copy of its record in the accounting (cbsim_block_of), once has_rec: records do not change
     * once made, so the copy stays true when the accounting's table moves, and it is read with the
     * block's own header and first instructions rather than from that table elsewhere in memory */
    int has_rec;
    cbsim_block rec;
    op_t ops[];
} blk_t;

struct cbcpu {
    uint32_t r[16];         /* r[15]: the current instruction's address + 4 while it executes */
    uint32_t pc;            /* the next block's address */
    uint32_t fn, fz, fc, fv, fq, ge;
    uint32_t ipsr, primask, basepri, faultmask, control, other_sp, vtor, fpscr;
    uint32_t sx[32];        /* s0-s31 (d0-d15 as pairs) */
    int arch, status;
    /* what the block loop must look at before the next block: a stop (a callback, a problem, a
     * hint), decoded code written, an exception pended, the clock due (CLOCK_CALLS callbacks into
     * the host since it was last read), the accounting or `enter` changed (the loop keeps which
     * way it accounts in a register). One word, so the loop tests them all with one load. */
    union { struct { uint8_t stop, flush, pending, clock, mode; } is; uint64_t any; } attn;
    int wake;               /* cbcpu_set_wake: stop after unmasking, an exception return or WFI */
    int hints;              /* cbcpu_set_hints: stop after WFI and after a WFE that found no event */
    int slept;              /* the hint (2 WFE, 3 WFI) that stopped the last run, else 0 */
    uint32_t event;         /* the event register (ARMv7-M ARM B1.5.18): SEV and exception return set it */
    int enter;              /* blocks through cbsim_enter (cbcpu_set_wake, cbcpu_set_enter) */
    uint8_t *flash, *ram;
    uint32_t flash_lo, flash_size, ram_lo, ram_size;
    uint8_t *flash_code, *ram_code;   /* per 1 KiB page: decoded code lives there */
    struct cbsim *acct;
    uint16_t dyn_div, dyn_lmul, dyn_lmla;   /* cbsim DYN kinds, 0 when the model charges a fixed cost */
    cbcpu_read_fn rd;
    cbcpu_write_fn wr;
    cbcpu_bkpt_fn bkpt;
    blk_t **table;          /* address -> block, open addressing */
    size_t cap, used;
    blk_t *all;
    uint64_t insns, blocks, flushes, decoded;
    uint32_t last_insns;    /* instructions in the last block entered */
    uint32_t last_its;      /* IT instructions among them */
    uint32_t last_size;     /* its bytes */
    uint32_t it_next;       /* IT state the next block starts in (a block ended inside an IT block) */
    uint8_t pending[512], active[512];
    uint32_t slow;          /* callbacks into the host since the clock was last read (slow_call) */
    /* reads the host said stay the same until a cycle (cbcpu_hold_read): a status register polled
     * while a modelled engine works is answered here, without a call into the host per read */
    struct { uint32_t addr, size, value; uint64_t until; } hold[CBCPU_HOLDS];
    int nholds;
    uint64_t held;          /* reads answered from `hold` */
    /* the console UART served here (cbcpu_set_console): its status register reads as always ready,
     * its data register as the last value written, and the bytes written to it reach the host a
     * line at a time, before any other callback, and when the run returns */
    struct {
        cbcpu_console_fn fn;        /* NULL: the UART is the host's, like any other register */
        uint32_t status_addr, status_value, data_addr, last;
        uint32_t n;
        uint8_t buf[CBCPU_CONSOLE_BYTES];
    } con;
    char problem[200];
};

int cbcpu_decode_block(cbcpu *c, uint32_t addr, uint32_t it, blk_t **out);
int cbcpu_fetch16(cbcpu *c, uint32_t addr, uint32_t *hw);
void cbcpu_fail(cbcpu *c, const char *fmt, ...);

#endif
