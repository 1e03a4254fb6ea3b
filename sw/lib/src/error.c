// SPDX-License-Identifier: BSD-2-Clause
// error.c - error messages of transports and of the controller.
#include <stdio.h>
#include <string.h>

#include "sl_priv.h"

static char open_err[256];

int sl_terr(struct sl_transport *t, int err, const char *fmt, ...)
{
    char *dst = t ? t->err : open_err;
    size_t cap = t ? sizeof(t->err) : sizeof(open_err);
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(dst, cap, fmt, ap);
    va_end(ap);
    if (err < 0 && n >= 0 && (size_t)n < cap)
        snprintf(dst + n, cap - (size_t)n, ": %s", strerror(-err));
    return err;
}

const char *sl_transport_open_errmsg(void)
{
    return open_err;
}

const char *sl_transport_errmsg(const struct sl_transport *t)
{
    return t ? t->err : open_err;
}

int sl_err(struct sl_ctrl *c, int err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->err, sizeof(c->err), fmt, ap);
    va_end(ap);
    return err;
}

int sl_err_t(struct sl_ctrl *c, int err, const char *what)
{
    if (c->t->err[0])
        snprintf(c->err, sizeof(c->err), "%s: %s", what, c->t->err);
    else
        snprintf(c->err, sizeof(c->err), "%s: %s", what, strerror(err < 0 ? -err : err));
    c->t->err[0] = 0;
    return err;
}

int sl_nvme_err(struct sl_ctrl *c, int status, const char *what)
{
    char s[128];
    if (status > 0)
        snprintf(c->err, sizeof(c->err), "%s: %s", what,
                 sl_status_str((uint16_t)status, s, sizeof(s)));
    return status;
}

const char *sl_errmsg(const struct sl_ctrl *c)
{
    return c ? c->err : open_err;
}
