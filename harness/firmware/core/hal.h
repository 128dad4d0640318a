/* hal.h - the thin per-board layer (pqm4 style): console, cycle counter, exit. */
#ifndef CB_HAL_H
#define CB_HAL_H

#include <stdint.h>

void hal_init(void);
void hal_puts(const char *s);          /* one protocol line, '\n' included by the caller */
uint32_t hal_cycles(void);             /* free-running core cycle counter (wraps) */
const char *hal_counter_name(void);    /* "dwt", "systick" or "none" */
void hal_exit(int code);
void hal_marker(int high);             /* the power analyzer's marker GPIO (no-op without one) */               /* semihosting exit where available, else park */

#endif
