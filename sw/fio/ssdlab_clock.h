/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ssdlab_clock.h - the clock shim of the ssdlab fio engine (ssdlab_clock.c says how it works).
 */
#ifndef SSDLAB_CLOCK_H
#define SSDLAB_CLOCK_H

#include <stdint.h>

struct sl_ctrl;
struct sl_share;

/* 1 when the engine library was LD_PRELOADed (its clock_gettime is the process's). */
int ssdlab_clock_preloaded(void);
/* From now on fio's CLOCK_MONOTONIC (every process and thread of the run) is c's simulated
 * time, and the calling thread (a member of `share`) sleeps in simulated time. Several
 * threads of one process may attach the same controller. -EBUSY: another drive is the clock. */
int ssdlab_clock_attach(struct sl_ctrl *c, struct sl_share *share);
/* This thread lets go; after the last one the clock is the real clock again (shifted to stay
 * monotonic). */
void ssdlab_clock_detach(void);
/* Simulated ns the calling thread's sleeps advanced the drive by. */
uint64_t ssdlab_clock_advanced_ns(void);

#endif /* SSDLAB_CLOCK_H */
