// SPDX-License-Identifier: BSD-2-Clause
// prp.c - PRP1/PRP2 and PRP lists for a contiguous buffer (NVMe 1.4 section 4.3).
#include <errno.h>

#include "sl_priv.h"

int sl_prp_build(uint64_t bus, size_t len, uint32_t page, uint64_t *const *lists_va,
                 const uint64_t *lists_bus, unsigned n_lists, uint64_t *prp1, uint64_t *prp2)
{
    if (len == 0 || (bus & 3u) || page < 512 || (page & (page - 1)))
        return -EINVAL;
    uint64_t first = page - (bus & (page - 1));     /* bytes in the first page */
    *prp1 = bus;
    *prp2 = 0;
    if (len <= first)
        return 0;
    uint64_t addr = bus + first;                    /* page aligned from here on */
    uint64_t rem = len - first;
    if (rem <= page) {
        *prp2 = addr;
        return 0;
    }
    uint64_t entries = (rem + page - 1) / page;
    unsigned per_page = page / 8u;
    if (n_lists == 0)
        return -E2BIG;
    unsigned li = 0, idx = 0;
    *prp2 = lists_bus[0];
    for (uint64_t i = 0; i < entries; i++) {
        if (idx == per_page - 1 && entries - i > 1) {
            /* last slot of a full list page: chain to the next list page */
            if (li + 1 >= n_lists)
                return -E2BIG;
            lists_va[li][idx] = lists_bus[li + 1];
            li++;
            idx = 0;
        }
        lists_va[li][idx++] = addr;
        addr += page;
    }
    return (int)li + 1;
}

unsigned sl_prp_list_pages(size_t max_len, uint32_t page)
{
    if (max_len <= 4)
        return 0;
    /* worst case: the buffer starts 4 bytes before a page boundary */
    uint64_t rem = max_len - 4;
    uint64_t entries = (rem + page - 1) / page;
    if (entries <= 1)
        return 0;
    unsigned per_page = page / 8u, pages = 1;
    uint64_t cap = per_page;
    while (entries > cap) {
        pages++;
        cap += per_page - 1;
    }
    return pages;
}
