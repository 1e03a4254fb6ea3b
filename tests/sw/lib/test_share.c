// SPDX-License-Identifier: BSD-2-Clause
// test_share.c - several submitter threads on one controller (share.h) against the scripted
// controller: each thread's commands go to its own queue, the threads overlap in transport
// time (less time than the same work serialised), runs repeat to the nanosecond, sleeps end
// at their deadline, and the start barrier's and the queue's errors.
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include "fake_dev.h"
#include "../../../sw/lib/src/sl_priv.h"
#include "ssdlab/share.h"
#include "tinytest.h"

#define RAM (64u << 20)
#define CMDS 20                         /* commands per job */

static struct fake_dev dev;

struct job {
    struct sl_share *s;
    struct sl_ctrl *c;
    struct sl_dma *d;
    unsigned qid, n, depth;
    uint64_t sleep_ns;                  /* > 0: sleep this long instead of I/O */
    uint64_t t0, t1, done_ns[CMDS];
    unsigned done;
    int rc;
};

static void cb(const struct sl_cpl *cpl, void *user)
{
    struct job *j = user;
    if (j->done < CMDS)
        j->done_ns[j->done] = cpl->complete_ns;
    j->done++;
}

static void *job_main(void *arg)
{
    struct job *j = arg;
    j->rc = sl_share_join(j->s, j->qid, 5000);
    if (j->rc)
        return NULL;
    CHECK(sl_share_running(j->s));
    CHECK_EQ(sl_share_qid(j->s), j->qid);
    j->t0 = sl_time_ns(j->c);
    if (j->sleep_ns) {
        CHECK_EQ(sl_share_sleep(j->s, j->sleep_ns), 0);
    } else {
        unsigned sent = 0;
        while (j->done < j->n) {
            while (sent < j->n && sent - j->done < j->depth) {
                CHECK_EQ(sl_submit_rw(j->c, j->qid, 1, j->qid * 1000u + sent, 1, j->d,
                                      (size_t)(sent % j->depth) * 4096, cb, j), 0);
                sent++;
            }
            int r = sl_share_wait(j->s, 1, 1000000000ull);
            CHECK(r >= 1);
            if (r < 1)
                break;
        }
    }
    j->t1 = sl_time_ns(j->c);
    sl_share_leave(j->s);
    CHECK(!sl_share_running(j->s));
    return NULL;
}

static struct sl_ctrl *open_ctrl(unsigned queues)
{
    fake_dev_init(&dev, NULL, 0);
    struct sl_ctrl_opts o;
    sl_ctrl_opts_default(&o);
    o.n_io_queues = queues;
    o.io_depth = 8;
    struct sl_ctrl *c = NULL;
    CHECK_EQ(sl_ctrl_open(fake_transport(&dev, RAM), &o, &c), 0);
    return c;
}

/* n jobs on queues 1..n (QD depth each), started together; returns the transport time from
 * the first job's start to the last one's end; job results in js. */
static uint64_t run(unsigned n, unsigned cmds, unsigned depth, struct job *js)
{
    struct sl_ctrl *c = open_ctrl(n);
    struct sl_share *s;
    CHECK_EQ(sl_share_new(c, n, &s), 0);
    struct sl_dma d[8];
    pthread_t th[8];
    for (unsigned i = 0; i < n; i++) {
        CHECK_EQ(sl_dma_alloc(c, 8 * 4096, &d[i]), 0);
        js[i] = (struct job){.s = s, .c = c, .d = &d[i], .qid = i + 1, .n = cmds,
                             .depth = depth};
    }
    for (unsigned i = 0; i < n; i++)
        pthread_create(&th[i], NULL, job_main, &js[i]);
    for (unsigned i = 0; i < n; i++)
        pthread_join(th[i], NULL);
    uint64_t t0 = UINT64_MAX, t1 = 0;
    for (unsigned i = 0; i < n; i++) {
        CHECK_EQ(js[i].rc, 0);
        CHECK_EQ(js[i].done, cmds);
        t0 = js[i].t0 < t0 ? js[i].t0 : t0;
        t1 = js[i].t1 > t1 ? js[i].t1 : t1;
        sl_dma_free(c, &d[i]);
    }
    sl_share_free(s);
    sl_ctrl_close(c);
    return t1 - t0;
}

static void share_own_queues(void)
{
    struct job js[4];
    run(4, CMDS, 1, js);
    /* every job's writes went to its own SQ, and only there */
    unsigned per_q[65] = {0};
    for (int i = 0; i < dev.ncmds; i++)
        if (dev.cmds[i].qid && dev.cmds[i].opc == NVME_CMD_WRITE) {
            per_q[dev.cmds[i].qid]++;
            CHECK_EQ(dev.cmds[i].cdw10 / 1000u, dev.cmds[i].qid);   /* SLBA = qid*1000 + i */
        }
    for (unsigned q = 1; q <= 4; q++)
        CHECK_EQ(per_q[q], CMDS);
    fake_dev_fini(&dev);
}

