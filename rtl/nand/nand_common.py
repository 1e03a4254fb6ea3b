# SPDX-License-Identifier: BSD-2-Clause
"""Helpers shared by the rtl/nand cores (not a core)."""

__all__ = ["BUSY_NOW_BITS", "BUSY_TICK_BITS", "BUSY_TIMEOUT_BITS", "bad_int", "bch_code",
           "busy_timer", "enabled_domain", "gf2_map", "gf_mul"]

# The busy timeout (a die whose R/B# never rises: a hung die): counted in ticks of
# 2**BUSY_TICK_BITS clock cycles (32.8 us at 125 MHz) up to 2**BUSY_TIMEOUT_BITS - 1 ticks
# (33.5 ms there, above every part's tBERS); 0 never times out. The ticks come from the
# SoC's uptime (`busy_now`: uptime >> BUSY_TICK_BITS, BUSY_NOW_BITS of it), not from a
# counter of our own, so that the simulation's fast-forward, which advances the uptime over
# the cycles it skips, keeps the timeouts (sim/harness/README.md).
BUSY_TICK_BITS = 12
BUSY_TIMEOUT_BITS = 10
BUSY_NOW_BITS = 12


def bad_int(name, value, lo, hi):
    """The message for a parameter that is not an int in lo..hi (bools refused), else None."""
    if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
        return f"{name} must be an int in {lo}..{hi}, got {value!r}"
    return None


def bch_code(name, m, t, data_bytes, parity_bytes, width):
    """The spec.bch BchCode of an ECC core's parameters, checked: ValueError naming the
    parameter. width is the bytes per stream beat (1, 2, 4, 8), which must divide the data
    and the parity room."""
    from spec.bch import PRIM_POLY, BchCode
    error = (bad_int("m", m, min(PRIM_POLY), max(PRIM_POLY)) or bad_int("t", t, 1, 64) or
             bad_int("data_bytes", data_bytes, 1, 4096) or
             bad_int("parity_bytes", parity_bytes, 0, 512) or
             (None if width in (1, 2, 4, 8) else f"width must be 1, 2, 4 or 8, got {width!r}"))
    if not error:
        try:
            code = BchCode(m, t, data_bytes, parity_bytes)
        except ValueError as e:
            error = str(e).removeprefix("BchCode: ")
    if not error and (data_bytes % width or code.room % width):
        error = (f"width={width} must divide data_bytes={data_bytes} and the parity room "
                 f"{code.room}")
    if error:
        raise ValueError(f"{name}: {error}")
    return code


def gf2_map(vec, masks):
    """The GF(2) linear map of spec.bch.linear_map's masks applied to a Value: output bit i is
    the XOR of vec's bits selected by masks[i] (an XOR network, no clock)."""
    from amaranth.hdl import Cat, Const
    return Cat(*[(vec & Const(mk, len(vec))).xor() if mk else Const(0, 1) for mk in masks])


def gf_mul(module, code, a, b, name="gf"):
    """a * b in GF(2^m) of `code` (two m-bit Values), built in `module`'s comb domain: the XOR
    of a * alpha^i over b's set bits, a * alpha^i made from a * alpha^(i-1) by one shift and a
    conditional XOR of the field polynomial (a full multiplier: m * m AND terms). Each
    a * alpha^i is a Signal, so the expression stays linear in m (nested, it would double
    with every step). Returns the product's Signal."""
    from amaranth.hdl import Cat, Const, Signal
    w = code.m
    poly = Const(code.alpha(w), w)              # x^m reduced: the field polynomial's low bits
    ai = a
    out = a & b[0].replicate(w)
    for i in range(1, w):
        nxt = Signal(w, name=f"{name}_a{i}")
        module.d.comb += nxt.eq(Cat(Const(0, 1), ai[:w - 1]) ^ (ai[w - 1].replicate(w) & poly))
        ai = nxt
        out = out ^ (ai & b[i].replicate(w))
    prod = Signal(w, name=name)
    module.d.comb += prod.eq(out)
    return prod


def enabled_domain(module, name, enable, gate):
    """The clock domain for logic that changes only in cycles where `enable` is high; returns
    its name. The caller writes the logic's statements under `with module.If(enable)`, so both
    forms below behave the same.

    gate=False: "sync" itself (a clock enable; what synthesis wants). gate=True: a domain
    `name` whose clock is the sync clock gated by `enable` (an enable flop on the falling
    edge, ANDed with the clock: the usual glitch-free clock gate; reset ticks it), so a
    simulator can skip the domain's logic in cycles where it does not tick: Verilator
    evaluates combinational logic only when a clock of the registers feeding it ticks."""
    if not gate:
        return "sync"
    from amaranth.hdl import ClockDomain, ClockSignal, ResetSignal, Signal
    module.domains += ClockDomain(name, local=True)
    module.d.comb += ResetSignal(name).eq(ResetSignal("sync"))
    latch = f"{name}_gate"
    module.domains += ClockDomain(latch, clk_edge="neg", reset_less=True, local=True)
    on = Signal(init=1, name=f"{name}_on")
    module.d.comb += ClockSignal(latch).eq(ClockSignal("sync"))
    module.d[latch] += on.eq(enable | ResetSignal("sync"))
    module.d.comb += ClockSignal(name).eq(ClockSignal("sync") & on)
    return name


def busy_timer(module, now, waiting, timeout, name):
    """A busy timeout: the tick (`now`, BUSY_NOW_BITS of the uptime's ticks) a wait began is
    kept while `waiting`. Returns a Signal high once `timeout` ticks (not 0) have passed in
    the wait (modulo 2**BUSY_NOW_BITS, above any timeout)."""
    from amaranth.hdl import Signal
    began = Signal(BUSY_NOW_BITS, name=f"{name}_began")
    expired = Signal(name=f"{name}_expired")
    with module.If(~waiting):
        module.d.sync += began.eq(now)
    module.d.comb += expired.eq(waiting & (timeout != 0) &
                                ((now - began)[:BUSY_NOW_BITS] >= timeout))
    return expired
