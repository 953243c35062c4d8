#!/usr/bin/env python3
"""Draws the PNGs of a memlab report from the run record alone.

    python3 plots.py RUN.json OUT_DIR

Every experiment in a format-2 record declares its plots (docs/RECORD.md,
"Declarations"): which axis is on x, which metric on y, which axes name the
series and the panels, which rows are drawn, the reference lines and the model.
This script draws exactly those; it knows no experiment by name. Each plot is
drawn on its own: one that fails is reported on stderr and the others are
still written. Exit status 1 if any plot failed. A format-1 record declares
nothing, so nothing is drawn.

build_figure() returns the matplotlib Figure without saving it, for the tests
(tests/report/test_plots.py), which check what each plot shows.
"""
import json
import math
import sys
import textwrap
import traceback

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator  # noqa: E402

# Short axis labels for the harness's own row fields; experiment metrics (extra.*,
# predicted.*) are labelled from their declared name.
FIELD_LABELS = {
    "median_ms": "time",
    "gbps": "bandwidth",
    "tflops": "arithmetic rate",
    "ratio_to_peer": "speed vs peer",
    "ratio_to_ceiling": "share of the copy ceiling",
}
SEED_COLOUR = "0.55"


# ---------------------------------------------------------------- record access

def num(v):
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    return float(v) if math.isfinite(v) else None


def field(row, axis):
    if axis == "variant":
        return row.get("variant")
    return (row.get("params") or {}).get(axis)


def value_is(v, want):
    if isinstance(v, str):
        return v == want
    n = num(v)
    if n is None:
        return False
    try:
        w = float(want)
    except ValueError:
        return False
    return abs(n - w) <= 1e-9 * max(1.0, abs(w))


def usable(row):
    """A row that was not skipped, errored or failed verification, with a time or verified (a swept
    staircase's row records its curve and located sizes, no time of its own)."""
    return (not row.get("skipped") and not row.get("error") and row.get("verified") != "failed"
            and (num(row.get("median_ms")) is not None or row.get("verified") == "passed"))


def matches(row, where, rows):
    """The record's row filter: values as text, "max"/"min" the extreme present, "!v" all but v."""
    for axis, wants in where.items():
        v = field(row, axis)
        if v is None:
            return False
        positive = [w for w in wants if not w.startswith("!")]
        if any(value_is(v, w[1:]) for w in wants if w.startswith("!")):
            return False
        if not positive:
            continue
        ok = False
        for w in positive:
            if w in ("max", "min"):
                vals = [num(field(r, axis)) for r in rows if usable(r) and num(field(r, axis)) is not None]
                if vals and num(v) is not None:
                    ok |= num(v) == (max(vals) if w == "max" else min(vals))
            else:
                ok |= value_is(v, w)
        if not ok:
            return False
    return True


def metric(row, name):
    if "." in name:
        group, key = name.split(".", 1)
        return num((row.get(group) or {}).get(key))
    return num(row.get(name))


def ordered(values, declared):
    """Distinct values in the declared sweep's order, then any others as found."""
    out = [d for d in declared if any(v == d for v in values)]
    for v in values:
        if not any(v == o for o in out):
            out.append(v)
    return out


def text(v):
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v)


def size_text(b):
    for unit, div in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if b >= div:
            q = b / div
            return ("%d" % q if q.is_integer() else "%.3g" % q) + " " + unit
    return "%d B" % b


# ---------------------------------------------------------------- one plot

