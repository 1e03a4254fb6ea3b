// SPDX-License-Identifier: BSD-2-Clause
// C++ side of the harness's extra-sources self-test: a DPI function the SV top calls.
#include "dpi_probe.h"

extern "C" int ssdlab_dpi_probe_mix(int value) { return dpi_probe_mix(value); }
