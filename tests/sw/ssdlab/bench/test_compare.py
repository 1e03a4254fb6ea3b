# SPDX-License-Identifier: BSD-2-Clause
"""compare overlays results of one suite and refuses others."""

import json

import pytest

from sw.ssdlab.bench.compare import compare, legend_labels
from sw.ssdlab.bench.results import ResultError, write_result

pytestmark = pytest.mark.smoke


def _write(tmp_path, name, r):
    write_result(r, tmp_path / name)
    return tmp_path / name


def test_overlay(tmp_path, result_factory):
    a = _write(tmp_path, "a", result_factory("review", "default", "2ch"))
    b = _write(tmp_path, "b", result_factory("review", "intel-750-400g", factor=2.0))
    out, charts = compare([a, b], tmp_path / "cmp")
    assert len(charts) == 9
    md = (out / "compare.md").read_text()
    assert "default (2ch)" in md and "intel-750-400g" in md
    header = (out / "compare.csv").read_text().splitlines()[0]
    assert "default (2ch) IOPS" in header and "intel-750-400g IOPS" in header


def test_labels_unique(result_factory):
    r = result_factory()
    assert legend_labels([r, r]) == ["default #1", "default #2"]
    a, b = dict(r, _path="/x/run-a"), dict(r, _path="/x/run-b")
    assert legend_labels([a, b]) == ["default (run-a)", "default (run-b)"]


def test_refuses_other_suite_and_schema(tmp_path, result_factory):
    a = _write(tmp_path, "a", result_factory("qdscan"))
    b = _write(tmp_path, "b", result_factory("freespace"))
    with pytest.raises(ResultError, match="suite 'freespace' differs"):
        compare([a, b], tmp_path / "x")
    c = result_factory("qdscan")
    c["schema_version"] = 99
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "result.json").write_text(json.dumps(c))
    with pytest.raises(ResultError, match="schema_version 99"):
        compare([a, tmp_path / "c"], tmp_path / "y")
