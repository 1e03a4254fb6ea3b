/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * vfio_sys.h - the system calls the VFIO transport makes, behind a table so that unit tests
 * can check the sequence against a fake (tests/sw/lib/test_vfio.c). sl_vfio_sys_real calls
 * the C library.
 */
#ifndef SSDLAB_VFIO_SYS_H
#define SSDLAB_VFIO_SYS_H

#include <poll.h>
#include <stddef.h>
#include <sys/types.h>

#include "ssdlab/transport.h"

struct sl_vfio_sys {
    int     (*open)(const char *path, int flags);
    int     (*close)(int fd);
    int     (*ioctl)(int fd, unsigned long req, void *arg);
    void   *(*mmap)(void *addr, size_t len, int prot, int flags, int fd, off_t off);
    int     (*munmap)(void *addr, size_t len);
    ssize_t (*readlink)(const char *path, char *buf, size_t len);
    int     (*access)(const char *path, int mode);
    ssize_t (*pread)(int fd, void *buf, size_t len, off_t off);
    ssize_t (*pwrite)(int fd, const void *buf, size_t len, off_t off);
    int     (*eventfd)(unsigned int initval, int flags);
    ssize_t (*read)(int fd, void *buf, size_t len);
    int     (*poll)(struct pollfd *fds, nfds_t n, int timeout_ms);
};

extern const struct sl_vfio_sys sl_vfio_sys_real;

/* sl_transport_open_vfio with a given system-call table. */
int sl_transport_open_vfio_sys(const char *pci_addr, const struct sl_vfio_sys *sys,
                               struct sl_transport **out);

#endif /* SSDLAB_VFIO_SYS_H */