class plot_data:
    """The rows of one declared plot, grouped into panels and series."""

    def __init__(self, record, exp, spec):
        self.exp, self.spec = exp, spec
        self.axes = {a["name"]: a for a in exp.get("axes", [])}
        self.metrics = {m["name"]: m for m in exp.get("metrics", [])}
        all_rows = [r for r in record.get("rows", []) if r.get("experiment") == exp["id"]]
        where = spec.get("where") or {}
        self.rows = [r for r in all_rows if usable(r) and matches(r, where, all_rows)]
        self.ceilings = record.get("ceilings") or {}
        series_axes = spec.get("series") or []
        panel_axis = spec.get("panels") or ""
        self.panel_values = ordered([field(r, panel_axis) for r in self.rows],
                                    self.declared(panel_axis)) if panel_axis else [None]
        self.series_keys = ordered([tuple(field(r, a) for a in series_axes) for r in self.rows],
                                   [])
        # Series in the declared order of their first axis, then the rest.
        if series_axes:
            decl = [tuple([v]) for v in self.declared(series_axes[0])]
            self.series_keys.sort(key=lambda k: next((i for i, d in enumerate(decl) if d[0] == k[0]), len(decl)))
        self.x_values = ordered([field(r, spec["x"]) for r in self.rows], self.declared(spec["x"]))
        self.categorical = self.axes.get(spec["x"], {}).get("kind") == "string"
        self.series_axes, self.panel_axis = series_axes, panel_axis

    def declared(self, axis):
        return list(self.axes.get(axis, {}).get("values", []))

    def series_label(self, key):
        parts = []
        for a, v in zip(self.series_axes, key):
            unit = self.axes.get(a, {}).get("unit", "")
            suffix = "" if not unit or isinstance(v, str) else "×" if unit == "x" else " " + unit
            parts.append(text(v) if a == "variant" else "%s=%s%s" % (a, text(v), suffix))
        return ", ".join(parts) if parts else "this GPU"

    def points(self, panel, key, y=None):
        """(x, y) in x order for one series of one panel."""
        y = y or self.spec["y"]
        pts = {}
        for r in self.rows:
            if self.panel_axis and field(r, self.panel_axis) != panel:
                continue
            if tuple(field(r, a) for a in self.series_axes) != key:
                continue
            v = metric(r, y)
            x = field(r, self.spec["x"])
            if v is None or x is None:
                continue
            pts.setdefault(json.dumps(x), (x, v))  # one point per x; the declaration keeps others fixed
        order = {json.dumps(x): i for i, x in enumerate(self.x_values)}
        return sorted(pts.values(), key=lambda p: order.get(json.dumps(p[0]), 1e9))

    def x_label(self):
        a = self.axes.get(self.spec["x"], {})
        unit = a.get("unit", "")
        return self.spec["x"] + (" (%s)" % unit if unit and unit != self.spec["x"] else "")

    def y_label(self):
        name = self.spec["y"]
        m = self.metrics.get(name, {})
        label = FIELD_LABELS.get(name, name.split(".", 1)[-1].replace("_", " "))
        if name == "ratio_to_peer" and m.get("description"):
            label = "speed vs " + m["description"].split("'s time")[0]
        unit = m.get("unit", "")
        label += " (%s)" % unit if unit and unit != "x" else " (×)" if unit == "x" else ""
        # A long peer description would run off the figure's edge: wrap it onto lines.
        return textwrap.fill(label, 48) if len(label) > 48 else label

    def y_unit(self):
        return self.metrics.get(self.spec["y"], {}).get("unit", "")

    def seed_points(self, panel):
        """The seed's figures that sit on this plot: same unit as y, a row position on x."""
        out = []
        for f in self.exp.get("seed_figures", []):
            at = f.get("at") or {}
            if f.get("unit") != self.y_unit() or self.spec["x"] not in at:
                continue
            if self.panel_axis and self.panel_axis in at and not value_is(panel, at[self.panel_axis]):
                continue
            where = self.spec.get("where") or {}
            if any(a in at and not any(value_is(at[a], w) for w in ws) for a, ws in where.items()):
                continue
            x = next((v for v in self.x_values if value_is(v, at[self.spec["x"]]) or text(v) == at[self.spec["x"]]),
                     None)
            if x is not None:
                out.append((x, f["value"], f.get("gpu", "")))
        return out