static void share_overlaps(void)
{
    struct job js[4];
    uint64_t serial = run(1, 2 * CMDS, 1, js);          /* one job does both jobs' work */
    fake_dev_fini(&dev);
    uint64_t two = run(2, CMDS, 1, js);                 /* two jobs, half each */
    fake_dev_fini(&dev);
    fprintf(stderr, "%u QD1 writes: one job %llu ns, two jobs %llu ns\n", 2 * CMDS,
            (unsigned long long)serial, (unsigned long long)two);
    CHECK(serial >= 2u * CMDS * dev.cmd_ns);
    CHECK(two < serial * 2 / 3);                        /* the two jobs overlapped */
}

static void share_repeats(void)
{
    struct job a[4], b[4];
    run(4, CMDS, 2, a);
    fake_dev_fini(&dev);
    run(4, CMDS, 2, b);
    fake_dev_fini(&dev);
    for (unsigned i = 0; i < 4; i++)
        for (unsigned k = 0; k < CMDS; k++)
            CHECK_EQ(a[i].done_ns[k], b[i].done_ns[k]);
}

static void share_sleep(void)
{
    struct sl_ctrl *c = open_ctrl(2);
    struct sl_share *s;
    CHECK_EQ(sl_share_new(c, 2, &s), 0);
    struct sl_dma d;
    CHECK_EQ(sl_dma_alloc(c, 8 * 4096, &d), 0);
    struct job js[2] = {
        {.s = s, .c = c, .d = &d, .qid = 1, .n = CMDS, .depth = 1},
        {.s = s, .c = c, .d = &d, .qid = 2, .sleep_ns = 10000},
    };
    pthread_t th[2];
    for (int i = 0; i < 2; i++)
        pthread_create(&th[i], NULL, job_main, &js[i]);
    for (int i = 0; i < 2; i++)
        pthread_join(th[i], NULL);
    CHECK_EQ(js[1].rc, 0);
    CHECK_EQ(js[1].t1 - js[1].t0, 10000);               /* the sleep ended at its deadline */
    CHECK_EQ(js[0].done, CMDS);                         /* the other job ran meanwhile */
    CHECK(js[0].t1 > js[1].t1);
    sl_dma_free(c, &d);
    sl_share_free(s);
    sl_ctrl_close(c);
    fake_dev_fini(&dev);
}

static void *join_only(void *arg)
{
    struct job *j = arg;
    j->rc = sl_share_join(j->s, j->qid, 200);
    if (j->rc == 0)
        sl_share_leave(j->s);
    return NULL;
}

static void share_errors(void)
{
    struct sl_ctrl *c = open_ctrl(2);
    struct sl_share *s;
    CHECK_EQ(sl_share_new(c, 65, &s), -EINVAL);
    CHECK_STR(sl_errmsg(c), "65 members (1..64)");
    /* one of two members never comes: the barrier gives up */
    CHECK_EQ(sl_share_new(c, 2, &s), 0);
    struct job j = {.s = s, .c = c, .qid = 1};
    join_only(&j);
    CHECK_EQ(j.rc, -ETIMEDOUT);
    CHECK_STR(sl_errmsg(c), "1 of the members never arrived");
    sl_share_free(s);
    /* no such queue; a queue taken twice (the failed member does not hold the start up) */
    CHECK_EQ(sl_share_new(c, 2, &s), 0);
    struct job j3 = {.s = s, .c = c, .qid = 3};
    join_only(&j3);
    CHECK_EQ(j3.rc, -EINVAL);
    CHECK_STR(sl_errmsg(c), "no I/O queue 3 (the controller has 2)");
    struct job j1 = {.s = s, .c = c, .qid = 1};
    join_only(&j1);
    CHECK_EQ(j1.rc, 0);
    CHECK_EQ(sl_share_wait(s, 1, 1000), -EPERM);        /* no token outside a member */
    sl_share_free(s);
    CHECK_EQ(sl_share_new(c, 2, &s), 0);
    struct job ja = {.s = s, .c = c, .qid = 2}, jb = ja;
    pthread_t ta, tb;
    pthread_create(&ta, NULL, join_only, &ja);
    pthread_create(&tb, NULL, join_only, &jb);
    pthread_join(ta, NULL);
    pthread_join(tb, NULL);
    CHECK((ja.rc == 0 && jb.rc == -EBUSY) || (ja.rc == -EBUSY && jb.rc == 0));
    sl_share_free(s);
    sl_ctrl_close(c);
    fake_dev_fini(&dev);
}

TT_MAIN(TT_CASE(share_own_queues), TT_CASE(share_overlaps), TT_CASE(share_repeats),
        TT_CASE(share_sleep), TT_CASE(share_errors))
