# SPDX-License-Identifier: BSD-2-Clause
"""Streams between the hardware and the firmware, as CSRs.

A stream towards the CPU (`StreamToCSR`) shows its payload packed into 32-bit status words
`w0`, `w1`, ..., a `valid` status and a `pop` strobe (write anything: the beat is taken). A
stream from the CPU (`CSRToStream`) takes its payload from 32-bit storage words and a `push`
strobe; `busy` reads 1 until the beat has been accepted. The payload layouts and the packing
rule are spec/fw_streams.py's; `c_header()` writes them as C for the firmware's HAL
(sw/firmware/hal_soc.c): per port a struct, its pack / unpack functions and the CSR accesses
that move a beat, so the RTL and the C cannot disagree on a bit position.
"""

from litex.gen import LiteXModule
from litex.soc.interconnect.csr import CSR, CSRStatus, CSRStorage
from migen import Cat, If, Signal

from spec.fw_streams import FROM_FW, TO_FW, pack

__all__ = ["pack", "StreamToCSR", "CSRToStream", "c_header"]


def _fields(endpoint):
    return [(name, len(getattr(endpoint, name)))
            for name, _ in endpoint.description.payload_layout]


def _words(endpoint, placed, n_words):
    """The payload as n_words 32-bit Signals (views of the endpoint's fields)."""
    bits = [[] for _ in range(n_words)]
    for name, width, word, shift in placed:
        sig = getattr(endpoint, name)
        if width > 32:
            for k in range(-(-width // 32)):
                bits[word + k].append((0, sig[32 * k:min(width, 32 * (k + 1))]))
        else:
            bits[word].append((shift, sig))
    return bits


class StreamToCSR(LiteXModule):
    """Hardware -> CPU. endpoint: a LiteX stream endpoint (the CPU is its sink)."""

    direction = TO_FW

    def __init__(self, endpoint):
        self.placed, self.n_words = pack(_fields(endpoint))
        for k, parts in enumerate(_words(endpoint, self.placed, self.n_words)):
            csr = CSRStatus(32, name=f"w{k}")
            setattr(self, f"_w{k}", csr)
            word = Signal(32)
            for shift, sig in parts:
                self.comb += word[shift:shift + len(sig)].eq(sig)
            self.comb += csr.status.eq(word)
        self._valid = CSRStatus(1, name="valid")
        self._pop = CSR(name="pop")
        self.comb += [self._valid.status.eq(endpoint.valid), endpoint.ready.eq(self._pop.re)]


class CSRToStream(LiteXModule):
    """CPU -> hardware. endpoint: a LiteX stream endpoint (the CPU is its source)."""

    direction = FROM_FW

    def __init__(self, endpoint):
        self.placed, self.n_words = pack(_fields(endpoint))
        storage = []
        for k in range(self.n_words):
            csr = CSRStorage(32, name=f"w{k}")
            setattr(self, f"_w{k}", csr)
            storage.append(csr.storage)
        for name, width, word, shift in self.placed:
            sig = getattr(endpoint, name)
            if width > 32:
                self.comb += sig.eq(Cat(*storage[word:word + -(-width // 32)]))
            else:
                self.comb += sig.eq(storage[word][shift:shift + width])
        self._push = CSR(name="push")
        self._busy = CSRStatus(1, name="busy")
        valid = Signal()
        self.sync += If(self._push.re, valid.eq(1)).Elif(endpoint.ready, valid.eq(0))
        self.comb += [endpoint.valid.eq(valid), self._busy.status.eq(valid)]


# C header -----------------------------------------------------------------------------------------


def _c_type(width):
    """The struct member of a field: (C type, array suffix). Wider than 64 bits: 32-bit words,
    least significant first."""
    if width > 64:
        return "uint32_t", f"[{-(-width // 32)}]"
    return next(f"uint{b}_t" for b in (8, 16, 32, 64) if width <= b), ""


def _mask(bits):
    return f"0x{(1 << bits) - 1:x}u"


def _pack_terms(placed):
    """{word: [C expression of its bits from a struct `s`]}: each field's part in each word."""
    terms = {}
    for name, width, word, shift in placed:
        ctype, array = _c_type(width)
        if width <= 32:
            part = f"(uint32_t)s->{name}"
            if width < int(ctype[4:-2]):
                part = f"({part} & {_mask(width)})"
            terms.setdefault(word, []).append(f"{part} << {shift}" if shift else part)
            continue
        for k in range(-(-width // 32)):
            part = (f"s->{name}[{k}]" if array else
                    f"(uint32_t)(s->{name} >> {32 * k})" if k else f"(uint32_t)s->{name}")
            if width - 32 * k < 32:
                part = f"({part} & {_mask(width - 32 * k)})"
            terms.setdefault(word + k, []).append(part)
    return terms


def _unpack_lines(placed):
    lines = []
    for name, width, word, shift in placed:
        ctype, array = _c_type(width)
        if width <= 32:
            value = f"w[{word}] >> {shift}" if shift else f"w[{word}]"
            if width < 32:
                value = f"({value}) & {_mask(width)}" if shift else f"{value} & {_mask(width)}"
            lines.append(f"s->{name} = {value};" if width == 32 else
                         f"s->{name} = ({ctype})({value});")
            continue
        parts = []
        for k in range(-(-width // 32)):
            value = f"w[{word + k}]"
            if width - 32 * k < 32:
                value = f"({value} & {_mask(width - 32 * k)})"
            if array:
                lines.append(f"s->{name}[{k}] = {value};")
            else:
                parts.append(f"(uint64_t){value} << {32 * k}" if k else f"(uint64_t){value}")
        if parts:
            lines.append(f"s->{name} = {' | '.join(parts)};")
    return lines


def _c_port(prefix, name, adapter):
    """The C of one port: word / shift / width macros, the struct, pack / unpack, and the
    CSR accesses of its direction."""
    low, up = f"{prefix}_{name}", f"{prefix}_{name}".upper()
    n, placed = adapter.n_words, adapter.placed
    to_fw = adapter.direction == TO_FW
    arrow = "hardware -> firmware" if to_fw else "firmware -> hardware"
    out = [f"/* --- {name}: {arrow} ({n} word{'s' if n > 1 else ''}) --- */", "",
           f"#define {up}_WORDS {n}"]
    for field, width, word, shift in placed:
        f = f"{up}_{field.upper()}"
        out += [f"#define {f}_WORD {word}", f"#define {f}_SHIFT {shift}",
                f"#define {f}_WIDTH {width}"]
    addrs = ", ".join(f"CSR_{up}_W{k}_ADDR" for k in range(n))
    out += [f"#define {up}_ADDRS {{{addrs}}}", "", f"struct {low} {{"]
    for field, width, _, _ in placed:
        ctype, array = _c_type(width)
        decl = f"{ctype} {field}{array};"
        out.append(f"    {decl:<32}/* {width} bit{'s' if width > 1 else ''} */")
    out += ["};", "",
            f"static inline void {low}_pack(const struct {low} *s, uint32_t w[{up}_WORDS])",
            "{"]
    for word, terms in sorted(_pack_terms(placed).items()):
        out.append(f"    w[{word}] = {' | '.join(terms)};")
    out += ["}", "",
            f"static inline void {low}_unpack(const uint32_t w[{up}_WORDS], struct {low} *s)",
            "{"]
    out += [f"    {line}" for line in _unpack_lines(placed)]
    out += ["}", ""]
    if to_fw:
        out += ["/* the beat the port shows, valid or not; _pop reads and takes a valid one */",
                f"static inline void {low}_read(struct {low} *s)", "{",
                f"    static const unsigned long a[{up}_WORDS] = {up}_ADDRS;",
                f"    uint32_t w[{up}_WORDS];",
                f"    for (unsigned k = 0; k < {up}_WORDS; k++)",
                "        w[k] = (uint32_t)csr_read_simple(a[k]);",
                f"    {low}_unpack(w, s);", "}", "",
                f"static inline bool {low}_pop(struct {low} *s)", "{",
                f"    if (!csr_read_simple(CSR_{up}_VALID_ADDR))", "        return false;",
                f"    {low}_read(s);", f"    csr_write_simple(1, CSR_{up}_POP_ADDR);",
                "    return true;", "}", ""]
    else:
        out += [f"static inline void {low}_write(const struct {low} *s)", "{",
                f"    static const unsigned long a[{up}_WORDS] = {up}_ADDRS;",
                f"    uint32_t w[{up}_WORDS];", f"    {low}_pack(s, w);",
                f"    for (unsigned k = 0; k < {up}_WORDS; k++)",
                "        csr_write_simple(w[k], a[k]);", "}", "",
                "/* waits until the previous beat was taken (its words drive the payload) */",
                f"static inline void {low}_push(const struct {low} *s)", "{",
                f"    while (csr_read_simple(CSR_{up}_BUSY_ADDR))", "        ;",
                f"    {low}_write(s);", f"    csr_write_simple(1, CSR_{up}_PUSH_ADDR);", "}",
                "",
                f"static inline bool {low}_busy(void)", "{",
                f"    return csr_read_simple(CSR_{up}_BUSY_ADDR) != 0;", "}", ""]
    return out


def c_header(prefix, ports):
    """C text for the firmware: for each (name, adapter) (a StreamToCSR or CSRToStream) the
    word count, each field's word / shift / width, the CSR addresses of its words (macros of
    LiteX's generated csr.h), and

      struct <prefix>_<name>                  one member per field (<= 64 bits: the
                                              smallest uintN_t; wider: uint32_t words,
                                              least significant first)
      <prefix>_<name>_pack(s, w)              struct -> words (bits beyond a field's width
                                              are dropped)
      <prefix>_<name>_unpack(w, s)            words -> struct
      <prefix>_<name>_read(s), _pop(s)        hardware -> firmware: read the shown beat;
                                              pop: false when none is valid, else read and
                                              take it
      <prefix>_<name>_write(s), _push(s),     firmware -> hardware: write the words; push:
      _busy()                                 wait until not busy, write, push

    The CSR accesses use LiteX's csr_read_simple / csr_write_simple (hw/common.h, or the
    includer's own with CSR_ACCESSORS_DEFINED)."""
    lines = ["/* Generated by soc/fw_ports.py from spec/fw_streams.py: do not edit. */",
             "#ifndef SSDLAB_FW_PORTS_H", "#define SSDLAB_FW_PORTS_H", "",
             "#include <stdbool.h>", "#include <stdint.h>", "",
             "#include <generated/csr.h>", ""]
    for name, adapter in ports:
        lines += _c_port(prefix, name, adapter)
    lines += ["#endif", ""]
    return "\n".join(lines)