def style_x(ax, d):
    if d.categorical:
        ax.set_xticks(range(len(d.x_values)))
        crowded = len(d.x_values) > 4 and max(len(text(v)) for v in d.x_values) > 4
        ax.set_xticklabels([text(v) for v in d.x_values], rotation=40 if crowded else 0,
                           ha="right" if crowded else "center", fontsize=8)
        return
    a = d.axes.get(d.spec["x"], {})
    xs = [num(v) for v in d.x_values if num(v) is not None]
    if a.get("log_scale") and xs and min(xs) > 0:
        ax.set_xscale("log", base=2)
    unit = a.get("unit", "")
    def power_of_two(v):
        return v >= 1024 and v == int(v) and (int(v) & (int(v) - 1)) == 0

    if unit == "bytes":
        fmt = lambda v, _: size_text(v)  # noqa: E731
    elif a.get("log_scale") and xs and all(power_of_two(v) for v in xs):
        fmt = lambda v, _: "$2^{%d}$" % round(math.log2(v))  # noqa: E731  (doubling sweeps read as exponents)
    else:
        fmt = lambda v, _: text(v) if v == int(v) else "%g" % v  # noqa: E731
    # Ticks at the data, thinned to about ten, so the reader sees the values that ran; a dense
    # integer sweep keeps the multiples of a round step (0, 8, 16, ... for strides).
    step = max(1, math.ceil(len(xs) / 10))
    ticks = xs[::step]
    if not a.get("log_scale") and len(xs) > 12 and all(v == int(v) for v in xs):
        nice = next((k for k in (2, 4, 5, 8, 10, 16, 20, 32, 50, 64, 100) if (max(xs) - min(xs)) / k <= 10), None)
        if nice:
            ticks = [v for v in xs if int(v) % nice == 0] or ticks
    ax.xaxis.set_major_locator(FixedLocator(ticks))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.xaxis.set_major_formatter(FuncFormatter(fmt))
    if unit == "bytes" or (len(xs) > 8 and fmt(xs[-1], None).isdigit() and len(fmt(xs[-1], None)) > 3):
        for t in ax.get_xticklabels():
            t.set_rotation(30)
            t.set_ha("right")


def xpos(d, x):
    return d.x_values.index(x) if d.categorical else x


def draw_refs(ax, d, seed_drawn):
    for ref in d.spec.get("refs") or []:
        kind, label = ref.get("kind"), ref.get("label", "")
        y = None
        if kind == "ceiling" and d.y_unit() == "GB/s":
            y = num(d.ceilings.get("d2d_copy_gbps"))
        elif kind == "fp32_peak" and d.y_unit() == "TFLOP/s":
            y = num(d.ceilings.get("fp32_peak_tflops"))
        elif kind == "value":
            y = num(ref.get("value"))
        if y is not None:
            ax.axhline(y, color="black", linestyle=":", linewidth=1.2,
                       label="%s (%s)" % (label, ("%.4g" % y) + (" " + d.y_unit() if d.y_unit() not in ("", "x") else "")))


def draw_line_panel(ax, d, panel, colours):
    models = []
    for i, key in enumerate(d.series_keys):
        pts = d.points(panel, key)
        if not pts:
            continue
        c = colours[i % len(colours)]
        ax.plot([xpos(d, x) for x, _ in pts], [y for _, y in pts], marker="o", markersize=3.5, linewidth=1.5,
                color=c, label=d.series_label(key))
        if d.spec.get("model"):
            mp = d.points(panel, key, d.spec["model"])
            if mp:
                models.append((mp, c, d.series_label(key)))
    # A model that predicts the same for every series (a link rate) is drawn once, in grey.
    distinct = {json.dumps(m[0]) for m in models}
    for n, (mp, c, label) in enumerate(models):
        if len(distinct) == 1 and n > 0:
            break
        one = len(distinct) == 1
        ax.plot([xpos(d, x) for x, _ in mp], [y for _, y in mp], linestyle="--", linewidth=1,
                color="0.35" if one and len(models) > 1 else c, label="model" if one else "model: " + label)
    if any(r.get("kind") == "seed" for r in d.spec.get("refs") or []):
        sp = d.seed_points(panel)
        if sp:
            ax.plot([xpos(d, x) for x, _, _ in sp], [v for _, v, _ in sp], linestyle="none", marker="*",
                    markersize=11, color=SEED_COLOUR, label="seed: " + sp[0][2])
    draw_refs(ax, d, False)


