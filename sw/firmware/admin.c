/* SPDX-License-Identifier: BSD-2-Clause */
/* admin.c - the command dispatcher (admin set, and the I/O commands the fast path hands to
 * the firmware), completions with error logging, Identify, Abort, Format NVM. */
#include "ftl.h"

#define ACL 3                   /* Identify ACL, 0's based */

static inline uint64_t prp1_of(const struct hal_cmd *c)
{
    return c->dw[6] | (uint64_t)c->dw[7] << 32;
}

static inline uint64_t prp2_of(const struct hal_cmd *c)
{
    return c->dw[8] | (uint64_t)c->dw[9] << 32;
}

void admin_reset(void)
{
    queues_reset();
    features_reset();
    log_reset();
    hal_aggregation(0, 0);
    hal_abort_disarm();
}

void admin_complete(const struct hal_cmd *c, uint16_t status, uint32_t dw0)
{
    if (status && status != NVME_SC_ABORT_REQUESTED)
        log_error(c->sqid, (uint16_t)(c->dw[0] >> 16), status, c->dw[1], 0);
    hal_cpl_push(queue_cqid_of(c->sqid), c->sqid, c->sq_head, (uint16_t)(c->dw[0] >> 16),
                 status, dw0);
}

/* --- Identify -------------------------------------------------------------------------- */

static uint8_t page[NVME_IDENTIFY_BYTES];

static uint32_t log2u(uint32_t v)
{
    uint32_t n = 0;
    while ((1u << (n + 1)) <= v)
        n++;
    return n;
}

static void hex8(char *s, uint32_t v)
{
    for (int i = 0; i < 8; i++)
        s[i] = "0123456789abcdef"[(v >> (28 - 4 * i)) & 15];
    s[8] = 0;
}

const char *fw_revision(void)
{
    static char fr[9];
    hex8(fr, G.id.git_hash);
    return fr;
}

static void eui64(uint8_t *p)
{
    /* locally administered (no OUI of ours), unique per build hash and persona */
    uint32_t h = 2166136261u;
    for (const char *s = G.id.persona; *s; s++)
        h = (h ^ (uint8_t)*s) * 16777619u;
    put_le(p, 8, 0x02ull << 56 | (uint64_t)G.id.git_hash << 24 | (h & 0xFFFFFF));
}

/* Field offsets: NVME_ID_CTRL_* / NVME_ID_NS_* (nvme_spec.h, spec/nvme.py's tables). */
#define IDC(f) (page + NVME_ID_CTRL_##f##_OFFSET)
#define IDNS(f) (page + NVME_ID_NS_##f##_OFFSET)

#define PCI_VID 0x1D1D          /* the PCIe function's vendor ID (soc/ssdlab_soc.py NVME_PCIE) */

/* SUBNQN for a controller without a UUID (NVMe 1.4 section 7.9): "nqn.2014-08.org.nvmexpress:"
 * then VID and SSVID as 4 hex digits each, SN (20) and MN (40) as in their fields; UTF-8, NUL
 * padded. Required from NVMe 1.2.1 on (Linux says "missing or invalid SUBNQN field" without
 * it). Called after SN and MN are in the page. */
static void subnqn(uint8_t *p)
{
    static const char prefix[] = "nqn.2014-08.org.nvmexpress:";
    static const char hex[] = "0123456789abcdef";
    unsigned n = 0;
    for (const char *c = prefix; *c; c++)
        p[n++] = (uint8_t)*c;
    uint32_t ids = (uint32_t)PCI_VID << 16 | PCI_VID;            /* VID, SSVID */
    for (int i = 7; i >= 0; i--)
        p[n++] = (uint8_t)hex[ids >> (4 * i) & 0xF];
    for (unsigned i = 0; i < 20; i++)
        p[n++] = *(IDC(SN) + i);
    for (unsigned i = 0; i < 40; i++)
        p[n++] = *(IDC(MN) + i);
}

static void id_controller(void)
{
    put_le(IDC(VID), 2, PCI_VID);
    put_le(IDC(SSVID), 2, PCI_VID);
    put_str(IDC(SN), 20, "SSDLAB0001");
    put_str(IDC(MN), 40, "ssdlab NVMe controller");
    put_str(IDC(FR), 8, fw_revision());
    *IDC(MDTS) = (uint8_t)log2u(G.id.max_transfer / 4096);
    put_le(IDC(CNTLID), 2, 1);
    put_le(IDC(VER), 4, NVME_VERSION);         /* 1.4 */
    *IDC(CNTRLTYPE) = 1;                       /* I/O controller */
    put_le(IDC(OACS), 2, 0x0002);              /* Format NVM */
    *IDC(ACL) = ACL;
    *IDC(AERL) = 3;
    *IDC(FRMW) = 0x03;                         /* one slot, read only */
    *IDC(LPA) = 0x04;                          /* extended data (NUMDU, offset) */
    *IDC(ELPE) = 63;
    put_le(IDC(WCTEMP), 2, 343);
    put_le(IDC(CCTEMP), 2, 353);
    put_le(IDC(TNVMCAP), 8, (uint64_t)F.user_units * UNIT_BYTES);   /* low 8 bytes */
    *IDC(SQES) = 0x66;
    *IDC(CQES) = 0x44;
    put_le(IDC(NN), 4, 1);
    put_le(IDC(ONCS), 2, NVME_ONCS_DSM | NVME_ONCS_WRITE_ZEROES);
    *IDC(FNA) = 0x04;                          /* crypto erase supported */
    *IDC(VWC) = 1;                             /* present */
    *IDC(NVSCC) = 1;
    put_le(IDC(PSD0_MP), 2, 2500);             /* 25 W */
    subnqn(IDC(SUBNQN));
}

