/* SPDX-License-Identifier: BSD-2-Clause */
/* litedram_env/inttypes.h - the PRI* macros liblitedram prints with (rv32: uint32_t is
 * unsigned long, uint64_t unsigned long long); dram_init.c's printf takes l and ll. */
#ifndef FW_LITEDRAM_INTTYPES_H
#define FW_LITEDRAM_INTTYPES_H
#include <stdint.h>
#define PRIu32 "lu"
#define PRIx32 "lx"
#define PRId32 "ld"
#define PRIu64 "llu"
#define PRIx64 "llx"
#define PRId64 "lld"
#endif