def draw_bar_panel(ax, d, panel, colours):
    seed = d.seed_points(panel) if any(r.get("kind") == "seed" for r in d.spec.get("refs") or []) else []
    groups = [k for k in d.series_keys if d.points(panel, k)]
    n = len(groups) + (1 if seed else 0)
    width = 0.8 / max(n, 1)
    for i, key in enumerate(groups):
        pts = d.points(panel, key)
        off = (i - (n - 1) / 2) * width
        ax.bar([d.x_values.index(x) + off for x, _ in pts], [y for _, y in pts], width=width,
               color=colours[i % len(colours)], label=d.series_label(key))
    if seed:
        off = (n - 1 - (n - 1) / 2) * width
        ax.bar([d.x_values.index(x) + off for x, _, _ in seed], [v for _, v, _ in seed], width=width,
               color=SEED_COLOUR, hatch="//", edgecolor="white", label="seed: " + seed[0][2])
    d.categorical = True
    draw_refs(ax, d, bool(seed))


def build_timeline(record, exp, spec):
    """The list spec["y"] (extra.timeline) of the first row passing `where`: one lane per stream."""
    rows = [r for r in record.get("rows", []) if r.get("experiment") == exp["id"]]
    key = spec["y"].split(".", 1)[-1]
    row = next((r for r in rows if usable(r) and matches(r, spec.get("where") or {}, rows)
                and isinstance((r.get("extra") or {}).get(key), list)), None)
    if row is None:
        raise ValueError("%s: no row with %s" % (spec["file"], spec["y"]))
    events = [(str(e.get("stream", "?")), str(e.get("op", "?")), num(e.get("start_ms")), num(e.get("end_ms")))
              for e in row["extra"][key] if isinstance(e, dict)]
    events = [e for e in events if e[2] is not None and e[3] is not None and e[3] >= e[2]]
    if not events:
        raise ValueError("%s: the timeline holds no event with start_ms and end_ms" % spec["file"])
    t0 = min(e[2] for e in events)
    lanes = ordered([e[0] for e in events], sorted({e[0] for e in events}, key=lambda v: (not v.isdigit(), v.zfill(8))))
    ops = ordered([e[1] for e in events], [])
    colours = {op: plt.get_cmap("Set2")(i % 8) for i, op in enumerate(ops)}
    fig, ax = plt.subplots(figsize=(10, 1.6 + 0.45 * len(lanes)), layout="constrained")
    for lane, op, a, b in events:
        ax.broken_barh([(a - t0, b - a)], (lanes.index(lane) - 0.38, 0.76), facecolors=colours[op],
                       edgecolor="black", linewidth=0.4, label=op)
    ax.set_yticks(range(len(lanes)))
    ax.set_yticklabels(["stream " + ln for ln in lanes])
    ax.set_ylabel("CUDA stream")
    ax.invert_yaxis()
    ax.set_xlabel("time since the first event (ms)")
    from matplotlib.patches import Patch
    ax.legend([Patch(color=colours[o]) for o in ops], ops, fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0),
              frameon=False)
    ax.grid(True, axis="x", alpha=0.3)
    params = ", ".join("%s=%s" % (k, text(v)) for k, v in sorted((row.get("params") or {}).items()))
    fig.suptitle("%s\n%s (%s)" % (spec.get("title", ""), row.get("variant", ""), params), fontsize=10)
    return fig


