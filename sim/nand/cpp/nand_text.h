// SPDX-License-Identifier: BSD-2-Clause
// Message formatting shared by the fast NAND die model's .cpp files (not part of the
// public header nand_die_fast.h): printf into a std::string, Python's str() of a float.
#pragma once

#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace nandfast {

inline std::string fmt(const char *f, ...) __attribute__((format(printf, 1, 2)));
inline std::string fmt(const char *f, ...) {
    char buf[512];
    va_list ap;
    va_start(ap, f);
    vsnprintf(buf, sizeof buf, f, ap);
    va_end(ap);
    return buf;
}

// Python's str() of a float time (repr): shortest round trip, ".0" for integral values.
inline std::string pyfloat(double v) {
    char buf[64];
    if (v == std::floor(v) && std::fabs(v) < 1e16) {
        snprintf(buf, sizeof buf, "%.1f", v);
        return buf;
    }
    for (int p = 1; p < 18; p++) {
        snprintf(buf, sizeof buf, "%.*g", p, v);
        if (std::strtod(buf, nullptr) == v) return buf;
    }
    snprintf(buf, sizeof buf, "%.17g", v);
    return buf;
}

}  // namespace nandfast
