/* SPDX-License-Identifier: BSD-2-Clause */
/* litedram_env/time.h - liblitedram's bist.c includes <time.h> and uses nothing from it. */
#ifndef FW_LITEDRAM_TIME_H
#define FW_LITEDRAM_TIME_H
#endif
