# SPDX-License-Identifier: BSD-2-Clause
"""The analytic limit beside each point: the flash's from the build's configuration, the
link's payload limit per direction, whichever binds."""

import pytest

from spec.nand_geometry import PARTS
from spec.persona import load_persona
from sw.ssdlab.bench.limits import array_ns, bus_of, flash_limit_mb_s, point_limit
from sw.ssdlab.flows.sim import drive_config

pytestmark = pytest.mark.smoke


@pytest.fixture(scope="module")
def cfg():
    return drive_config("default").as_dict()       # NV-DDR2 (the default persona's bus)


def test_flash_limit_matches_the_persona_model(cfg):
    """For page-sized reads, the channel model of persona.flash_limits() on the bus the build
    runs (the default persona: NV-DDR2 mode 7 with the engine at the build's clock), with
    what the FTL does: one plane per READ (the persona's multi-plane pages share a tR) and
    the data units only over the bus (the persona moves page + spare)."""
    from spec.persona import Onfi
    p = load_persona("default")
    assert cfg["nvddr2_mode"] == p.controller.onfi.mode == 7
    want = p.flash_limits(Onfi("nv-ddr2", 7, cfg["sys_clk_freq"] / 1e6))
    got = flash_limit_mb_s(cfg, "read", cfg["page_bytes"])
    spare = (cfg["page_bytes"] + cfg["spare_bytes"]) / cfg["page_bytes"]
    assert got <= want["channel_read"] * spare * 1.001
    assert got >= want["channel_read"] / p.controller.multi_plane * 0.999


def test_the_bus_of_the_build():
    """NV-DDR2 where the build runs it (one byte per engine clock: 2 channels at 125 MHz
    carry at most 250 MB/s, and 128 KiB reads of 16 KiB pages get close), the SDR mode's
    registers on an SDR fallback build (far slower)."""
    nv = drive_config("default", {"n_channels": 2}).as_dict()
    sdr = drive_config("default", {"n_channels": 2, "sdr_fallback": True}).as_dict()
    assert bus_of(nv)["interface"] == "nv-ddr2" and bus_of(nv)["mt_s"] == 125.0
    assert bus_of(sdr)["interface"] == "sdr" and bus_of(sdr)["mode"] == 5
    r_nv, r_sdr = (flash_limit_mb_s(c, "read", 131072) for c in (nv, sdr))
    assert 0.97 * 250 < r_nv <= 250
    assert r_sdr < 0.3 * r_nv
    # the spare is not moved: the bus time per page is the data's
    pages = r_nv * 1e6 / nv["page_bytes"] / nv["n_channels"]
    assert pages * nv["page_bytes"] / 125e6 > 0.97


def test_small_reads_pay_a_whole_tr(cfg):
    r4 = flash_limit_mb_s(cfg, "read", 4096)
    rp = flash_limit_mb_s(cfg, "read", cfg["page_bytes"])
    assert r4 < rp
    ways = cfg["n_ways"] * cfg["n_channels"]
    t_r, _ = array_ns(cfg)                                    # the page types' mean tR
    assert t_r < cfg["t_r_ns"]
    assert r4 <= ways * 4096 * 1e9 / t_r / 1e6                  # array bound of 4 KiB reads


def test_array_times_follow_page_types_and_corner(cfg):
    """The limit runs the dies' page-type mean tR / tPROG in the corner the build's dies run:
    the default build typical; "maximum" (worst case) slower on both."""
    part = PARTS[cfg["part"]]
    bits = cfg["bits_per_cell"]
    assert array_ns(cfg) == (pytest.approx(part.timing.t_r_mean(bits)),
                             pytest.approx(part.timing.t_prog_mean(bits)))
    worst = {**cfg, "nand_timing": "maximum"}
    assert array_ns(worst) == (pytest.approx(part.timing.t_r_mean(bits, typical=False)),
                               pytest.approx(part.timing.t_prog_mean(bits, typical=False)))
    assert flash_limit_mb_s(worst, "read", 4096) <= flash_limit_mb_s(cfg, "read", 4096)
    assert flash_limit_mb_s(worst, "write", 131072) < flash_limit_mb_s(cfg, "write", 131072)
    uniform = {**cfg, "page_timing": {}}                      # an older config.json
    assert array_ns(uniform) == (cfg["t_r_ns"], cfg["t_prog_ns"])


def test_writes_do_not_depend_on_io_size(cfg):
    assert flash_limit_mb_s(cfg, "write", 4096) == flash_limit_mb_s(cfg, "write", 131072)


