"""What a board's console UART (targets/boards.toml) shows the simulator's images: its status
register always reads "ready to send", so firmware that polls it before each byte never waits,
and the byte written to its data register is the console's.

  kind            status register (offset)            ready reads                 data register
  stm32-usart     USART_SR (0x00)                     TXE (bit 7), TC (bit 6)     USART_DR (0x04)
                  (RM0008 STM32F1 and RM0090 STM32F4, "Status register (USART_SR)")
  stm32f0-usart   USART_ISR (0x1C)                    TXE (bit 7), TC (bit 6)     USART_TDR (0x28)
                  (RM0360 STM32F030, "Interrupt and status register (USART_ISR)")
  nrf-uarte       EVENTS_ENDTX (0x120)                1 (the DMA transmit ended)  TXD.PTR/MAXCNT, TASKS_STARTTX
                  (nRF52840 Product Specification, UARTE registers)
  nrf-uart        EVENTS_TXDRDY (0x11C)               1 (a byte was sent)         TXD (0x51C)
                  (nRF51 Series Reference Manual, UART registers)
  cc26x2-uart     UART FR (0x18)                      0: TXFF (bit 5) and BUSY    UART DR (0x00)
                  (CC13x2/CC26x2 TRM SWCU185, "UART registers")   (bit 3) clear
  cmsdk-uart      STATE (0x04)                        0: TX buffer not full       DATA (0x00)
                  (ARM CMSDK, DDI 0479, "APB UART")
"""
from __future__ import annotations

DATA = {"stm32-usart": 0x04, "stm32f0-usart": 0x28, "cc26x2-uart": 0x00, "nrf-uart": 0x51C, "cmsdk-uart": 0x00}
# kind: (the status register's offset, what it reads as: ready to send)
STATUS = {"stm32-usart": (0x00, 0xC0), "stm32f0-usart": (0x1C, 0xC0), "nrf-uarte": (0x120, 1),
          "nrf-uart": (0x11C, 1), "cc26x2-uart": (0x18, 0), "cmsdk-uart": (0x04, 0)}


def status(kind: str, offset: int) -> int | None:
    """What the UART's status register at `offset` reads as (always ready to send); None for its
    other registers, which read back what was written."""
    at, value = STATUS.get(kind, (None, None))
    return value if offset == at else None


def of_board(board) -> tuple[str, int] | None:
    """(kind, base) of the board's console UART; None where the console is semihosting."""
    if board.console_uart:
        return board.console_uart["kind"], board.console_uart["base"]
    kind, _, where = board.console.partition(":")
    return (kind, int(where, 16)) if where else None
