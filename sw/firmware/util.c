/* SPDX-License-Identifier: BSD-2-Clause */
/* util.c - freestanding helpers: mem*, console, LE field packing, buffer-memory word access,
 * the copy-engine bookkeeping and the table allocator. */
#include "fw.h"

#ifndef FW_HOST
/* No libc on the target; gcc may emit calls to these for struct copies and clears (used:
 * with -flto they are called from code the link-time optimiser generates). Whole words where
 * the addresses allow: each store goes to the bus (VexRiscv's data cache writes through). */
__attribute__((used)) void *memset(void *d, int c, size_t n)
{
    uint8_t *p = d;
    if (!((uintptr_t)p & 3)) {
        uint32_t w = (uint8_t)c * 0x01010101u;
        for (; n >= 4; n -= 4, p += 4)
            *(uint32_t *)p = w;
    }
    while (n--)
        *p++ = (uint8_t)c;
    return d;
}

__attribute__((used)) void *memcpy(void *d, const void *s, size_t n)
{
    uint8_t *p = d;
    const uint8_t *q = s;
    if (!(((uintptr_t)p | (uintptr_t)q) & 3))
        for (; n >= 4; n -= 4, p += 4, q += 4)
            *(uint32_t *)p = *(const uint32_t *)q;
    while (n--)
        *p++ = *q++;
    return d;
}
#endif

void fw_puts(const char *s)
{
    while (*s)
        hal_putc(*s++);
}

void fw_put_hex(uint32_t v)
{
    for (int i = 28; i >= 0; i -= 4)
        hal_putc("0123456789abcdef"[(v >> i) & 15]);
}

/* After a failure (a panic, or a boot the watchdog caused), with CSTS.CFS set: the hardware
 * read path off (the tables it reads are about to be rebuilt), the flash's outstanding
 * completions drained; once the host resets the controller (CC.EN 1 -> 0, as a host does on
 * CFS), every target RESET (the boot expects the dies as after power-on) and the reset
 * acknowledged. */
void fw_recover(void)
{
    hal_hw_read_setup(0, false);
    for (;;) {
        struct hal_flash_cpl c;
        while (hal_flash_pop(&c))
            ;
        if (hal_ctrl_reset_pending())
            break;
    }
    uint64_t t = hal_cycles();
    while (hal_cycles() - t < 100000) {         /* stragglers of ops already on the bus */
        struct hal_flash_cpl c;
        while (hal_flash_pop(&c))
            ;
    }
    /* a RESET to every target in the interface they run now (it ends any op in progress and
     * returns them to SDR mode 0), then the channels back to SDR */
    const struct hal_ident *id = &G.id;
    uint32_t targets = id->n_channels * id->n_ways, done = 0;
    for (uint32_t k = 0; k < targets; k++) {
        struct hal_flash_op op = { .op = FLASH_RESET, .plane_mask = 1,
                                   .channel = (uint8_t)(k % id->n_channels),
                                   .way = (uint8_t)(k / id->n_channels) };
        struct hal_flash_cpl c;
        while (!hal_flash_push(&op))
            done += hal_flash_pop(&c);
    }
    t = hal_cycles();
    while (done < targets && hal_cycles() - t < 10000000) {
        struct hal_flash_cpl c;
        done += hal_flash_pop(&c);
    }
    hal_flash_nvddr2(false);
    hal_ctrl_reset_ack();
}

#ifndef FW_HOST
/* A failure the firmware cannot go on from: CSTS.CFS for the host, the watchdog off (the
 * wait for the host spins), fw_recover; then the firmware starts again from its reset entry:
 * the boot loads the checkpoint and journal, so what was durable stays. */
void fw_panic(const char *why)
{
    fw_puts("firmware panic: ");
    fw_puts(why);
    hal_putc('\n');
    hal_watchdog_setup(0);
    hal_fatal(true);
    fw_recover();
    fw_puts("firmware restart after the controller reset\n");
    extern void _start(void) __attribute__((noreturn));
    _start();
}
#endif

void put_le(uint8_t *p, unsigned size, uint64_t v)
{
    for (unsigned i = 0; i < size; i++) {
        p[i] = (uint8_t)v;
        v = i < 7 ? v >> 8 : 0;
    }
}

void put_str(uint8_t *p, unsigned size, const char *s)
{
    unsigned i = 0;
    for (; i < size && s[i]; i++)
        p[i] = (uint8_t)s[i];
    for (; i < size; i++)
        p[i] = ' ';
}