def test_link_binds_when_lower(cfg):
    f = point_limit(cfg, None, "read", 131072)
    assert f["bound"] == "flash"
    slow = {"read_mb_s": f["mb_s"] / 2, "write_mb_s": 1e6, "describe": "test"}
    g = point_limit(cfg, slow, "read", 131072)
    assert g["bound"] == "host link" and g["mb_s"] == pytest.approx(f["mb_s"] / 2, abs=0.1)
    assert point_limit(cfg, slow, "write", 131072)["bound"] == "flash"
    assert g["iops"] == pytest.approx(g["mb_s"] * 1e6 / 131072, rel=1e-3)


def test_data_movers_bind_on_many_channels():
    """18 NV-DDR2 channels read faster than the flash data movers' 64-bit buffer port writes
    (1,000 MB/s at 125 MHz): that port is the read bound of intel-750-400g, per direction."""
    cfg = drive_config("intel-750-400g").as_dict()
    port = cfg["sys_clk_freq"] * 8 / 1e6
    assert flash_limit_mb_s(cfg, "read", 131072) > 2 * port
    r = point_limit(cfg, None, "read", 131072)
    assert r["bound"] == "flash data movers" and r["mb_s"] == pytest.approx(port, abs=0.1)
    w = point_limit(cfg, None, "write", 131072)
    assert w["bound"] == "flash" and w["mb_s"] < port
    m = point_limit(cfg, None, "rw", 131072, 50)     # each direction its own port: not bound
    assert m["bound"] == "flash" and m["mb_s"] / 2 < port
    small = drive_config("default", {"n_channels": 2}).as_dict()
    assert point_limit(small, None, "read", 131072)["bound"] == "flash"


def test_mixed_shares_the_flash(cfg):
    cfg = {**cfg, "t_prog_ns": 20 * cfg["t_prog_ns"], "page_timing": {
        k: v for k, v in cfg["page_timing"].items() if k.startswith("t_r_")}}   # slow writes
    r = point_limit(cfg, None, "randread", 4096)["mb_s"]
    w = point_limit(cfg, None, "randwrite", 4096)["mb_s"]
    m = point_limit(cfg, None, "randrw", 4096, 70)["mb_s"]
    assert m == pytest.approx(1 / (0.7 / r + 0.3 / w), rel=1e-2)
    assert w < r / 3 and min(r, w) <= m <= max(r, w)


def test_link_of_the_build():
    """The bench takes the link the harness paces from the build's configuration: a SATA
    drive's reads are capped at 550 MB/s, a PCIe 3.0 x4 drive's by the flash of 2 channels."""
    from sw.ssdlab.bench.session import link_limits
    sata = drive_config("crucial-m500-240", {"n_channels": 8}).as_dict()
    link = link_limits(sata)
    assert link["read_mb_s"] == link["write_mb_s"] == 550.0 and "SATA" in link["describe"]
    assert point_limit(sata, link, "read", 131072)["mb_s"] <= 550.0
    nvme = drive_config("default", {"n_channels": 2}).as_dict()
    link = link_limits(nvme)
    assert 3500 < link["read_mb_s"] < 3938 and "PCIe 3.0 x4" in link["describe"]
    assert point_limit(nvme, link, "read", 131072)["bound"] == "flash"


def test_two_part_types_per_target():
    """A build of two part types (intel-750-400g at 16 x 16: the 64 Gbit part on way 1 of
    channels 6-17) is summed channel by channel, each die with its own page and array
    times: 6 channels of two 128 Gbit dies plus 12 of one each, between the drive built of
    the main part alone and one with the small part on way 1 of every channel but 0."""
    cfg = drive_config("intel-750-400g").as_dict()
    assert cfg["part2"]["page_bytes"] == 8192 and len(cfg["part2_targets"]) == 12
    one = {**cfg, "part2": None, "part2_targets": []}
    most = {**cfg, "part2_targets": [[c, 1] for c in range(1, 18)]}
    for kind, bs in (("read", 4096), ("read", 131072), ("write", 131072)):
        big = flash_limit_mb_s(one, kind, bs) / 18            # a channel of two big dies
        mix = (flash_limit_mb_s(most, kind, bs) - big) / 17   # a channel of one of each
        assert flash_limit_mb_s(cfg, kind, bs) == pytest.approx(6 * big + 12 * mix)
        assert mix != pytest.approx(big)
    # the small part programs 2 x 8 KiB per tPROG of 1.3 ms against 2 x 16 KiB per 1.6 ms
    assert flash_limit_mb_s(cfg, "write", 131072) < flash_limit_mb_s(one, "write", 131072)


