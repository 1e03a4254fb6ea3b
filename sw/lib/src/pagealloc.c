// SPDX-License-Identifier: BSD-2-Clause
// pagealloc.c - first-fit allocator of contiguous 4 KiB pages of bus-address space.
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sl_priv.h"

int sl_pa_init(struct sl_pagealloc *pa, uint64_t first_page, uint64_t n_pages)
{
    if (first_page == 0) {          /* bus address 0 stays unused */
        first_page = 1;
        n_pages = n_pages ? n_pages - 1 : 0;
    }
    pa->first = first_page;
    pa->n_pages = n_pages;
    pa->used = calloc(n_pages ? n_pages : 1, 1);
    return pa->used ? 0 : -ENOMEM;
}

void sl_pa_fini(struct sl_pagealloc *pa)
{
    free(pa->used);
    pa->used = NULL;
    pa->n_pages = 0;
}

uint64_t sl_pa_alloc(struct sl_pagealloc *pa, uint64_t n)
{
    if (n == 0 || n > pa->n_pages)
        return 0;
    uint64_t run = 0;
    for (uint64_t i = 0; i < pa->n_pages; i++) {
        run = pa->used[i] ? 0 : run + 1;
        if (run == n) {
            uint64_t start = i + 1 - n;
            memset(pa->used + start, 1, n);
            return pa->first + start;
        }
    }
    return 0;
}

void sl_pa_free(struct sl_pagealloc *pa, uint64_t page, uint64_t n)
{
    if (page < pa->first || page - pa->first + n > pa->n_pages)
        return;
    memset(pa->used + (page - pa->first), 0, n);
}
