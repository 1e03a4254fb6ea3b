# SPDX-License-Identifier: BSD-2-Clause
# ssdlab: a thin shim over `ssdlab` (python -m sw.ssdlab), the one front door for the flows;
# installers in setup/, the test harness in tests/lib/.

PYTHON  := .venv/bin/python
SSDLAB  := $(PYTHON) -m sw.ssdlab
T       ?= tests
JOBS    ?= $(shell nproc)
# Passed through to the harness (tests/lib/ssdlab_harness.py).
export WAVES SEED
# The Verilator the tests use: $(VERILATOR) if given, else the one setup/verilator.sh finds
# or builds (>= 5.036), resolved after `deps` has run.
VERILATOR_CMD = $${VERILATOR:-$$(setup/verilator.sh)}

.DEFAULT_GOAL := help
.PHONY: help deps sim profile test test-full lint synth wave clean lock bench linux

help: ## list the targets
	@echo "ssdlab make targets:"
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-10s %s\n", $$1, $$2}'
	@echo "variables: T=<test path or node id> SEED=<n> WAVES=1 JOBS=<n> VERILATOR=<path>"

deps: ## install everything: Debian packages, .venv from requirements.lock, Verilator >= 5.036
	@setup/deps.sh

sim: deps ## build and start the simulated drive (default persona, sim scale): make sim [PERSONA=name]
	VERILATOR=$(VERILATOR_CMD) $(SSDLAB) sim run --persona $(or $(PERSONA),default)

profile: deps ## where the simulation's wall time goes (perf): make profile [PERSONA= ARGS="--channels 2"]
	VERILATOR=$(VERILATOR_CMD) $(SSDLAB) sim profile --persona $(or $(PERSONA),default) \
	    $(or $(ARGS),--channels 2)

# make bench: the main job. PARAMS= (empty) benches the persona as it is (8 channels for the
# default); ARGS= passes any other `ssdlab bench` option (--out DIR, --time-scale F, ...).
SUITE   ?= review
PROFILE ?= quick
PARAMS  ?= n_channels=2
bench: deps ## the main job: review suite on the default persona: make bench [PERSONA= SUITE= PROFILE= PARAMS= ARGS=]
	VERILATOR=$(VERILATOR_CMD) $(SSDLAB) bench --persona $(or $(PERSONA),default) \
	    --suite $(SUITE) --profile $(PROFILE) $(foreach p,$(PARAMS),--param $(p)) $(ARGS)

# make linux: a VM's stock Linux on the drive (QEMU vfio-user; the first run builds QEMU, about
# 3 min). SCRIPT= runs a guest script, ACCEPTANCE=1 sw/linux/acceptance.sh; else a shell.
linux: deps ## stock Linux (nvme, nvme-cli, fio) on the simulated drive: make linux [PERSONA= SCRIPT= ACCEPTANCE=1 ARGS=]
	VERILATOR=$(VERILATOR_CMD) $(SSDLAB) linux --persona $(or $(PERSONA),default) \
	    $(if $(SCRIPT),--script $(SCRIPT)) $(if $(ACCEPTANCE),--acceptance) \
	    $(or $(ARGS),--channels 2)

test: deps ## smoke tier (CI): make test [T=tests/nand] [SEED=n] [WAVES=1] [JOBS=n]
	VERILATOR=$(VERILATOR_CMD) $(PYTHON) -m pytest -m smoke -n $(JOBS) --durations=25 $(T)

test-full: deps ## every tier, including long sweeps
	VERILATOR=$(VERILATOR_CMD) $(PYTHON) -m pytest -m "smoke or full" -n $(JOBS) $(T)

lint: deps ## Verilator lint of every core's generated Verilog, and ruff on the Python
	VERILATOR=$(VERILATOR_CMD) $(SSDLAB) lint
	$(PYTHON) -m ruff check .

synth: deps ## Yosys synth_xilinx LUT/FF/BRAM counts per core: make synth [CORES="nvme_regs"]
	$(SSDLAB) synth $(CORES)

wave: deps ## run T with WAVES=1 and open its FST in GTKWave: make wave T=<test node id>
	VERILATOR=$(VERILATOR_CMD) $(PYTHON) tests/lib/wave.py $(T)

# Board targets (soc/targets, issue 7). BOARD= one of soc/targets/__init__.py's BOARDS.
.PHONY: bitstream load flash board-synth
BOARD ?=
bitstream: deps ## a card's bitstream (Vivado), else its Verilog/TCL/XDC: make bitstream BOARD=xilinx_ac701 [PERSONA=]
	VERILATOR=$(VERILATOR_CMD) $(SSDLAB) board build --board "$(BOARD)" --lint \
	    $(if $(PERSONA),--persona $(PERSONA))

load: ## load the built bitstream into the card over JTAG: make load BOARD=...
	$(SSDLAB) board load --board "$(BOARD)"

flash: ## write the built bitstream to the card's configuration flash: make flash BOARD=...
	$(SSDLAB) board flash --board "$(BOARD)"

board-synth: deps ## Yosys resource estimate of each board's SoC vs its part (long): make board-synth [BOARD=] [ARGS="--channels 18 --ways 4"]
	$(SSDLAB) board synth $(foreach b,$(BOARD),--board $(b)) $(ARGS)

lock: ## refresh requirements.lock from pyproject.toml's ranges (then commit it)
	rm -rf build/lock-venv && python3 -m venv build/lock-venv
	build/lock-venv/bin/pip install -q --upgrade pip
	python3 -c "import tomllib; print('\n'.join(tomllib.load(open('pyproject.toml', 'rb'))\
	    ['project']['dependencies']))" > build/lock-requirements.txt
	build/lock-venv/bin/pip install -q -r build/lock-requirements.txt
	(sed -n '1,3p' requirements.lock; build/lock-venv/bin/pip freeze --exclude-editable) \
	    > requirements.lock.new && mv requirements.lock.new requirements.lock

clean: ## remove build/ (the virtualenv and the Verilator cache stay)
	rm -rf build
