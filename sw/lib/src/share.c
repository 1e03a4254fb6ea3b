// SPDX-License-Identifier: BSD-2-Clause
// share.c - several submitter threads on one controller in conservative lockstep (share.h).
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sl_priv.h"
#include "ssdlab/share.h"

enum { M_READY, M_RUNNING, M_BLOCKED, M_LEFT };

struct sl_member {
    unsigned qid;
    int      state;
    int      sleeping;          /* blocked in sl_share_sleep (else waiting for a CQE) */
    uint64_t deadline_ns;       /* transport time it becomes ready at the latest */
    int      err;               /* the driver's transport error, handed to the member */
};

struct sl_share {
    pthread_mutex_t mu;
    pthread_cond_t  cv;
    struct sl_ctrl *c;
    unsigned expected;          /* members still to join or cancel */
    unsigned n_joined;
    int      started;           /* the start barrier fell */
    int      driving;           /* a member is driving the transport */
    int      broken;            /* the start barrier timed out */
    struct sl_member *runner;   /* the token holder */
    struct sl_member m[SL_MAX_QUEUES];
};

static __thread struct sl_member *tl_me;

int sl_share_new(struct sl_ctrl *c, unsigned n_members, struct sl_share **out)
{
    *out = NULL;
    if (n_members < 1 || n_members > SL_MAX_QUEUES)
        return sl_err(c, -EINVAL, "share: %u members (1..%u)", n_members, SL_MAX_QUEUES);
    struct sl_share *s = calloc(1, sizeof(*s));
    if (!s)
        return sl_err(c, -ENOMEM, "share: allocating");
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->cv, NULL);
    s->c = c;
    s->expected = n_members;
    *out = s;
    return 0;
}

void sl_share_free(struct sl_share *s)
{
    if (!s)
        return;
    pthread_cond_destroy(&s->cv);
    pthread_mutex_destroy(&s->mu);
    free(s);
}

static struct sl_member *lowest_ready(struct sl_share *s)
{
    struct sl_member *best = NULL;
    for (unsigned i = 0; i < s->n_joined; i++)
        if (s->m[i].state == M_READY && (!best || s->m[i].qid < best->qid))
            best = &s->m[i];
    return best;
}

static int all_blocked(struct sl_share *s)
{
    int any = 0;
    for (unsigned i = 0; i < s->n_joined; i++) {
        if (s->m[i].state == M_LEFT)
            continue;
        if (s->m[i].state != M_BLOCKED)
            return 0;
        any = 1;
    }
    return any;
}

/* Blocked members whose event came (a new CQE on the queue, the deadline) become ready. */
static int scan(struct sl_share *s)
{
    uint64_t now = s->c->t->ops->time_ns(s->c->t);
    int n = 0;
    for (unsigned i = 0; i < s->n_joined; i++) {
        struct sl_member *m = &s->m[i];
        if (m->state != M_BLOCKED)
            continue;
        if (now >= m->deadline_ns || (!m->sleeping && sl_ring_peek(&s->c->q[m->qid].ring))) {
            m->state = M_READY;
            n++;
        }
    }
    return n;
}

/* Every member is blocked: let transport time pass until one is ready. Called with mu held
 * (nobody else touches the controller: they are all blocked). */
static void drive(struct sl_share *s)
{
    struct sl_transport *t = s->c->t;
    unsigned ev_mask = s->c->opts.use_irq ? SL_EV_IRQ : (t->events & SL_EV_DMA_WRITE);
    while (!scan(s)) {
        uint64_t now = t->ops->time_ns(t), deadline = UINT64_MAX;
        unsigned mask = 0;
        int spin = 0;
        for (unsigned i = 0; i < s->n_joined; i++) {
            struct sl_member *m = &s->m[i];
            if (m->state != M_BLOCKED)
                continue;
            if (m->deadline_ns < deadline)
                deadline = m->deadline_ns;
            if (!m->sleeping) {
                mask |= ev_mask;
                spin |= !ev_mask;
            }
        }
        if (spin)
            continue;                   /* polling without events: look at the CQs again */
        struct sl_event ev;
        int rc = t->ops->wait(t, mask, deadline - now, &ev);
        if (rc < 0) {
            sl_err_t(s->c, rc, "waiting for completions");
            for (unsigned i = 0; i < s->n_joined; i++)
                if (s->m[i].state == M_BLOCKED) {
                    s->m[i].state = M_READY;
                    s->m[i].err = rc;
                }
            return;
        }
    }
}

/* With mu held: hand the token on if it is free; drive when everyone is blocked. Returns
 * when the caller holds the token (or, for a member that left, at once). */
static void schedule(struct sl_share *s, struct sl_member *me)
{
    for (;;) {
        if (!s->runner) {
            struct sl_member *next = lowest_ready(s);
            if (next) {
                next->state = M_RUNNING;
                __atomic_store_n(&s->runner, next, __ATOMIC_RELEASE);
                pthread_cond_broadcast(&s->cv);
            } else if (!s->driving && all_blocked(s) && me && me->state == M_BLOCKED) {
                s->driving = 1;
                drive(s);
                s->driving = 0;
                continue;
            }
        }
        if (!me || me->state == M_LEFT || s->runner == me)
            return;
        pthread_cond_wait(&s->cv, &s->mu);
    }
}

