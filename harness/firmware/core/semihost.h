/* semihost.h - ARM semihosting calls (BKPT 0xAB), understood by QEMU, pyOCD and the simulator. */
#ifndef CB_SEMIHOST_H
#define CB_SEMIHOST_H

#include <stdint.h>

#define SH_SYS_WRITE0 0x04
#define SH_SYS_EXIT 0x18
#define SH_ADP_STOPPED_APPLICATION_EXIT 0x20026
#define SH_ADP_STOPPED_RUNTIME_ERROR 0x20023

static inline uint32_t semihost_call(uint32_t op, const void *arg)
{
    register uint32_t r0 __asm__("r0") = op;
    register const void *r1 __asm__("r1") = arg;
    __asm__ volatile("bkpt 0xab" : "+r"(r0) : "r"(r1) : "memory");
    return r0;
}

#endif
