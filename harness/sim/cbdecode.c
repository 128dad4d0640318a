/* cbdecode.c - decodes Thumb code into the executor's pre-decoded blocks (cbcpu_int.h).
 *
 * Encodings from the ARMv7-M Architecture Reference Manual (ARM DDI 0403E), chapter A5 "The
 * Thumb Instruction Set Encoding" and A6 "The Floating-point Instruction Set Encoding"; the
 * ARMv8-M additions gcc emits (LDA/STL) from ARM DDI 0553. A block ends after an instruction
 * that writes the PC, and where QEMU (Unicorn) ends its translated blocks, so that both
 * executors hand the cost model the same blocks: before an instruction that does not lie wholly
 * in the block's first 1 KiB page, after 512 instructions, and after BKPT, SVC, UDF, ISB, CPS,
 * MSR, VMSR and WFI/WFE/YIELD.
 */
#include <stdlib.h>
#include <string.h>

#include "cbcpu_int.h"

enum { FORM_I = 0, FORM_R = 1, FORM_S = 2 };
enum { A_AND, A_BIC, A_ORR, A_ORN, A_EOR, A_ADD, A_ADC, A_SBC, A_SUB, A_RSB, A_TST, A_TEQ, A_CMP, A_CMN,
       A_MOV, A_MVN };

/* what decoding one instruction tells the block builder */
enum { D_NEXT = 0, D_END = 1, D_IT = 2 };

static void alu(op_t *o, int a, int form, int d, int n, int s)
{
    o->k = (uint16_t)(K_AND_I + 3 * a + form);
    o->d = (uint8_t)d;
    o->n = (uint8_t)n;
    o->s = (uint8_t)s;
}

static uint32_t align4(uint32_t x) { return x & ~3u; }

/* the address offset from the executing instruction's r[15] (its address + 4) of a literal */
static uint32_t literal(const op_t *o, int add, uint32_t imm)
{
    uint32_t base = align4(o->pc + 4);
    uint32_t target = add ? base + imm : base - imm;
    return target - (o->pc + 4);
}

static uint32_t thumb_expand_imm(uint32_t imm12, uint8_t *cf)
{
    uint32_t v = imm12 & 0xFF;
    if ((imm12 >> 10) == 0) {
        *cf = 2;
        switch ((imm12 >> 8) & 3) {
        case 0: return v;
        case 1: return v | v << 16;
        case 2: return v << 8 | v << 24;
        default: return v | v << 8 | v << 16 | v << 24;
        }
    }
    uint32_t unrot = 0x80 | (imm12 & 0x7F), rot = imm12 >> 7;
    uint32_t r = (unrot >> rot) | (unrot << (32 - rot));
    *cf = (uint8_t)(r >> 31);
    return r;
}

/* The hints NOP 0, YIELD 1, WFE 2, WFI 3, SEV 4 (ARMv7-M ARM A7.7, the hint instructions): K_WFI carries the
 * number. YIELD, WFE and WFI end their block, as QEMU's do (so the blocks stay Unicorn's); SEV does
 * not. */
static int hint_op(op_t *o, uint32_t hint)
{
    if (hint < 1 || hint > 4) {
        o->k = K_NOP;
        return D_NEXT;
    }
    o->k = K_WFI;
    o->imm = hint;
    return hint == 4 ? D_NEXT : D_END;
}

/* DecodeImmShift: sets the shift of a register operand; returns the ALU form (R for LSL #0) */
static int imm_shift(op_t *o, uint32_t type, uint32_t imm5)
{
    o->sht = (uint8_t)type;
    o->shn = (uint8_t)imm5;
    if (type == 0 && imm5 == 0)
        return FORM_R;
    if ((type == 1 || type == 2) && imm5 == 0)
        o->shn = 32;
    if (type == 3 && imm5 == 0) {
        o->sht = 4;          /* RRX */
        o->shn = 1;
    }
    return FORM_S;
}

static void ldst(op_t *o, int kind, int t, int n, uint32_t imm)
{
    o->k = (uint16_t)kind;
    o->d = (uint8_t)t;
    o->n = (uint8_t)n;
    o->imm = imm;
}

/* ---- 16-bit ------------------------------------------------------------------------------- */

static int dec16_misc(cbcpu *c, op_t *o, uint32_t h, int s)
{
    (void)c;
    (void)s;
    if ((h & 0xFF00) == 0xB000) {                       /* ADD/SUB SP, SP, #imm7*4 */
        alu(o, (h & 0x80) ? A_SUB : A_ADD, FORM_I, 13, 13, 0);
        o->imm = (h & 0x7F) * 4;
        o->cf = 2;
        return D_NEXT;
    }
    if ((h & 0xF500) == 0xB100) {                       /* CBZ, CBNZ */
        o->k = (h & 0x800) ? K_CBNZ : K_CBZ;
        o->n = h & 7;
        o->imm = o->pc + 4 + ((((h >> 9) & 1) << 6) | (((h >> 3) & 31) << 1));
        return D_END;
    }
    if ((h & 0xFF00) == 0xB200) {                       /* SXTH SXTB UXTH UXTB */
        static const uint16_t k[4] = {K_SXTH, K_SXTB, K_UXTH, K_UXTB};
        o->k = k[(h >> 6) & 3];
        o->d = h & 7;
        o->m = (h >> 3) & 7;
        o->shn = 0;
        return D_NEXT;
    }
    if ((h & 0xFE00) == 0xB400) {                       /* PUSH */
        o->k = K_STMDB;
        o->n = 13;
        o->s = 1;
        o->imm = (h & 0xFF) | ((h & 0x100) ? 0x4000 : 0);
        return D_NEXT;
    }
    if ((h & 0xFFE8) == 0xB660) {                       /* CPS */
        o->k = K_CPS;
        o->imm = h;
        return D_END;
    }
    if ((h & 0xFF00) == 0xBA00 && ((h >> 6) & 3) != 2) {   /* REV REV16 REVSH */
        static const uint16_t k[4] = {K_REV, K_REV16, K_UNDEF, K_REVSH};
        o->k = k[(h >> 6) & 3];
        o->d = h & 7;
        o->m = (h >> 3) & 7;
        return D_NEXT;
    }
    if ((h & 0xFE00) == 0xBC00) {                       /* POP */
        o->k = (h & 0x100) ? K_LDM_PC : K_LDM;
        o->n = 13;
        o->s = 1;
        o->imm = (h & 0xFF) | ((h & 0x100) ? 0x8000 : 0);
        return (h & 0x100) ? D_END : D_NEXT;
    }
    if ((h & 0xFF00) == 0xBE00) {                       /* BKPT */
        o->k = K_BKPT;
        o->imm = h & 0xFF;
        return D_END;
    }
    if ((h & 0xFF00) == 0xBF00) {
        if (h & 0xF) {                                  /* IT */
            o->k = K_NOP;
            o->imm = h & 0xFF;
            return D_IT;
        }
        return hint_op(o, (h >> 4) & 0xF);              /* NOP YIELD WFE WFI SEV */
    }
    o->k = K_UNDEF;
    return D_END;
}

