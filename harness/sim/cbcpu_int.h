/* cbcpu_int.h - the executor's internals shared by its decoder (cbdecode.c) and its execution
 * loop (cbcpu.c). Not an API. */
#ifndef CBCPU_INT_H
#define CBCPU_INT_H

#include "cbcpu.h"

#define COND_AL 14
#define MAX_BLOCK_INSNS 512     /* QEMU's TCG_MAX_INSNS: Unicorn's blocks are no longer */
#define PAGE_BITS 10            /* QEMU's page for M-profile cores (1 KiB): its blocks stop at one */

/* data-processing operations, each in three operand forms: _I immediate, _R register, _S register
 * shifted by an immediate */
#define ALU_LIST X(AND) X(BIC) X(ORR) X(ORN) X(EOR) X(ADD) X(ADC) X(SBC) X(SUB) X(RSB) X(TST) X(TEQ) \
    X(CMP) X(CMN) X(MOV) X(MVN)

enum {
#define X(n) K_##n##_I, K_##n##_R, K_##n##_S,
    ALU_LIST
#undef X
    K_END,                  /* end of a block that falls through */
    K_UNDEF, K_NOP, K_SHIFT_REG, K_MOV_PC, K_ADD_PC,
    K_MUL, K_MLA, K_MLS, K_UMULL, K_SMULL, K_UMLAL, K_SMLAL, K_UMAAL, K_UDIV, K_SDIV,
    K_SMULXY, K_SMLAXY, K_SMULWY, K_SMLAWY, K_SMLAD, K_SMLSD, K_SMLALD, K_SMLSLD, K_SMLALXY,
    K_SMMLA, K_SMMLS, K_USADA8,
    K_LDR, K_LDRB, K_LDRH, K_LDRSB, K_LDRSH, K_STR, K_STRB, K_STRH,       /* [Rn + imm] */
    K_LDRR, K_LDRBR, K_LDRHR, K_LDRSBR, K_LDRSHR, K_STRR, K_STRBR, K_STRHR, /* [Rn + Rm << shn] */
    K_LDRX, K_STRX,         /* pre/post-indexed with writeback: size/sign in op->sht */
    K_LDR_PC, K_LDRX_PC, K_LDRR_PC,     /* loads into the pc */
    K_LDRD, K_STRD, K_LDREX, K_STREX, K_CLREX,
    K_LDM, K_STM, K_LDMDB, K_STMDB, K_LDM_PC, K_LDMDB_PC,
    K_B, K_BCOND, K_BL, K_BX, K_BLX, K_CBZ, K_CBNZ, K_TBB, K_TBH,
    K_BKPT, K_SVC, K_UDF, K_MRS, K_MSR, K_CPS, K_WFI,
    K_SXTB, K_SXTH, K_UXTB, K_UXTH, K_SXTAB, K_SXTAH, K_UXTAB, K_UXTAH, K_SXTB16, K_UXTB16,
    K_SXTAB16, K_UXTAB16, K_REV, K_REV16, K_REVSH, K_RBIT, K_CLZ,
    K_MOVW, K_MOVT, K_BFI, K_BFC, K_SBFX, K_UBFX, K_SSAT, K_USAT, K_SSAT16, K_USAT16,
    K_PKHBT, K_PKHTB, K_SEL, K_QADD, K_QSUB, K_QDADD, K_QDSUB, K_PAR,
    /* floating point */
    K_VMOV_RS, K_VMOV_SR, K_VMOV_RRS, K_VMOV_SRR, K_VMOV_RRD, K_VMOV_DRR, K_VMRS, K_VMSR,
    K_VLDR, K_VSTR, K_VLDM, K_VSTM, K_VFP,
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

typedef struct blk {
    uint32_t addr, size;    /* the bytes cbsim_account_block is told */
    uint32_t insns, nops;
    uint32_t its;           /* IT instructions among them (QEMU counts none: see cbcpu_last_steps) */
    struct blk *succ[2];    /* the blocks last entered from here */
    struct blk *chain;      /* every block, for freeing */
    op_t ops[];
} blk_t;

struct cbcpu {
    uint32_t r[16];         /* r[15]: the current instruction's address + 4 while it executes */
    uint32_t pc;            /* the next block's address */
    uint32_t fn, fz, fc, fv, fq, ge;
    uint32_t ipsr, primask, basepri, faultmask, control, other_sp, vtor, fpscr;
    uint32_t sx[32];        /* s0-s31 (d0-d15 as pairs) */
    int arch, stop, status;
    uint8_t *flash, *ram;
    uint32_t flash_lo, flash_size, ram_lo, ram_size;
    uint8_t *flash_code, *ram_code;   /* per 1 KiB page: decoded code lives there */
    int flush;              /* a write hit decoded code: drop the decoded blocks at the block's end */
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
    int any_pending;
    char problem[200];
};

int cbcpu_decode_block(cbcpu *c, uint32_t addr, uint32_t it, blk_t **out);
int cbcpu_fetch16(cbcpu *c, uint32_t addr, uint32_t *hw);
void cbcpu_fail(cbcpu *c, const char *fmt, ...);

#endif
