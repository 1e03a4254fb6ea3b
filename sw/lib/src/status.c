// SPDX-License-Identifier: BSD-2-Clause
// status.c - NVMe status codes to names (NVMe 1.4 section 4.6.1.2).
#include <stdio.h>

#include "sl_priv.h"

struct sl_sc_name {
    uint8_t sct, sc;
    const char *name;
};

static const struct sl_sc_name names[] = {
    {0, 0x00, "Successful Completion"},
    {0, 0x01, "Invalid Command Opcode"},
    {0, 0x02, "Invalid Field in Command"},
    {0, 0x03, "Command ID Conflict"},
    {0, 0x04, "Data Transfer Error"},
    {0, 0x05, "Commands Aborted due to Power Loss Notification"},
    {0, 0x06, "Internal Error"},
    {0, 0x07, "Command Abort Requested"},
    {0, 0x08, "Command Aborted due to SQ Deletion"},
    {0, 0x09, "Command Aborted due to Failed Fused Command"},
    {0, 0x0a, "Command Aborted due to Missing Fused Command"},
    {0, 0x0b, "Invalid Namespace or Format"},
    {0, 0x0c, "Command Sequence Error"},
    {0, 0x0d, "Invalid SGL Segment Descriptor"},
    {0, 0x0e, "Invalid Number of SGL Descriptors"},
    {0, 0x0f, "Data SGL Length Invalid"},
    {0, 0x10, "Metadata SGL Length Invalid"},
    {0, 0x11, "SGL Descriptor Type Invalid"},
    {0, 0x12, "Invalid Use of Controller Memory Buffer"},
    {0, 0x13, "PRP Offset Invalid"},
    {0, 0x14, "Atomic Write Unit Exceeded"},
    {0, 0x15, "Operation Denied"},
    {0, 0x16, "SGL Offset Invalid"},
    {0, 0x18, "Host Identifier Inconsistent Format"},
    {0, 0x19, "Keep Alive Timer Expired"},
    {0, 0x1a, "Keep Alive Timeout Invalid"},
    {0, 0x1b, "Command Aborted due to Preempt and Abort"},
    {0, 0x1c, "Sanitize Failed"},
    {0, 0x1d, "Sanitize In Progress"},
    {0, 0x1e, "SGL Data Block Granularity Invalid"},
    {0, 0x1f, "Command Not Supported for Queue in CMB"},
    {0, 0x20, "Namespace is Write Protected"},
    {0, 0x21, "Command Interrupted"},
    {0, 0x22, "Transient Transport Error"},
    {0, 0x80, "LBA Out of Range"},
    {0, 0x81, "Capacity Exceeded"},
    {0, 0x82, "Namespace Not Ready"},
    {0, 0x83, "Reservation Conflict"},
    {0, 0x84, "Format In Progress"},
    {1, 0x00, "Completion Queue Invalid"},
    {1, 0x01, "Invalid Queue Identifier"},
    {1, 0x02, "Invalid Queue Size"},
    {1, 0x03, "Abort Command Limit Exceeded"},
    {1, 0x05, "Asynchronous Event Request Limit Exceeded"},
    {1, 0x06, "Invalid Firmware Slot"},
    {1, 0x07, "Invalid Firmware Image"},
    {1, 0x08, "Invalid Interrupt Vector"},
    {1, 0x09, "Invalid Log Page"},
    {1, 0x0a, "Invalid Format"},
    {1, 0x0b, "Firmware Activation Requires Conventional Reset"},
    {1, 0x0c, "Invalid Queue Deletion"},
    {1, 0x0d, "Feature Identifier Not Saveable"},
    {1, 0x0e, "Feature Not Changeable"},
    {1, 0x0f, "Feature Not Namespace Specific"},
    {1, 0x10, "Firmware Activation Requires NVM Subsystem Reset"},
    {1, 0x11, "Firmware Activation Requires Controller Level Reset"},
    {1, 0x12, "Firmware Activation Requires Maximum Time Violation"},
    {1, 0x13, "Firmware Activation Prohibited"},
    {1, 0x14, "Overlapping Range"},
    {1, 0x15, "Namespace Insufficient Capacity"},
    {1, 0x16, "Namespace Identifier Unavailable"},
    {1, 0x18, "Namespace Already Attached"},
    {1, 0x19, "Namespace Is Private"},
    {1, 0x1a, "Namespace Not Attached"},
    {1, 0x1b, "Thin Provisioning Not Supported"},
    {1, 0x1c, "Controller List Invalid"},
    {1, 0x1d, "Device Self-test In Progress"},
    {1, 0x1e, "Boot Partition Write Prohibited"},
    {1, 0x1f, "Invalid Controller Identifier"},
    {1, 0x20, "Invalid Secondary Controller State"},
    {1, 0x21, "Invalid Number of Controller Resources"},
    {1, 0x22, "Invalid Resource Identifier"},
    {1, 0x23, "Sanitize Prohibited While Persistent Memory Region is Enabled"},
    {1, 0x24, "ANA Group Identifier Invalid"},
    {1, 0x25, "ANA Attach Failed"},
    {1, 0x80, "Conflicting Attributes"},
    {1, 0x81, "Invalid Protection Information"},
    {1, 0x82, "Attempted Write to Read Only Range"},
    {2, 0x80, "Write Fault"},
    {2, 0x81, "Unrecovered Read Error"},
    {2, 0x82, "End-to-end Guard Check Error"},
    {2, 0x83, "End-to-end Application Tag Check Error"},
    {2, 0x84, "End-to-end Reference Tag Check Error"},
    {2, 0x85, "Compare Failure"},
    {2, 0x86, "Access Denied"},
    {2, 0x87, "Deallocated or Unwritten Logical Block"},
    {3, 0x00, "Internal Path Error"},
    {3, 0x01, "Asymmetric Access Persistent Loss"},
    {3, 0x02, "Asymmetric Access Inaccessible"},
    {3, 0x03, "Asymmetric Access Transition"},
    {3, 0x60, "Controller Pathing Error"},
    {3, 0x70, "Host Pathing Error"},
    {3, 0x71, "Command Aborted By Host"},
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