static int dec16_dp(op_t *o, uint32_t h, int s)
{
    uint32_t op = (h >> 6) & 15, rdn = h & 7, rm = (h >> 3) & 7;
    static const int8_t a[16] = {A_AND, A_EOR, -1, -1, -1, A_ADC, A_SBC, -1, A_TST, A_RSB, A_CMP, A_CMN,
                                 A_ORR, -1, A_BIC, A_MVN};
    o->m = (uint8_t)rm;
    switch (op) {
    case 2: case 3: case 4: case 7:                     /* LSL LSR ASR ROR (register) */
        o->k = K_SHIFT_REG;
        o->d = o->n = (uint8_t)rdn;
        o->sht = (uint8_t)(op == 7 ? 3 : op - 2);
        o->s = (uint8_t)s;
        return D_NEXT;
    case 9:                                             /* RSB Rd, Rn, #0 */
        alu(o, A_RSB, FORM_I, rdn, rm, s);
        o->imm = 0;
        o->cf = 2;
        return D_NEXT;
    case 13:                                            /* MUL Rdm, Rn, Rdm */
        o->k = K_MUL;
        o->d = o->m = (uint8_t)rdn;
        o->n = (uint8_t)rm;
        o->s = (uint8_t)s;
        return D_NEXT;
    default: {
        int cmp = op == 8 || op == 10 || op == 11;
        alu(o, a[op], FORM_R, rdn, rdn, cmp ? 1 : s);
        return D_NEXT;
    }
    }
}

static int dec16_special(op_t *o, uint32_t h)
{
    uint32_t d = ((h >> 4) & 8) | (h & 7), m = (h >> 3) & 15;
    o->m = (uint8_t)m;
    switch ((h >> 8) & 3) {
    case 0:
        if (d == 15) {
            o->k = K_ADD_PC;
            o->n = 15;
            return D_END;
        }
        alu(o, A_ADD, FORM_R, d, d, 0);
        return D_NEXT;
    case 1:
        alu(o, A_CMP, FORM_R, 0, d, 1);
        return D_NEXT;
    case 2:
        if (d == 15) {
            o->k = K_MOV_PC;
            return D_END;
        }
        alu(o, A_MOV, FORM_R, d, 0, 0);
        return D_NEXT;
    default:
        o->k = (h & 0x80) ? K_BLX : K_BX;
        return D_END;
    }
}

