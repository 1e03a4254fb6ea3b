/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ssdlab_clock.c - fio's clock made the simulation's clock (part of the ssdlab fio engine).
 *
 * The engine library is LD_PRELOADed by sw/fio/ssdlab-fio, so these definitions of
 * clock_gettime(), nanosleep(), clock_nanosleep() and usleep() come before glibc's for fio.
 *
 * One virtual CLOCK_MONOTONIC for the whole fio run. At load (in fio's main process, before
 * it forks its jobs) a shared page is mapped; every thread of every fio process reads the
 * clock from it:
 *
 *   no drive attached   clock = real CLOCK_MONOTONIC + off
 *   a job attached      clock = simulated ns + off   (sl_time_ns of the job's controller)
 *
 * At attach `off` is chosen so the clock continues from its current value; at detach the clock
 * jumps forward to the real one (simulated time runs slower than the wall clock). It is
 * monotonic, and every difference fio takes while a job runs — runtime, slat, clat,
 * lat, the bandwidth and IOPS samples and steady-state windows of fio's helper thread (in the
 * main process), the ETA — is a difference of simulated time. fio must use clock_gettime as
 * its clock source (--clocksource=clock_gettime: ssdlab-fio passes it, the engine checks).
 *
 * The attaching threads (the jobs', from the engine's init; several when numjobs > 1, all
 * members of one lockstep share of the controller, sw/lib share.h) own the drive: the one
 * holding the share's run token reads the controller's time and publishes it in the page;
 * other threads read the published value. In a member's thread, nanosleep / clock_nanosleep
 * (CLOCK_MONOTONIC) / usleep let the simulation run for the requested time (sl_share_sleep:
 * the other jobs run meanwhile, and the drive advances once every job waits) instead of
 * sleeping: in lockstep, simulated time passes only while the host asks the drive for
 * something, so a host that sleeps (thinktime, rate limiting, idle periods) lets the drive run
 * for that long, and fio's own sleep loops end. Other threads sleep in real time (their
 * timeouts get longer in simulated terms while a job runs, never shorter).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "ssdlab/driver.h"
#include "ssdlab/share.h"
#include "ssdlab_clock.h"

typedef int (*clock_gettime_fn)(clockid_t, struct timespec *);
typedef int (*nanosleep_fn)(const struct timespec *, struct timespec *);
typedef int (*clock_nanosleep_fn)(clockid_t, int, const struct timespec *, struct timespec *);
typedef int (*usleep_fn)(useconds_t);

/* Shared by fio's processes (MAP_SHARED, inherited across fork). A seqlock: writers (the
 * attached thread, one at a time) make seq odd while they change it. */
struct vclock {
    uint32_t seq;
    uint32_t sim;               /* 1: a job is attached; clock = sim_ns + off */
    int64_t  off;
    int64_t  sim_ns;            /* the attached controller's time, as last seen */
};

static struct vclock local_clock;             /* used if the shared page cannot be mapped */
static struct vclock *vc = &local_clock;
static __thread struct sl_ctrl *tl_ctrl;      /* the controller attached in this thread */
static __thread struct sl_share *tl_share;    /* its share, of which this thread is a member */
static struct sl_ctrl *attached;              /* the controller fio's clock follows */
static unsigned n_attached;                   /* threads attached to it (this process) */
static pthread_mutex_t attach_mu = PTHREAD_MUTEX_INITIALIZER;
static __thread uint64_t tl_advanced_ns;      /* simulated time this thread's sleeps ran */
static __thread int64_t tl_last_ns;           /* the drive's time at the last read */
static __thread unsigned tl_same;             /* reads since it last changed */

/* fio spins on its clock in usec_spin() (the part of a usec_sleep() below the nanosleep
 * granularity it calibrated at start-up, in real time): after this many reads of an unchanged
 * clock in the owning thread, the simulation advances by SPIN_QUANTUM_NS. fio reads its clock
 * a handful of times between two requests to the drive, so only a spin reaches the count, and
 * the count of reads in a spin is fio's code, not the machine's speed: still deterministic. */
#define SPIN_READS 1000
#define SPIN_QUANTUM_NS 1000
static int sim_sleep(int64_t ns);

__attribute__((constructor)) static void vclock_init(void)
{
    void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (p != MAP_FAILED)
        vc = p;
}

static int real_clock_gettime(clockid_t clk, struct timespec *ts)
{
    static clock_gettime_fn fn;
    if (!fn)
        fn = (clock_gettime_fn)dlsym(RTLD_NEXT, "clock_gettime");
    return fn(clk, ts);
}

