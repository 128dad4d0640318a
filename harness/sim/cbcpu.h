/* cbcpu.h - cryptobench's own Thumb executor for the cycle-approximate simulator (cbcpu.c).
 *
 * The executor interprets ARMv6-M, ARMv7-M, ARMv7E-M (DSP), the ARMv8-M Mainline subset gcc emits,
 * and the FPv4-SP/FPv5 instructions of hard-float builds. Flash and RAM are flat host arrays; any
 * other address goes to the mmio callbacks (Python). It drives cbsim.c's accounting: one
 * cbsim_account_block per basic block entered, cbsim_account_flash_read per data read from flash,
 * cbsim_account_dynamic before each divide or long multiply the core's model charges by operands.
 */
#ifndef CBCPU_H
#define CBCPU_H

#include <stddef.h>
#include <stdint.h>

struct cbsim;
typedef struct cbcpu cbcpu;

/* A read or write of `size` bytes at an address outside flash and RAM: 0 when handled (a read
 * fills *value), -1 when nothing is mapped there (the run stops with a problem). */
typedef int (*cbcpu_read_fn)(uint32_t addr, uint32_t size, uint32_t *value);
typedef int (*cbcpu_write_fn)(uint32_t addr, uint32_t size, uint32_t value);
/* BKPT #imm at the current pc (semihosting): 0 to go on after it, 1 to stop the run. */
typedef int (*cbcpu_bkpt_fn)(uint32_t imm);
/* The console UART's bytes (cbcpu_set_console), in the order written: a line's bytes up to and
 * with its newline, or as many as the buffer holds. */
typedef void (*cbcpu_console_fn)(const uint8_t *bytes, uint32_t n);

enum { CBCPU_ARMV6M = 0, CBCPU_ARMV7M = 1, CBCPU_ARMV7EM = 2, CBCPU_ARMV8MM = 3 };
enum { CBCPU_STOPPED = 0, CBCPU_LIMIT = 1, CBCPU_PROBLEM = 2, CBCPU_TIMEOUT = 3 };

/* Registers as cbcpu_reg/cbcpu_set_reg number them: r0-r15 are 0-15. */
enum { CBCPU_XPSR = 16, CBCPU_MSP = 17, CBCPU_PSP = 18, CBCPU_PRIMASK = 19, CBCPU_CONTROL = 20,
       CBCPU_FPSCR = 21, CBCPU_VTOR = 22, CBCPU_BASEPRI = 23, CBCPU_FAULTMASK = 24,
       CBCPU_EVENT = 25, CBCPU_S0 = 32 };   /* CBCPU_EVENT: the event register (0 or 1) */

#endif
