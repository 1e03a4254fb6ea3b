# SPDX-License-Identifier: BSD-2-Clause
"""ssdlab bench: the review-lab workload suites on a simulated drive or a device (see
suites.py, runner.py; CLI: `python -m sw.ssdlab bench|compare|sweep`)."""
