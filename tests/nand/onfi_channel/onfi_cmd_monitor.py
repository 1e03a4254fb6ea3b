# SPDX-License-Identifier: BSD-2-Clause
"""A command/address latch monitor on one channel's ONFI pins, independent of the die models:
what the controller put on the bus, CE# by CE#, to check a sequence the golden die may not
know (the pseudo-SLC prefix DAh, issue 20).

    mon = CommandMonitor(bus)           # bus: the channel's OnfiBus (sim/nand/python)
    ...
    mon.array_cmds(ce)                  # [(first command, prefixed by DAh)] in bus order
    bus.assert_clean()                  # also fails on a misplaced DAh (see problems())

It attaches to the OnfiBus like a target, so it sees the same settled pin snapshots, and
latches on every WE# rising edge with CE# low: CLE high a command, ALE high an address (data
bytes are not kept: NV-DDR2 moves them on DQS, SDR on WE#). This holds in SDR and NV-DDR2
alike (command and address cycles latch on WE# in both).

The DAh rule it checks (the die models' contract): DAh is one command cycle, followed in the
same CE# assertion directly by the first command of an array operation, 00h (read), 80h
(program) or 60h (erase), with no address or data cycle between.
"""

__all__ = ["CommandMonitor", "SLC_PREFIX", "ARRAY_FIRST", "slc_blocks"]

SLC_PREFIX = 0xDA
ARRAY_FIRST = (0x00, 0x80, 0x60)    # the first command of a page read, program, erase


class CommandMonitor:
    """Every command and address latch of a channel, per CE# bit.

    bus: the channel's OnfiBus; n_ce: the width of its ce_n (read from the bus by default).
    `latches[ce]`: [(ns, kind, byte, episode)] with kind "cmd" / "addr" and episode the
    number of CE# falling edges of that CE# so far (a new CE# assertion, a new episode).
    """

    def __init__(self, bus, n_ce=None):
        self.bus = bus
        self.n_ce = n_ce if n_ce is not None else len(bus.h["ce_n"])
        self.latches = [[] for _ in range(self.n_ce)]
        self.episode = [0] * self.n_ce
        self._prev = None
        bus.attach(self)

    # -- OnfiBus target interface --

    def _observe(self, now, raw):
        ce_n, cle, ale, we_n, _re_n, _wp_n, dq_o, dq_oe = raw[:8]
        prev, self._prev = self._prev, (ce_n, cle, ale, we_n, dq_o, dq_oe)
        if prev is None:
            return
        p_ce_n, p_cle, p_ale, p_we_n, p_dq, p_dq_oe = prev
        for ce in range(self.n_ce):
            was_low, low = not p_ce_n >> ce & 1, not ce_n >> ce & 1
            if low and not was_low:
                self.episode[ce] += 1
            # a latch takes the values before the WE# rising edge (as the die does)
            if was_low and not p_we_n and we_n and (p_cle or p_ale) and p_dq_oe:
                kind = "cmd" if p_cle else "addr"
                self.latches[ce].append((now, kind, p_dq, self.episode[ce]))

    def problems(self):
        out = []
        for ce in range(self.n_ce):
            seq = self.latches[ce]
            for i, (ns, kind, byte, ep) in enumerate(seq):
                if kind != "cmd" or byte != SLC_PREFIX:
                    continue
                nxt = seq[i + 1] if i + 1 < len(seq) else None
                if nxt is None or nxt[1] != "cmd" or nxt[2] not in ARRAY_FIRST \
                        or nxt[3] != ep:
                    what = "nothing" if nxt is None else \
                        f"{nxt[1]} {nxt[2]:02X}h" + ("" if nxt[3] == ep else " (new CE#)")
                    out.append(f"ce{ce} {ns:.1f} ns: DAh followed by {what}, not 00h/80h/60h "
                               f"in the same CE# assertion")
        return out

    def assert_clean(self):
        p = self.problems()
        assert not p, f"{len(p)} DAh placement errors:\n  " + "\n  ".join(p)

    # -- queries --

    def mark(self, ce):
        """A position in ce's latches, for `array_cmds(ce, since=...)`."""
        return len(self.latches[ce])

    def commands(self, ce, since=0):
        return [byte for _, kind, byte, _ in self.latches[ce][since:] if kind == "cmd"]

    def array_cmds(self, ce, since=0):
        """[(first command, prefixed)]: every 00h / 80h / 60h that starts an array operation
        (not the 00h that returns to data output after 70h: one followed by an address),
        and whether DAh came right before it, from latch `since` on."""
        seq = self.latches[ce][since:]
        out = []
        for i, (_, kind, byte, ep) in enumerate(seq):
            if kind != "cmd" or byte not in ARRAY_FIRST:
                continue
            if byte == 0x00 and not (i + 1 < len(seq) and seq[i + 1][1] == "addr"):
                continue
            before = seq[i - 1] if i > 0 else None
            prefixed = before is not None and before[1:3] == ("cmd", SLC_PREFIX) \
                and before[3] == ep
            out.append((byte, prefixed))
        return out

    def n_prefix(self, ce, since=0):
        return self.commands(ce, since).count(SLC_PREFIX)


def slc_blocks(die, lun=0):
    """The blocks the golden die (sim/nand/python/nand_die.py) holds as SLC blocks: erased
    after a DAh prefix. With the die's own slc-mode rule (an SLC program or read of a native
    block, or the reverse, is a violation that `assert_clean()` reports), this cross-checks
    that the channel's DAh reached the die where the op asked for it and nowhere else."""
    return {b for b in range(die.geometry.blocks_per_lun) if die.block_info(lun, b)["slc"]}
