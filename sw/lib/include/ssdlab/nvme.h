/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * nvme.h - NVMe 1.4 data structures, opcodes and status codes the host library uses.
 * BAR0 register offsets and fields are not here: they come from nvme_regs.h, generated from
 * the one register description (spec/nvme_regmap.py) into $(BUILD)/include/ssdlab/.
 */
#ifndef SSDLAB_NVME_H
#define SSDLAB_NVME_H

#include <assert.h>
#include <stdint.h>

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
static_assert(sizeof(struct nvme_sqe) == 64, "SQE is 64 bytes");

/* Completion queue entry (16 bytes). status: bit 0 phase tag, 15:1 status field. */
struct nvme_cqe {
    uint32_t dw0;
    uint32_t dw1;
    uint16_t sq_head;
    uint16_t sq_id;
    uint16_t cid;
    uint16_t status;
};
static_assert(sizeof(struct nvme_cqe) == 16, "CQE is 16 bytes");

/* The status field (CQE DW3 31:17) as the library passes it around: SC 7:0, SCT 10:8,
 * CRD 12:11, M 13, DNR 14. 0 is success. */
#define NVME_STATUS_SC(s)       ((s) & 0xffu)
#define NVME_STATUS_SCT(s)      (((s) >> 8) & 0x7u)
#define NVME_STATUS_CRD(s)      (((s) >> 11) & 0x3u)
#define NVME_STATUS_MORE        (1u << 13)
#define NVME_STATUS_DNR         (1u << 14)
#define NVME_STATUS(sct, sc)    ((uint16_t)(((sct) << 8) | (sc)))

enum nvme_sct {
    NVME_SCT_GENERIC = 0, NVME_SCT_CMD_SPECIFIC = 1, NVME_SCT_MEDIA = 2, NVME_SCT_PATH = 3,
    NVME_SCT_VENDOR = 7,
};

/* Generic command status (SCT 0) the library names itself (see status.c for the table). */
enum nvme_sc_generic {
    NVME_SC_SUCCESS = 0x00, NVME_SC_INVALID_OPCODE = 0x01, NVME_SC_INVALID_FIELD = 0x02,
    NVME_SC_CMDID_CONFLICT = 0x03, NVME_SC_DATA_XFER_ERROR = 0x04, NVME_SC_POWER_LOSS = 0x05,
    NVME_SC_INTERNAL = 0x06, NVME_SC_ABORT_REQ = 0x07, NVME_SC_ABORT_QUEUE = 0x08,
    NVME_SC_INVALID_NS = 0x0b, NVME_SC_INVALID_PRP_OFFSET = 0x13,
    NVME_SC_LBA_RANGE = 0x80, NVME_SC_CAP_EXCEEDED = 0x81, NVME_SC_NS_NOT_READY = 0x82,
};

/* Admin opcodes. */
enum nvme_admin_opc {
    NVME_ADMIN_DELETE_SQ = 0x00, NVME_ADMIN_CREATE_SQ = 0x01, NVME_ADMIN_GET_LOG_PAGE = 0x02,
    NVME_ADMIN_DELETE_CQ = 0x04, NVME_ADMIN_CREATE_CQ = 0x05, NVME_ADMIN_IDENTIFY = 0x06,
    NVME_ADMIN_ABORT = 0x08, NVME_ADMIN_SET_FEATURES = 0x09, NVME_ADMIN_GET_FEATURES = 0x0a,
    NVME_ADMIN_ASYNC_EVENT = 0x0c, NVME_ADMIN_FORMAT_NVM = 0x80,
};

/* NVM command set opcodes. */
enum nvme_io_opc {
    NVME_CMD_FLUSH = 0x00, NVME_CMD_WRITE = 0x01, NVME_CMD_READ = 0x02,
    NVME_CMD_COMPARE = 0x05, NVME_CMD_WRITE_ZEROES = 0x08, NVME_CMD_DSM = 0x09,
};

/* Identify CNS values, feature ids, log page ids. */
enum { NVME_ID_CNS_NS = 0x00, NVME_ID_CNS_CTRL = 0x01, NVME_ID_CNS_NS_ACTIVE_LIST = 0x02 };
enum {
    NVME_FEAT_ARBITRATION = 0x01, NVME_FEAT_VOLATILE_WC = 0x06, NVME_FEAT_NUM_QUEUES = 0x07,
    NVME_FEAT_IRQ_COALESCE = 0x08,
};
enum { NVME_LOG_ERROR = 0x01, NVME_LOG_SMART = 0x02, NVME_LOG_FW_SLOT = 0x03 };

/* Create I/O queue CDW11 bits. */
#define NVME_QUEUE_PHYS_CONTIG  (1u << 0)
#define NVME_CQ_IRQ_ENABLED     (1u << 1)
/* Dataset Management CDW11: deallocate. */
#define NVME_DSMGMT_AD          (1u << 2)

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
static_assert(sizeof(struct nvme_id_ctrl) == 4096, "Identify Controller is 4096 bytes");

/* ONCS bits. */
#define NVME_ONCS_COMPARE       (1u << 0)
#define NVME_ONCS_DSM           (1u << 2)
#define NVME_ONCS_WRITE_ZEROES  (1u << 3)

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
static_assert(sizeof(struct nvme_id_ns) == 4096, "Identify Namespace is 4096 bytes");

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
static_assert(sizeof(struct nvme_smart_log) == 512, "SMART log is 512 bytes");

/* Dataset Management range (16 bytes). */
struct nvme_dsm_range {
    uint32_t cattr;
    uint32_t nlb;               /* 1's based count */
    uint64_t slba;
};
static_assert(sizeof(struct nvme_dsm_range) == 16, "DSM range is 16 bytes");

#endif /* SSDLAB_NVME_H */