static int64_t real_mono_ns(void)
{
    struct timespec ts;
    real_clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int64_t ts_ns(const struct timespec *ts)
{
    return (int64_t)ts->tv_sec * 1000000000 + ts->tv_nsec;
}

static void write_begin(void)
{
    __atomic_add_fetch(&vc->seq, 1, __ATOMIC_ACQ_REL);
}

static void write_end(void)
{
    __atomic_add_fetch(&vc->seq, 1, __ATOMIC_RELEASE);
}

/* The virtual clock now, in ns. */
static int64_t vclock_ns(void)
{
    if (tl_ctrl && sl_share_running(tl_share)) {  /* the owner: read the drive, publish it */
        int64_t s = (int64_t)sl_time_ns(tl_ctrl);
        if (s != tl_last_ns) {
            tl_last_ns = s;
            tl_same = 0;
        } else if (++tl_same >= SPIN_READS) {
            tl_same = 0;
            sim_sleep(SPIN_QUANTUM_NS);            /* reads the clock again: publishes */
            s = (int64_t)sl_time_ns(tl_ctrl);
        }
        if (s != __atomic_load_n(&vc->sim_ns, __ATOMIC_RELAXED)) {
            write_begin();
            __atomic_store_n(&vc->sim_ns, s, __ATOMIC_RELAXED);
            write_end();
        }
        return s + __atomic_load_n(&vc->off, __ATOMIC_RELAXED);
    }
    for (;;) {
        uint32_t q = __atomic_load_n(&vc->seq, __ATOMIC_ACQUIRE);
        if (q & 1)
            continue;
        uint32_t sim = __atomic_load_n(&vc->sim, __ATOMIC_RELAXED);
        int64_t off = __atomic_load_n(&vc->off, __ATOMIC_RELAXED);
        int64_t s = __atomic_load_n(&vc->sim_ns, __ATOMIC_RELAXED);
        int64_t base = sim ? s : real_mono_ns();
        __atomic_thread_fence(__ATOMIC_ACQUIRE);
        if (__atomic_load_n(&vc->seq, __ATOMIC_RELAXED) == q)
            return base + off;
    }
}

int ssdlab_clock_preloaded(void)
{
    /* The process-wide clock_gettime is this library's only when it was preloaded. */
    return dlsym(RTLD_DEFAULT, "clock_gettime") == (void *)clock_gettime;
}

int ssdlab_clock_attach(struct sl_ctrl *c, struct sl_share *share)
{
    pthread_mutex_lock(&attach_mu);
    if (n_attached && attached != c) {
        pthread_mutex_unlock(&attach_mu);
        return -EBUSY;                         /* another drive is the clock */
    }
    if (!n_attached) {
        if (__atomic_load_n(&vc->sim, __ATOMIC_ACQUIRE)) {
            pthread_mutex_unlock(&attach_mu);
            return -EBUSY;                     /* another process's drive is the clock */
        }
        int64_t now = vclock_ns();
        int64_t s = (int64_t)sl_time_ns(c);
        write_begin();
        vc->off = now - s;
        vc->sim_ns = s;
        vc->sim = 1;
        write_end();
        attached = c;
    }
    n_attached++;
    pthread_mutex_unlock(&attach_mu);
    tl_ctrl = c;
    tl_share = share;
    return 0;
}

void ssdlab_clock_detach(void)
{
    if (!tl_ctrl)
        return;
    int64_t now = vclock_ns();
    tl_ctrl = NULL;
    tl_share = NULL;
    pthread_mutex_lock(&attach_mu);
    if (--n_attached == 0) {
        attached = NULL;
        /* Back to the real clock itself (a jump forward: simulated time runs slower than the
         * wall clock), so that the kernel's timed waits of fio's main process (pthread
         * condition variables on CLOCK_MONOTONIC, starting the next job) get deadlines they
         * understand. */
        int64_t off = now - real_mono_ns();
        write_begin();
        vc->off = off > 0 ? off : 0;
        vc->sim = 0;
        write_end();
    }
    pthread_mutex_unlock(&attach_mu);
}

uint64_t ssdlab_clock_advanced_ns(void)
{
    return tl_advanced_ns;
}

int clock_gettime(clockid_t clk, struct timespec *ts)
{
    if (clk != CLOCK_MONOTONIC)
        return real_clock_gettime(clk, ts);
    int64_t ns = vclock_ns();
    ts->tv_sec = ns / 1000000000;
    ts->tv_nsec = ns % 1000000000;
    return 0;
}

/* Let the simulation run ns for this job (the other jobs of the share run meanwhile). */
static int sim_sleep(int64_t ns)
{
    if (ns <= 0)
        ns = SPIN_QUANTUM_NS;                  /* a zero sleep still lets time pass */
    int r = sl_share_sleep(tl_share, (uint64_t)ns);
    vclock_ns();                               /* publish the new time */
    if (r < 0) {
        errno = -r;
        return -1;
    }
    tl_advanced_ns += (uint64_t)ns;
    return 0;
}

/* This thread's sleeps are simulated: it is a member of a share, holding the token. */
static int simulated(void)
{
    return tl_ctrl && sl_share_running(tl_share);
}

int nanosleep(const struct timespec *req, struct timespec *rem)
{
    if (!simulated()) {
        static nanosleep_fn fn;
        if (!fn)
            fn = (nanosleep_fn)dlsym(RTLD_NEXT, "nanosleep");
        return fn(req, rem);
    }
    if (rem)
        rem->tv_sec = rem->tv_nsec = 0;
    return sim_sleep(ts_ns(req));
}

int clock_nanosleep(clockid_t clk, int flags, const struct timespec *req, struct timespec *rem)
{
    if (!simulated() || clk != CLOCK_MONOTONIC) {
        static clock_nanosleep_fn fn;
        if (!fn)
            fn = (clock_nanosleep_fn)dlsym(RTLD_NEXT, "clock_nanosleep");
        return fn(clk, flags, req, rem);
    }
    int64_t ns = ts_ns(req);
    if (flags & TIMER_ABSTIME)
        ns -= vclock_ns();
    if (rem)
        rem->tv_sec = rem->tv_nsec = 0;
    return sim_sleep(ns) < 0 ? errno : 0;
}

int usleep(useconds_t us)
{
    if (!simulated()) {
        static usleep_fn fn;
        if (!fn)
            fn = (usleep_fn)dlsym(RTLD_NEXT, "usleep");
        return fn(us);
    }
    return sim_sleep((int64_t)us * 1000);
}
