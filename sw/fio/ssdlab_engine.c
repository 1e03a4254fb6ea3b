/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ssdlab_engine.c - fio ioengine "ssdlab": fio's I/O on an NVMe controller through libssdlab,
 * the simulated drive (sim transport) or a card bound to vfio-pci (vfio transport).
 *
 * Built against the configured source tree of the fio that loads it (setup/fio.sh), as an
 * external engine: ioengine=external:<path>/ssdlab-engine.so (sw/fio/ssdlab-fio passes it).
 *
 *   setup      the namespace's size, from a short-lived controller (the pattern of fio's nbd
 *              engine: setup runs in fio's main process, before the job's process exists)
 *   init       the controller the jobs fio starts together share (one bring-up, one queue
 *              pair per job: qid= + the job's index among numjobs), polled or interrupts;
 *              the job joins the lockstep share (sw/lib share.h) and, on the sim transport,
 *              its thread's clock becomes simulated time (ssdlab_clock.c)
 *   iomem      fio's I/O buffers are one DMA allocation, so PRPs point at io_u buffers
 *   queue      Read / Write / Flush / Dataset Management (trim) placed on the SQ
 *   commit     one SQ tail doorbell for everything queued since the last one
 *   getevents  completions reaped from the CQ; waits on the drive (events, in simulated time
 *              on sim) until `min` arrived
 *   cleanup    the job leaves; the last one deletes the queues and disables the controller
 *
 * Jobs that fio starts together on one drive (numjobs > 1, or sections without stonewall)
 * run as threads of one fio process: setup (in fio's main process, before any job starts)
 * counts them and sets thread=1, since the simulated drive serves one connection at a time.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "fio.h"
#include "optgroup.h"

#include "ssdlab/driver.h"
#include "ssdlab/share.h"
#include "ssdlab_clock.h"

#define SSDLAB_NSID 1

struct ssdlab_options {
    void *pad;                  /* fio: off1 of an option must not be 0 */
    char *sim;                  /* socket of the simulated drive */
    char *vfio;                 /* PCI address of a card bound to vfio-pci */
    unsigned int irq;           /* 1: interrupts; 0: poll the CQ phase tag */
    unsigned int queues;        /* I/O queue pairs created */
    unsigned int qid;           /* the queue this job submits on */
    unsigned long long timeout_ms;  /* per-I/O timeout (transport time) */
    unsigned int shutdown;      /* 1: shut the controller down at the end of the job */
};

static struct fio_option options[] = {
    {
        .name     = "sim",
        .lname    = "ssdlab simulated drive socket",
        .type     = FIO_OPT_STR_STORE,
        .off1     = offsetof(struct ssdlab_options, sim),
        .help     = "Unix socket of the simulated drive (default: $SSDLAB_SIM_SOCKET)",
        .category = FIO_OPT_C_ENGINE,
        .group    = FIO_OPT_G_INVALID,
    },
    {
        .name     = "vfio",
        .lname    = "ssdlab VFIO PCI address",
        .type     = FIO_OPT_STR_STORE,
        .off1     = offsetof(struct ssdlab_options, vfio),
        .help     = "PCI address of a card bound to vfio-pci, e.g. 0000:01:00.0",
        .category = FIO_OPT_C_ENGINE,
        .group    = FIO_OPT_G_INVALID,
    },
    {
        .name     = "irq",
        .lname    = "ssdlab interrupts",
        .type     = FIO_OPT_BOOL,
        .off1     = offsetof(struct ssdlab_options, irq),
        .help     = "Complete by interrupts (1) or by polling the CQ (0)",
        .def      = "0",
        .category = FIO_OPT_C_ENGINE,
        .group    = FIO_OPT_G_INVALID,
    },
    {
        .name     = "queues",
        .lname    = "ssdlab I/O queue pairs",
        .type     = FIO_OPT_INT,
        .off1     = offsetof(struct ssdlab_options, queues),
        .help     = "I/O SQ/CQ pairs to create (1-64)",
        .def      = "1",
        .minval   = 1,
        .maxval   = 64,
        .category = FIO_OPT_C_ENGINE,
        .group    = FIO_OPT_G_INVALID,
    },
    {
        .name     = "qid",
        .lname    = "ssdlab queue id",
        .type     = FIO_OPT_INT,
        .off1     = offsetof(struct ssdlab_options, qid),
        .help     = "I/O queue this job submits on (1-queues)",
        .def      = "1",
        .minval   = 1,
        .maxval   = 64,
        .category = FIO_OPT_C_ENGINE,
        .group    = FIO_OPT_G_INVALID,
    },
    {
        .name     = "ssdlab_timeout",
        .lname    = "ssdlab I/O timeout",
        .type     = FIO_OPT_STR_VAL_TIME,
        .off1     = offsetof(struct ssdlab_options, timeout_ms),
        .help     = "Per-I/O timeout, in the transport's time (simulated on sim)",
        .def      = "30s",
        .is_time  = 1,
        .category = FIO_OPT_C_ENGINE,
        .group    = FIO_OPT_G_INVALID,
    },
    {
        .name     = "shutdown",
        .lname    = "ssdlab shutdown",
        .type     = FIO_OPT_BOOL,
        .off1     = offsetof(struct ssdlab_options, shutdown),
        .help     = "At the end of the job: 1 = normal shutdown (CC.SHN; the drive saves its "
                    "state), 0 = disable only (CC.EN=0), as a kernel driver leaves a drive",
        .def      = "0",
        .category = FIO_OPT_C_ENGINE,
        .group    = FIO_OPT_G_INVALID,
    },
    { .name = NULL },
};

struct ssdlab_data;
/* io_u->engine_data shares a union with io_u->index in fio 3.33: the engine keeps its own. */
struct ssdlab_ctx {
    struct ssdlab_data *d;
    struct io_u *io_u;
};

/* The jobs fio starts together on one drive: counted by setup in fio's main process, they
 * share one controller (the first job's init brings it up) and one lockstep share. */
struct ssdlab_batch {
    char target[PATH_MAX];
    unsigned no;                /* fio starts batch no after batch no-1 ended (stonewall) */
    unsigned n_jobs, max_qid, depth, numjobs;
    unsigned irq, shutdown;
    unsigned long long timeout_ms;
    const char *first;          /* the first job's name, for messages */
    /* in the jobs' process */
    pthread_mutex_t mu;
    int opened, failed;
    unsigned gone;              /* jobs that ended (the last lets the controller go) */
    int sim, lock_fd;
    struct sl_ctrl *c;
    struct sl_share *share;
    FILE *iolog;                /* $SSDLAB_IOLOG, one file for the batch (lines in order) */
};

struct ssdlab_data {
    struct sl_ctrl *c;
    struct sl_info info;
    struct ssdlab_batch *b;
    int sim;                    /* sim transport */
    int clock;                  /* fio's clock is this controller's simulated time */
    int joined;                 /* a member of b->share */
    unsigned qid;
    unsigned queued;            /* SQEs placed since the last doorbell */
    struct sl_dma mem;          /* fio's I/O buffers */
    int have_mem;
    struct sl_dma dsm;          /* one DSM range per io_u index */
    unsigned n_dsm;
    /* What the driver measured (transport time), printed at cleanup: fio's clat at QD1 is
     * exactly doorbell-to-CQE of the same commands when fio's clock is simulated time. */
    uint64_t n_cpl, lat_sum_ns, lat_min_ns, lat_max_ns, t_init_ns;
    struct io_u **ring;         /* completed io_us, oldest first */
    struct ssdlab_ctx *ctx;     /* per io_u index: the callback's argument */
    unsigned n_ctx;
    unsigned ring_len, head, count, returned;
};

/* --- opening a controller ---------------------------------------------------------------- */

static const char *sim_path(const struct ssdlab_options *o)
{
    if (o->sim && *o->sim)
        return o->sim;
    const char *e = getenv("SSDLAB_SIM_SOCKET");
    return e && *e ? e : NULL;
}

/* One fio process at a time on a simulated drive: lockstep simulated time cannot be shared
 * by two processes (the jobs of one run share it as threads). The lock is an abstract Unix socket named after the drive's socket: bound
 * while the job runs, released by the kernel when the process ends (no file left behind).
 * Returns the fd, or -1 with a message. */
static int lock_drive(struct thread_data *td, const char *sock)
{
    char real[PATH_MAX];
    const char *key = realpath(sock, real) ? real : sock;
    uint64_t h = 1469598103934665603ull;                /* FNV-1a */
    for (const char *p = key; *p; p++)
        h = (h ^ (unsigned char)*p) * 1099511628211ull;
    struct sockaddr_un sa = { .sun_family = AF_UNIX };
    int n = snprintf(sa.sun_path + 1, sizeof sa.sun_path - 1, "ssdlab-fio-%016llx",
                     (unsigned long long)h);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        log_err("ssdlab: lock socket: %s\n", strerror(errno));
        return -1;
    }
    if (bind(fd, (struct sockaddr *)&sa, (socklen_t)(offsetof(struct sockaddr_un, sun_path) +
                                                     1 + (size_t)n)) != 0) {
        if (errno == EADDRINUSE)
            log_err("ssdlab: job %s: the simulated drive %s is in use by another fio run "
                    "(jobs that run at the same time on one drive must be in one fio run: "
                    "numjobs=, or sections without stonewall)\n", td->o.name, sock);
        else
            log_err("ssdlab: lock for %s: %s\n", sock, strerror(errno));
        close(fd);
        return -1;
    }
    return fd;
}

static const char *vfio_addr(const struct ssdlab_options *o)
{
    if (o->vfio && *o->vfio)
        return o->vfio;
    const char *e = getenv("SSDLAB_VFIO");
    return e && *e && !(o->sim && *o->sim) ? e : NULL;
}

static int open_ctrl(struct thread_data *td, const struct ssdlab_options *o, unsigned depth,
                     struct sl_ctrl **out, int *is_sim)
{
    struct sl_transport *t;
    const char *sock = sim_path(o);
    *out = NULL;
    if (vfio_addr(o)) {
        if (o->vfio && *o->vfio && o->sim && *o->sim) {
            log_err("ssdlab: options sim= and vfio= both given; choose one\n");
            return 1;
        }
        if (sl_transport_open_vfio(vfio_addr(o), &t) < 0) {
            log_err("ssdlab: vfio=%s: %s\n", vfio_addr(o), sl_transport_open_errmsg());
            return 1;
        }
        *is_sim = 0;
    } else {
        if (!sock) {
            log_err("ssdlab: job %s: no drive: give sim=<socket> (or set SSDLAB_SIM_SOCKET) "
                    "or vfio=<PCI address>\n", td->o.name);
            return 1;
        }
        if (sl_transport_open_sim(sock, &t) < 0) {
            log_err("ssdlab: sim=%s: %s\n", sock, sl_transport_open_errmsg());
            return 1;
        }
        *is_sim = 1;
    }
    struct sl_ctrl_opts co;
    sl_ctrl_opts_default(&co);
    co.n_io_queues = o->queues;
    co.io_depth = depth;
    co.use_irq = o->irq;
    co.io_timeout_ns = o->timeout_ms * 1000000ull;
    int r = sl_ctrl_open(t, &co, out);
    if (r != 0) {
        log_err("ssdlab: controller bring-up failed: %s\n",
                *out ? sl_errmsg(*out) : strerror(-r));
        if (*out)
            sl_ctrl_close(*out);
        *out = NULL;
        return 1;
    }
    return 0;
}

/* --- setup: sizes, in fio's main process -------------------------------------------------- */

/* The job names its region in bytes (size=, no percentages, one file): fio needs no probe. */
static int region_given(struct thread_data *td)
{
    return fio_option_is_set(&td->o, size) && td->o.size && !td->o.size_percent &&
           !td->o.start_offset_percent && !td->o.offset_increment_percent &&
           !td->o.file_size_low && td->o.nr_files == 1;
}

/* Ask the drive for namespace 1's size. The probe's controller is let go without a shutdown:
 * a clean shutdown makes the firmware save its map, and the job's bring-up resets the
 * controller anyway (CC.EN=0). */
static int probe_size(struct thread_data *td, const struct ssdlab_options *o, uint64_t *bytes,
                      uint32_t *lba)
{
    const char *target = vfio_addr(o) ? vfio_addr(o) : sim_path(o);
    struct sl_ctrl *c;
    int is_sim, fd = -1;
    if (target && !vfio_addr(o) && (fd = lock_drive(td, target)) < 0)
        return 1;
    int r = open_ctrl(td, o, 2, &c, &is_sim);
    if (r == 0) {
        struct sl_info info;
        sl_ctrl_info(c, &info);
        *bytes = info.ns_blocks * info.lba_bytes;
        *lba = info.lba_bytes;
        if (sl_ctrl_detach(c) != 0)
            log_err("ssdlab: disabling the controller after the size probe: %s\n",
                    sl_errmsg(NULL));
    }
    if (fd >= 0)
        close(fd);
    return r;
}

/* --- batches: the jobs fio starts together on one drive ------------------------------------- */

struct ssdlab_reg {
    struct thread_data *td;
    struct ssdlab_batch *b;
    unsigned qid;
};

static pthread_mutex_t reg_mu = PTHREAD_MUTEX_INITIALIZER;
static struct ssdlab_reg *regs;
static unsigned n_regs, batch_no;
static struct ssdlab_batch **batches;
static unsigned n_batches;

static struct ssdlab_reg *reg_of(struct thread_data *td)
{
    for (unsigned i = 0; i < n_regs; i++)
        if (regs[i].td == td)
            return &regs[i];
    return NULL;
}

/* Count td into its batch: fio starts the jobs from one stonewall to the next together, in
 * the order their setup runs (fio's main process, every job before the first starts). The
 * job submits on qid= plus its index among numjobs. Returns 0, or 1 with a message. */
static int batch_add(struct thread_data *td, const struct ssdlab_options *o, const char *target)
{
    if (reg_of(td))
        return 0;
    if (td->o.stonewall && n_regs)
        batch_no++;
    unsigned qid = o->qid + td->subjob_number;
    if (qid > 64) {
        log_err("ssdlab: job %s: numjobs=%u from qid=%u needs I/O queues up to %u; NVMe "
                "front ends have at most 64\n", td->o.name, td->subjob_number + 1, o->qid, qid);
        return 1;
    }
    struct ssdlab_batch *b = NULL;
    for (unsigned i = 0; i < n_batches; i++)
        if (batches[i]->no == batch_no && strcmp(batches[i]->target, target) == 0)
            b = batches[i];
    if (!b) {
        struct ssdlab_batch **nb = realloc(batches, (n_batches + 1) * sizeof *nb);
        if (!nb || !(b = calloc(1, sizeof *b))) {
            log_err("ssdlab: out of memory\n");
            return 1;
        }
        batches = nb;
        batches[n_batches++] = b;
        snprintf(b->target, sizeof b->target, "%s", target);
        b->no = batch_no;
        b->irq = o->irq;
        b->shutdown = o->shutdown;
        b->timeout_ms = o->timeout_ms;
        b->first = td->o.name;
        b->lock_fd = -1;
        pthread_mutex_init(&b->mu, NULL);
    }
    for (unsigned i = 0; i < n_regs; i++) {
        if (regs[i].b != b)
            continue;
        if (regs[i].qid == qid) {
            log_err("ssdlab: jobs %s and %s run at the same time on one drive, both on I/O "
                    "queue %u; give each its own qid= (numjobs=N takes N queues from qid=)\n",
                    regs[i].td->o.name, td->o.name, qid);
            return 1;
        }
    }
    if (b->n_jobs && o->irq != b->irq) {
        log_err("ssdlab: jobs %s and %s run at the same time on one drive with irq=%u and "
                "irq=%u; they share one controller: give both the same irq=\n", b->first,
                td->o.name, b->irq, o->irq);
        return 1;
    }
    struct ssdlab_reg *nr = realloc(regs, (n_regs + 1) * sizeof *nr);
    if (!nr) {
        log_err("ssdlab: out of memory\n");
        return 1;
    }
    regs = nr;
    regs[n_regs++] = (struct ssdlab_reg){ .td = td, .b = b, .qid = qid };
    b->n_jobs++;
    if (qid > b->max_qid)
        b->max_qid = qid;
    if (o->queues > b->max_qid)
        b->max_qid = o->queues;
    unsigned depth = td->o.iodepth + 1 < 2 ? 2 : td->o.iodepth + 1;
    if (depth > b->depth)
        b->depth = depth;
    if (td->o.numjobs > b->numjobs)
        b->numjobs = td->o.numjobs;
    if (b->n_jobs > 1) {
        /* One fio process: the simulated drive serves one connection, so jobs that run
         * together share it (and one controller) as threads. */
        for (unsigned i = 0; i < n_regs; i++)
            if (regs[i].b == b)
                regs[i].td->o.use_thread = 1;
    }
    return 0;
}

static int ssdlab_setup(struct thread_data *td)
{
    struct ssdlab_options *o = td->eo;
    struct ssdlab_data *d = td->io_ops_data;
    /* The probe's result, per target, for every job of this fio run. */
    static char probed_target[PATH_MAX];
    static uint64_t probed_bytes;
    static uint32_t probed_lba;

    if (o->qid > o->queues) {
        log_err("ssdlab: job %s: qid=%u but queues=%u\n", td->o.name, o->qid, o->queues);
        return 1;
    }
    if (!d) {                                       /* in fio's main process */
        const char *tg = vfio_addr(o) ? vfio_addr(o) : sim_path(o);
        pthread_mutex_lock(&reg_mu);
        int r = batch_add(td, o, tg ? tg : "");
        pthread_mutex_unlock(&reg_mu);
        if (r)
            return 1;
    }
    const char *target = vfio_addr(o) ? vfio_addr(o) : sim_path(o);
    uint64_t bytes;
    uint32_t lba = 0;
    if (d && d->c) {                                /* create_serialize=0: init came first */
        bytes = d->info.ns_blocks * d->info.lba_bytes;
        lba = d->info.lba_bytes;
    } else if (target && probed_bytes && strcmp(target, probed_target) == 0) {
        bytes = probed_bytes;
        lba = probed_lba;
    } else if (region_given(td)) {
        /* where this job's region ends (numjobs: offset_increment per job); init checks it
         * against the drive */
        bytes = td->o.start_offset + td->subjob_number * td->o.offset_increment + td->o.size;
    } else {
        if (probe_size(td, o, &bytes, &lba))
            return 1;
        snprintf(probed_target, sizeof probed_target, "%s", target ? target : "");
        probed_bytes = bytes;
        probed_lba = lba;
    }
    struct fio_file *f;
    unsigned i;
    for_each_file(td, f, i) {
        f->real_file_size = bytes;
        f->filetype = FIO_TYPE_BLOCK;
        fio_file_set_size_known(f);
    }
    if (lba && td_min_bs(td) % lba) {
        log_err("ssdlab: job %s: block size %llu is not a multiple of the %u-byte LBA\n",
                td->o.name, td_min_bs(td), lba);
        return 1;
    }
    return 0;
}

/* --- init / cleanup: in the job's process (thread) ------------------------------------------ */

/* The first job of a batch to init brings the controller up for all of them: one queue pair
 * per job, as deep as the deepest job's. Called with b->mu held; 0, or 1 with a message. */
static int batch_open(struct thread_data *td, const struct ssdlab_options *o,
                      struct ssdlab_batch *b)
{
    if (!vfio_addr(o) && (b->lock_fd = lock_drive(td, b->target)) < 0)
        return 1;
    struct ssdlab_options bo = *o;
    bo.queues = b->max_qid;
    bo.irq = b->irq;
    bo.timeout_ms = b->timeout_ms;
    if (open_ctrl(td, &bo, b->depth, &b->c, &b->sim))
        return 1;
    struct sl_info info;
    sl_ctrl_info(b->c, &info);
    if (info.n_io_queues < b->max_qid) {
        if (b->n_jobs > 1)
            log_err("ssdlab: numjobs=%u but the drive has %u I/O queues: each job needs its "
                    "own queue pair (%u jobs at once on queues %u..%u)\n", b->numjobs,
                    info.n_io_queues, b->n_jobs, b->max_qid - b->n_jobs + 1, b->max_qid);
        else
            log_err("ssdlab: qid=%u but the controller granted %u I/O queues\n", b->max_qid,
                    info.n_io_queues);
        return 1;
    }
    if (sl_share_new(b->c, b->n_jobs, &b->share)) {
        log_err("ssdlab: %s\n", sl_errmsg(b->c));
        return 1;
    }
    const char *iolog = getenv("SSDLAB_IOLOG");
    if (iolog && *iolog && !(b->iolog = fopen(iolog, "a"))) {
        log_err("ssdlab: SSDLAB_IOLOG=%s: %s\n", iolog, strerror(errno));
        return 1;
    }
    return 0;
}

/* Let the controller go: at the batch's end, or when bring-up failed (b->mu held). */
static void batch_close(struct ssdlab_batch *b)
{
    if (b->c) {
        if (b->shutdown) {
            if (sl_ctrl_close(b->c) != 0)
                log_err("ssdlab: controller shutdown: %s\n", sl_errmsg(NULL));
        } else if (sl_ctrl_detach(b->c) != 0) {
            log_err("ssdlab: disabling the controller: %s\n", sl_errmsg(NULL));
        }
        b->c = NULL;
    }
    sl_share_free(b->share);
    b->share = NULL;
    if (b->iolog)
        fclose(b->iolog);
    b->iolog = NULL;
    if (b->lock_fd >= 0)
        close(b->lock_fd);
    b->lock_fd = -1;
}

/* A job of the batch ended (b->mu held); after the last one the controller goes. */
static void batch_end(struct ssdlab_batch *b)
{
    if (++b->gone == b->n_jobs)
        batch_close(b);
}

static void ssdlab_cleanup(struct thread_data *td)
{
    struct ssdlab_data *d = td->io_ops_data;
    if (!d)
        return;
    struct ssdlab_batch *b = d->b;
    if (d->c && d->n_cpl) {
        /* stderr: stdout may be fio's JSON. */
        fprintf(stderr, "ssdlab: %s: %llu commands on queue %u, doorbell to completion (%s "
                "time) min/avg/max = %llu/%.1f/%llu ns; %llu ns from init to cleanup, %llu ns "
                "of it in host sleeps\n", td->o.name, (unsigned long long)d->n_cpl, d->qid,
                d->sim ? "simulated" : "host", (unsigned long long)d->lat_min_ns,
                (double)d->lat_sum_ns / (double)d->n_cpl, (unsigned long long)d->lat_max_ns,
                (unsigned long long)(sl_time_ns(d->c) - d->t_init_ns),
                (unsigned long long)(d->clock ? ssdlab_clock_advanced_ns() : 0));
    }
    if (b) {
        if (!d->joined)                 /* the controller is touched under b->mu until join */
            pthread_mutex_lock(&b->mu);
        if (d->have_mem)
            sl_dma_free(d->c, &d->mem);
        if (d->dsm.vaddr)
            sl_dma_free(d->c, &d->dsm);
        d->have_mem = 0;
        if (d->clock)
            ssdlab_clock_detach();
        if (d->joined) {
            sl_share_leave(b->share);
            pthread_mutex_lock(&b->mu);
        } else if (b->share) {
            sl_share_cancel(b->share);  /* the others need not wait for this job */
        }
        batch_end(b);
        pthread_mutex_unlock(&b->mu);
    }
    free(d->ring);
    free(d->ctx);
    free(d);
    td->io_ops_data = NULL;
}

static int ssdlab_init(struct thread_data *td)
{
    struct ssdlab_options *o = td->eo;
    struct ssdlab_data *d = calloc(1, sizeof *d);
    if (!d)
        return 1;
    td->io_ops_data = d;
    if (!vfio_addr(o)) {
        /* Simulated time: fio's clock must be clock_gettime, and ours must be the one fio
         * calls. ssdlab-fio sees to both. */
        /* Looked up rather than referenced: the library is also preloaded into whatever fio
         * starts (exec_prerun=...), where no fio symbols exist; function references bind
         * lazily, a data reference would fail the load. */
        const enum fio_cs *cs = dlsym(RTLD_DEFAULT, "fio_clock_source");
        if (!cs || *cs != CS_CGETTIME) {
            log_err("ssdlab: the simulated drive needs clocksource=clock_gettime (fio's "
                    "clock then reads simulated time); run fio through sw/fio/ssdlab-fio\n");
            goto fail;
        }
        if (!ssdlab_clock_preloaded()) {
            log_err("ssdlab: the engine library must also be LD_PRELOADed, so that fio's "
                    "clock reads simulated time; run fio through sw/fio/ssdlab-fio\n");
            goto fail;
        }
        if (td->o.thinktime_spin) {
            log_err("ssdlab: job %s: thinktime_spin: a spinning host never lets simulated "
                    "time pass; use thinktime= (a sleep advances the drive)\n", td->o.name);
            goto fail;
        }
        if (!sim_path(o)) {
            log_err("ssdlab: job %s: no drive: give sim=<socket> (or set SSDLAB_SIM_SOCKET) "
                    "or vfio=<PCI address>\n", td->o.name);
            goto fail;
        }
    }
    if (o->qid > o->queues) {
        log_err("ssdlab: job %s: qid=%u but queues=%u\n", td->o.name, o->qid, o->queues);
        goto fail;
    }
    pthread_mutex_lock(&reg_mu);
    struct ssdlab_reg *reg = reg_of(td);
    int bad = 0;
    if (!reg && (td->o.numjobs > 1 || td->subjob_number)) {
        log_err("ssdlab: job %s: numjobs=%u needs create_serialize=1 (fio's default): the "
                "engine counts the jobs that share the drive before they start\n", td->o.name,
                td->o.numjobs > 1 ? td->o.numjobs : td->subjob_number + 1);
        bad = 1;
    } else if (!reg) {                  /* create_serialize=0: this job on its own */
        const char *tg = vfio_addr(o) ? vfio_addr(o) : sim_path(o);
        bad = batch_add(td, o, tg ? tg : "");
        reg = bad ? NULL : reg_of(td);
    }
    struct ssdlab_batch *b = reg ? reg->b : NULL;
    d->qid = reg ? reg->qid : 0;
    pthread_mutex_unlock(&reg_mu);
    if (bad)
        goto fail;

    pthread_mutex_lock(&b->mu);
    if (!b->opened) {
        b->opened = 1;
        if ((b->failed = batch_open(td, o, b)))
            batch_close(b);
    }
    d->b = b;
    d->c = b->c;
    d->sim = b->sim;
    if (b->failed) {                    /* the first job said why */
        pthread_mutex_unlock(&b->mu);
        goto fail;
    }
    sl_ctrl_info(d->c, &d->info);
    unsigned depth = td->o.iodepth + 1;         /* a queue of D entries holds D - 1 */
    if (d->info.io_depth < depth) {
        log_err("ssdlab: iodepth=%u but the controller's queues hold %u commands\n",
                td->o.iodepth, d->info.io_depth - 1);
        goto fail_locked;
    }
    if (td->o.max_bs[DDIR_READ] > d->info.max_transfer ||
        td->o.max_bs[DDIR_WRITE] > d->info.max_transfer) {
        log_err("ssdlab: job %s: block size above the controller's maximum transfer (MDTS) "
                "of %u bytes\n", td->o.name, d->info.max_transfer);
        goto fail_locked;
    }
    uint64_t ns_bytes = d->info.ns_blocks * d->info.lba_bytes;
    struct fio_file *f;
    unsigned i;
    for_each_file(td, f, i) {
        if (f->file_offset + f->io_size > ns_bytes) {
            log_err("ssdlab: job %s: the I/O region (offset %llu, %llu bytes) ends past the "
                    "namespace's %llu bytes\n", td->o.name, (unsigned long long)f->file_offset,
                    (unsigned long long)f->io_size, (unsigned long long)ns_bytes);
            goto fail_locked;
        }
    }
    if (td_min_bs(td) % d->info.lba_bytes) {
        log_err("ssdlab: job %s: block size %llu is not a multiple of the %u-byte LBA\n",
                td->o.name, td_min_bs(td), d->info.lba_bytes);
        goto fail_locked;
    }
    d->ring_len = td->o.iodepth + 1;
    d->ring = calloc(d->ring_len, sizeof *d->ring);
    d->n_dsm = td->o.iodepth + 1;
    d->n_ctx = td->o.iodepth + 1;
    d->ctx = calloc(d->n_ctx, sizeof *d->ctx);
    if (!d->ring || !d->ctx || sl_dma_alloc(d->c, d->n_dsm * sizeof(struct nvme_dsm_range), &d->dsm)) {
        log_err("ssdlab: out of memory: %s\n", sl_errmsg(d->c));
        goto fail_locked;
    }
    pthread_mutex_unlock(&b->mu);
    /* Every job of the batch gets here before any of them does I/O (fio's own start
     * barrier comes before init); from here on the job runs only with the share's token. */
    if (sl_share_join(b->share, d->qid, 120000)) {
        log_err("ssdlab: job %s: %s\n", td->o.name, sl_errmsg(d->c));
        pthread_mutex_lock(&b->mu);
        d->b = NULL;
        if (d->dsm.vaddr)
            sl_dma_free(d->c, &d->dsm);
        batch_end(b);
        pthread_mutex_unlock(&b->mu);
        goto fail;
    }
    d->joined = 1;
    if (d->sim && ssdlab_clock_attach(d->c, b->share)) {
        log_err("ssdlab: job %s: another simulated drive is fio's clock; jobs on two "
                "simulated drives cannot run at the same time\n", td->o.name);
        goto fail;
    }
    d->clock = d->sim;
    d->t_init_ns = sl_time_ns(d->c);
    return 0;
fail_locked:
    if (d->dsm.vaddr)
        sl_dma_free(d->c, &d->dsm);
    sl_share_cancel(b->share);      /* after the free: the others may start at once */
    d->b = NULL;
    batch_end(b);
    pthread_mutex_unlock(&b->mu);
fail:
    ssdlab_cleanup(td);
    return 1;
}

/* fio's I/O buffers: one DMA allocation (PRPs point into it). */
static int ssdlab_iomem_alloc(struct thread_data *td, size_t total)
{
    struct ssdlab_data *d = td->io_ops_data;
    if (sl_dma_alloc(d->c, total, &d->mem)) {
        log_err("ssdlab: %zu bytes of DMA memory for I/O buffers: %s\n", total,
                sl_errmsg(d->c));
        return 1;
    }
    d->have_mem = 1;
    td->orig_buffer = d->mem.vaddr;
    return 0;
}

static void ssdlab_iomem_free(struct thread_data *td)
{
    struct ssdlab_data *d = td->io_ops_data;
    if (d && d->c && d->have_mem) {
        sl_dma_free(d->c, &d->mem);
        d->have_mem = 0;
    }
}

/* --- I/O ------------------------------------------------------------------------------------ */

/* The I/O log's command kind: r(ead), w(rite), t(rim), f(lush). */
static char iolog_kind(enum fio_ddir ddir)
{
    switch (ddir) {
    case DDIR_READ:
        return 'r';
    case DDIR_WRITE:
        return 'w';
    case DDIR_TRIM:
        return 't';
    default:
        return 'f';
    }
}

static void ssdlab_done(const struct sl_cpl *cpl, void *user)
{
    struct ssdlab_ctx *x = user;
    struct io_u *io_u = x->io_u;
    struct ssdlab_data *d = x->d;
    if (cpl->status) {
        char s[96];
        io_u->error = EIO;
        log_err("ssdlab: %s at offset %llu, %llu bytes: %s\n", io_ddir_name(io_u->ddir),
                io_u->offset, io_u->xfer_buflen, sl_status_str(cpl->status, s, sizeof s));
    }
    io_u->resid = 0;
    uint64_t lat = cpl->complete_ns - cpl->submit_ns;
    if (!d->n_cpl || lat < d->lat_min_ns)
        d->lat_min_ns = lat;
    if (lat > d->lat_max_ns)
        d->lat_max_ns = lat;
    d->lat_sum_ns += lat;
    d->n_cpl++;
    if (d->b->iolog)                /* written by the token holder: lines stay whole */
        fprintf(d->b->iolog, "%c %llu %llu %llu %u %u\n", iolog_kind(io_u->ddir),
                (unsigned long long)io_u->xfer_buflen, (unsigned long long)cpl->submit_ns,
                (unsigned long long)cpl->complete_ns, (unsigned)cpl->status, d->qid);
    d->ring[(d->head + d->count) % d->ring_len] = io_u;
    d->count++;
}

static enum fio_q_status ssdlab_queue(struct thread_data *td, struct io_u *io_u)
{
    struct ssdlab_data *d = td->io_ops_data;
    uint32_t lba = d->info.lba_bytes;
    struct nvme_sqe sqe = { .nsid = SSDLAB_NSID };
    const struct sl_dma *buf = NULL;
    size_t off = 0, len = 0;

    fio_ro_check(td, io_u);
    if (io_u->index >= d->n_ctx) {
        log_err("ssdlab: io_u index %u beyond iodepth %u\n", io_u->index, d->n_ctx);
        io_u->error = EINVAL;
        return FIO_Q_COMPLETED;
    }
    struct ssdlab_ctx *x = &d->ctx[io_u->index];
    x->d = d;
    x->io_u = io_u;
    if (io_u->ddir == DDIR_READ || io_u->ddir == DDIR_WRITE || io_u->ddir == DDIR_TRIM) {
        if (io_u->offset % lba || io_u->xfer_buflen % lba || !io_u->xfer_buflen) {
            log_err("ssdlab: %s at offset %llu, %llu bytes: not whole %u-byte LBAs\n",
                    io_ddir_name(io_u->ddir), io_u->offset, io_u->xfer_buflen, lba);
            io_u->error = EINVAL;
            return FIO_Q_COMPLETED;
        }
    }
    uint64_t slba = io_u->offset / lba;
    uint64_t nlb = io_u->xfer_buflen / lba;
    switch (io_u->ddir) {
    case DDIR_READ:
    case DDIR_WRITE:
        sqe.opc = io_u->ddir == DDIR_READ ? NVME_CMD_READ : NVME_CMD_WRITE;
        sqe.cdw10 = (uint32_t)slba;
        sqe.cdw11 = (uint32_t)(slba >> 32);
        sqe.cdw12 = (uint32_t)(nlb - 1);
        buf = &d->mem;
        off = (size_t)((char *)io_u->xfer_buf - (char *)d->mem.vaddr);
        len = io_u->xfer_buflen;
        break;
    case DDIR_TRIM: {
        if (nlb > UINT32_MAX) {
            io_u->error = EINVAL;
            return FIO_Q_COMPLETED;
        }
        struct nvme_dsm_range *r = (struct nvme_dsm_range *)d->dsm.vaddr + io_u->index;
        r->cattr = 0;
        r->nlb = (uint32_t)nlb;
        r->slba = slba;
        sqe.opc = NVME_CMD_DATASET_MANAGEMENT;
        sqe.cdw10 = 0;                      /* NR: one range (0's based) */
        sqe.cdw11 = NVME_DSM_AD;
        buf = &d->dsm;
        off = io_u->index * sizeof *r;
        len = sizeof *r;
        break;
    }
    case DDIR_SYNC:
    case DDIR_DATASYNC:
    case DDIR_SYNC_FILE_RANGE:
        sqe.opc = NVME_CMD_FLUSH;
        break;
    default:
        io_u->error = EINVAL;
        return FIO_Q_COMPLETED;
    }
    int r = sl_queue(d->c, d->qid, &sqe, buf, off, len, ssdlab_done, x);
    if (r == -EBUSY)
        return FIO_Q_BUSY;
    if (r != 0) {
        log_err("ssdlab: queue: %s\n", sl_errmsg(d->c));
        io_u->error = r < 0 ? -r : EIO;
        return FIO_Q_COMPLETED;
    }
    d->queued++;
    return FIO_Q_QUEUED;
}

static int ssdlab_commit(struct thread_data *td)
{
    struct ssdlab_data *d = td->io_ops_data;
    if (!d->queued)
        return 0;
    int r = sl_ring(d->c, d->qid);
    if (r) {
        log_err("ssdlab: doorbell: %s\n", sl_errmsg(d->c));
        td_verror(td, r < 0 ? -r : EIO, "sl_ring");
        return -(r < 0 ? -r : EIO);
    }
    io_u_mark_submit(td, d->queued);
    d->queued = 0;
    return 0;
}

static int ssdlab_getevents(struct thread_data *td, unsigned int min, unsigned int max,
                            const struct timespec *t)
{
    struct ssdlab_data *d = td->io_ops_data;
    /* Drop what the previous call handed to fio. */
    d->head = (d->head + d->returned) % d->ring_len;
    d->count -= d->returned;
    d->returned = 0;

    /* Reap what is there; when fewer than `min` arrived, let simulated time pass (the share
     * drives the drive once every job of the batch waits). */
    unsigned need = d->count < min ? min - d->count : 0;
    uint64_t timeout = t ? (uint64_t)t->tv_sec * 1000000000ull + (uint64_t)t->tv_nsec
                         : ((struct ssdlab_options *)td->eo)->timeout_ms * 1000000ull;
    int r = sl_share_wait(d->b->share, need, timeout);
    if (r == -ETIMEDOUT && t) {
        r = 0;                              /* fio's own timeout: return what there is */
    } else if (r == -ETIMEDOUT) {
        log_err("ssdlab: no completion for %llu ms (transport time) with %u commands "
                "in flight\n", (unsigned long long)(timeout / 1000000),
                sl_inflight(d->c, d->qid));
        td_verror(td, ETIMEDOUT, "sl_wait");
        return -ETIMEDOUT;
    } else if (r < 0) {
        goto err;
    }
    d->returned = d->count < max ? d->count : max;
    return (int)d->returned;
err:
    log_err("ssdlab: reaping completions: %s\n", sl_errmsg(d->c));
    td_verror(td, -r, "sl_wait");
    return r;
}

static struct io_u *ssdlab_event(struct thread_data *td, int ev)
{
    struct ssdlab_data *d = td->io_ops_data;
    return d->ring[(d->head + (unsigned)ev) % d->ring_len];
}

static int ssdlab_open_file(struct thread_data *td, struct fio_file *f)
{
    (void)td;
    (void)f;
    return 0;
}

static int ssdlab_close_file(struct thread_data *td, struct fio_file *f)
{
    (void)td;
    (void)f;
    return 0;
}

static int ssdlab_get_file_size(struct thread_data *td, struct fio_file *f)
{
    (void)td;
    (void)f;
    return 0;       /* sizes come from setup */
}

/* Exported for fio's dlsym(): fio looks the ops up by the name "ioengine". */
struct ioengine_ops ioengine = {
    .name               = "ssdlab",
    .version            = FIO_IOOPS_VERSION,
    .flags              = FIO_DISKLESSIO | FIO_NODISKUTIL | FIO_NOEXTEND | FIO_RAWIO,
    .setup              = ssdlab_setup,
    .init               = ssdlab_init,
    .queue              = ssdlab_queue,
    .commit             = ssdlab_commit,
    .getevents          = ssdlab_getevents,
    .event              = ssdlab_event,
    .cleanup            = ssdlab_cleanup,
    .open_file          = ssdlab_open_file,
    .close_file         = ssdlab_close_file,
    .get_file_size      = ssdlab_get_file_size,
    .iomem_alloc        = ssdlab_iomem_alloc,
    .iomem_free         = ssdlab_iomem_free,
    .options            = options,
    .option_struct_size = sizeof(struct ssdlab_options),
};
