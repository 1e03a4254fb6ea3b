# SPDX-License-Identifier: BSD-2-Clause
"""The tests mirror the source by name (ARCHITECTURE.md, layout; STYLE.md, "one name per core").

A core is every module of rtl/<block>/ (block pcie, nvme, ftl, nand) except the helpers in
NOT_CORES, so a new file counts as a core until someone says otherwise. For each core:

- the module defines the class named like the file (`nvme_cq_post.py` -> `NvmeCqPost`;
  compared without underscores and case);
- its block README (rtl/<block>/README.md) has a section `## <core>`;
- it has its own test, tests/<block>/<core>/test_<core>.py, or its README section has a
  `Verification:` line naming the composite test that covers it (an existing path under
  tests/);
- rtl/README.md's table of the cores has a row for it.

And every `Verification:` line of the block READMEs names only paths that exist, and every
directory under tests/<block>/ is named after a core of that block. Pure Python: no build.
"""

import ast
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
BLOCKS = ("pcie", "nvme", "nand", "ftl")

# Modules of rtl/<block>/ that are not cores, and why.
NOT_CORES = {
    "nvme/nvme_common.py": "helpers shared by the front-end cores (check_param, stream_port)",
    "nvme/litepcie_fixes.py": "corrections to LitePCIe's packetizer, added to an endpoint",
    "nvme/nvme_controller_top.py": "nvme_controller's lint/synth top (PHY + endpoint + core)",
    "nand/nand_common.py": "helpers shared by the back-end cores",
    "nand/onfi_phy_if.py": "the engine <-> PHY signature and the PHYs' common base class",
}

# A core split into parts that add their logic to the core's one Module (one Verilog module):
# rtl/<block>/<core>_<part>.py, documented and tested with the core.
PARTS_OF = {
    "nand/nand_emulator": "the emulator's elaborate() in parts (pins, LUN state, tables, "
                          "counters, DRAM mover, data out, engine and its states)",
}

PATH_RE = re.compile(r"tests/[\w./-]*[\w/]")


def cores():
    """(block, core name) of every core file, in file order."""
    found = []
    for block in BLOCKS:
        for path in sorted((REPO / "rtl" / block).glob("*.py")):
            rel = f"{block}/{path.name}"
            part_of = [c for c in PARTS_OF if rel.startswith(c + "_")]
            if path.name != "__init__.py" and rel not in NOT_CORES and not part_of:
                found.append((block, path.stem))
    return found


def readme_sections(block):
    """{heading: section text} of rtl/<block>/README.md, one per `## ` heading."""
    sections, name = {}, None
    for line in (REPO / "rtl" / block / "README.md").read_text().splitlines():
        if line.startswith("## "):
            name = line[3:].strip()
            sections[name] = []
        elif name is not None:
            sections[name].append(line)
    return {k: "\n".join(v) for k, v in sections.items()}


def verification_lines(text):
    return [line for line in text.splitlines() if line.startswith("Verification:")]


def own_test(block, core):
    return REPO / "tests" / block / core / f"test_{core}.py"


CORES = cores()
IDS = [f"{b}/{c}" for b, c in CORES]


@pytest.mark.smoke
def test_core_list():
    # the brief of issue 17: 1 PCIe, 11 NVMe and 13 NAND cores; a new core lands here too
    assert len(CORES) >= 25, CORES
    for rel in NOT_CORES:
        assert (REPO / "rtl" / rel).exists(), f"NOT_CORES names a missing file rtl/{rel}"


@pytest.mark.smoke
@pytest.mark.parametrize("block,core", CORES, ids=IDS)
def test_core_names_its_class(block, core):
    tree = ast.parse((REPO / "rtl" / block / f"{core}.py").read_text())
    classes = [n.name for n in tree.body if isinstance(n, ast.ClassDef)]
    want = core.replace("_", "").lower()
    assert any(c.lower() == want for c in classes), \
        f"rtl/{block}/{core}.py defines no class named like the file ({classes}); " \
        f"if it is not a core, add it to NOT_CORES in {Path(__file__).name} with the reason"


@pytest.mark.smoke
@pytest.mark.parametrize("block,core", CORES, ids=IDS)
def test_core_is_verified(block, core):
    sections = readme_sections(block)
    assert core in sections, f"rtl/{block}/README.md has no section '## {core}'"
    if own_test(block, core).exists():
        return
    lines = verification_lines(sections[core])
    paths = [p for line in lines for p in PATH_RE.findall(line)]
    assert paths, (f"{core}: no tests/{block}/{core}/test_{core}.py and no 'Verification:' "
                   f"line naming a test in its section of rtl/{block}/README.md")
    for p in paths:
        assert (REPO / p).exists(), f"{core}: Verification names {p}, which does not exist"


@pytest.mark.smoke
@pytest.mark.parametrize("block", BLOCKS)
def test_verification_paths_exist(block):
    for name, text in readme_sections(block).items():
        for line in verification_lines(text):
            paths = PATH_RE.findall(line)
            assert paths, f"rtl/{block}/README.md, '## {name}': {line!r} names no test path"
            for p in paths:
                assert (REPO / p).exists(), \
                    f"rtl/{block}/README.md, '## {name}': {p} does not exist"


@pytest.mark.smoke
@pytest.mark.parametrize("block", BLOCKS)
def test_test_dirs_are_cores(block):
    names = {c for b, c in CORES if b == block}
    for d in sorted((REPO / "tests" / block).iterdir()):
        # a directory of tests (a moved test's left-over __pycache__ is not one)
        if d.is_dir() and any(d.glob("*.py")):
            assert d.name in names, \
                f"tests/{block}/{d.name} is not named after a core of rtl/{block}/"


@pytest.mark.smoke
def test_core_table():
    text = (REPO / "rtl" / "README.md").read_text()
    rows = re.findall(r"^\| *`?(\w+)`? *\|", text, re.M)
    missing = [c for _, c in CORES if c not in rows]
    assert not missing, f"rtl/README.md's table of the cores has no row for {missing}"