static int dec16(cbcpu *c, op_t *o, uint32_t h, int in_it)
{
    int s = !in_it;
    uint32_t rd = h & 7, rn = (h >> 3) & 7, rm = (h >> 6) & 7, imm5 = (h >> 6) & 31;
    uint32_t top = h >> 10;
    o->cf = 2;
    if (top <= 5) {                                     /* LSL LSR ASR (immediate), MOVS */
        alu(o, A_MOV, imm_shift(o, top >> 1, imm5), rd, 0, s);
        o->m = (uint8_t)rn;
        return D_NEXT;
    }
    if (top == 6) {                                     /* ADD/SUB (register) */
        alu(o, (h & 0x200) ? A_SUB : A_ADD, FORM_R, rd, rn, s);
        o->m = (uint8_t)rm;
        return D_NEXT;
    }
    if (top == 7) {                                     /* ADD/SUB (3-bit immediate) */
        alu(o, (h & 0x200) ? A_SUB : A_ADD, FORM_I, rd, rn, s);
        o->imm = rm;
        return D_NEXT;
    }
    if (top <= 0x0F) {                                  /* MOV CMP ADD SUB (8-bit immediate) */
        static const int a[4] = {A_MOV, A_CMP, A_ADD, A_SUB};
        uint32_t op = (h >> 11) & 3, r = (h >> 8) & 7;
        alu(o, a[op], FORM_I, r, r, op == 1 ? 1 : s);
        o->imm = h & 0xFF;
        return D_NEXT;
    }
    if (top == 0x10)
        return dec16_dp(o, h, s);
    if (top == 0x11)
        return dec16_special(o, h);
    if (top <= 0x13) {                                  /* LDR (literal) */
        ldst(o, K_LDR, (h >> 8) & 7, 15, literal(o, 1, (h & 0xFF) * 4));
        return D_NEXT;
    }
    if (top <= 0x17) {                                  /* load/store (register) */
        static const uint16_t k[8] = {K_STRR, K_STRHR, K_STRBR, K_LDRSBR, K_LDRR, K_LDRHR, K_LDRBR, K_LDRSHR};
        ldst(o, k[(h >> 9) & 7], rd, rn, 0);
        o->m = (uint8_t)rm;
        o->shn = 0;
        return D_NEXT;
    }
    if (top <= 0x1F) {                                  /* STR LDR STRB LDRB (immediate) */
        int byte = (h >> 12) & 1, load = (h >> 11) & 1;
        ldst(o, byte ? (load ? K_LDRB : K_STRB) : (load ? K_LDR : K_STR), rd, rn, byte ? imm5 : imm5 * 4);
        return D_NEXT;
    }
    if (top <= 0x23) {                                  /* STRH LDRH (immediate) */
        ldst(o, (h & 0x800) ? K_LDRH : K_STRH, rd, rn, imm5 * 2);
        return D_NEXT;
    }
    if (top <= 0x27) {                                  /* STR LDR (SP-relative) */
        ldst(o, (h & 0x800) ? K_LDR : K_STR, (h >> 8) & 7, 13, (h & 0xFF) * 4);
        return D_NEXT;
    }
    if (top <= 0x29) {                                  /* ADR */
        alu(o, A_ADD, FORM_I, (h >> 8) & 7, 15, 0);
        o->imm = literal(o, 1, (h & 0xFF) * 4);
        return D_NEXT;
    }
    if (top <= 0x2B) {                                  /* ADD Rd, SP, #imm */
        alu(o, A_ADD, FORM_I, (h >> 8) & 7, 13, 0);
        o->imm = (h & 0xFF) * 4;
        return D_NEXT;
    }
    if (top <= 0x2F)
        return dec16_misc(c, o, h, s);
    if (top <= 0x33) {                                  /* STM, LDM */
        uint32_t n = (h >> 8) & 7, list = h & 0xFF;
        o->n = (uint8_t)n;
        o->imm = list;
        if (h & 0x800) {
            o->k = K_LDM;
            o->s = !(list & (1u << n));
        } else {
            o->k = K_STM;
            o->s = 1;
        }
        return D_NEXT;
    }
    if (top <= 0x37) {                                  /* B<c>, UDF, SVC */
        uint32_t cond = (h >> 8) & 15;
        if (cond == 14) {
            o->k = K_UDF;
            return D_END;
        }
        if (cond == 15) {
            o->k = K_SVC;
            o->imm = h & 0xFF;
            return D_END;
        }
        o->k = K_BCOND;
        o->cond = (uint8_t)cond;
        o->imm = o->pc + 4 + (uint32_t)((int32_t)(int8_t)(h & 0xFF) * 2);
        return D_END;
    }
    if (top <= 0x39) {                                  /* B */
        o->k = K_B;
        o->imm = o->pc + 4 + (uint32_t)(((int32_t)(h << 21)) >> 20);
        return D_END;
    }
    o->k = K_UNDEF;
    return D_END;
}

/* ---- 32-bit ------------------------------------------------------------------------------- */

static int dec32_ldst_multi(op_t *o, uint32_t h1, uint32_t h2)
{
    uint32_t op = (h1 >> 7) & 3, w = (h1 >> 5) & 1, l = (h1 >> 4) & 1;
    o->n = h1 & 15;
    o->s = (uint8_t)w;
    o->imm = h2 & (l ? 0xFFFF : 0x5FFF);
    if (op == 1)
        o->k = l ? ((h2 & 0x8000) ? K_LDM_PC : K_LDM) : K_STM;
    else if (op == 2)
        o->k = l ? ((h2 & 0x8000) ? K_LDMDB_PC : K_LDMDB) : K_STMDB;
    else
        o->k = K_UNDEF;
    return (o->k == K_LDM_PC || o->k == K_LDMDB_PC || o->k == K_UNDEF) ? D_END : D_NEXT;
}

static int dec32_dual(op_t *o, uint32_t h1, uint32_t h2)
{
    uint32_t p = (h1 >> 8) & 1, u = (h1 >> 7) & 1, w = (h1 >> 5) & 1, l = (h1 >> 4) & 1, n = h1 & 15;
    uint32_t rt = (h2 >> 12) & 15, op3 = (h2 >> 4) & 15;
    if (p || w) {                                       /* LDRD STRD */
        o->k = l ? K_LDRD : K_STRD;
        o->d = (uint8_t)rt;
        o->a = (h2 >> 8) & 15;
        o->n = (uint8_t)n;
        uint32_t imm = (h2 & 0xFF) * 4;
        if (n == 15) {
            o->imm = literal(o, (int)u, imm);
            o->sht = 1;
            o->shn = 0;
        } else {
            o->imm = u ? imm : (uint32_t)-imm;
            o->sht = (uint8_t)p;             /* pre-indexed */
            o->shn = (uint8_t)w;             /* writeback */
        }
        return D_NEXT;
    }
    uint32_t op1 = (h1 >> 7) & 3, op2 = (h1 >> 4) & 3;
    o->n = (uint8_t)n;
    if (op1 == 0 && op2 == 0) {                         /* STREX */
        o->k = K_STREX; o->d = (h2 >> 8) & 15; o->m = (uint8_t)rt; o->imm = (h2 & 0xFF) * 4; o->sht = 2;
        return D_NEXT;
    }
    if (op1 == 0 && op2 == 1) {                         /* LDREX */
        o->k = K_LDREX; o->d = (uint8_t)rt; o->imm = (h2 & 0xFF) * 4; o->sht = 2;
        return D_NEXT;
    }
    if (op1 == 1 && op2 == 1 && op3 <= 1) {             /* TBB TBH */
        o->k = op3 ? K_TBH : K_TBB;
        o->m = h2 & 15;
        return D_END;
    }
    if (op1 == 1 && (op3 == 4 || op3 == 5)) {           /* LDREXB/H STREXB/H */
        o->sht = (uint8_t)(op3 - 4);
        o->imm = 0;
        if (op2 == 1) { o->k = K_LDREX; o->d = (uint8_t)rt; }
        else { o->k = K_STREX; o->d = h2 & 15; o->m = (uint8_t)rt; }
        return D_NEXT;
    }
    if (op1 == 1 && op3 >= 8 && op3 <= 10) {            /* ARMv8-M LDA(B/H), STL(B/H) */
        static const uint8_t sz[3] = {0, 1, 2};
        uint32_t size = sz[op3 - 8];
        if (op2 == 1)
            ldst(o, size == 0 ? K_LDRB : size == 1 ? K_LDRH : K_LDR, rt, n, 0);
        else
            ldst(o, size == 0 ? K_STRB : size == 1 ? K_STRH : K_STR, rt, n, 0);
        return D_NEXT;
    }
    o->k = K_UNDEF;
    return D_END;
}

