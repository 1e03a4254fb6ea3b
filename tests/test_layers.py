# SPDX-License-Identifier: BSD-2-Clause
"""Imports go downwards only: spec < rtl < soc < sim < sw, and nothing imports tests
(ARCHITECTURE.md, "Layout").

Every Python file of the five layers is parsed (not imported); each `import` and `from ...
import`, at module level or inside a function (a lazy import is still a dependency), and each
"package.module:Attr" factory string (an import by importlib) is checked against the layer of
the file that holds it.
"""

import ast
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
LAYERS = ["spec", "rtl", "soc", "sim", "sw"]
RANK = {name: i for i, name in enumerate(LAYERS)}
FACTORY = re.compile(r"^([a-z_]+)(\.[a-z_0-9]+)+:[A-Za-z_]\w*$")


def _imports(path: Path):
    """(line, top-level package) of every absolute import and factory string in `path`."""
    tree = ast.parse(path.read_text(), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield node.lineno, node.module.split(".")[0]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) \
                and FACTORY.match(node.value):
            yield node.lineno, node.value.split(".")[0]


def violations(root: Path = REPO):
    """Every upward import below `root`, as "file:line: layer imports higher"."""
    out = []
    for layer in LAYERS:
        for path in sorted((root / layer).rglob("*.py")):
            for line, top in _imports(path):
                where = f"{path.relative_to(root)}:{line}"
                if top == "tests":
                    out.append(f"{where}: {layer} imports tests")
                elif top in RANK and RANK[top] > RANK[layer]:
                    out.append(f"{where}: {layer} imports {top}, a higher layer "
                               f"({' < '.join(LAYERS)})")
    return out


@pytest.mark.smoke
def test_imports_go_downwards():
    found = violations()
    assert not found, "upward imports:\n" + "\n".join(found)


@pytest.mark.smoke
def test_the_check_sees_a_planted_upward_import(tmp_path):
    """The checker itself: an upward import (lazy, inside a function) and a factory string
    naming a test module are both found; a downward import is not."""
    for layer in LAYERS:
        (tmp_path / layer).mkdir()
    (tmp_path / "spec" / "a.py").write_text("def f():\n    from sw.ssdlab import drive\n")
    (tmp_path / "rtl" / "b.py").write_text('TOP = "tests.nvme.x_top:XTop"\nimport spec.nvme\n')
    (tmp_path / "sw" / "c.py").write_text("import spec\nfrom rtl import b\n")
    found = violations(tmp_path)
    assert found == ["spec/a.py:2: spec imports sw, a higher layer (spec < rtl < soc < sim < sw)",
                     "rtl/b.py:1: rtl imports tests"]
