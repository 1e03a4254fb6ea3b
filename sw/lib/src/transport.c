// SPDX-License-Identifier: BSD-2-Clause
// transport.c - calls through the transport ops table that applications use directly.
#include <errno.h>

#include "sl_priv.h"

void sl_transport_close(struct sl_transport *t)
{
    if (t)
        t->ops->close(t);
}

int sl_transport_stats(struct sl_transport *t, char *buf, size_t len)
{
    if (!t->ops->stats)
        return sl_terr(t, -ENOTSUP, "%s: no statistics", t->ops->name);
    return t->ops->stats(t, buf, len);
}

int sl_transport_reset(struct sl_transport *t)
{
    if (!t->ops->reset)
        return sl_terr(t, -ENOTSUP, "%s: no device reset", t->ops->name);
    return t->ops->reset(t);
}

int sl_transport_power_cut(struct sl_transport *t)
{
    if (!t->ops->power_cut)
        return sl_terr(t, -ENOTSUP, "%s: no power cut", t->ops->name);
    return t->ops->power_cut(t);
}

const char *sl_transport_name(const struct sl_transport *t)
{
    return t->ops->name;
}

int sl_transport_sleep(struct sl_transport *t, uint64_t ns)
{
    struct sl_event ev;
    return t->ops->wait(t, 0, ns, &ev);
}
