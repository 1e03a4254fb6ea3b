// SPDX-License-Identifier: BSD-2-Clause
// Python's random.Random for the fast NAND die model: MT19937 with CPython's seeding, so
// the bit flips and aborted-program contents match the golden model bit for bit.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace nandfast {

// Python's random.Random (MT19937 with CPython's seeding), for bit-exact flips.
class PyRandom {
  public:
    explicit PyRandom(int64_t seed = 0) { seed_int(seed); }
    void seed_int(int64_t seed);
    uint32_t genrand();
    double random();
    std::vector<uint8_t> randbytes(size_t n);

  private:
    uint32_t mt_[624];
    int mti_ = 625;
    void init_genrand(uint32_t s);
};

}  // namespace nandfast
