// SPDX-License-Identifier: BSD-2-Clause
// Python's random.Random (see nand_random.h): CPython's _randommodule.c, function for
// function.
#include "nand_random.h"

#include <algorithm>

namespace nandfast {

void PyRandom::init_genrand(uint32_t s) {
    mt_[0] = s;
    for (mti_ = 1; mti_ < 624; mti_++)
        mt_[mti_] = 1812433253U * (mt_[mti_ - 1] ^ (mt_[mti_ - 1] >> 30)) + (uint32_t)mti_;
}

void PyRandom::seed_int(int64_t seed) {
    // random.seed(int): init_by_array over the 32-bit words of abs(seed), LSW first.
    uint64_t a = seed < 0 ? (uint64_t)(-(seed + 1)) + 1 : (uint64_t)seed;
    uint32_t key[2];
    size_t klen = 0;
    if (a == 0) {
        key[klen++] = 0;
    } else {
        while (a) {
            key[klen++] = (uint32_t)a;
            a >>= 32;
        }
    }
    init_genrand(19650218U);
    size_t i = 1, j = 0;
    for (size_t k = std::max<size_t>(624, klen); k; k--) {
        mt_[i] = (mt_[i] ^ ((mt_[i - 1] ^ (mt_[i - 1] >> 30)) * 1664525U)) + key[j] +
                 (uint32_t)j;
        i++;
        j++;
        if (i >= 624) {
            mt_[0] = mt_[623];
            i = 1;
        }
        if (j >= klen) j = 0;
    }
    for (size_t k = 623; k; k--) {
        mt_[i] = (mt_[i] ^ ((mt_[i - 1] ^ (mt_[i - 1] >> 30)) * 1566083941U)) - (uint32_t)i;
        i++;
        if (i >= 624) {
            mt_[0] = mt_[623];
            i = 1;
        }
    }
    mt_[0] = 0x80000000U;
    mti_ = 624;
}

uint32_t PyRandom::genrand() {
    static const uint32_t mag01[2] = {0, 0x9908b0dfU};
    uint32_t y;
    if (mti_ >= 624) {
        int kk;
        for (kk = 0; kk < 624 - 397; kk++) {
            y = (mt_[kk] & 0x80000000U) | (mt_[kk + 1] & 0x7fffffffU);
            mt_[kk] = mt_[kk + 397] ^ (y >> 1) ^ mag01[y & 1];
        }
        for (; kk < 623; kk++) {
            y = (mt_[kk] & 0x80000000U) | (mt_[kk + 1] & 0x7fffffffU);
            mt_[kk] = mt_[kk + (397 - 624)] ^ (y >> 1) ^ mag01[y & 1];
        }
        y = (mt_[623] & 0x80000000U) | (mt_[0] & 0x7fffffffU);
        mt_[623] = mt_[396] ^ (y >> 1) ^ mag01[y & 1];
        mti_ = 0;
    }
    y = mt_[mti_++];
    y ^= (y >> 11);
    y ^= (y << 7) & 0x9d2c5680U;
    y ^= (y << 15) & 0xefc60000U;
    y ^= (y >> 18);
    return y;
}

double PyRandom::random() {
    uint32_t a = genrand() >> 5, b = genrand() >> 6;
    return (a * 67108864.0 + b) * (1.0 / 9007199254740992.0);
}

std::vector<uint8_t> PyRandom::randbytes(size_t n) {
    // getrandbits(n * 8).to_bytes(n, "little"): 32-bit words LSW first, the last one short.
    std::vector<uint8_t> out(n);
    size_t k = n * 8, pos = 0;
    while (k > 0) {
        uint32_t r = genrand();
        size_t bits = k < 32 ? k : 32;
        if (k < 32) r >>= (32 - k);
        for (size_t b = 0; b < bits; b += 8) out[pos++] = (uint8_t)(r >> b);
        k -= bits;
    }
    return out;
}

}  // namespace nandfast
