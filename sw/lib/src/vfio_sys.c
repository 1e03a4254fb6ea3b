// SPDX-License-Identifier: BSD-2-Clause
// vfio_sys.c - the real system calls behind struct sl_vfio_sys.
#include <fcntl.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ssdlab/vfio_sys.h"

static int sys_open(const char *path, int flags)
{
    return open(path, flags);
}

static int sys_ioctl(int fd, unsigned long req, void *arg)
{
    return ioctl(fd, req, arg);
}

const struct sl_vfio_sys sl_vfio_sys_real = {
    .open = sys_open, .close = close, .ioctl = sys_ioctl, .mmap = mmap, .munmap = munmap,
    .readlink = readlink, .access = access, .pread = pread, .pwrite = pwrite,
    .eventfd = eventfd, .read = read, .poll = poll,
};
