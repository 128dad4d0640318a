/* sim_isa.S - instruction edge cases for the native executor, run in lock-step against Unicorn
 * (tests/test_sim_native.py). Every group ends with CUT (a branch: a block boundary), so the
 * registers, APSR and FPU registers are compared after each. Built for ARMv6-M (the base part),
 * ARMv7-M (+ Thumb-2), ARMv7E-M (+ DSP) and with an FPU (+ floating point), by the macros gcc
 * defines for -mcpu. The image ends with semihosting SYS_EXIT. */
    .syntax unified
    .thumb

    .section .isr_vector, "a"
    .word 0x20008000
    .word _start

    .macro CUT
    b.n 1f
1:
    .endm

    /* a literal pool here, jumped over */
    .macro POOL
    b 2f
    .ltorg
2:
    .endm

    /* r0-r7 (and r8-r12 on v7-M) to edge values */
    .macro EDGES
    movs r0, #0
    movs r1, #1
    ldr r2, =0x7FFFFFFF
    ldr r3, =0x80000000
    ldr r4, =0xFFFFFFFF
    ldr r5, =0x12345678
    movs r6, #31
    movs r7, #32
    .endm

    .text
    .thumb_func
    .global _start
_start:
    EDGES
    CUT
    /* ---- ARMv6-M: flags of adds, subtractions, carries ---- */
    adds r6, r2, r1
    mrs r7, apsr
    CUT
    adds r6, r4, r1
    mrs r7, apsr
    CUT
    subs r6, r3, r1
    mrs r7, apsr
    CUT
    subs r6, r0, r1
    mrs r7, apsr
    CUT
    movs r6, #5
    adcs r6, r4
    mrs r7, apsr
    CUT
    movs r6, #5
    sbcs r6, r1
    mrs r7, apsr
    CUT
    rsbs r6, r3, #0
    mrs r7, apsr
    CUT
    cmp r3, r2
    mrs r7, apsr
    CUT
    cmn r4, r1
    mrs r7, apsr
    CUT
    /* shifts by registers: 0, 1, 31, 32, 33, 255 */
    EDGES
    movs r6, #0
    mov r7, r5
    lsls r7, r6
    mrs r6, apsr
    CUT
    movs r6, #31
    mov r7, r5
    lsls r7, r6
    mrs r6, apsr
    CUT
    movs r6, #32
    mov r7, r5
    lsls r7, r6
    mrs r6, apsr
    CUT
    movs r6, #33
    mov r7, r3
    lsrs r7, r6
    mrs r6, apsr
    CUT
    movs r6, #32
    mov r7, r3
    lsrs r7, r6
    mrs r6, apsr
    CUT
    movs r6, #32
    mov r7, r3
    asrs r7, r6
    mrs r6, apsr
    CUT
    movs r6, #255
    mov r7, r3
    asrs r7, r6
    mrs r6, apsr
    CUT
    movs r6, #32
    mov r7, r5
    rors r7, r6
    mrs r6, apsr
    CUT
    movs r6, #36
    mov r7, r5
    rors r7, r6
    mrs r6, apsr
    CUT
    mov r7, r3
    lsrs r7, r7, #32
    mrs r6, apsr
    CUT
    mov r7, r3
    asrs r7, r7, #32
    mrs r6, apsr
    CUT
    mov r7, r5
    lsls r7, r7, #0
    mrs r6, apsr
    CUT
    /* logic, multiply, extends, reverses */
    EDGES
    mov r6, r5
    ands r6, r4
    mvns r7, r6
    orrs r7, r1
    eors r7, r5
    bics r7, r1
    tst r7, r3
    muls r7, r5
    mrs r6, apsr
    CUT
    sxtb r6, r5
    sxth r7, r4
    uxtb r6, r3
    uxth r7, r5
    rev r6, r5
    rev16 r7, r5
    revsh r6, r5
    negs r7, r5
    CUT
    /* memory: offsets, registers, multiple */
    ldr r0, =buf
    str r5, [r0]
    strh r5, [r0, #4]
    strb r5, [r0, #7]
    ldr r6, [r0, #4]
    ldrsh r7, [r0, r1]
    movs r1, #3
    ldrsb r6, [r0, r1]
    ldrb r7, [r0, #7]
    ldrh r6, [r0, #2]
    stmia r0!, {r4-r7}
    subs r0, #16
    ldmia r0!, {r1-r3}
    ldm r0, {r0}
    push {r1-r5, lr}
    pop {r1-r5}
    pop {r6}
    add r6, sp, #8
    sub sp, #8
    add sp, #8
    adr r7, lit
    ldr r7, [r7]
    CUT
    /* branches: bl, bx, blx, conditional */
    bl sub1
    ldr r6, =sub1
    blx r6
    movs r6, #0
    cmp r6, #0
    beq 2f
    movs r6, #9
2:  bne 3f
    movs r7, #7
3:
    CUT
    POOL

#if __ARM_ARCH >= 7
    /* ---- ARMv7-M: Thumb-2 ---- */
    EDGES
    mov r8, #0x55
    ldr r9, =0xDEADBEEF
    ands r10, r5, #0xFF000000
    mrs r11, apsr
    CUT
    movs r10, #0x80000000
    mrs r11, apsr
    CUT
    orrs r10, r9, r5, lsl #3
    mrs r11, apsr
    CUT
    eors r10, r9, r5, ror #7
    mrs r11, apsr
    CUT
    bics r10, r9, r5, asr #32
    mrs r11, apsr
    CUT
    adds r10, r9, r5, lsr #1
    mrs r11, apsr
    CUT
    sbcs r10, r5, r9, rrx
    mrs r11, apsr
    CUT
    rsb r10, r5, #0x1000
    orn r11, r5, #0xFF
    teq r9, r5
    mrs r12, apsr
    CUT
    addw r10, r5, #0xFFF
    subw r11, r5, #0xABC
    movw r12, #0xBEEF
    movt r12, #0xDEAD
    CUT
    asr.w r10, r3, r6
    ror.w r11, r5, r6
    lsls.w r12, r5, r7
    mrs r8, apsr
    CUT
    /* IT blocks, flags inside them, conditional branches */
    cmp r1, r0
    ite gt
    movgt r10, #1
    movle r10, #2
    itttt eq
    addeq r10, r10, #1
    addeq r10, #2
    moveq r11, #3
    subeq r11, #1
    cmp r0, r0
    itete eq
    addeq r10, r1
    addne r10, r1
    addeq r11, r1
    subne r11, r1
    mrs r12, apsr
    CUT
    cmp r5, r9
    it hi
    movhi r10, #44
    cmp r9, r5
    it lt
    blt 4f
    movs r10, #1
4:
    CUT
    cbz r0, 5f
    movs r10, #2
5:  cbnz r1, 6f
    movs r10, #3
6:
    CUT
    /* multiplies and divides */
    mul r10, r5, r9
    mla r11, r5, r9, r2
    mls r12, r5, r9, r2
    CUT
    umull r10, r11, r5, r9
    smull r8, r12, r4, r3
    CUT
    umlal r10, r11, r5, r9
    smlal r8, r12, r3, r3
    CUT
    udiv r10, r9, r5
    sdiv r11, r9, r5
    udiv r12, r9, r0
    sdiv r8, r3, r4
    CUT
    /* bit fields, bit counts */
    mov r10, r9
    bfi r10, r5, #4, #12
    bfc r9, #8, #8
    ubfx r11, r5, #3, #9
    sbfx r12, r9, #20, #12
    clz r8, r5
    CUT
    rbit r10, r5
    clz r11, r0
    sxtb r12, r5, ror #8
    uxth r8, r9, ror #16
    ssat r10, #8, r5
    usat r11, #8, r4
    mrs r12, apsr
    CUT
    ssat r10, #16, r9, asr #4
    usat r11, #31, r5, lsl #2
    CUT
    /* memory: indexing, writeback, dual, exclusive, table branches */
    ldr r0, =buf
    str r5, [r0, #4]!
    str r9, [r0], #4
    ldr r10, [r0, #-8]!
    ldrb r11, [r0, #1]!
    ldrsh r12, [r0], #-1
    strd r5, r9, [r0, #8]
    ldrd r10, r11, [r0, #8]
    strd r9, r5, [r0, #16]!
    ldrd r12, r8, [r0], #-16
    ldr r10, [r0, r1, lsl #2]
    str r10, [r0, r1, lsl #3]
    ldrex r11, [r0]
    strex r12, r5, [r0]
    ldrh.w r10, [r0, #-2]
    ldrsb.w r11, [r0, #6]
    ldr.w r12, lit
    stmdb r0!, {r5, r9}
    ldmia r0!, {r10, r11}
    CUT
    movs r10, #2
    tbb [pc, r10]
tbbtab:
    .byte 2, 3, 4, 5
    movs r11, #1
    movs r11, #2
    movs r11, #3
    movs r11, #4
    CUT
    movs r10, #1
    tbh [pc, r10, lsl #1]
tbhtab:
    .hword 3, 4, 5
    movs r12, #1
    movs r12, #2
    movs r12, #3
    CUT
    POOL
#endif

#if defined(__ARM_FEATURE_DSP)
    /* ---- ARMv7E-M: DSP ---- */
    EDGES
    ldr r8, =0x7FFF8001
    ldr r9, =0x80017FFF
    ldr r10, =0xFF017F80
    qadd r11, r2, r1
    qsub r12, r3, r1
    mrs r6, apsr
    msr apsr_nzcvq, r0
    CUT
    qdadd r11, r5, r2
    qdsub r12, r5, r3
    mrs r6, apsr
    msr apsr_nzcvq, r0
    CUT
    sadd16 r11, r8, r9
    mrs r6, apsr
    sel r12, r8, r9
    CUT
    uadd8 r11, r10, r5
    mrs r6, apsr
    sel r12, r5, r10
    usub16 r7, r8, r9
    mrs r6, apsr
    CUT
    ssub8 r11, r10, r5
    sasx r12, r8, r9
    ssax r7, r8, r9
    mrs r6, apsr
    CUT
    qadd16 r11, r8, r9
    qsub8 r12, r10, r5
    uqadd8 r7, r10, r10
    uqsub16 r6, r8, r9
    CUT
    shadd16 r11, r8, r9
    shsub8 r12, r10, r5
    uhadd8 r7, r10, r10
    uhsub16 r6, r8, r9
    uhasx r5, r8, r10
    CUT
    ldr r5, =0x12345678
    smulbb r11, r8, r9
    smultt r12, r8, r9
    smlabt r7, r8, r9, r5
    smulwb r6, r5, r9
    smlawt r6, r5, r9, r6
    mrs r4, apsr
    CUT
    smuad r11, r8, r9
    smuadx r12, r8, r9
    smlad r7, r8, r9, r5
    smlsd r6, r8, r9, r5
    smusdx r4, r8, r10
    mrs r3, apsr
    CUT
    mov r11, r5
    mov r12, r9
    smlalbb r11, r12, r8, r9
    smlald r11, r12, r8, r10
    smlsldx r11, r12, r9, r10
    CUT
    smmul r11, r5, r9
    smmulr r12, r5, r9
    smmla r7, r5, r9, r8
    smmls r6, r5, r9, r8
    smmlsr r4, r5, r8, r9
    CUT
    usad8 r11, r10, r5
    usada8 r12, r10, r5, r9
    umaal r11, r12, r5, r9
    pkhbt r7, r8, r9, lsl #8
    pkhtb r6, r8, r9, asr #12
    pkhtb r4, r8, r9, asr #32
    CUT
    sxtab r11, r5, r9, ror #8
    uxtah r12, r5, r9
    sxtb16 r7, r9
    uxtab16 r6, r5, r10, ror #24
    ssat16 r4, #4, r8
    usat16 r3, #7, r9
    mrs r2, apsr
    CUT
    POOL
#endif

#if defined(__ARM_FP)
    /* ---- floating point ---- */
    ldr r0, =0x40490FDB
    ldr r1, =0xC0000000
    vmov s0, r0
    vmov s1, r1
    vmov.f32 s2, #1.5
    vmov.f32 s3, #-0.125
    vadd.f32 s4, s0, s1
    vsub.f32 s5, s0, s2
    vmul.f32 s6, s0, s3
    vdiv.f32 s7, s0, s1
    vneg.f32 s8, s0
    vabs.f32 s9, s1
    vsqrt.f32 s10, s0
    vmla.f32 s11, s0, s2
    vmls.f32 s12, s0, s2
    vfma.f32 s13, s0, s3
    vnmul.f32 s14, s0, s1
    vmov.f32 s15, s14
    CUT
    vcmp.f32 s0, s1
    vmrs APSR_nzcv, fpscr
    mrs r2, apsr
    vcmpe.f32 s1, s0
    vmrs APSR_nzcv, fpscr
    mrs r3, apsr
    vcmp.f32 s0, #0
    vmrs APSR_nzcv, fpscr
    mrs r4, apsr
    CUT
    vcvt.s32.f32 s16, s6
    vcvt.u32.f32 s17, s0
    vcvt.s32.f32 s18, s1
    vcvt.f32.s32 s19, s18
    vcvt.f32.u32 s20, s17
    vmov r5, s16
    vmov r6, r7, s18, s19
    vmov s21, s22, r6, r5
    CUT
    ldr r0, =buf
    vstr s0, [r0]
    vstr s1, [r0, #4]
    vldr s23, [r0]
    vldr s24, [r0, #4]
    vstmia r0, {s0-s3}
    vldmia r0!, {s25-s28}
    vpush {s4-s7}
    vpop {s29-s31}
    vpop {s28}
    vldr s27, flit
    CUT
#if (__ARM_FP & 8) && defined(SIM_ISA_DOUBLE)   /* Unicorn's M7 rejects these: not its oracle */
    vmov d8, r0, r1
    vmov r2, r3, d8
    vldr d9, [r0, #-16]
    vadd.f64 d10, d8, d9
    vmul.f64 d11, d9, d9
    vcvt.f64.f32 d12, s0
    vcvt.f32.f64 s26, d11
    vcmp.f64 d10, d11
    vmrs APSR_nzcv, fpscr
    mrs r4, apsr
    vstmdb r0!, {d8-d11}
    vldmia r0, {d12-d15}
    CUT
#endif
#endif

    /* SYS_EXIT */
    movs r0, #0x18
    ldr r1, =0x20026
    bkpt 0xab
    b .

    .thumb_func
sub1:
    adds r7, #1
    bx lr

    .align 2
lit:
    .word 0xCAFEF00D
flit:
    .word 0x3F800000
    .ltorg

    .bss
    .align 3
    .space 64
buf:
    .space 64
