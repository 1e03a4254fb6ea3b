/* SPDX-License-Identifier: BSD-2-Clause */
/* dram_init.c - the board DDR under the NAND emulators (a card without NAND, soc/targets):
 * initialised and calibrated by LiteX's liblitedram before the flash back end starts.
 *
 * Built with the DRAM part only when the SoC build has LiteDRAM's DFII (the Makefile passes
 * FW_DRAM when the build generated sdram_phy.h; csr.h then defines CSR_SDRAM_BASE). Every
 * other build (the simulated drive, whose emulators sit on LiteDRAM's simulation model with
 * no DFII at the top, the ONFI daughter-card boards, the host tests) gets dram_init() = true
 * and nothing else.
 *
 * The sequence: liblitedram's sdram_init() (PHY reset, DDR3/DDR4 mode registers, write
 * levelling where the PHY can, read levelling: bitslip and delay scans), then
 * sdram_hw_test() with LiteDRAM's BIST generator and checker (random data written and read
 * back through the crossbar) over the region the emulators use. sdram_init()'s own memtest
 * runs on MAIN_RAM_BASE, which here is the firmware's block RAM, not the DDR: liblitedram is
 * built with SDRAM_TEST_DISABLE and the BIST is the test. liblitedram's leveling reports no
 * result, so a failed calibration shows as BIST errors: then dram_init() is false and the
 * flash back end is not started. */
#include "fw.h"

#ifdef FW_DRAM
#include <generated/csr.h>
#endif

#ifdef CSR_SDRAM_BASE
#include <stdarg.h>
#include <stdio.h>

#include <generated/soc.h>
#include <liblitedram/bist.h>
#include <liblitedram/sdram.h>

/* --- what liblitedram takes from LiteX's libc/libbase, on the firmware's console --- */

static void put_num(unsigned long long v, unsigned base, int width, char pad, bool upper)
{
    char buf[24];
    int n = 0;
    const char *digits = upper ? "0123456789ABCDEF" : "0123456789abcdef";
    do {
        buf[n++] = digits[v % base];
        v /= base;
    } while (v);
    for (; width > n; width--)
        hal_putc(pad);
    while (n)
        hal_putc(buf[--n]);
}

/* printf: d i u x X c s p %, flags 0 and -, width, l and ll (what liblitedram prints). */
int printf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    for (; *fmt; fmt++) {
        if (*fmt != '%') {
            hal_putc(*fmt);
            continue;
        }
        char pad = ' ';
        bool left = false;
        int width = 0, lng = 0;
        for (fmt++; *fmt == '0' || *fmt == '-'; fmt++) {
            if (*fmt == '0')
                pad = '0';
            else
                left = true;
        }
        for (; *fmt >= '0' && *fmt <= '9'; fmt++)
            width = width * 10 + (*fmt - '0');
        for (; *fmt == 'l'; fmt++)
            lng++;
        if (left)
            pad = ' ';
        unsigned long long u;
        switch (*fmt) {
        case 'd': case 'i': {
            long long s = lng > 1 ? va_arg(ap, long long) :
                          lng ? va_arg(ap, long) : va_arg(ap, int);
            if (s < 0) {
                hal_putc('-');
                width--;
                u = -(unsigned long long)s;
            } else {
                u = s;
            }
            put_num(u, 10, left ? 0 : width, pad, false);
            break;
        }
        case 'u': case 'x': case 'X': case 'p':
            u = *fmt == 'p' ? (uintptr_t)va_arg(ap, void *) :
                lng > 1 ? va_arg(ap, unsigned long long) :
                lng ? va_arg(ap, unsigned long) : va_arg(ap, unsigned);
            put_num(u, *fmt == 'u' ? 10 : 16, left ? 0 : width, pad, *fmt == 'X');
            break;
        case 'c':
            hal_putc((char)va_arg(ap, int));
            break;
        case 's': {
            const char *s = va_arg(ap, const char *);
            fw_puts(s ? s : "(null)");
            break;
        }
        case '%':
            hal_putc('%');
            break;
        case '\0':
            fmt--;
            break;
        default:
            hal_putc('%');
            hal_putc(*fmt);
            break;
        }
    }
    va_end(ap);
    return 0;
}

/* liblitedram's interactive BIST loop stops on a key: no console input in this firmware. */
int readchar_nonblock(void)
{
    return 1;
}

/* --- the board DDR --- */

#ifndef NAND_EMULATION_DRAM_BYTES
#error "the board SoC (soc/targets/board.py) exports NAND_EMULATION_DRAM_BYTES in soc.h"
#endif

#define DRAM_TEST_BURST (1u << 20)          /* BIST words a burst: one progress line each */

bool dram_init(void)
{
    fw_puts("dram: LiteDRAM initialisation and calibration (liblitedram)\n");
    if (!sdram_init()) {
        fw_puts("dram: sdram_init failed: flash back end not started\n");
        return false;
    }
    int errors = sdram_hw_test(0, NAND_EMULATION_DRAM_BYTES, DRAM_TEST_BURST);
    if (errors) {
        fw_puts("dram: BIST errors 0x");
        fw_put_hex((uint32_t)errors);
        fw_puts(" over the emulators' region: calibration failed, flash back end not "
                "started\n");
        return false;
    }
    fw_puts("dram: ready (BIST clean over 0x");
    fw_put_hex((uint32_t)NAND_EMULATION_DRAM_BYTES);
    fw_puts(" bytes)\n");
    return true;
}

#else /* no DFII: nothing to initialise */

bool dram_init(void)
{
    return true;
}

#endif
