/* SPDX-License-Identifier: BSD-2-Clause */
/* litedram_env/uart.h - liblitedram's bist.c includes <uart.h>; the console is the
 * firmware's (hal_putc). */
#ifndef FW_LITEDRAM_UART_H
#define FW_LITEDRAM_UART_H
#endif
