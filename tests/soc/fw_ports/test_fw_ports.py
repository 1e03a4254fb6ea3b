# SPDX-License-Identifier: BSD-2-Clause
"""soc/fw_ports.py: the generated C (generated/fw_ports.h) moves every field of every port of
spec/fw_streams.py at its extreme values.

For each build parameter set, the ports are built as the SoC builds them (StreamToCSR /
CSRToStream on LiteX endpoints of spec's layouts), `c_header()` writes the header, and a C
program compiled by the host gcc (-Wall -Wextra -Werror, UBSan) against it and a fake csr.h
(every CSR a slot of an array) checks, per port and test vector: the words `_pack` and
`_push` / `_write` produce, against the words computed here from the placement
(`spec.fw_streams.pack`); `_unpack` and `_pop` give every field back (masked to its width);
`_pop` of an invalid port returns false. Vectors: all fields 0, all at their C type's
maximum (bits beyond a field's width must be dropped), and each field alone at its maximum
and alone at 0 among maximal others (a field that leaks into a neighbour fails).
"""

import shutil
import subprocess
from pathlib import Path

import pytest
from litex.soc.interconnect import stream

from soc.fw_ports import CSRToStream, StreamToCSR, c_header
from spec.fw_streams import TO_FW, port_layouts

REPO = Path(__file__).resolve().parents[3]
BUILD = REPO / "build" / "sim" / "fw_ports"

# (tag_width, max_len, channel_bits): the largest and the smallest legal fields.
PARAMS = [(6, 65535, 5), (1, 1, 1)]


def _ports(tag_width, max_len, channel_bits):
    out = []
    for name, direction, layout in port_layouts(tag_width, max_len, channel_bits):
        adapter = StreamToCSR if direction == TO_FW else CSRToStream
        out.append((name, adapter(stream.Endpoint(layout))))
    return out