static const int alu_of_op4[16] = {A_AND, A_BIC, A_ORR, A_ORN, A_EOR, -1, -1, -1, A_ADD, -1, A_ADC, A_SBC, -1,
                                   A_SUB, A_RSB, -1};

/* the data-processing op4 of the modified-immediate and shifted-register forms as an ALU op */
static int alu_op4(uint32_t op, uint32_t rn, uint32_t rd, int s)
{
    int a = alu_of_op4[op];
    if (a == A_AND && rd == 15 && s) return A_TST;
    if (a == A_ORR && rn == 15) return A_MOV;
    if (a == A_ORN && rn == 15) return A_MVN;
    if (a == A_EOR && rd == 15 && s) return A_TEQ;
    if (a == A_ADD && rd == 15 && s) return A_CMN;
    if (a == A_SUB && rd == 15 && s) return A_CMP;
    return a;
}

static int dec32_dp_shifted(op_t *o, uint32_t h1, uint32_t h2)
{
    uint32_t op = (h1 >> 5) & 15, s = (h1 >> 4) & 1, rn = h1 & 15, rd = (h2 >> 8) & 15;
    uint32_t imm5 = ((h2 >> 10) & 0x1C) | ((h2 >> 6) & 3), type = (h2 >> 4) & 3;
    o->m = h2 & 15;
    if (op == 6) {                                      /* PKHBT PKHTB */
        o->k = (h2 & 0x20) ? K_PKHTB : K_PKHBT;
        o->d = (uint8_t)rd;
        o->n = (uint8_t)rn;
        o->shn = (uint8_t)((h2 & 0x20) && imm5 == 0 ? 32 : imm5);
        return D_NEXT;
    }
    int a = alu_op4(op, rn, rd, (int)s);
    if (a < 0) {
        o->k = K_UNDEF;
        return D_END;
    }
    alu(o, a, imm_shift(o, type, imm5), rd, rn, (int)s);
    return D_NEXT;
}

static int dec32_dp_modimm(op_t *o, uint32_t h1, uint32_t h2)
{
    uint32_t op = (h1 >> 5) & 15, s = (h1 >> 4) & 1, rn = h1 & 15, rd = (h2 >> 8) & 15;
    uint32_t imm12 = ((h1 >> 10) & 1) << 11 | ((h2 >> 12) & 7) << 8 | (h2 & 0xFF);
    int a = alu_op4(op, rn, rd, (int)s);
    if (a < 0) {
        o->k = K_UNDEF;
        return D_END;
    }
    alu(o, a, FORM_I, rd, rn, (int)s);
    o->imm = thumb_expand_imm(imm12, &o->cf);
    return D_NEXT;
}

static int dec32_dp_plain(op_t *o, uint32_t h1, uint32_t h2)
{
    uint32_t op = (h1 >> 4) & 31, rn = h1 & 15, rd = (h2 >> 8) & 15;
    uint32_t imm12 = ((h1 >> 10) & 1) << 11 | ((h2 >> 12) & 7) << 8 | (h2 & 0xFF);
    uint32_t imm5 = ((h2 >> 10) & 0x1C) | ((h2 >> 6) & 3), low5 = h2 & 31;
    o->d = (uint8_t)rd;
    o->n = (uint8_t)rn;
    o->cf = 2;
    switch (op) {
    case 0: case 10:                                    /* ADDW SUBW ADR */
        if (rn == 15) {
            alu(o, A_ADD, FORM_I, rd, 15, 0);
            o->imm = literal(o, op == 0, imm12);
        } else {
            alu(o, op ? A_SUB : A_ADD, FORM_I, rd, rn, 0);
            o->imm = imm12;
        }
        return D_NEXT;
    case 4: case 12:                                    /* MOVW MOVT */
        o->k = op == 4 ? K_MOVW : K_MOVT;
        o->imm = (h1 & 15) << 12 | imm12;
        return D_NEXT;
    case 16: case 18: case 24: case 26: {               /* SSAT USAT SSAT16 USAT16 */
        int sh = (op & 2) != 0, uns = op >= 24;
        if (sh && imm5 == 0) {
            o->k = uns ? K_USAT16 : K_SSAT16;
            o->a = (uint8_t)((h2 & 15) + !uns);
        } else {
            o->k = uns ? K_USAT : K_SSAT;
            o->a = (uint8_t)(low5 + !uns);
            o->sht = sh ? 2 : 0;
            o->shn = (uint8_t)imm5;
        }
        return D_NEXT;
    }
    case 20: case 28:                                   /* SBFX UBFX */
        o->k = op == 20 ? K_SBFX : K_UBFX;
        o->sht = (uint8_t)imm5;                         /* lsb */
        o->shn = (uint8_t)(low5 + 1);                   /* width */
        return D_NEXT;
    case 22:                                            /* BFI BFC */
        o->k = rn == 15 ? K_BFC : K_BFI;
        o->sht = (uint8_t)imm5;                         /* lsb */
        o->shn = (uint8_t)low5;                         /* msb */
        return D_NEXT;
    default:
        o->k = K_UNDEF;
        return D_END;
    }
}

