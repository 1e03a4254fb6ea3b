# SPDX-License-Identifier: BSD-2-Clause
"""Charts in the style of SSD reviews (matplotlib, Agg): one PNG and one SVG per test.

| chart | what |
|---|---|
| qd | IOPS vs queue depth (log2 axis), a line per series (read, write) |
| bs | MB/s vs block size (log2 axis, 512B ... 256K) |
| mixed | MB/s or IOPS vs read share (100 % ... 0 %) |
| bars, recovery | grouped bars, the figure printed on each bar |
| degradation | per-second IOPS against data written (scatter) and its 30 s moving mean |
| table | CrystalDiskMark-style table: read and write MB/s per row |
| fill | IOPS vs fill level, and the figure after deallocation |

Every chart draws one or more results (`entries`: [(label, result, test)]), so `compare` and
`sweep` overlay results on the same axes. Titles name the test; axes carry units; a footer
names persona, scale and time domain.
"""

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

__all__ = ["draw_test", "draw_all", "moving_mean", "written_axis", "value"]

_COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2",
           "#7f7f7f", "#bcbd22", "#17becf"]


def value(p, metric):
    """The point's figure: IOPS or MB/s. IOPS where the methodology asks for the mean of
    per-second samples (qdscan): with the ioengine's nanosecond log, the I/Os over the span
    from first submission to last completion, which is that mean without the sampling
    windows' whole-millisecond edges (a scaled run's 1 ms windows hold a few I/Os each, so
    their mean is a multiple of 1,000 IOPS less the dropped partial window); otherwise the
    mean of the samples fio logged."""
    if p.get("iops") is None:
        return None
    if metric == "iops":
        if p.get("time_basis") == "ns":
            return p["iops"]
        return p["sample_mean_iops"] if p.get("sample_mean_iops") else p["iops"]
    return p["mb_s"]


def moving_mean(values, window):
    out, acc = [], 0.0
    for i, v in enumerate(values):
        acc += v
        if i >= window:
            acc -= values[i - window]
        out.append(acc / min(i + 1, window))
    return out


def written_axis(samples, sample_ms, bs, decimal):
    """Cumulative data written at each sample (GB or GiB)."""
    unit = 1e9 if decimal else float(1 << 30)
    x, acc = [], 0.0
    for _, iops in samples:
        acc += iops * sample_ms / 1000 * bs
        x.append(acc / unit)
    return x


def _ylabel(metric, result):
    return "IOPS" if metric == "iops" else result["units"]


def _footer(fig, entries):
    parts = []
    for label, r, _ in entries[:3]:
        s = r["scale"]
        parts.append(f"{label}: time x{s['time_scale']:g}, {r['time_domain']} time, "
                     f"{r['capacity']['user_bytes'] / 2**20:.0f} MiB user")
    fig.text(0.01, 0.005, "ssdlab bench · " + " | ".join(parts), fontsize=6, color="#555")


def _series(entries, metric):
    """[(legend, [(x, y, point)])] per entry label x series."""
    out = []
    multi = len(entries) > 1
    for label, _, t in entries:
        by = {}
        for p in t["points"]:
            v = value(p, metric)
            if v is not None:
                by.setdefault(p["series"], []).append((p["x"], v, p))
        for s, pts in by.items():
            out.append((f"{label} {s}" if multi else s, pts))
    return out


def _lines(ax, entries, metric, log2=False, xticks=None):
    for i, (name, pts) in enumerate(_series(entries, metric)):
        xs, ys = [x for x, _, _ in pts], [y for _, y, _ in pts]
        ax.plot(xs, ys, marker="o", color=_COLORS[i % len(_COLORS)], label=name)
    if log2:
        ax.set_xscale("log", base=2)
    if xticks:
        ax.set_xticks([x for x, _ in xticks], [t for _, t in xticks])
        ax.minorticks_off()


def _bars(ax, entries, metric):
    cats = []
    for _, _, t in entries:
        for p in t["points"]:
            key = p["label"] if p["series"] in p["label"] else f"{p['series']} {p['label']}"
            if key not in cats:
                cats.append(key)
    n = len(entries)
    width = 0.8 / n
    for i, (label, _, t) in enumerate(entries):
        vals = {}
        for p in t["points"]:
            key = p["label"] if p["series"] in p["label"] else f"{p['series']} {p['label']}"
            vals[key] = value(p, metric)
        xs = [c + (i - (n - 1) / 2) * width for c in range(len(cats))]
        ys = [vals.get(c) or 0 for c in cats]
        bars = ax.bar(xs, ys, width * 0.95, color=_COLORS[i % len(_COLORS)], label=label)
        for b, y in zip(bars, ys, strict=True):
            ax.annotate(f"{y:,.0f}" if y >= 100 else f"{y:.1f}",
                        (b.get_x() + b.get_width() / 2, y), ha="center", va="bottom",
                        fontsize=7)
    ax.set_xticks(range(len(cats)), cats, rotation=15 if len(cats) > 4 else 0, fontsize=8)


