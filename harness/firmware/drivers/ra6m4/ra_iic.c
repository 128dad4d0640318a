/* ra_iic.c - a polled master driver for the Renesas RA IIC, cryptobench's own code (ra_iic.h).
 * No interrupts: the driver polls ICSR2, in the order of the RIIC master sequences (the RX/RA
 * manuals' "Master Transmit Operation" / "Master Receive Operation" flow charts, as FSP's
 * r_iic_master drives them from its interrupts): START, the address, the bytes on TDRE, TEND, STOP;
 * receiving, the dummy read after the address, WAIT before the second-last byte and a NACK (ACKBT)
 * for the last, STOP, the last read. */
#include "ra_iic.h"

#define R8(base, off) (*(volatile uint8_t *)((base) + (off)))
#define ICCR1 0x00
#define ICCR2 0x01
#define ICMR1 0x02
#define ICMR3 0x04
#define ICFER 0x05
#define ICIER 0x07
#define ICSR2 0x09
#define ICBRL 0x10
#define ICBRH 0x11
#define ICDRT 0x12
#define ICDRR 0x13

#define ICE 0x80u
#define IICRST 0x40u
#define BBSY 0x80u
#define SP 0x08u
#define ST 0x02u
#define WAIT 0x40u
#define ACKWP 0x10u
#define ACKBT 0x08u
#define TDRE 0x80u
#define TEND 0x40u
#define RDRF 0x20u
#define NACKF 0x10u
#define STOP 0x08u

void ra_iic_open(uint32_t base, unsigned cks, unsigned brh, unsigned brl)
{
    R8(base, ICCR1) = IICRST;                   /* internal reset, the interface off */
    R8(base, ICCR1) = IICRST | ICE;             /* the registers set up in reset (the manuals' "Initial Settings") */
    R8(base, ICMR1) = (uint8_t)((cks & 7u) << 4);
    R8(base, ICBRH) = (uint8_t)(0xE0u | (brh & 0x1Fu));
    R8(base, ICBRL) = (uint8_t)(0xE0u | (brl & 0x1Fu));
    R8(base, ICFER) = 0x77u;                    /* FSP's value: NACK suspension, timeouts, SCL sync, filter */
    R8(base, ICIER) = 0x00u;                    /* polled */
    R8(base, ICCR1) = ICE;                      /* out of reset */
}

static void stop(uint32_t base)
{
    R8(base, ICCR2) = SP;
    while (!(R8(base, ICSR2) & STOP))
        ;
    R8(base, ICSR2) = (uint8_t)~(STOP | NACKF);   /* the flags are cleared by writing 0 */
}

static void start(uint32_t base, uint8_t address_byte)
{
    while (R8(base, ICCR2) & BBSY)
        ;
    R8(base, ICCR2) = ST;
    while (!(R8(base, ICSR2) & TDRE))
        ;
    R8(base, ICDRT) = address_byte;
}

int ra_iic_write(uint32_t base, uint8_t address7, const uint8_t *data, size_t n)
{
    start(base, (uint8_t)(address7 << 1));
    for (size_t i = 0; i < n; i++) {
        uint8_t sr;
        while (!((sr = R8(base, ICSR2)) & (TDRE | NACKF)))
            ;
        if (sr & NACKF)
            break;
        R8(base, ICDRT) = data[i];
    }
    uint8_t sr;
    while (!((sr = R8(base, ICSR2)) & (TEND | NACKF)))
        ;
    stop(base);
    return (sr & NACKF) ? -1 : 0;
}

int ra_iic_read(uint32_t base, uint8_t address7, uint8_t *data, size_t n)
{
    uint8_t sr;
    start(base, (uint8_t)(address7 << 1 | 1u));
    while (!((sr = R8(base, ICSR2)) & (RDRF | NACKF)))
        ;
    if ((sr & NACKF) || n == 0) {
        if (!(sr & NACKF))
            (void)R8(base, ICDRR);
        stop(base);
        return (sr & NACKF) ? -1 : 0;
    }
    if (n == 1)
        R8(base, ICMR3) = ACKWP | ACKBT;        /* a NACK after the only byte */
    (void)R8(base, ICDRR);                      /* the dummy read starts the reception */
    for (size_t i = 0; i < n; i++) {
        size_t left = n - i;
        while (!(R8(base, ICSR2) & RDRF))
            ;
        if (left == 3)
            R8(base, ICMR3) = WAIT;             /* SCL held after the second-last byte */
        if (left == 2)
            R8(base, ICMR3) = WAIT | ACKWP | ACKBT;   /* a NACK after the last */
        if (left == 1) {
            R8(base, ICCR2) = SP;
            data[i] = R8(base, ICDRR);
            R8(base, ICMR3) = ACKWP;            /* WAIT and ACKBT back to 0 */
            while (!(R8(base, ICSR2) & STOP))
                ;
            R8(base, ICSR2) = (uint8_t)~(STOP | NACKF);
            break;
        }
        data[i] = R8(base, ICDRR);
    }
    return 0;
}