static int dec32_branch_misc(op_t *o, uint32_t h1, uint32_t h2)
{
    uint32_t op1 = (h2 >> 12) & 7, op = (h1 >> 4) & 0x7F;
    uint32_t s = (h1 >> 10) & 1, j1 = (h2 >> 13) & 1, j2 = (h2 >> 11) & 1;
    if ((op1 & 5) == 0) {
        if ((op & 0x38) != 0x38) {                      /* B<c>.W */
            uint32_t imm = s << 20 | j2 << 19 | j1 << 18 | (h1 & 0x3F) << 12 | (h2 & 0x7FF) << 1;
            o->k = K_BCOND;
            o->cond = (h1 >> 6) & 15;
            o->imm = o->pc + 4 + (uint32_t)(((int32_t)(imm << 11)) >> 11);
            return D_END;
        }
        if (op == 0x38 || op == 0x39) {                 /* MSR */
            o->k = K_MSR;
            o->n = h1 & 15;
            o->imm = h2 & 0xFF;
            o->sht = (h2 >> 10) & 3;
            return D_END;
        }
        if (op == 0x3A) {                               /* hints */
            return hint_op(o, h2 & 0xFF);
        }
        if (op == 0x3B) {                               /* CLREX DSB DMB ISB */
            uint32_t x = (h2 >> 4) & 15;
            o->k = x == 2 ? K_CLREX : K_NOP;
            if (x == 6)
                return D_END;
            if (x == 2 || x == 4 || x == 5)
                return D_NEXT;
        }
        if (op == 0x3E || op == 0x3F) {                 /* MRS */
            o->k = K_MRS;
            o->d = (h2 >> 8) & 15;
            o->imm = h2 & 0xFF;
            return D_NEXT;
        }
        o->k = op1 == 2 && op == 0x7F ? K_UDF : K_UNDEF;
        return D_END;
    }
    if (op1 & 1) {                                      /* B.W, BL */
        uint32_t i1 = !(j1 ^ s), i2 = !(j2 ^ s);
        uint32_t imm = s << 24 | i1 << 23 | i2 << 22 | (h1 & 0x3FF) << 12 | (h2 & 0x7FF) << 1;
        o->k = (op1 & 4) ? K_BL : K_B;
        o->imm = o->pc + 4 + (uint32_t)(((int32_t)(imm << 7)) >> 7);
        return D_END;
    }
    o->k = K_UNDEF;
    return D_END;
}

static int dec32_ldst_single(op_t *o, uint32_t h1, uint32_t h2)
{
    static const uint16_t lk[2][3] = {{K_LDRB, K_LDRH, K_LDR}, {K_LDRSB, K_LDRSH, K_UNDEF}};
    static const uint16_t sk[3] = {K_STRB, K_STRH, K_STR};
    uint32_t sz = (h1 >> 5) & 3, l = (h1 >> 4) & 1, sg = (h1 >> 8) & 1, up12 = (h1 >> 7) & 1;
    uint32_t n = h1 & 15, t = (h2 >> 12) & 15;
    if (sz == 3 || (!l && sg) || (sg && sz == 2) || (!l && n == 15)) {
        o->k = K_UNDEF;
        return D_END;
    }
    int kind = l ? lk[sg][sz] : sk[sz];
    int pcload = l && t == 15 && kind == K_LDR;
    if (l && t == 15 && !pcload) {                      /* PLD, PLI */
        o->k = K_NOP;
        return D_NEXT;
    }
    if (n == 15) {
        ldst(o, pcload ? K_LDR_PC : kind, t, 15, literal(o, (int)up12, h2 & 0xFFF));
    } else if (up12) {
        ldst(o, pcload ? K_LDR_PC : kind, t, n, h2 & 0xFFF);
    } else if (h2 & 0x800) {
        uint32_t p = (h2 >> 10) & 1, u = (h2 >> 9) & 1, w = (h2 >> 8) & 1, imm8 = h2 & 0xFF;
        uint32_t imm = u ? imm8 : (uint32_t)-imm8;
        if (p && !w) {
            ldst(o, pcload ? K_LDR_PC : kind, t, n, imm);
        } else {
            ldst(o, pcload ? K_LDRX_PC : (l ? K_LDRX : K_STRX), t, n, imm);
            o->sht = (uint8_t)(sz | sg << 2);
            o->shn = (uint8_t)(p | w << 1);
        }
    } else if (((h2 >> 6) & 0x3F) == 0) {
        static const int rk[16] = {[K_LDRB - K_LDR] = K_LDRBR};
        (void)rk;
        int r;
        switch (kind) {
        case K_LDR: r = pcload ? K_LDRR_PC : K_LDRR; break;
        case K_LDRB: r = K_LDRBR; break;
        case K_LDRH: r = K_LDRHR; break;
        case K_LDRSB: r = K_LDRSBR; break;
        case K_LDRSH: r = K_LDRSHR; break;
        case K_STR: r = K_STRR; break;
        case K_STRB: r = K_STRBR; break;
        default: r = K_STRHR; break;
        }
        ldst(o, r, t, n, 0);
        o->m = h2 & 15;
        o->shn = (h2 >> 4) & 3;
    } else {
        o->k = K_UNDEF;
        return D_END;
    }
    return pcload ? D_END : D_NEXT;
}