def _degradation(ax, entries):
    """Returns the x unit chosen (GB/GiB, or MB/MiB for a drive of less than 1 GB)."""
    r0 = entries[0][1]
    decimal = r0["units"] == "MB/s"
    small = r0["capacity"]["user_bytes"] * max(1.0, r0["scale"]["write_multiple"]) < 1e9
    div = (1e3 if decimal else 1024.0) if small else 1.0
    unit = ("MB" if decimal else "MiB") if small else ("GB" if decimal else "GiB")
    for i, (label, r, t) in enumerate(entries):
        for p in t["points"]:
            samples = p.get("samples") or []
            if not samples:
                continue
            sample_ms = p.get("sample_ms") or r["sample_ms"]
            x = [v * div for v in written_axis(samples, sample_ms, p["bs"], decimal)]
            y = [v for _, v in samples]
            window = max(1, round(30_000 * r["scale"]["time_scale"] / sample_ms))
            c = _COLORS[i % len(_COLORS)]
            ax.scatter(x, y, s=4, color=c, alpha=0.35,
                       label=f"{label}: IOPS per {sample_ms} ms")
            ax.plot(x, moving_mean(y, window), color=c, linewidth=2,
                    label=f"{label}: moving mean over {window} samples (30 s scaled)")
            cap = r["capacity"]["user_bytes"] / (1e9 if decimal else 2**30) * div
            k = 1
            while x and cap * k <= x[-1]:
                ax.axvline(cap * k, color=c, linestyle=":", linewidth=1)
                ax.annotate(f"{k}x capacity", (cap * k, 0), rotation=90, fontsize=7,
                            va="bottom", ha="right", color=c)
                k += 1
    ax.set_ylim(bottom=0)
    return unit


def _table(fig, ax, entries, result):
    ax.axis("off")
    rows = []
    for _, _, t in entries:
        for p in t["points"]:
            if p["label"] not in rows:
                rows.append(p["label"])
    cols, cells = [], []
    for label, _, t in entries:
        series = []
        for p in t["points"]:
            if p["series"] not in series:
                series.append(p["series"])
        for s in series:
            cols.append(f"{label}\n{s}" if len(entries) > 1 else s)
            vals = {p["label"]: p["mb_s"] for p in t["points"] if p["series"] == s}
            cells.append([f"{vals[r]:,.2f}" if vals.get(r) is not None else "-" for r in rows])
    body = [[cells[c][r] for c in range(len(cols))] for r in range(len(rows))]
    tab = ax.table(cellText=body, rowLabels=rows, colLabels=cols, loc="center",
                   cellLoc="right", rowLoc="left")
    tab.auto_set_font_size(False)
    tab.set_fontsize(10)
    tab.scale(1, 1.8)
    for (r, c), cell in tab.get_celld().items():
        if r == 0 or c == -1:
            cell.set_facecolor("#2e7d32")
            cell.get_text().set_color("white")
            cell.get_text().set_weight("bold")
        else:
            cell.set_facecolor("#f1f8e9")
    ax.set_title(f"{result['units']}", fontsize=9, loc="right")


def draw_test(entries, out_dir, stem=None):
    """Draw one test for entries [(label, result, test)]; returns the files written."""
    label0, r0, t0 = entries[0]
    kind, metric = t0["chart"], t0["metric"]
    stem = stem or t0["name"]
    fig, ax = plt.subplots(figsize=(8, 4.8), dpi=110)
    if kind == "qd":
        qds = sorted({p["x"] for _, _, t in entries for p in t["points"]})
        _lines(ax, entries, metric, log2=True, xticks=[(q, str(q)) for q in qds])
        ax.set_xlabel("queue depth")
    elif kind == "bs":
        sizes = sorted({p["x"] for _, _, t in entries for p in t["points"]})
        _lines(ax, entries, metric, log2=True,
               xticks=[(b, f"{b // 1024}K" if b >= 1024 else f"{b}") for b in sizes])
        ax.set_xlabel("block size (bytes; K = 1024)")
    elif kind in ("mixed", "fill"):
        _lines(ax, entries, metric)
        ax.set_xlabel(t0.get("x_label") or "")
        if kind == "mixed":
            ax.invert_xaxis()
    elif kind in ("bars", "recovery"):
        _bars(ax, entries, metric)
    elif kind == "degradation":
        ax.set_xlabel(f"data written ({_degradation(ax, entries)})")
    elif kind == "table":
        _table(fig, ax, entries, r0)
    else:
        plt.close(fig)
        return []
    if kind != "table":
        ax.set_ylabel(_ylabel(metric, r0))
        ax.grid(True, alpha=0.3)
        ax.set_ylim(bottom=0)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=7)
    ax_title = t0["title"]
    if len(entries) == 1:
        ax_title += f" — {label0}"
    fig.suptitle(ax_title, fontsize=11)
    _footer(fig, entries)
    fig.tight_layout(rect=(0, 0.03, 1, 1))
    files = []
    for ext in ("png", "svg"):
        f = out_dir / f"{stem}.{ext}"
        fig.savefig(f)
        files.append(f)
    plt.close(fig)
    return files


def draw_all(results, out_dir):
    """Charts of every test the results share (by test name, in the first one's order);
    results: [(label, result)]. Returns {test name: [files]}."""
    out_dir.mkdir(parents=True, exist_ok=True)
    out = {}
    for t in results[0][1]["tests"]:
        entries = []
        for label, r in results:
            match = [x for x in r["tests"] if x["name"] == t["name"]]
            if match and match[0]["points"]:
                entries.append((label, r, match[0]))
        if entries:
            files = draw_test(entries, out_dir)
            if files:
                out[t["name"]] = files
    return out
