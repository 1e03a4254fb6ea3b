/* SPDX-License-Identifier: BSD-2-Clause */
/* litedram_env/stdio.h - what LiteX's liblitedram takes from <stdio.h> in the board firmware
 * (sw/firmware/dram_init.c, which provides printf on the firmware's console). The firmware
 * has no C library; this directory is on the include path of the DRAM build only. */
#ifndef FW_LITEDRAM_STDIO_H
#define FW_LITEDRAM_STDIO_H
#include <inttypes.h>
#include <stddef.h>
int printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
#endif