static int dec32_dp_reg(op_t *o, uint32_t h1, uint32_t h2)
{
    uint32_t op1 = (h1 >> 4) & 15, op2 = (h2 >> 4) & 15, rn = h1 & 15;
    o->d = (h2 >> 8) & 15;
    o->n = (uint8_t)rn;
    o->m = h2 & 15;
    if ((h2 & 0xF000) != 0xF000)
        goto undef;
    if (op1 < 8 && op2 == 0) {                          /* LSL LSR ASR ROR (register) */
        o->k = K_SHIFT_REG;
        o->sht = (uint8_t)(op1 >> 1);
        o->s = op1 & 1;
        return D_NEXT;
    }
    if (op1 < 6 && (op2 & 8)) {                         /* extends, with and without add */
        static const uint16_t add[6] = {K_SXTAH, K_UXTAH, K_SXTAB16, K_UXTAB16, K_SXTAB, K_UXTAB};
        static const uint16_t plain[6] = {K_SXTH, K_UXTH, K_SXTB16, K_UXTB16, K_SXTB, K_UXTB};
        o->k = rn == 15 ? plain[op1] : add[op1];
        o->shn = (uint8_t)(((h2 >> 4) & 3) * 8);
        return D_NEXT;
    }
    if ((op1 & 8) && op2 < 8) {                         /* parallel add/subtract */
        uint32_t which = op1 & 7, prefix = op2 & 3;
        if (prefix == 3 || which == 3 || which == 7)
            goto undef;
        o->k = K_PAR;
        o->sht = (uint8_t)which;
        o->shn = (uint8_t)op2;
        return D_NEXT;
    }
    if ((op1 & 0xC) == 8 && (op2 & 0xC) == 8) {
        uint32_t a = op1 & 3, b = op2 & 3;
        static const uint16_t q[4] = {K_QADD, K_QDADD, K_QSUB, K_QDSUB};
        static const uint16_t r[4] = {K_REV, K_REV16, K_RBIT, K_REVSH};
        if (a == 0) o->k = q[b];
        else if (a == 1) o->k = r[b];
        else if (a == 2 && b == 0) o->k = K_SEL;
        else if (a == 3 && b == 0) o->k = K_CLZ;
        else goto undef;
        return D_NEXT;
    }
undef:
    o->k = K_UNDEF;
    return D_END;
}

static int dec32_mul(op_t *o, uint32_t h1, uint32_t h2)
{
    uint32_t op1 = (h1 >> 4) & 7, op2 = (h2 >> 4) & 3, ra = (h2 >> 12) & 15;
    o->n = h1 & 15;
    o->d = (h2 >> 8) & 15;
    o->m = h2 & 15;
    o->a = (uint8_t)ra;
    o->s = ra != 15;                                    /* accumulates */
    o->sht = (h2 >> 5) & 1;
    o->shn = (h2 >> 4) & 1;
    switch (op1) {
    case 0:
        if (op2 == 0) { o->k = ra == 15 ? K_MUL : K_MLA; if (ra == 15) o->s = 0; }
        else if (op2 == 1) o->k = K_MLS;
        else break;
        return D_NEXT;
    case 1: o->k = ra == 15 ? K_SMULXY : K_SMLAXY; return D_NEXT;
    case 2: if (op2 & 2) break; o->k = K_SMLAD; o->sht = (uint8_t)(op2 & 1); return D_NEXT;
    case 3: if (op2 & 2) break; o->k = ra == 15 ? K_SMULWY : K_SMLAWY; return D_NEXT;
    case 4: if (op2 & 2) break; o->k = K_SMLSD; o->sht = (uint8_t)(op2 & 1); return D_NEXT;
    case 5: if (op2 & 2) break; o->k = K_SMMLA; o->sht = (uint8_t)(op2 & 1); return D_NEXT;
    case 6: if (op2 & 2) break; o->k = K_SMMLS; o->sht = (uint8_t)(op2 & 1); return D_NEXT;
    case 7: if (op2) break; o->k = K_USADA8; return D_NEXT;
    }
    o->k = K_UNDEF;
    return D_END;
}

static int dec32_long_mul(cbcpu *c, op_t *o, uint32_t h1, uint32_t h2)
{
    uint32_t op1 = (h1 >> 4) & 7, op2 = (h2 >> 4) & 15;
    o->n = h1 & 15;
    o->d = (h2 >> 12) & 15;                             /* RdLo */
    o->a = (h2 >> 8) & 15;                              /* RdHi (Rd of the divides) */
    o->m = h2 & 15;
    if (op1 == 0 && op2 == 0) { o->k = K_SMULL; o->dyn = c->dyn_lmul ? DYN_LMUL | 256 : 0; }
    else if (op1 == 1 && op2 == 15) { o->k = K_SDIV; o->d = o->a; o->dyn = c->dyn_div ? DYN_SDIV : 0; }
    else if (op1 == 2 && op2 == 0) { o->k = K_UMULL; o->dyn = c->dyn_lmul ? DYN_LMUL : 0; }
    else if (op1 == 3 && op2 == 15) { o->k = K_UDIV; o->d = o->a; o->dyn = c->dyn_div ? DYN_UDIV : 0; }
    else if (op1 == 4 && op2 == 0) { o->k = K_SMLAL; o->dyn = c->dyn_lmla ? DYN_LMLA | 256 : 0; }
    else if (op1 == 4 && (op2 & 0xC) == 8) { o->k = K_SMLALXY; o->sht = (op2 >> 1) & 1; o->shn = op2 & 1; }
    else if (op1 == 4 && (op2 & 0xE) == 0xC) { o->k = K_SMLALD; o->sht = op2 & 1; }
    else if (op1 == 5 && (op2 & 0xE) == 0xC) { o->k = K_SMLSLD; o->sht = op2 & 1; }
    else if (op1 == 6 && op2 == 0) { o->k = K_UMLAL; o->dyn = c->dyn_lmla ? DYN_LMLA : 0; }
    else if (op1 == 6 && op2 == 6) o->k = K_UMAAL;
    else {
        o->k = K_UNDEF;
        return D_END;
    }
    return D_NEXT;
}