static int wait_start(struct sl_share *s, unsigned barrier_ms)
{
    struct timespec dl;
    clock_gettime(CLOCK_REALTIME, &dl);
    dl.tv_sec += barrier_ms / 1000;
    dl.tv_nsec += (long)(barrier_ms % 1000) * 1000000L;
    if (dl.tv_nsec >= 1000000000L) {
        dl.tv_sec++;
        dl.tv_nsec -= 1000000000L;
    }
    while (!s->started && !s->broken)
        if (pthread_cond_timedwait(&s->cv, &s->mu, &dl) == ETIMEDOUT && !s->started) {
            s->broken = 1;
            pthread_cond_broadcast(&s->cv);
        }
    return s->broken ? -ETIMEDOUT : 0;
}

static void arrived(struct sl_share *s)
{
    if (--s->expected == 0) {
        s->started = 1;
        pthread_cond_broadcast(&s->cv);
    }
}

int sl_share_join(struct sl_share *s, unsigned qid, unsigned barrier_ms)
{
    struct sl_ctrl *c = s->c;
    pthread_mutex_lock(&s->mu);
    int rc = 0;
    if (qid < 1 || qid > c->n_io || !c->q[qid].reqs)
        rc = sl_err(c, -EINVAL, "share: no I/O queue %u (the controller has %u)", qid, c->n_io);
    for (unsigned i = 0; rc == 0 && i < s->n_joined; i++)
        if (s->m[i].qid == qid && s->m[i].state != M_LEFT)
            rc = sl_err(c, -EBUSY, "share: queue %u has a submitter already", qid);
    if (rc == 0 && (s->started || s->broken || s->n_joined >= SL_MAX_QUEUES))
        rc = sl_err(c, -EINVAL, "share: joining after the start (%u members)", s->n_joined);
    if (rc < 0) {
        if (!s->started && !s->broken)
            arrived(s);
        pthread_mutex_unlock(&s->mu);
        return rc;
    }
    struct sl_member *me = &s->m[s->n_joined++];
    memset(me, 0, sizeof(*me));
    me->qid = qid;
    me->state = M_READY;
    tl_me = me;
    arrived(s);
    if (wait_start(s, barrier_ms) < 0) {
        me->state = M_LEFT;
        tl_me = NULL;
        rc = sl_err(c, -ETIMEDOUT, "share: %u of the members never arrived within %u ms",
                    s->expected, barrier_ms);
        pthread_mutex_unlock(&s->mu);
        return rc;
    }
    schedule(s, me);
    pthread_mutex_unlock(&s->mu);
    return 0;
}

void sl_share_cancel(struct sl_share *s)
{
    pthread_mutex_lock(&s->mu);
    if (!s->started && !s->broken)
        arrived(s);
    pthread_mutex_unlock(&s->mu);
}

void sl_share_leave(struct sl_share *s)
{
    struct sl_member *me = tl_me;
    if (!me)
        return;
    pthread_mutex_lock(&s->mu);
    me->state = M_LEFT;
    tl_me = NULL;
    if (s->runner == me)
        __atomic_store_n(&s->runner, NULL, __ATOMIC_RELEASE);
    pthread_cond_broadcast(&s->cv);     /* the token, or the driving, passes to another */
    schedule(s, NULL);
    pthread_mutex_unlock(&s->mu);
}

/* The token holder blocks until its event; returns the driver's error, if any. */
static int block(struct sl_share *s, struct sl_member *me, int sleeping, uint64_t deadline_ns)
{
    pthread_mutex_lock(&s->mu);
    me->sleeping = sleeping;
    me->deadline_ns = deadline_ns;
    me->err = 0;
    me->state = M_BLOCKED;
    __atomic_store_n(&s->runner, NULL, __ATOMIC_RELEASE);
    scan(s);                            /* an event that came already is not waited for */
    schedule(s, me);
    int err = me->err;
    pthread_mutex_unlock(&s->mu);
    return err;
}

static struct sl_member *holder(const struct sl_share *s)
{
    struct sl_member *me = tl_me;
    return me && __atomic_load_n(&s->runner, __ATOMIC_ACQUIRE) == me ? me : NULL;
}

int sl_share_wait(struct sl_share *s, unsigned min, uint64_t timeout_ns)
{
    struct sl_member *me = holder(s);
    struct sl_ctrl *c = s->c;
    if (!me)
        return sl_err(c, -EPERM, "share: waiting without the run token");
    struct sl_transport *t = c->t;
    uint64_t now = t->ops->time_ns(t);
    uint64_t deadline = timeout_ns > UINT64_MAX - now ? UINT64_MAX : now + timeout_ns;
    int got = 0;
    for (;;) {
        int n = sl_reap(c, me->qid, 0);
        if (n < 0)
            return n;
        got += n;
        if ((unsigned)got >= min)
            return got;
        if (t->ops->time_ns(t) >= deadline)
            return sl_err(c, -ETIMEDOUT, "queue %u: %d of %u completions after %llu ns (%u in "
                          "flight)", me->qid, got, min, (unsigned long long)timeout_ns,
                          c->q[me->qid].inflight);
        int rc = block(s, me, 0, deadline);
        if (rc < 0)
            return rc;
    }
}

int sl_share_sleep(struct sl_share *s, uint64_t ns)
{
    struct sl_member *me = holder(s);
    if (!me)
        return sl_err(s->c, -EPERM, "share: sleeping without the run token");
    uint64_t now = s->c->t->ops->time_ns(s->c->t);
    return block(s, me, 1, ns > UINT64_MAX - now ? UINT64_MAX : now + ns);
}

int sl_share_running(const struct sl_share *s)
{
    return s && holder(s) != NULL;
}

unsigned sl_share_qid(const struct sl_share *s)
{
    (void)s;
    return tl_me ? tl_me->qid : 0;
}

unsigned sl_share_members(const struct sl_share *s)
{
    return s->n_joined;
}
