/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * nvme.h - NVMe 1.4 data structures the host library uses. The opcodes, identifiers, status
 * field values (NVME_SC_*, as the controller reports them, DNR included) and field offsets
 * come from nvme_spec.h, generated from spec/nvme.py; BAR0 register offsets and fields from
 * nvme_regs.h, generated from spec/nvme_regmap.py. Both go to $(BUILD)/include/ssdlab/.
 * The structures below are checked against the generated offsets.
 */
#ifndef SSDLAB_NVME_H
#define SSDLAB_NVME_H

#include <assert.h>
#include <stddef.h>
#include <stdint.h>

#include "ssdlab/nvme_spec.h"

/* Submission queue entry (64 bytes). */
struct nvme_sqe {
    uint8_t  opc;
    uint8_t  flags;             /* FUSE 1:0, PSDT 7:6 (0: PRPs) */
    uint16_t cid;
    uint32_t nsid;
    uint32_t cdw2, cdw3;
    uint64_t mptr;
    uint64_t prp1, prp2;
    uint32_t cdw10, cdw11, cdw12, cdw13, cdw14, cdw15;
};
static_assert(sizeof(struct nvme_sqe) == NVME_SQE_BYTES, "SQE is 64 bytes");
static_assert(offsetof(struct nvme_sqe, nsid) == NVME_SQE_NSID_OFFSET &&
              offsetof(struct nvme_sqe, mptr) == NVME_SQE_MPTR_OFFSET &&
              offsetof(struct nvme_sqe, prp1) == NVME_SQE_PRP1_OFFSET &&
              offsetof(struct nvme_sqe, prp2) == NVME_SQE_PRP2_OFFSET &&
              offsetof(struct nvme_sqe, cdw10) == NVME_SQE_CDW10_OFFSET &&
              offsetof(struct nvme_sqe, cdw15) == NVME_SQE_CDW15_OFFSET, "SQE layout");

/* Completion queue entry (16 bytes). status: bit 0 phase tag, 15:1 status field. */
struct nvme_cqe {
    uint32_t dw0;
    uint32_t dw1;
    uint16_t sq_head;
    uint16_t sq_id;
    uint16_t cid;
    uint16_t status;
};
static_assert(sizeof(struct nvme_cqe) == NVME_CQE_BYTES, "CQE is 16 bytes");
static_assert(offsetof(struct nvme_cqe, sq_head) == NVME_CQE_SQHD_OFFSET &&
              offsetof(struct nvme_cqe, sq_id) == NVME_CQE_SQID_OFFSET &&
              offsetof(struct nvme_cqe, cid) == NVME_CQE_CID_OFFSET &&
              offsetof(struct nvme_cqe, status) == NVME_CQE_STATUS_OFFSET, "CQE layout");

/* Create I/O queue CDW11 bits. */
#define NVME_QUEUE_PHYS_CONTIG  (1u << 0)
#define NVME_CQ_IRQ_ENABLED     (1u << 1)

/* Identify Controller (4096 bytes): the fields the library reads, the rest reserved. */
struct nvme_id_ctrl {
    uint16_t vid, ssvid;
    char     sn[20];
    char     mn[40];
    char     fr[8];
    uint8_t  rab;
    uint8_t  ieee[3];
    uint8_t  cmic;
    uint8_t  mdts;              /* max transfer 2^mdts * CAP.MPSMIN pages; 0: no limit */
    uint16_t cntlid;
    uint32_t ver;
    uint32_t rtd3r;             /* 84: RTD3 resume latency, us */
    uint32_t rtd3e;             /* 88: RTD3 entry latency, us (bounds shutdown) */
    uint8_t  rsvd92[164];
    uint16_t oacs;              /* 256 */
    uint8_t  acl, aerl, frmw, lpa, elpe, npss;
    uint8_t  rsvd264[248];
    uint8_t  sqes;              /* 512 */
    uint8_t  cqes;
    uint16_t maxcmd;
    uint32_t nn;                /* 516 */
    uint16_t oncs;              /* 520 */
    uint16_t fuses;
    uint8_t  fna;
    uint8_t  vwc;               /* 525 */
    uint16_t awun, awupf;
    uint8_t  nvscc, nwpc;
    uint16_t acwu;
    uint16_t rsvd534;
    uint32_t sgls;              /* 536 */
    uint8_t  rsvd540[3556];
};
static_assert(sizeof(struct nvme_id_ctrl) == NVME_IDENTIFY_BYTES,
              "Identify Controller is 4096 bytes");
