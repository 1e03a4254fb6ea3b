/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * share.h - several host threads on one controller, each on its own I/O queue, advancing one
 * transport clock in conservative lockstep (sw/lib/README.md, "Several submitters").
 *
 * Members run one at a time (a run token): a member runs host code with the token until it
 * blocks (sl_share_wait, sl_share_sleep) or leaves; the token then goes to the lowest-qid
 * member that is ready. When every member is blocked, the one that blocked last drives the
 * transport (the simulation's WAIT / ADVANCE) until an event for a waiting member (a new CQE
 * on its queue, its deadline) makes it ready. Host code therefore costs zero transport time,
 * time advances only while every submitter waits, and the interleaving is a function of the
 * device's behaviour alone: runs are deterministic.
 *
 * Only the token holder may touch the controller (sl_queue, sl_ring, sl_reap, DMA memory).
 */
#ifndef SSDLAB_SHARE_H
#define SSDLAB_SHARE_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct sl_ctrl;
struct sl_share;

/* A share of c for n_members members (1..64) that start together. */
int  sl_share_new(struct sl_ctrl *c, unsigned n_members, struct sl_share **out);
/* After every member left (or never came). */
void sl_share_free(struct sl_share *s);
/* The calling thread joins as the submitter of I/O queue qid (1..the controller's I/O
 * queues, one member per queue). Returns once all n_members joined (or cancelled) and the
 * caller holds the run token; -ETIMEDOUT when they did not all arrive within barrier_ms of
 * wall time, -EBUSY when qid has a member already. */
int  sl_share_join(struct sl_share *s, unsigned qid, unsigned barrier_ms);
/* A member that will not join (its set-up failed): the start barrier stops waiting for it. */
void sl_share_cancel(struct sl_share *s);
/* The caller (token holder) leaves; the token goes on. */
void sl_share_leave(struct sl_share *s);
/* Token holder: reap its queue until `min` completions arrived (callbacks run here), letting
 * time pass while every member waits. The number reaped, -ETIMEDOUT after timeout_ns of
 * transport time (what was reaped is reaped), or another negative errno. */
int  sl_share_wait(struct sl_share *s, unsigned min, uint64_t timeout_ns);
/* Token holder: let ns of transport time pass for the caller (others run meanwhile). */
int  sl_share_sleep(struct sl_share *s, uint64_t ns);
/* 1 when the calling thread is a member holding the token. */
int  sl_share_running(const struct sl_share *s);
/* The calling thread's queue (0: not a member). */
unsigned sl_share_qid(const struct sl_share *s);
/* Members joined so far. */
unsigned sl_share_members(const struct sl_share *s);

#ifdef __cplusplus
}
#endif

#endif /* SSDLAB_SHARE_H */