def build_roofline(record, exp, spec):
    """Every timed row with flops and bytes of an experiment that declares tflops (host-device
    experiments do not: their bytes cross PCIe, not DRAM), under this run's two ceilings. A
    record without such rows gets a figure that says so (gid "roofline_note"), not an error."""
    declares = {e["id"] for e in record.get("experiments", [])
                if any(m.get("name") == "tflops" for m in e.get("metrics", []))}
    pts = []
    for r in record.get("rows", []):
        f, b, ms = num(r.get("flops")), num(r.get("bytes")), num(r.get("median_ms"))
        if r.get("experiment") in declares and usable(r) and f and b and ms and ms > 0:
            pts.append((r["experiment"], f / b, f / (ms * 1e-3) / 1e12))
    ce = record.get("ceilings") or {}
    bw, peak = num(ce.get("d2d_copy_gbps")), num(ce.get("fp32_peak_tflops"))
    fig, ax = plt.subplots(figsize=(10, 5.2), layout="constrained")
    if not pts:
        # A run of bandwidth or latency experiments only (the ceilings' own FP32 row has no
        # bytes): nothing to place under the roofs. Say so on the figure, not by raising, so
        # the report keeps every other plot and this one explains itself.
        ax.set_axis_off()
        ax.text(0.5, 0.5, "No row of this record has FLOPs, bytes and a time:\nnothing to place under the roofs "
                "(run a compute experiment, e.g. gemm, to fill it).", ha="center", va="center", fontsize=11,
                transform=ax.transAxes, gid="roofline_note")
        roofs = []
        if bw:
            roofs.append("cudaMemcpy D2D %.0f GB/s" % bw)
        if peak:
            roofs.append("FP32 peak %.1f TFLOP/s" % peak)
        if roofs:
            ax.text(0.5, 0.32, "This run's roofs: " + ", ".join(roofs), ha="center", va="center", fontsize=9,
                    transform=ax.transAxes)
        fig.suptitle(spec.get("title", ""), fontsize=11)
        return fig
    exps = ordered([p[0] for p in pts], [])
    cmap = plt.get_cmap("tab10")
    for i, e in enumerate(exps):
        mine = [p for p in pts if p[0] == e]
        ax.scatter([p[1] for p in mine], [p[2] for p in mine], s=22, color=cmap(i % 10), marker="os^vD<>pPhX"[i % 11],
                   label=e, alpha=0.85)
    xmin, xmax = min(p[1] for p in pts) / 2, max(p[1] for p in pts) * 2
    if bw and peak:  # the ridge and both roofs in view
        xmin, xmax = min(xmin, peak * 1e3 / bw / 4), max(xmax, 4 * peak * 1e3 / bw)
    if bw:
        xs = [xmin * (xmax / xmin) ** (i / 200.0) for i in range(201)]
        roof = [min(peak, bw * x / 1e3) if peak else bw * x / 1e3 for x in xs]
        ax.plot(xs, roof, color="black", linewidth=1.5,
                label="roof: cudaMemcpy D2D %.0f GB/s%s" % (bw, ", FP32 peak %.1f TFLOP/s" % peak if peak else ""))
    elif peak:
        ax.axhline(peak, color="black", linestyle=":", label="FP32 peak (%.1f TFLOP/s)" % peak)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("arithmetic intensity (FLOP/byte of declared traffic)")
    ax.set_ylabel("achieved FP32 rate (TFLOP/s)")
    ax.grid(True, which="both", alpha=0.25)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    fig.suptitle(spec.get("title", ""), fontsize=11)
    return fig


def build_heatmap(record, exp, spec):
    """A matrix per panel: columns are the values of `x`, rows the values of the one series axis,
    each cell the metric `y` of the row with both (blank where no row has one), printed in the cell."""
    d = plot_data(record, exp, spec)
    if not d.rows:
        raise ValueError("%s: no timed rows to draw" % spec["file"])
    if len(d.series_axes) != 1:
        raise ValueError("%s: a heatmap needs exactly one series axis (its rows)" % spec["file"])
    row_axis = d.series_axes[0]
    row_values = ordered([field(r, row_axis) for r in d.rows], d.declared(row_axis))
    n = len(d.panel_values)
    side = max(2.6, 0.55 * max(len(d.x_values), len(row_values)) + 1.6)
    fig, axes = plt.subplots(1, n, figsize=(min(20, side * n + 1.5), side + 0.6), layout="constrained", squeeze=False)
    cells = []
    for panel in d.panel_values:
        m = [[None] * len(d.x_values) for _ in row_values]
        for i, rv in enumerate(row_values):
            for x, y in d.points(panel, (rv,)):
                m[i][d.x_values.index(x)] = y
        cells.append(m)
    finite = [v for m in cells for row in m for v in row if v is not None]
    lo, hi = (min(finite), max(finite)) if finite else (0.0, 1.0)
    image = None
    for k, panel in enumerate(d.panel_values):
        ax = axes[0][k]
        m = cells[k]
        grid = [[float("nan") if v is None else v for v in row] for row in m]
        image = ax.imshow(grid, cmap="viridis", vmin=lo, vmax=hi if hi > lo else lo + 1, aspect="equal")
        for i, row in enumerate(m):
            for j, v in enumerate(row):
                if v is not None:
                    ax.text(j, i, "%.3g" % v, ha="center", va="center", fontsize=8,
                            color="white" if v < (lo + hi) / 2 else "black")
        ax.set_xticks(range(len(d.x_values)))
        ax.set_xticklabels([text(v) for v in d.x_values])
        ax.set_yticks(range(len(row_values)))
        ax.set_yticklabels([text(v) for v in row_values])
        ax.set_xlabel(d.x_label())
        ax.set_ylabel(row_axis)
        if d.panel_axis:
            ax.set_title("%s = %s" % (d.panel_axis, text(panel)), fontsize=10)
    if image is not None:
        fig.colorbar(image, ax=axes[0][-1], label=d.y_label(), shrink=0.8)
    fig.suptitle(spec.get("title", spec["file"]), fontsize=11)
    return fig


