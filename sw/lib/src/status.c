// SPDX-License-Identifier: BSD-2-Clause
// status.c - NVMe status codes to names (NVMe 1.4 section 4.6.1.2).
#include <stdio.h>

#include "sl_priv.h"

struct sl_sc_name {
    uint8_t sct, sc;
    const char *name;
};

// The names spec/nvme.py gives (NVME_STATUS_NAMES of the generated nvme_spec.h).
static const struct sl_sc_name names[] = {
#define SL_SC_NAME(sct, sc, name) {sct, sc, name},
    NVME_STATUS_NAMES(SL_SC_NAME)
#undef SL_SC_NAME
};

const char *sl_status_name(uint16_t status)
{
    unsigned sct = NVME_STATUS_SCT(status), sc = NVME_STATUS_SC(status);
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (names[i].sct == sct && names[i].sc == sc)
            return names[i].name;
    if (sct == NVME_SCT_VENDOR)
        return "Vendor Specific";
    return "Unknown";
}

char *sl_status_str(uint16_t status, char *buf, size_t len)
{
    if (len == 0)
        return buf;
    snprintf(buf, len, "%s (SCT %u SC %02Xh)%s%s", sl_status_name(status),
             NVME_STATUS_SCT(status), NVME_STATUS_SC(status),
             (status & NVME_STATUS_MORE) ? " More" : "",
             (status & NVME_STATUS_DNR) ? " DNR" : "");
    return buf;
}