def test_slc_cache_write_limit():
    """A build with an SLC cache states, beside the native write limit, the limit while the
    cache takes the writes (the dies at the part's SLC tPROG); reads and builds without a
    cache have none."""
    from soc.sim_config import soc_config
    evo = soc_config("samsung-750-evo-250", blocks_per_plane=16).as_dict()
    w = point_limit(evo, None, "randwrite", 4096)
    assert w["slc_mb_s"] > 1.5 * w["mb_s"], w
    assert "slc_mb_s" not in point_limit(evo, None, "randread", 4096)
    plain = soc_config("default", {"n_channels": 2}).as_dict()
    assert "slc_mb_s" not in point_limit(plain, None, "randwrite", 4096)


def test_luns_are_dies_of_their_own():
    """Each LUN of a target is a die with its own array time on the target's bus: where the
    array binds (4 KiB reads: a whole tR each; writes), two LUNs per target double the limit;
    the channel's bus bound (128 KiB reads) does not move."""
    one = drive_config("crucial-m500-960", {"n_channels": 2, "n_ways": 1}).as_dict()
    assert one["luns"] == 2
    single = {**one, "luns": 1}
    for kind, bs in (("read", 4096), ("write", 131072)):
        assert flash_limit_mb_s(one, kind, bs) == pytest.approx(
            2 * flash_limit_mb_s(single, kind, bs)), kind
    bus = 2 * bus_of(one)["mt_s"]
    assert flash_limit_mb_s(single, "read", 131072) < 0.8 * bus      # one die: tR binds
    assert 0.97 * bus < flash_limit_mb_s(one, "read", 131072) <= bus


def test_multi_plane_reads_share_a_tr():
    """The hardware read path reads up to `planes` plane pages of one I/O under one tR: a
    128 KiB read on a one-die target is array-bound at twice the plane-by-plane limit on a
    2-plane part; a page-sized read and a plane-by-plane build are not."""
    cfg = drive_config("crucial-m500-960", {"n_channels": 2, "n_ways": 1}).as_dict()
    cfg = {**cfg, "luns": 1}
    assert cfg["planes"] == 2 and cfg["hw_read"] and cfg["hw_read_multi_plane"]
    by_plane = {**cfg, "hw_read_multi_plane": False}
    page = cfg["page_bytes"]
    assert flash_limit_mb_s(cfg, "read", page) == flash_limit_mb_s(by_plane, "read", page)
    r_mp, r_p = (flash_limit_mb_s(c, "read", 131072) for c in (cfg, by_plane))
    t_r, _ = array_ns(cfg)
    assert r_p == pytest.approx(2 * page * 1e9 / (t_r + page * 8) / 1e6, rel=0.02)
    assert r_mp == pytest.approx(2 * 2 * page * 1e9 / (t_r + 2 * page * 8) / 1e6, rel=0.02)


def test_ecc_parity_rides_on_the_bus():
    """With the persona's BCH code (1 KiB codewords, 56 parity bytes) a channel moves 1,080
    bytes per 1,024 of data: the bus-bound 128 KiB read and write limits fall by that ratio,
    and the decoder (1,083 clocks per error-free codeword) is a bound of its own, just above
    the bus."""
    from sw.ssdlab.bench.limits import ecc_bus_bytes, ecc_decoder_mb_s
    plain = drive_config("default", {"n_channels": 2}).as_dict()
    ecc = drive_config("default", {"n_channels": 2, "ecc": "persona"}).as_dict()
    assert ecc["ecc"] and not plain["ecc"]
    assert ecc_bus_bytes(ecc, 16384) == 16 * 1080 and ecc_bus_bytes(plain, 16384) == 16384
    assert ecc_decoder_mb_s(plain) is None
    assert ecc_decoder_mb_s(ecc) == pytest.approx(1024 * 125 / 1083)
    assert ecc_decoder_mb_s(ecc, errors=True) == pytest.approx(1024 * 125 / 1147)  # 111.6
    for kind in ("read", "write"):
        p, e = (flash_limit_mb_s(c, kind, 131072) for c in (plain, ecc))
        assert e == pytest.approx(p * 1024 / 1080, rel=0.01), kind
    assert flash_limit_mb_s(ecc, "read", 131072) <= 2 * ecc_decoder_mb_s(ecc)
