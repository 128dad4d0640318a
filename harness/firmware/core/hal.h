/* hal.h - the thin per-board layer (pqm4 style): console, cycle counter, exit. The console is
 * chosen per board at build time (boards.toml `console`; the FW_CONSOLE_* macros in hal_cortexm.c):
 * semihosting, or a UART driven at register level (CMSDK, nRF UART/UARTE, STM32 USART, CC26x2 UART0). */
#ifndef CB_HAL_H
#define CB_HAL_H

#include <stdint.h>

void hal_init(void);
void hal_puts(const char *s);          /* one protocol line, '\n' included by the caller; a UART
                                          console has sent it all when this returns */
uint32_t hal_cycles(void);             /* free-running core cycle counter (wraps) */
const char *hal_counter_name(void);    /* "dwt", "systick" or "none" */
void hal_exit(int code);               /* semihosting exit where available, else park */
void hal_marker(int high);             /* the power analyzer's marker GPIO (no-op without one) */

#endif
