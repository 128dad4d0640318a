/* ra_iic.h - a polled master driver for the Renesas RA IIC (cryptobench's own, register level).
 * Registers and bits: the RA6M4 IIC0 block (ra6m4 SVD); the order of the accesses: the RIIC's master
 * transmit and receive sequences as Renesas's manuals give them and FSP's r_iic_master makes them. */
#ifndef CB_RA_IIC_H
#define CB_RA_IIC_H

#include <stddef.h>
#include <stdint.h>

#define RA_IIC0_BASE 0x4009F000u

/* the bit rate: IICphi = PCLKB / 2^cks, SCL = IICphi / ((brh + 1) + (brl + 1)) (rise and fall times aside) */
void ra_iic_open(uint32_t base, unsigned cks, unsigned brh, unsigned brl);
/* 0: every byte acknowledged; -1: the address or a byte was NACKed (a STOP was sent either way) */
int ra_iic_write(uint32_t base, uint8_t address7, const uint8_t *data, size_t n);
/* 0: n bytes read; -1: the address was NACKed */
int ra_iic_read(uint32_t base, uint8_t address7, uint8_t *data, size_t n);

#endif