static int dec32_vfp_dp(op_t *o, uint32_t h1, uint32_t h2)
{
    uint32_t dbl = (h2 >> 8) & 1, D = (h1 >> 6) & 1, vn = h1 & 15, vd = (h2 >> 12) & 15;
    uint32_t N = (h2 >> 7) & 1, M = (h2 >> 5) & 1, vm = h2 & 15;
    uint32_t opc1 = ((h1 >> 5) & 4) | ((h1 >> 4) & 3), opc3 = (h2 >> 6) & 3, bit6 = opc3 & 1;
    int f = -1;
    o->k = K_VFP;
    o->s = (uint8_t)dbl;
    o->d = (uint8_t)(dbl ? (D << 4 | vd) : (vd << 1 | D));
    o->n = (uint8_t)(dbl ? (N << 4 | vn) : (vn << 1 | N));
    o->m = (uint8_t)(dbl ? (M << 4 | vm) : (vm << 1 | M));
    switch (opc1) {
    case 0: f = bit6 ? F_MLS : F_MLA; break;
    case 1: f = bit6 ? F_NMLA : F_NMLS; break;
    case 2: f = bit6 ? F_NMUL : F_MUL; break;
    case 3: f = bit6 ? F_SUB : F_ADD; break;
    case 4: f = bit6 ? -1 : F_DIV; break;
    case 5: f = bit6 ? F_FNMA : F_FNMS; break;
    case 6: f = bit6 ? F_FMS : F_FMA; break;
    case 7:
        if (!bit6) {                                    /* VMOV (immediate) */
            uint32_t i8 = (vn << 4) | vm, b6 = (i8 >> 6) & 1;
            f = F_MOVI;
            if (dbl)
                o->imm = (i8 >> 7) << 31 | (!b6) << 30 | (b6 ? 0x3FC00000u : 0) | (i8 & 0x3F) << 16;
            else
                o->imm = (i8 >> 7) << 31 | (!b6) << 30 | (b6 ? 0x3E000000u : 0) | (i8 & 0x3F) << 19;
            break;
        }
        switch (vn) {
        case 0: f = opc3 == 1 ? F_MOV : F_ABS; break;
        case 1: f = opc3 == 1 ? F_NEG : F_SQRT; break;
        case 4: f = F_CMP; break;
        case 5: f = F_CMPZ; break;
        case 7: if (opc3 == 3) { f = F_CVT_DS; o->d = (uint8_t)(dbl ? (vd << 1 | D) : (D << 4 | vd)); } break;
        case 8:                                         /* VCVT to floating point from Sm */
            f = (opc3 & 2) ? F_TOF_S : F_TOF_U;
            o->m = (uint8_t)(vm << 1 | M);
            break;
        case 12: case 13:                               /* VCVT(R) to integer into Sd */
            f = vn == 13 ? ((opc3 & 2) ? F_TOI_S : F_TOIR_S) : ((opc3 & 2) ? F_TOI_U : F_TOIR_U);
            o->d = (uint8_t)(vd << 1 | D);
            break;
        }
        break;
    }
    if (f < 0) {
        o->k = K_UNDEF;
        return D_END;
    }
    o->sht = (uint8_t)f;
    return D_NEXT;
}

static int dec32_coproc(op_t *o, uint32_t h1, uint32_t h2)
{
    uint32_t op1 = (h1 >> 4) & 0x3F, rt = (h2 >> 12) & 15, dbl = (h2 >> 8) & 1;
    if (((h2 >> 9) & 7) != 5 || (h1 & 0x1000))
        goto undef;
    if ((op1 & 0x3E) == 0x04) {                         /* VMOV two core registers */
        uint32_t m = h2 & 15, M = (h2 >> 5) & 1, to_core = op1 & 1;
        o->d = (uint8_t)rt;
        o->a = h1 & 15;
        o->m = (uint8_t)(dbl ? (M << 4 | m) : (m << 1 | M));
        o->k = dbl ? (to_core ? K_VMOV_RRD : K_VMOV_DRR) : (to_core ? K_VMOV_RRS : K_VMOV_SRR);
        return D_NEXT;
    }
    if ((op1 & 0x20) == 0) {                            /* VLDR VSTR VLDM VSTM VPUSH VPOP */
        uint32_t p = (h1 >> 8) & 1, u = (h1 >> 7) & 1, D = (h1 >> 6) & 1, w = (h1 >> 5) & 1;
        uint32_t l = (h1 >> 4) & 1, n = h1 & 15, vd = (h2 >> 12) & 15, imm8 = h2 & 0xFF;
        o->n = (uint8_t)n;
        o->d = (uint8_t)(dbl ? (D << 4 | vd) * 2 : (vd << 1 | D));     /* first word of s[] */
        o->s = (uint8_t)dbl;
        if (p && !w) {
            o->k = l ? K_VLDR : K_VSTR;
            o->imm = n == 15 ? literal(o, (int)u, imm8 * 4) : (u ? imm8 * 4 : (uint32_t)-(imm8 * 4));
            return D_NEXT;
        }
        if (p == u || (p && !w))
            goto undef;
        o->k = l ? K_VLDM : K_VSTM;
        o->imm = dbl ? (imm8 & ~1u) : imm8;             /* words */
        o->sht = (uint8_t)p;                            /* decrement before */
        o->shn = (uint8_t)w;
        return D_NEXT;
    }
    if ((op1 & 0x30) == 0x20 && !(h2 & 0x10))
        return dec32_vfp_dp(o, h1, h2);
    if ((op1 & 0x30) == 0x20) {                         /* 8, 16 and 32-bit transfers */
        uint32_t l = (h1 >> 4) & 1, opa = (h1 >> 5) & 7, cbit = (h2 >> 8) & 1;
        o->d = (uint8_t)rt;
        if (!cbit && opa == 0) {
            o->k = l ? K_VMOV_RS : K_VMOV_SR;
            o->n = (uint8_t)((h1 & 15) << 1 | ((h2 >> 7) & 1));
            return D_NEXT;
        }
        if (!cbit && opa == 7 && (h1 & 15) == 1) {
            o->k = l ? K_VMRS : K_VMSR;
            return l ? D_NEXT : D_END;
        }
        if (cbit && (opa & 6) == 0 && (h2 & 0x60) == 0) {      /* VMOV.32 Dd[x] <-> Rt */
            o->k = l ? K_VMOV_RS : K_VMOV_SR;
            o->n = (uint8_t)((((h2 >> 7) & 1) << 4 | (h1 & 15)) * 2 + (opa & 1));
            return D_NEXT;
        }
    }
undef:
    o->k = K_UNDEF;
    return D_END;
}

