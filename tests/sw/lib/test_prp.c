// SPDX-License-Identifier: BSD-2-Clause
// test_prp.c - PRP1/PRP2 and PRP lists: page boundaries, offsets, multi-page lists and their
// chaining, alignment errors, the list pages an MDTS needs.
#include <errno.h>
#include <stdlib.h>

#include "../../../sw/lib/src/sl_priv.h"
#include "tinytest.h"

#define P 4096u
static uint64_t lists[4][512];
static uint64_t *lva[4] = {lists[0], lists[1], lists[2], lists[3]};
static const uint64_t lbus[4] = {0xa0000, 0xb0000, 0xc0000, 0xd0000};

static int build(uint64_t bus, size_t len, unsigned n, uint64_t *p1, uint64_t *p2)
{
    memset(lists, 0xee, sizeof(lists));
    return sl_prp_build(bus, len, P, lva, lbus, n, p1, p2);
}

static void one_page(void)
{
    uint64_t p1, p2;
    CHECK_EQ(build(0x10000, P, 4, &p1, &p2), 0);
    CHECK_EQ(p1, 0x10000);
    CHECK_EQ(p2, 0);
    CHECK_EQ(build(0x10200, P - 0x200, 4, &p1, &p2), 0);   /* offset, ends at the boundary */
    CHECK_EQ(p2, 0);
    CHECK_EQ(build(0x10004, 4, 4, &p1, &p2), 0);
    CHECK_EQ(p1, 0x10004);
}

static void two_pages(void)
{
    uint64_t p1, p2;
    CHECK_EQ(build(0x10000, 2 * P, 4, &p1, &p2), 0);
    CHECK_EQ(p1, 0x10000);
    CHECK_EQ(p2, 0x11000);
    /* 8 bytes crossing a page boundary: two entries */
    CHECK_EQ(build(0x10ffc, 8, 4, &p1, &p2), 0);
    CHECK_EQ(p1, 0x10ffc);
    CHECK_EQ(p2, 0x11000);
    /* 4 KiB at an offset touches two pages */
    CHECK_EQ(build(0x10200, P, 4, &p1, &p2), 0);
    CHECK_EQ(p2, 0x11000);
}

static void list_three_pages(void)
{
    uint64_t p1, p2;
    CHECK_EQ(build(0x10000, 3 * P, 4, &p1, &p2), 1);
    CHECK_EQ(p1, 0x10000);
    CHECK_EQ(p2, lbus[0]);
    CHECK_EQ(lists[0][0], 0x11000);
    CHECK_EQ(lists[0][1], 0x12000);
    CHECK_EQ(lists[0][2], 0xeeeeeeeeeeeeeeeeull);   /* nothing written past the end */
    /* offset: 2 pages + 1 byte from 0x10800 touch 3 pages */
    CHECK_EQ(build(0x10800, 2 * P + 1 - 0x800 + 0x800, 4, &p1, &p2), 1);
    CHECK_EQ(lists[0][0], 0x11000);
    CHECK_EQ(lists[0][1], 0x12000);
}

static void list_full_page_no_chain(void)
{
    /* 513 pages: PRP1 + 512 entries fill exactly one list page, no chain */
    uint64_t p1, p2;
    CHECK_EQ(build(0x100000, 513 * (size_t)P, 4, &p1, &p2), 1);
    CHECK_EQ(lists[0][511], 0x100000 + 512ull * P);
    CHECK_EQ(lists[1][0], 0xeeeeeeeeeeeeeeeeull);
}

static void list_chain(void)
{
    /* 514 pages: 513 entries; list page 0 holds 511 and a pointer to list page 1 */
    uint64_t p1, p2;
    CHECK_EQ(build(0x100000, 514 * (size_t)P, 4, &p1, &p2), 2);
    CHECK_EQ(lists[0][510], 0x100000 + 511ull * P);
    CHECK_EQ(lists[0][511], lbus[1]);
    CHECK_EQ(lists[1][0], 0x100000 + 512ull * P);
    CHECK_EQ(lists[1][1], 0x100000 + 513ull * P);
    CHECK_EQ(lists[1][2], 0xeeeeeeeeeeeeeeeeull);
    /* three list pages */
    CHECK_EQ(build(0x100000, (1 + 511 + 511 + 2) * (size_t)P, 4, &p1, &p2), 3);
    CHECK_EQ(lists[1][511], lbus[2]);
    CHECK_EQ(lists[2][1], 0x100000 + 1024ull * P);
}

static void too_few_lists(void)
{
    uint64_t p1, p2;
    CHECK_EQ(build(0x100000, 514 * (size_t)P, 1, &p1, &p2), -E2BIG);
    CHECK_EQ(build(0x100000, 3 * (size_t)P, 0, &p1, &p2), -E2BIG);
}

static void bad_args(void)
{
    uint64_t p1, p2;
    CHECK_EQ(build(0x10002, 512, 4, &p1, &p2), -EINVAL);   /* not dword aligned */
    CHECK_EQ(build(0x10000, 0, 4, &p1, &p2), -EINVAL);
}

static void list_pages_for_mdts(void)
{
    CHECK_EQ(sl_prp_list_pages(4096, P), 0);        /* offset 4096-4: 2 pages, PRP2 */
    CHECK_EQ(sl_prp_list_pages(8192, P), 1);        /* can touch 3 pages */
    CHECK_EQ(sl_prp_list_pages(128 * 1024, P), 1);
    CHECK_EQ(sl_prp_list_pages(2u << 20, P), 1);    /* 512 entries after PRP1 */
    CHECK_EQ(sl_prp_list_pages((2u << 20) + P, P), 2);
    /* the computed count is enough for the worst offset */
    uint64_t p1, p2;
    size_t max = (2u << 20) + P;
    CHECK(build(0x100ffc, max, sl_prp_list_pages(max, P), &p1, &p2) > 0);
}

TT_MAIN(TT_CASE(one_page), TT_CASE(two_pages), TT_CASE(list_three_pages),
        TT_CASE(list_full_page_no_chain), TT_CASE(list_chain), TT_CASE(too_few_lists),
        TT_CASE(bad_args), TT_CASE(list_pages_for_mdts))
