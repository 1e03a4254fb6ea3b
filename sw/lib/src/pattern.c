// SPDX-License-Identifier: BSD-2-Clause
// pattern.c - deterministic per-block test data (seed, LBA) for write/verify.
#include <string.h>

#include "sl_priv.h"

static uint64_t splitmix64(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static uint64_t word_at(uint64_t seed, uint64_t lba, size_t i, uint64_t *state, size_t *next)
{
    if (i == 0 || i != *next) {
        *state = seed * 0x2545f4914f6cdd1dull ^ (lba + 1) * 0x9e3779b97f4a7c15ull;
        for (size_t k = 0; k < i; k++)
            splitmix64(state);
    }
    *next = i + 1;
    return splitmix64(state);
}

void sl_pattern_fill(uint64_t seed, uint64_t lba, void *buf, size_t len)
{
    uint8_t *p = buf;
    uint64_t state = 0;
    size_t next = 0;
    for (size_t i = 0; i * 8 < len; i++) {
        uint64_t w = word_at(seed, lba, i, &state, &next);
        size_t n = len - i * 8 < 8 ? len - i * 8 : 8;
        memcpy(p + i * 8, &w, n);
    }
}

long sl_pattern_check(uint64_t seed, uint64_t lba, const void *buf, size_t len)
{
    const uint8_t *p = buf;
    uint64_t state = 0;
    size_t next = 0;
    for (size_t i = 0; i * 8 < len; i++) {
        uint64_t w = word_at(seed, lba, i, &state, &next);
        size_t n = len - i * 8 < 8 ? len - i * 8 : 8;
        const uint8_t *wb = (const uint8_t *)&w;
        for (size_t k = 0; k < n; k++)
            if (p[i * 8 + k] != wb[k])
                return (long)(i * 8 + k);
    }
    return -1;
}
