/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ssdlab_clock.c - fio's clock made the simulation's clock (part of the ssdlab fio engine).
 *
 * The engine library is LD_PRELOADed by sw/fio/ssdlab-fio, so these definitions of
 * clock_gettime(), nanosleep(), clock_nanosleep() and usleep() come before glibc's for fio.
 * They change nothing until the engine attaches a simulated drive to the calling thread
 * (ssdlab_clock_attach, from the engine's init in the job's thread); from then on, in that
 * thread only:
 *
 *   clock_gettime(CLOCK_MONOTONIC)  returns  offset + simulated ns (sl_time_ns), the offset
 *       chosen so that the clock continues from its value at attach: monotonic, and every
 *       difference fio takes inside the job (runtime, slat, clat, lat, bandwidth windows)
 *       is a difference of simulated time. fio must use clock_gettime as clock source
 *       (--clocksource=clock_gettime; the wrapper passes it, the engine checks it).
 *   nanosleep / clock_nanosleep (relative, CLOCK_MONOTONIC) / usleep  advance the simulation
 *       by the requested time (the bridge's ADVANCE, through the transport's wait with no
 *       event) instead of sleeping: in lockstep, simulated time passes only while the host
 *       asks the drive for something, so a host that sleeps (thinktime, rate limiting, idle
 *       periods) lets the drive run for that long, and fio's own sleep loops terminate.
 *
 * At detach (the engine's cleanup) the thread's clock goes back to the real one, shifted so
 * that it stays monotonic. Other threads (fio's helper thread, verify threads) always see
 * the real clocks, so their timed waits on kernel primitives keep working.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <errno.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>

#include "ssdlab/driver.h"
#include "ssdlab_clock.h"

typedef int (*clock_gettime_fn)(clockid_t, struct timespec *);
typedef int (*nanosleep_fn)(const struct timespec *, struct timespec *);
typedef int (*clock_nanosleep_fn)(clockid_t, int, const struct timespec *, struct timespec *);
typedef int (*usleep_fn)(useconds_t);

static __thread struct sl_ctrl *tl_ctrl;   /* the attached controller (sim transport) */
static __thread int64_t tl_off;            /* clock = base + tl_off; base sim or real ns */
static __thread uint64_t tl_advanced_ns;   /* time the sleeps advanced the simulation */

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

int ssdlab_clock_preloaded(void)
{
    /* The process-wide clock_gettime is this library's only when it was preloaded. */
    return dlsym(RTLD_DEFAULT, "clock_gettime") == (void *)clock_gettime;
}

void ssdlab_clock_attach(struct sl_ctrl *c)
{
    int64_t now = real_mono_ns() + tl_off;
    tl_ctrl = c;
    tl_off = now - (int64_t)sl_time_ns(c);
}

void ssdlab_clock_detach(void)
{
    if (!tl_ctrl)
        return;
    int64_t now = (int64_t)sl_time_ns(tl_ctrl) + tl_off;
    tl_ctrl = NULL;
    tl_off = now - real_mono_ns();
}

uint64_t ssdlab_clock_advanced_ns(void)
{
    return tl_advanced_ns;
}

int clock_gettime(clockid_t clk, struct timespec *ts)
{
    if (!tl_ctrl || clk != CLOCK_MONOTONIC) {
        int r = real_clock_gettime(clk, ts);
        if (r == 0 && clk == CLOCK_MONOTONIC && tl_off) {
            int64_t ns = ts_ns(ts) + tl_off;
            ts->tv_sec = ns / 1000000000;
            ts->tv_nsec = ns % 1000000000;
        }
        return r;
    }
    int64_t ns = (int64_t)sl_time_ns(tl_ctrl) + tl_off;
    ts->tv_sec = ns / 1000000000;
    ts->tv_nsec = ns % 1000000000;
    return 0;
}

/* Let the simulation run ns (no event ends it early). */
static int sim_sleep(int64_t ns)
{
    if (ns <= 0)
        return 0;
    struct sl_transport *t = sl_ctrl_transport(tl_ctrl);
    struct sl_event ev;
    int r = t->ops->wait(t, 0, (uint64_t)ns, &ev);
    if (r < 0) {
        errno = -r;
        return -1;
    }
    tl_advanced_ns += (uint64_t)ns;
    return 0;
}

int nanosleep(const struct timespec *req, struct timespec *rem)
{
    if (!tl_ctrl) {
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
    if (!tl_ctrl || clk != CLOCK_MONOTONIC) {
        static clock_nanosleep_fn fn;
        if (!fn)
            fn = (clock_nanosleep_fn)dlsym(RTLD_NEXT, "clock_nanosleep");
        return fn(clk, flags, req, rem);
    }
    int64_t ns = ts_ns(req);
    if (flags & TIMER_ABSTIME)
        ns -= (int64_t)sl_time_ns(tl_ctrl) + tl_off;
    if (rem)
        rem->tv_sec = rem->tv_nsec = 0;
    return sim_sleep(ns) < 0 ? errno : 0;
}

int usleep(useconds_t us)
{
    if (!tl_ctrl) {
        static usleep_fn fn;
        if (!fn)
            fn = (usleep_fn)dlsym(RTLD_NEXT, "usleep");
        return fn(us);
    }
    return sim_sleep((int64_t)us * 1000);
}