def build_figure(record, exp, spec):
    """The Figure for one declared plot, not saved. Raises ValueError when it has no rows."""
    if spec.get("kind") == "heatmap":
        return build_heatmap(record, exp, spec)
    if spec.get("kind") == "timeline":
        return build_timeline(record, exp, spec)
    if spec.get("kind") == "roofline":
        return build_roofline(record, exp, spec)
    d = plot_data(record, exp, spec)
    if not d.rows:
        raise ValueError("%s: no timed rows to draw" % spec["file"])
    n = len(d.panel_values)
    bars = spec.get("kind") == "bars"
    per = max(4.2, 0.42 * len(d.x_values) * max(1, len(d.series_keys)) ** 0.5) if bars else 5.0
    fig, axd = plt.subplot_mosaic([[str(i) for i in range(n)]], figsize=(min(18, per * n + 2.6), 4.4),
                                  layout="constrained", sharey=True)
    count = len(d.series_keys) + 1
    colours = plt.get_cmap("tab10" if count <= 10 else "tab20").colors
    for i, panel in enumerate(d.panel_values):
        ax = axd[str(i)]
        (draw_bar_panel if bars else draw_line_panel)(ax, d, panel, colours)
        style_x(ax, d)
        if spec.get("log_y"):
            ax.set_yscale("log")
        ax.set_xlabel(d.x_label())
        if i == 0:
            ax.set_ylabel(d.y_label())
        if d.panel_axis:
            ax.set_title("%s = %s" % (d.panel_axis, text(panel)), fontsize=10)
        ax.grid(True, which="major", alpha=0.3)
    # One legend beside the panels: every panel draws the same series.
    last = axd[str(n - 1)]
    handles, labels = [], []
    for i in range(n):
        for h, lab in zip(*axd[str(i)].get_legend_handles_labels()):
            if lab not in labels:
                handles.append(h)
                labels.append(lab)
    if labels:
        last.legend(handles, labels, loc="upper left", bbox_to_anchor=(1.02, 1.0), fontsize=8, frameon=False)
    fig.suptitle(spec.get("title", spec["file"]), fontsize=11)
    return fig


# ---------------------------------------------------------------- main

def declared_plots(record):
    """(experiment, plot) for every declared plot of an experiment with rows to draw."""
    if record.get("format_version", 1) < 2:
        return []
    out = []
    for exp in record.get("experiments", []):
        rows = [r for r in record.get("rows", []) if r.get("experiment") == exp.get("id") and usable(r)]
        if rows:
            out.extend((exp, p) for p in exp.get("plots", []))
    return out


def main(argv):
    if len(argv) != 3:
        print("usage: plots.py RUN.json OUT_DIR", file=sys.stderr)
        return 2
    with open(argv[1]) as f:
        record = json.load(f)
    failed = 0
    for exp, spec in declared_plots(record):
        try:
            fig = build_figure(record, exp, spec)
            fig.savefig("%s/%s" % (argv[2], spec["file"]), dpi=110)
            plt.close(fig)
            print("drew %s" % spec["file"])
        except Exception:  # one broken plot must not cost the others
            failed += 1
            print("plot %s failed:" % spec.get("file"), file=sys.stderr)
            traceback.print_exc()
            plt.close("all")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