def _c_bits(width):
    """The struct member's bits (a uint32_t array's total for fields wider than 64)."""
    if width > 64:
        return 32 * -(-width // 32)
    return next(b for b in (8, 16, 32, 64) if width <= b)


def _vectors(placed):
    """[(label, {field: value given in the struct})]."""
    top = {name: (1 << _c_bits(width)) - 1 for name, width, _, _ in placed}
    vecs = [("zeros", dict.fromkeys(top, 0)), ("ones", dict(top))]
    for name in top:
        vecs.append((f"only_{name}", {f: (top[f] if f == name else 0) for f in top}))
        vecs.append((f"all_but_{name}", {f: (0 if f == name else top[f]) for f in top}))
    return vecs


def _words(placed, n_words, values):
    """The port's words for field values (masked to their widths), from the placement."""
    bits = 0
    for name, width, word, shift in placed:
        bits |= (values[name] & ((1 << width) - 1)) << (32 * word + shift)
    return [(bits >> (32 * k)) & 0xFFFFFFFF for k in range(n_words)]


def _c_value(width, value, member):
    """C statements giving struct member `member` the value (array: word by word)."""
    if width > 64:
        return [f"{member}[{k}] = 0x{(value >> (32 * k)) & 0xFFFFFFFF:x}u;"
                for k in range(-(-width // 32))]
    return [f"{member} = 0x{value:x}ull;"]


def _c_check(width, value, member, what):
    masked = value & ((1 << width) - 1)
    if width > 64:
        return [f'CHECK({member}[{k}] == 0x{(masked >> (32 * k)) & 0xFFFFFFFF:x}u, "{what}");'
                for k in range(-(-width // 32))]
    return [f'CHECK((uint64_t){member} == 0x{masked:x}ull, "{what}");']


def _csr_h(ports):
    """A fake generated/csr.h: consecutive addresses for every CSR of every port."""
    lines, addr = ["#define CSR_BASE 0x0L"], 0
    for name, adapter in ports:
        up = f"FW_{name.upper()}"
        regs = [f"W{k}" for k in range(adapter.n_words)]
        regs += ["VALID", "POP"] if adapter.direction == TO_FW else ["PUSH", "BUSY"]
        for reg in regs:
            lines.append(f"#define CSR_{up}_{reg}_ADDR (CSR_BASE + 0x{addr:x}L)")
            addr += 4
    return "\n".join(lines) + "\n", addr // 4


def _program(ports, n_csrs):
    c = ["#include <stdio.h>", "#include <string.h>", "#include <stdint.h>",
         "#define CSR_ACCESSORS_DEFINED",
         f"static uint32_t csr[{n_csrs}];",
         "static inline void csr_write_simple(unsigned long v, unsigned long a)",
         "{ csr[a / 4] = (uint32_t)v; }",
         "static inline unsigned long csr_read_simple(unsigned long a) { return csr[a / 4]; }",
         "#include <generated/fw_ports.h>",
         "static int fails;",
         '#define CHECK(c, what) do { if (!(c)) { printf("FAIL %s\\n", what); fails++; } } '
         "while (0)",
         "int main(void)", "{"]
    for name, adapter in ports:
        placed, n = adapter.placed, adapter.n_words
        low, up = f"fw_{name}", f"FW_{name.upper()}"
        for label, values in _vectors(placed):
            words = _words(placed, n, values)
            tag = f"{name} {label}"
            c += ["    {", f"        struct {low} s, u;", f"        uint32_t w[{up}_WORDS];",
                  "        memset(&s, 0, sizeof s);", "        memset(csr, 0, sizeof csr);"]
            for field, width, _, _ in placed:
                c += [f"        {x}" for x in _c_value(width, values[field], f"s.{field}")]
            c += [f"        {low}_pack(&s, w);"]
            c += [f'        CHECK(w[{k}] == 0x{v:x}u, "{tag}: pack word {k}");'
                  for k, v in enumerate(words)]
            if adapter.direction == TO_FW:
                c += [f'        CHECK(!{low}_pop(&u), "{tag}: pop of an invalid port");']
                c += [f"        csr[CSR_{up}_W{k}_ADDR / 4] = 0x{v:x}u;"
                      for k, v in enumerate(words)]
                c += [f"        csr[CSR_{up}_VALID_ADDR / 4] = 1;",
                      "        memset(&u, 0xa5, sizeof u);",
                      f'        CHECK({low}_pop(&u), "{tag}: pop");',
                      f'        CHECK(csr[CSR_{up}_POP_ADDR / 4] == 1, "{tag}: pop strobe");']
            else:
                c += [f"        {low}_push(&s);",
                      f'        CHECK(csr[CSR_{up}_PUSH_ADDR / 4] == 1, "{tag}: push strobe");']
                c += [f'        CHECK(csr[CSR_{up}_W{k}_ADDR / 4] == 0x{v:x}u, '
                      f'"{tag}: CSR word {k}");' for k, v in enumerate(words)]
                c += ["        memset(&u, 0xa5, sizeof u);", f"        {low}_unpack(w, &u);"]
            for field, width, _, _ in placed:
                c += [f"        {x}" for x in _c_check(width, values[field], f"u.{field}",
                                                      f"{tag}: field {field}")]
            c += ["    }"]
    c += ['    printf("%d failures\\n", fails);', "    return fails != 0;", "}", ""]
    return "\n".join(c)


@pytest.mark.smoke
@pytest.mark.parametrize("params", PARAMS, ids=lambda p: "tw{}_len{}_ch{}".format(*p))
def test_c_round_trip(params):
    gcc = shutil.which("gcc")
    if gcc is None:
        pytest.skip("no host gcc")
    ports = _ports(*params)
    out = BUILD / "tw{}_len{}_ch{}".format(*params)
    gen = out / "include" / "generated"
    gen.mkdir(parents=True, exist_ok=True)
    csr_h, n_csrs = _csr_h(ports)
    (gen / "csr.h").write_text(csr_h)
    (gen / "fw_ports.h").write_text(c_header("fw", ports))
    (out / "test.c").write_text(_program(ports, n_csrs))
    cmd = [gcc, "-std=gnu11", "-O1", "-Wall", "-Wextra", "-Werror", "-fsanitize=undefined",
           "-fno-sanitize-recover=undefined", "-I", str(out / "include"), "-o",
           str(out / "test"), str(out / "test.c")]
    build = subprocess.run(cmd, capture_output=True, text=True)
    assert build.returncode == 0, build.stderr
    run = subprocess.run([str(out / "test")], capture_output=True, text=True)
    assert run.returncode == 0 and "FAIL" not in run.stdout, \
        f"{out / 'test.c'}:\n{run.stdout[-4000:]}{run.stderr[-2000:]}"


@pytest.mark.smoke
def test_header_lists_every_port():
    """Every port of spec/fw_streams.py, with its struct and the functions of its direction."""
    ports = _ports(*PARAMS[0])
    text = c_header("fw", ports)
    for name, adapter in ports:
        assert f"struct fw_{name} {{" in text
        for fn in ("pack", "unpack") + (("read", "pop") if adapter.direction == TO_FW
                                        else ("write", "push", "busy")):
            assert f" fw_{name}_{fn}(" in text, (name, fn)