static int dec32(cbcpu *c, op_t *o, uint32_t h1, uint32_t h2)
{
    uint32_t op1 = (h1 >> 11) & 3, op2 = (h1 >> 4) & 0x7F;
    o->cf = 2;
    if (op1 == 1) {
        if ((op2 & 0x64) == 0x00)
            return dec32_ldst_multi(o, h1, h2);
        if ((op2 & 0x64) == 0x04)
            return dec32_dual(o, h1, h2);
        if ((op2 & 0x60) == 0x20)
            return dec32_dp_shifted(o, h1, h2);
        return dec32_coproc(o, h1, h2);
    }
    if (op1 == 2) {
        if (h2 & 0x8000)
            return dec32_branch_misc(o, h1, h2);
        return (op2 & 0x20) ? dec32_dp_plain(o, h1, h2) : dec32_dp_modimm(o, h1, h2);
    }
    if ((op2 & 0x71) == 0x00 || (op2 & 0x67) == 0x01 || (op2 & 0x67) == 0x03 || (op2 & 0x67) == 0x05)
        return dec32_ldst_single(o, h1, h2);
    if ((op2 & 0x70) == 0x20)
        return dec32_dp_reg(o, h1, h2);
    if ((op2 & 0x78) == 0x30)
        return dec32_mul(o, h1, h2);
    if ((op2 & 0x78) == 0x38)
        return dec32_long_mul(c, o, h1, h2);
    if (op2 & 0x40)
        return dec32_coproc(o, h1, h2);
    o->k = K_UNDEF;
    return D_END;
}

/* ---- blocks ------------------------------------------------------------------------------- */

static void mark_code(cbcpu *c, uint32_t lo, uint32_t hi)
{
    for (uint32_t a = lo & ~1023u; a < hi; a += 1024) {
        if (a - c->ram_lo < c->ram_size)
            c->ram_code[(a - c->ram_lo) >> PAGE_BITS] = 1;
        else if (a - c->flash_lo < c->flash_size)
            c->flash_code[(a - c->flash_lo) >> PAGE_BITS] = 1;
    }
}

/* Decodes the block at addr, entered with IT state `it` (a new blk_t in *out); -1 when no instruction can be fetched there. */
int cbcpu_decode_block(cbcpu *c, uint32_t addr, uint32_t it, blk_t **out)
{
    op_t ops[MAX_BLOCK_INSNS + 5];
    uint32_t pc = addr, page = addr >> PAGE_BITS, its = 0;
    int n = 0;
    for (;;) {
        uint32_t h1, h2 = 0;
        if (cbcpu_fetch16(c, pc, &h1) != 0)
            break;
        int wide = (h1 >> 11) >= 0x1D;
        if (wide && cbcpu_fetch16(c, pc + 2, &h2) != 0)
            break;
        if (n > 0 && (((pc >> PAGE_BITS) != page) || (((pc + (wide ? 2 : 0)) >> PAGE_BITS) != page)))
            break;
        op_t *o = &ops[n++];
        memset(o, 0, sizeof *o);
        o->pc = pc;
        o->len = wide ? 4 : 2;
        o->raw = wide ? (h1 << 16 | h2) : h1;
        o->cond = COND_AL;
        int r = wide ? dec32(c, o, h1, h2) : dec16(c, o, h1, it != 0);
        if (it != 0) {
            o->cond = (uint8_t)(it >> 4);
            it = (it & 7) == 0 ? 0 : ((it & 0xE0) | ((it << 1) & 0x1F));
        }
        if (r == D_IT) {
            its++;
            it = o->imm;
            o->imm = 0;
        }
        pc += o->len;
        if (r == D_END || n >= MAX_BLOCK_INSNS)
            break;
    }
    if (n == 0) {
        cbcpu_fail(c, "no code to execute at pc=0x%08x (outside flash and RAM)", addr);
        return -1;
    }
    op_t *e = &ops[n];
    memset(e, 0, sizeof *e);
    e->k = K_END;
    e->cond = COND_AL;
    e->pc = pc;
    e->imm = it;                    /* an IT block going on in the next block */
    blk_t *b = malloc(sizeof *b + (size_t)(n + 1) * sizeof(op_t));
    if (b == NULL) {
        cbcpu_fail(c, "out of memory decoding the block at 0x%08x", addr);
        return -1;
    }
    memcpy(b->ops, ops, (size_t)(n + 1) * sizeof(op_t));
    b->addr = addr;
    b->size = pc - addr;
    b->insns = (uint32_t)n;
    b->nops = (uint32_t)n + 1;
    b->its = its;
    b->succ[0] = b->succ[1] = NULL;
    b->has_rec = 0;                 /* its accounting record, copied on its first entry */
    b->chain = c->all;
    c->all = b;
    c->decoded++;
    mark_code(c, addr, pc);
    *out = b;
    return 0;
}
