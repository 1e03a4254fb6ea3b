// SPDX-License-Identifier: BSD-2-Clause
// test_status.c - NVMe status names and formatting; test-pattern determinism.
#include "../../../sw/lib/src/sl_priv.h"
#include "tinytest.h"

static void names(void)
{
    char b[128];
    CHECK_STR(sl_status_str(NVME_STATUS(0, 0x80), b, sizeof(b)),
              "LBA Out of Range (SCT 0 SC 80h)");
    CHECK_STR(sl_status_str(NVME_STATUS(0, 0x0b) | NVME_STATUS_DNR, b, sizeof(b)),
              "Invalid Namespace or Format (SCT 0 SC 0Bh) DNR");
    CHECK_STR(sl_status_str(NVME_STATUS(1, 0x01), b, sizeof(b)),
              "Invalid Queue Identifier (SCT 1 SC 01h)");
    CHECK_STR(sl_status_str(NVME_STATUS(2, 0x81), b, sizeof(b)),
              "Unrecovered Read Error (SCT 2 SC 81h)");
    CHECK_STR(sl_status_str(NVME_STATUS(0, 0x13), b, sizeof(b)), "PRP Offset Invalid");
    CHECK_STR(sl_status_str(NVME_STATUS(1, 0x0a), b, sizeof(b)), "Invalid Format");
    CHECK_STR(sl_status_str(NVME_STATUS(0, 0x7f), b, sizeof(b)), "Unknown (SCT 0 SC 7Fh)");
    CHECK_STR(sl_status_str(NVME_STATUS(7, 0x01), b, sizeof(b)), "Vendor Specific (SCT 7");
    CHECK_STR(sl_status_name(0), "Successful Completion");
    /* SCT and SC are not confused: SC 80h in SCT 2 is Write Fault */
    CHECK_STR(sl_status_name(NVME_STATUS(2, 0x80)), "Write Fault");
    /* truncation is safe */
    char small[8];
    sl_status_str(NVME_STATUS(0, 0x80), small, sizeof(small));
    CHECK_EQ(strlen(small), 7);
}

static void pattern(void)
{
    uint8_t a[4096], b[4096];
    sl_pattern_fill(7, 100, a, sizeof(a));
    sl_pattern_fill(7, 100, b, sizeof(b));
    CHECK(!memcmp(a, b, sizeof(a)));
    CHECK_EQ(sl_pattern_check(7, 100, a, sizeof(a)), (unsigned long long)-1);
    sl_pattern_fill(7, 101, b, sizeof(b));
    CHECK(memcmp(a, b, sizeof(a)));             /* per-LBA */
    sl_pattern_fill(8, 100, b, sizeof(b));
    CHECK(memcmp(a, b, sizeof(a)));             /* per-seed */
    a[1234] ^= 1;
    CHECK_EQ(sl_pattern_check(7, 100, a, sizeof(a)), 1234);
    /* odd lengths */
    uint8_t c[13];
    sl_pattern_fill(7, 100, c, sizeof(c));
    a[1234] ^= 1;
    CHECK(!memcmp(a, c, sizeof(c)));
}

TT_MAIN(TT_CASE(names), TT_CASE(pattern))
