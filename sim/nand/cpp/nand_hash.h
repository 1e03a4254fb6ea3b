// SPDX-License-Identifier: BSD-2-Clause
// Hashes of the fast NAND die model: mix64 (the golden _mix64, factory bad blocks and the
// vector files' data patterns), the ONFI parameter page CRC-16 and CRC-32 (vector files).
#pragma once

#include <cstddef>
#include <cstdint>

namespace nandfast {

inline uint64_t mix64(uint64_t x) {
    x += 0x9E3779B97F4A7C15ULL;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
    return x ^ (x >> 31);
}

inline uint16_t onfi_crc16(const uint8_t *data, size_t n) {
    uint32_t crc = 0x4F4E;
    for (size_t i = 0; i < n; i++) {
        crc ^= (uint32_t)data[i] << 8;
        for (int b = 0; b < 8; b++) crc = (crc & 0x8000) ? ((crc << 1) ^ 0x8005) : crc << 1;
        crc &= 0xFFFF;
    }
    return (uint16_t)crc;
}

inline uint32_t crc32(const uint8_t *data, size_t n) {
    uint32_t crc = 0xFFFFFFFFU;
    for (size_t i = 0; i < n; i++) {
        crc ^= data[i];
        for (int b = 0; b < 8; b++) crc = (crc >> 1) ^ (0xEDB88320U & (0U - (crc & 1)));
    }
    return ~crc;
}

}  // namespace nandfast
