# SPDX-License-Identifier: BSD-2-Clause
"""`ssdlab fidelity` (sw/ssdlab/bench/fidelity.py): the plan puts every shipped persona at
its own topology with only capacity scaled; the campaign runs the fidelity suite per persona
(here on files through the device path, so no simulation is needed) and tabulates it, again
from its directory with --from; the table shows limits, unsteady points and personas that
could not run; the README gets the table between its markers and nothing else; bad input
names the option."""

import json
import shutil

import pytest
import yaml
from click.testing import CliRunner

from sw.ssdlab.bench import fidelity
from sw.ssdlab.bench.session import ROOT
from sw.ssdlab.bench.suites import SUITES
from sw.ssdlab.cli import main

pytestmark = pytest.mark.smoke


def test_suite_has_every_figure_and_a_sustained_run():
    s = SUITES["fidelity"]
    names = [p.name for t in s.tests for p in t.points]
    assert sorted(f[0] for f in fidelity.FIGURES) == sorted(names[:6])
    sus = s.test("sustained").points[0]
    assert (sus.rw, sus.bs, sus.qd, sus.duration_s, sus.sample) == \
        ("randwrite", 4096, 32, None, True)
    assert names[-1] == "sustained-idle"


def test_plan_every_shipped_persona_at_its_own_topology():
    entries = fidelity.plan(fidelity.shipped(), 16, 16)
    names = [e["persona"] for e in entries]
    assert "default" not in names and "samsung-950pro-512" in names
    assert len(names) == len(list((ROOT / "personas").glob("*.yaml"))) - 1
    for e in entries:
        doc = yaml.safe_load((ROOT / "personas" / f"{e['persona']}.yaml").read_text())
        c = doc["controller"]
        assert e["topology"].startswith(f"{c['channels']} ch x {c['ways_per_channel']} way")
        assert f"x {c['dies_per_way']} LUN" in e["topology"]
        assert e["onfi"] == f"{c['onfi']['interface']} mode {c['onfi']['mode']}"
        assert e["scale"].startswith("16 blocks/plane x 16 pages/block, raw capacity x ")
        assert e["limits"]["read"] > 0 and e["limits"]["program"] > 0


def test_every_planned_persona_builds():
    """Every shipped persona, intel-750-400g's two part types among them, is a drive the
    simulation builds at the plan's 16 x 16 (its SocConfig; no model is compiled), and the
    plan's capacity factor is the scaled drive's raw bytes over the full drive's."""
    from spec.persona import load_persona
    from sw.ssdlab.flows.sim import drive_config
    for e in fidelity.plan(fidelity.shipped(), 16, 16):
        cfg = drive_config(e["persona"], blocks_per_plane=16, pages_per_block=16)
        full = load_persona(e["persona"])
        full = full.full or full
        raw = sum(cfg.die_part(c, w)["page_bytes"] for c, w, _, _ in full.dies) * \
            cfg.planes * 16 * 16
        assert e["scale"].endswith(f"raw capacity x {raw / full.raw_bytes:.3g}")
        if e["persona"] == "intel-750-400g":
            assert e["parts"] == ["imft-20nm-mlc-128gbit", "imft-20nm-mlc-64gbit"]
            assert cfg.part2["part"] == "imft-20nm-mlc-64gbit"


@pytest.mark.parametrize("args,option", [
    (["--persona", "no-such-drive"], "--persona no-such-drive"),
    (["--persona", "samsung-750-evo-250", "--blocks-per-plane", "100000"],
     "--blocks-per-plane 100000"),
    (["--persona", "samsung-750-evo-250", "--pages-per-block", "100000"],
     "--pages-per-block 100000")])
def test_bad_input_names_the_option(args, option):
    r = CliRunner().invoke(main, ["fidelity", "--dry-run", *args])
    assert r.exit_code == 2 and option in r.output, r.output


def test_campaign_on_files(tmp_path):
    out = tmp_path / "fid"
    args = ["fidelity", "--persona", "crucial-m500-120", "--persona", "samsung-750-evo-250",
            "--device", str(tmp_path / "{cell}.bin"), "--device-size", "32m", "--out",
            str(out), "--time-scale", "0.005", "--min-ios", "200,32"]
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 0, r.output
    doc = json.loads((out / "fidelity.json").read_text())
    assert [p["persona"] for p in doc["personas"]] == ["crucial-m500-120",
                                                       "samsung-750-evo-250"]
    assert all(p["ok"] for p in doc["personas"])
    rows = fidelity.rows(doc)
    for row in rows:
        for name, _, _ in fidelity.FIGURES:
            assert row[name]["value"] > 0 and row[name]["ios"] > 0, (row["persona"], name)
        assert row["qd1_read_lat_us"] > 0 and row["sustained"]["after_idle_iops"] > 0
        assert (out / row["persona"] / "result.json").exists()
    table = (out / "table.md").read_text()
    assert table.count("\n| crucial-m500-120 (8 ch x 1 way x 1 LUN") == 1
    assert "| samsung-750-evo-250 (8 ch x 2 ways x 1 LUN" in table
    # tabulated again from the directory alone: the same table
    r2 = CliRunner().invoke(main, ["fidelity", "--from", str(out)])
    assert r2.exit_code == 0 and table in r2.output
    # ... also once moved elsewhere (the recorded result paths no longer lead there)
    moved = tmp_path / "moved"
    shutil.copytree(out, moved)
    shutil.rmtree(out)
    r2 = CliRunner().invoke(main, ["fidelity", "--from", str(moved)])
    assert r2.exit_code == 0 and table in r2.output
    # a campaign stopped after its first persona still tabulates, the rest pending
    doc["personas"][1] = {**doc["personas"][1], "ok": False, "pending": True,
                          "error": "pending (the campaign stopped before it)"}
    (moved / "fidelity.json").write_text(json.dumps(doc))
    r3 = CliRunner().invoke(main, ["fidelity", "--from", str(moved)])
    assert r3.exit_code == 1 and "| crucial-m500-120 (" in r3.output
    assert "| pending (the campaign stopped before it) |" in r3.output


