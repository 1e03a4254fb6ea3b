/* SPDX-License-Identifier: BSD-2-Clause */
/* litedram_env/console.h - liblitedram's interactive BIST loop (sdram_bist, which the firmware
 * does not call) stops on a key; dram_init.c answers "key pressed": no console input here. */
#ifndef FW_LITEDRAM_CONSOLE_H
#define FW_LITEDRAM_CONSOLE_H
int readchar_nonblock(void);
#endif