static void id_namespace(void)
{
    put_le(IDNS(NSZE), 8, F.ns_lbas);
    put_le(IDNS(NCAP), 8, F.ns_lbas);
    put_le(IDNS(NUSE), 8, F.ns_lbas);
    *IDNS(DLFEAT) = 0x09;                      /* reads zeroes; WZ deallocates */
    put_le(IDNS(NVMCAP), 8, F.ns_lbas << G.id.lbads);  /* low 8 bytes */
    eui64(IDNS(EUI64));
    *IDNS(LBAF0_LBADS) = (uint8_t)G.id.lbads;
}

static uint16_t identify_cmd(const struct hal_cmd *c)
{
    uint32_t cns = c->dw[10] & 0xFF, nsid = c->dw[1];
    memset(page, 0, sizeof(page));
    switch (cns) {
    case NVME_ID_CNS_NAMESPACE:
        if (nsid != 1)
            return NVME_SC_INVALID_NAMESPACE;
        id_namespace();
        break;
    case NVME_ID_CNS_CONTROLLER:
        id_controller();
        break;
    case NVME_ID_CNS_ACTIVE_NS_LIST:
        if (nsid >= 0xFFFFFFFEu)
            return NVME_SC_INVALID_NAMESPACE;
        if (nsid < 1)
            put_le(page, 4, 1);
        break;
    case NVME_ID_CNS_NS_DESCRIPTOR_LIST:
        if (nsid != 1)
            return NVME_SC_INVALID_NAMESPACE;
        page[0] = 1;                           /* NIDT: IEEE EUI-64 */
        page[1] = 8;                           /* NIDL */
        eui64(page + 4);
        break;
    default:
        return NVME_SC_INVALID_FIELD;
    }
    buf_write(G.xfer_addr, page, sizeof(page));
    return hal_xfer(0, prp1_of(c), prp2_of(c), sizeof(page), true);
}

uint16_t identify(const struct hal_cmd *c)
{
    return identify_cmd(c);
}

/* --- Abort: the front end's abort slot --------------------------------------------------- */

static uint32_t abort_cmd(const struct hal_cmd *c)
{
    uint16_t t_sqid = (uint16_t)c->dw[10], t_cid = (uint16_t)(c->dw[10] >> 16);
    bool aborted = false;
    if (t_sqid < 64 && (t_sqid == 0 || queue_cqid_of(t_sqid) != 0xFFFF)) {
        hal_abort_arm(t_sqid, t_cid);
        /* wait until the SQ has nothing unfetched (bounded: 1 ms, in case the fetch is held
         * up behind us), then let the last fetched entries pass the decoder */
        uint64_t t0 = hal_cycles(), lim = G.id.clk_hz / 1000 + 64;
        while ((hal_sq_pending() >> t_sqid & 1) && hal_cycles() - t0 < lim)
            ;
        t0 = hal_cycles();
        while (hal_cycles() - t0 < 32)
            ;
        aborted = hal_abort_hit();
        hal_abort_disarm();
    }
    return aborted ? 0 : 1;
}

/* --- Format NVM -------------------------------------------------------------------------- */

uint16_t admin_format(const struct hal_cmd *c)
{
    uint32_t v = c->dw[10], nsid = c->dw[1];
    if (nsid != 1 && nsid != NVME_NSID_ALL)
        return NVME_SC_INVALID_NAMESPACE;
    uint32_t lbaf = v & 0xF, mset = v >> 4 & 1, pi = v >> 5 & 7, ses = v >> 9 & 7;
    if (lbaf != 0 || mset || pi)
        return NVME_SC_INVALID_FORMAT;
    if (ses > 2)
        return NVME_SC_INVALID_FIELD;
    /* SES 0 and 1 both erase every block (deallocated data must read as zeroes anyway);
     * 2 (crypto erase) has no key to drop here: a user data erase is what it can do. */
    ftl_hw_read_stop();         /* Format rewrites the map under it */
    ftl_format(true);
    hal_ns_size(F.ns_lbas);
    ftl_hw_read_start();
    return 0;
}