def _doc(tmp_path, result):
    d = tmp_path / "ok"
    d.mkdir()
    (d / "result.json").write_text(json.dumps(result))
    entry = {"topology": "2 ch x 2 ways x 1 LUN", "onfi": "nv-ddr2 mode 6",
             "scale": "16 blocks/plane x 16 pages/block, raw capacity x 0.0005"}
    return {"profile": "quick", "scale": {"time_scale": 5e-5}, "seed": 1,
            "build": "PGO build", "wall_s": 99.0,
            "personas": [{**entry, "persona": "good", "ok": True, "wall_s": 42.0,
                          "out": str(d)},
                         {**entry, "persona": "bad", "ok": False, "wall_s": 1.0,
                          "error": "PersonaError: nand.groups: two part types"}]}


def test_table_limits_steady_and_failures(tmp_path, result_factory):
    result = result_factory(suite="fidelity")
    for t in result["tests"]:
        for p in t["points"]:
            p["limit"] = {"mb_s": 999.5, "iops": 123456.0, "bound": "flash"}
    seq = result["tests"][0]["points"][1]
    assert seq["name"] == "seqread-128k-qd32"
    seq["steady_state"] = {"steady": False}
    text = fidelity.table(_doc(tmp_path, result))
    good = next(line for line in text.splitlines() if line.startswith("| good"))
    cells = [c.strip() for c in good.split("|")[1:-1]]
    assert cells[1] == f"{seq['mb_s']:,.1f} (999.5 flash) NOT steady"
    assert cells[2].endswith("(999.5 flash)") and "NOT" not in cells[2]
    assert cells[3] == "3,000 (123,456 flash)"          # randread-4k-qd1: IOPS
    assert cells[-1] == "42"
    sus = result["tests"][1]["points"][0]["samples"]
    first = sum(v for _, v in sus[:6]) / 6
    assert cells[-2].startswith(f"{first:,.0f} / ")
    assert "| bad (2 ch x 2 ways x 1 LUN, nv-ddr2 mode 6; 16 blocks/plane" in text
    assert "not run: PersonaError: nand.groups: two part types" in text
    bad = next(line for line in text.splitlines() if line.startswith("| bad"))
    header = next(line for line in text.splitlines() if line.startswith("| persona"))
    assert bad.count("|") == header.count("|") == len(cells) + 1
    assert "Commit: 0123456789ab." in text


def test_readme_between_markers_only(tmp_path):
    readme = tmp_path / "README.md"
    readme.write_text(f"# top\n{fidelity.BEGIN}\nold table\n{fidelity.END}\ntail\n")
    fidelity.update_readme(readme, "| new |\n")
    assert readme.read_text() == f"# top\n{fidelity.BEGIN}\n| new |\n{fidelity.END}\ntail\n"
    readme.write_text("no markers\n")
    with pytest.raises(fidelity.FidelityError, match="markers"):
        fidelity.update_readme(readme, "| new |\n")
    assert readme.read_text() == "no markers\n"
    # the shipped README has them, in order
    shutil.copy(ROOT / "personas" / "README.md", readme)
    fidelity.update_readme(readme, "| x |\n")


def test_stopped_campaign_keeps_what_finished(tmp_path, monkeypatch):
    """fidelity.json is rewritten after every persona: stopped during the second, the first
    stays done and the second pending."""
    from sw.ssdlab.bench.session import BenchSpec

    def cell(spec, c, out_dir):
        if c["persona"] == "crucial-m500-240":
            raise KeyboardInterrupt
        return {"cell": c, "name": c["persona"], "out": str(out_dir), "ok": True,
                "wall_s": 3.0}
    monkeypatch.setattr(fidelity, "run_cell", cell)
    entries = fidelity.plan(["crucial-m500-120", "crucial-m500-240"])
    with pytest.raises(KeyboardInterrupt):
        fidelity.run_all(BenchSpec(), entries, tmp_path, echo=lambda s: None)
    doc = json.loads((tmp_path / "fidelity.json").read_text())
    assert [(p["persona"], p["ok"], p.get("pending", False)) for p in doc["personas"]] == \
        [("crucial-m500-120", True, False), ("crucial-m500-240", False, True)]


def test_campaigns_merged(tmp_path, result_factory):
    """`--from A --from B`: B's row of a persona replaces A's, each row names its commit when
    they differ; campaigns of another profile are refused naming the field."""
    a_res, b_res = result_factory(suite="fidelity"), result_factory(suite="fidelity")
    a_res["commit"], b_res["commit"] = "a" * 40, "b" * 40
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    doc_a, doc_b = _doc(a, a_res), _doc(b, b_res)
    doc_b["personas"][0]["persona"] = "other"
    doc_b["personas"][0]["out"] = str(b / "ok")
    doc = fidelity.merge([doc_a, doc_b], [a, b])
    assert [p["persona"] for p in doc["personas"]] == ["good", "other", "bad"]
    assert doc["wall_s"] == 198.0
    text = fidelity.table(doc)
    assert "| good (2 ch x 2 ways x 1 LUN" in text and f"; commit {'a' * 12})" in text
    assert "| other (2 ch x 2 ways x 1 LUN" in text and f"; commit {'b' * 12})" in text
    assert "Commits: " in text
    doc_b["profile"] = "full"
    with pytest.raises(fidelity.FidelityError, match="profile"):
        fidelity.merge([doc_a, doc_b], [a, b])