static_assert(offsetof(struct nvme_id_ctrl, mdts) == NVME_ID_CTRL_MDTS_OFFSET &&
              offsetof(struct nvme_id_ctrl, rtd3e) == NVME_ID_CTRL_RTD3E_OFFSET &&
              offsetof(struct nvme_id_ctrl, oacs) == NVME_ID_CTRL_OACS_OFFSET &&
              offsetof(struct nvme_id_ctrl, npss) == NVME_ID_CTRL_NPSS_OFFSET &&
              offsetof(struct nvme_id_ctrl, sqes) == NVME_ID_CTRL_SQES_OFFSET &&
              offsetof(struct nvme_id_ctrl, nn) == NVME_ID_CTRL_NN_OFFSET &&
              offsetof(struct nvme_id_ctrl, oncs) == NVME_ID_CTRL_ONCS_OFFSET &&
              offsetof(struct nvme_id_ctrl, vwc) == NVME_ID_CTRL_VWC_OFFSET &&
              offsetof(struct nvme_id_ctrl, acwu) == NVME_ID_CTRL_ACWU_OFFSET &&
              offsetof(struct nvme_id_ctrl, sgls) == NVME_ID_CTRL_SGLS_OFFSET,
              "Identify Controller layout");

struct nvme_lbaf {
    uint16_t ms;
    uint8_t  lbads;
    uint8_t  rp;
};

/* Identify Namespace (4096 bytes). */
struct nvme_id_ns {
    uint64_t nsze, ncap, nuse;
    uint8_t  nsfeat, nlbaf, flbas, mc, dpc, dps, nmic, rescap, fpi, dlfeat;
    uint16_t nawun, nawupf, nacwu, nabsn, nabo, nabspf, noiob;
    uint8_t  nvmcap[16];
    uint8_t  rsvd64[64];
    struct nvme_lbaf lbaf[16];  /* 128 */
    uint8_t  rsvd192[3904];
};
static_assert(sizeof(struct nvme_id_ns) == NVME_IDENTIFY_BYTES,
              "Identify Namespace is 4096 bytes");
static_assert(offsetof(struct nvme_id_ns, ncap) == NVME_ID_NS_NCAP_OFFSET &&
              offsetof(struct nvme_id_ns, flbas) == NVME_ID_NS_FLBAS_OFFSET &&
              offsetof(struct nvme_id_ns, dlfeat) == NVME_ID_NS_DLFEAT_OFFSET &&
              offsetof(struct nvme_id_ns, noiob) == NVME_ID_NS_NOIOB_OFFSET &&
              offsetof(struct nvme_id_ns, nvmcap) == NVME_ID_NS_NVMCAP_OFFSET &&
              offsetof(struct nvme_id_ns, lbaf[0].ms) == NVME_ID_NS_LBAF0_MS_OFFSET &&
              offsetof(struct nvme_id_ns, lbaf[0].lbads) == NVME_ID_NS_LBAF0_LBADS_OFFSET,
              "Identify Namespace layout");

/* SMART / Health Information log page (512 bytes). 128-bit counters as two 64-bit halves. */
struct nvme_smart_log {
    uint8_t  critical_warning;
    uint8_t  temperature[2];    /* kelvin */
    uint8_t  avail_spare, spare_thresh, percent_used, endu_grp_crit_warn;
    uint8_t  rsvd7[25];
    uint64_t data_units_read[2];    /* 32: units of 1000 512-byte blocks */
    uint64_t data_units_written[2];
    uint64_t host_reads[2];
    uint64_t host_writes[2];
    uint64_t ctrl_busy_time[2];
    uint64_t power_cycles[2];
    uint64_t power_on_hours[2];
    uint64_t unsafe_shutdowns[2];
    uint64_t media_errors[2];
    uint64_t num_err_log_entries[2];
    uint8_t  rsvd192[320];
};
static_assert(sizeof(struct nvme_smart_log) == NVME_SMART_LOG_BYTES, "SMART log is 512 bytes");
static_assert(offsetof(struct nvme_smart_log, temperature) ==
                  NVME_SMART_COMPOSITE_TEMPERATURE_OFFSET &&
              offsetof(struct nvme_smart_log, endu_grp_crit_warn) ==
                  NVME_SMART_ENDURANCE_GROUP_CRITICAL_WARNING_OFFSET &&
              offsetof(struct nvme_smart_log, data_units_read) ==
                  NVME_SMART_DATA_UNITS_READ_OFFSET &&
              offsetof(struct nvme_smart_log, num_err_log_entries) ==
                  NVME_SMART_NUM_ERR_LOG_ENTRIES_OFFSET, "SMART log layout");

/* Dataset Management range (16 bytes). */
struct nvme_dsm_range {
    uint32_t cattr;
    uint32_t nlb;               /* 1's based count */
    uint64_t slba;
};
static_assert(sizeof(struct nvme_dsm_range) == 16, "DSM range is 16 bytes");

#endif /* SSDLAB_NVME_H */