/* The NAND emulator's faults (NVME_FAULT_NAND_*, spec/nvme.py Fault): CDW13 the target
 * (channel 7:0, way 15:8, LUN 23:16), CDW14 the block of the LUN (plane in its low bits),
 * CDW15 the P/E count or limit. A build without the emulator (NAND chips or die models), or
 * an argument out of range: Invalid Field, and nothing changes. The FTL learns of it as of a
 * real die's fault: from the FAIL of the next program or erase. */
static uint16_t fault_nand(const struct hal_cmd *c)
{
    uint32_t pe_max = hal_emu_pe_max(), fault = c->dw[10];
    uint32_t t = c->dw[13], blk = c->dw[14], v = c->dw[15];
    uint32_t ch = t & 0xFF, way = t >> 8 & 0xFF, lun = t >> 16 & 0xFF;
    uint32_t luns = G.id.luns ? G.id.luns : 1;
    if (!pe_max)
        return NVME_SC_INVALID_FIELD;
    if (fault == NVME_FAULT_NAND_PE_LIMIT) {
        if (v > pe_max)
            return NVME_SC_INVALID_FIELD;
        hal_emu_pe_limit(v);
        return 0;
    }
    if (t >> 24 || ch >= G.id.n_channels || way >= G.id.n_ways || lun >= luns ||
        blk >= G.id.blocks_per_plane * G.id.planes || (fault == NVME_FAULT_NAND_PE && v > pe_max))
        return NVME_SC_INVALID_FIELD;
    bool ok = fault == NVME_FAULT_NAND_BAD_BLOCK ? hal_emu_bad_block(ch, way, lun, blk)
                                                 : hal_emu_set_pe(ch, way, lun, blk, v);
    return ok ? 0 : NVME_SC_INVALID_FIELD;
}

/* ssdlab's fault injection (vendor specific C1h): the fault in CDW10, armed by CDW12. A
 * panic never returns: the host sees CSTS.CFS and resets the controller. A hang never
 * returns either: a loop that never waits, until the watchdog (its period CDW13 cycles if
 * not 0) resets the CPU. */
static uint16_t admin_fault(const struct hal_cmd *c)
{
    if (c->dw[12] != NVME_FAULT_ARM)
        return NVME_SC_INVALID_FIELD;
    if (c->dw[10] == NVME_FAULT_NAND_BAD_BLOCK || c->dw[10] == NVME_FAULT_NAND_PE ||
        c->dw[10] == NVME_FAULT_NAND_PE_LIMIT)
        return fault_nand(c);
    if (c->dw[10] == NVME_FAULT_FIRMWARE_PANIC)
        fw_panic("injected by the host (admin C1h)");
#ifndef FW_HOST
    if (c->dw[10] == NVME_FAULT_FIRMWARE_HANG) {
        fw_puts("hang injected by the host (admin C1h): looping without a wait\n");
        if (c->dw[13])
            hal_watchdog_setup(c->dw[13]);
        for (;;)
            (void)hal_cycles();
    }
#endif
    return NVME_SC_INVALID_FIELD;
}

/* --- dispatch ----------------------------------------------------------------------------- */

void admin_dispatch(const struct hal_cmd *c)
{
    uint8_t opc = (uint8_t)c->dw[0];
    uint16_t st = NVME_SC_INVALID_OPCODE;
    uint32_t dw0 = 0;
    /* FUSE (9:8) or PSDT (15:14) set: no fused operations (FUSES 0), PRPs only (SGLS 0):
     * an unsupported value in a defined field (NVMe 1.4 figure 126). The front end answers
     * the I/O commands it executes itself the same way. */
    if (c->dw[0] & (3u << 8 | 3u << 14)) {
        admin_complete(c, NVME_SC_INVALID_FIELD, 0);
        return;
    }
    if (c->sqid != 0) {
        switch (opc) {
        case NVME_CMD_WRITE_ZEROES: st = io_write_zeroes(c); break;
        case NVME_CMD_DATASET_MANAGEMENT: st = io_dsm(c); break;
        default: break;
        }
        admin_complete(c, st, 0);
        return;
    }
    if (queues_admin(c))
        return;
    switch (opc) {
    case NVME_ADMIN_GET_LOG_PAGE: st = log_get_page(c); break;
    case NVME_ADMIN_IDENTIFY: st = identify(c); break;
    case NVME_ADMIN_ABORT: st = NVME_SC_SUCCESS; dw0 = abort_cmd(c); break;
    case NVME_ADMIN_SET_FEATURES: st = features_set(c, &dw0); break;
    case NVME_ADMIN_GET_FEATURES: st = features_get(c, &dw0); break;
    case NVME_ADMIN_ASYNC_EVENT_REQUEST:
        st = log_aer_request(c);
        if (st == AER_HELD)
            return;
        break;
    case NVME_ADMIN_KEEP_ALIVE: st = NVME_SC_SUCCESS; break;   /* KAS 0: no timer to reset */
    case NVME_ADMIN_FORMAT_NVM: st = admin_format(c); break;
    case NVME_ADMIN_SSDLAB_FAULT: st = admin_fault(c); break;
    default: break;
    }
    admin_complete(c, st, dw0);
}
