/* SPDX-License-Identifier: BSD-2-Clause */
/* litedram_env/stdlib.h - liblitedram includes <stdlib.h> and uses nothing from it. */
#ifndef FW_LITEDRAM_STDLIB_H
#define FW_LITEDRAM_STDLIB_H
#include <stddef.h>
#endif