/* Word accesses: the fast ones on the uncached window. */
void buf_write32(uint32_t a, uint32_t v)
{
    *(volatile uint32_t *)(hal_buf() + a) = v;
}

uint32_t buf_read32(uint32_t a)
{
    return *(volatile uint32_t *)(hal_buf() + a);
}

void buf_write(uint32_t a, const void *src, uint32_t bytes)
{
    const uint8_t *s = src;
    for (uint32_t i = 0; i < bytes; i += 4) {
        uint32_t w = 0;
        for (uint32_t k = 0; k < 4 && i + k < bytes; k++)
            w |= (uint32_t)s[i + k] << (8 * k);
        buf_write32(a + i, w);
    }
}

void buf_read(void *dst, uint32_t a, uint32_t bytes)
{
    uint8_t *d = dst;
    for (uint32_t i = 0; i < bytes; i += 4) {
        uint32_t w = buf_read32(a + i);
        for (uint32_t k = 0; k < 4 && i + k < bytes; k++)
            d[i + k] = (uint8_t)(w >> (8 * k));
    }
}

/* The copy engine counts finished jobs since reset; we count the ones we issued. Both wrap
 * at 2^32, so "done" is a signed difference. */
static uint32_t issued, base;
static bool base_set;

/* Boot: the engine's count restarts with the SoC; take a new base. */
void copy_reset(void)
{
    base_set = false;
    issued = 0;
}

static void copy_base(void)
{
    if (!base_set) {
        base = hal_copy_done();
        base_set = true;
    }
}

void copy_start(uint32_t dst, uint32_t src, uint32_t bytes)
{
    copy_base();
    while (!hal_copy(dst, src, bytes))
        ;
    issued++;
}

void fill_start(uint32_t dst, uint64_t pattern, uint32_t bytes)
{
    copy_base();
    while (!hal_fill(dst, pattern, bytes))
        ;
    issued++;
}

void xor_start(uint32_t dst, uint32_t src, uint32_t bytes)
{
    copy_base();
    while (!hal_xor(dst, src, bytes))
        ;
    issued++;
}

uint32_t copy_issued(void)
{
    return issued;
}

bool copy_reached(uint32_t target)
{
    copy_base();
    return (int32_t)(hal_copy_done() - base - target) >= 0;
}

void copy_wait(void)
{
    while (!copy_reached(issued))
        ;
}

/* Tables live in main RAM (linker symbols _heap_start/_heap_end on the target); what does
 * not fit goes to the top of the firmware's buffer-memory slots (see README, memory budget). */
#ifdef FW_HOST
#define HOST_HEAP (64u << 20)
static uint8_t host_heap[HOST_HEAP] __attribute__((aligned(8)));
uint32_t fw_host_heap_bytes = HOST_HEAP;        /* tests shrink it to reach the fallback */
#define HEAP_START (host_heap)
#define HEAP_END   (host_heap + fw_host_heap_bytes)
#else
extern uint8_t _heap_start[], _heap_end[];
#define HEAP_START (_heap_start)
#define HEAP_END   (_heap_end)
#endif
static uint32_t ram_used, buf_used;
uint32_t fw_buf_limit;          /* first slot above the firmware's buffer tables (ftl.c) */

void fw_alloc_reset(void)
{
    ram_used = buf_used = 0;
}

void *fw_alloc(uint32_t bytes)
{
    bytes = (bytes + 7) & ~7u;
    if ((uint32_t)(HEAP_END - HEAP_START) - ram_used >= bytes) {
        void *p = HEAP_START + ram_used;
        ram_used += bytes;
        memset(p, 0, bytes);
        return p;
    }
    /* Buffer memory: carve from the top of the slots, below what is already carved. */
    uint32_t top = G.id.buf_slots * SLOT_BYTES - buf_used;
    uint32_t floor = fw_buf_limit * SLOT_BYTES;
    if (top < floor + bytes)
        fw_panic("tables do not fit in RAM nor buffer memory");
    buf_used += bytes;
    /* the window is uncached memory: plain accesses are fine, just slower than RAM */
    return (void *)(hal_buf() + top - bytes);
}

uint32_t fw_alloc_used_ram(void)
{
    return ram_used;
}

uint32_t fw_alloc_used_buf(void)
{
    return buf_used;
}
