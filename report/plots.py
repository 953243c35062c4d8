#!/usr/bin/env python3
"""Draws the PNGs of a memlab report.

    python3 plots.py PLAN.json

`memlab report` writes PLAN.json: the run record's path, the output folder and the
list of plots, each {file, title, kind, hints}. This script only draws; deciding
which plots a record calls for is done on the C++ side (src/report/catalog.cpp).
Each plot is drawn on its own: one that fails is reported on stderr and the others
are still written. Exit status 1 if any plot failed.

Kinds: sweep (a metric against one swept parameter, one line per variant, the
model dashed), seed_bars (the seed's figures beside this GPU's), ladder (% of
cuBLAS per rung), timeline (one staged run's copies and kernels per stream),
roofline (every row with flops and bytes under the measured ceilings).
"""
import json
import math
import sys
import traceback

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.ticker import FuncFormatter  # noqa: E402

SIZE_WORDS = ("bytes", "size", "region")


# ---------------------------------------------------------------- record access

def num(d, key):
    """A finite number under key, else None (records may hold nulls or junk)."""
    if not isinstance(d, dict):
        return None
    v = d.get(key)
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    return float(v) if math.isfinite(v) else None


def params(r):
    p = r.get("params")
    return p if isinstance(p, dict) else {}


def timed(r):
    return num(r, "median_ms") is not None and not r.get("skipped") and not r.get("error")


def failed(r):
    return r.get("verified") == "failed" or bool(r.get("error"))


def rows_of(rows, exp):
    return [r for r in rows if r.get("experiment") == exp and timed(r)]


def is_size_key(k):
    k = k.lower()
    return any(w in k for w in SIZE_WORDS)


def human_bytes(v, _pos=None):
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(v) < 1024 or unit == "TiB":
            return ("%g %s" % (round(v, 1), unit))
        v /= 1024.0
    return str(v)


def param_text(k, v):
    if isinstance(v, (int, float)) and not isinstance(v, bool) and is_size_key(k) and abs(v) >= 1024:
        return "%s=%s" % (k, human_bytes(v))
    if isinstance(v, float):
        return "%s=%g" % (k, v)
    return "%s=%s" % (k, v)


def pow2_text(v, _pos=None):
    if v >= 2 and v == int(v) and (int(v) & (int(v) - 1)) == 0:
        return r"$2^{%d}$" % (int(v).bit_length() - 1)
    return "%g" % v


def gpu_name(rec):
    d = rec.get("device")
    return str(d.get("name", "unknown GPU")) if isinstance(d, dict) else "unknown GPU"


def finish(fig, ax, title, rec, note=None):
    sub = gpu_name(rec)
    if rec.get("synthetic_fixture"):
        sub += "  [SYNTHETIC TEST DATA]"
    if note:
        sub += "  ·  " + note
    ax.set_title(title + "\n" + sub, fontsize=10)
    fig.tight_layout()
    return fig


# ---------------------------------------------------------------- sweep

LINESTYLES = ["-", "--", ":", "-."]
MARKERS = "os^vD<>pPhX*"


def pick_x(rows, candidates):
    keys = {}
    for r in rows:
        for k, v in params(r).items():
            if isinstance(v, (int, float)) and not isinstance(v, bool):
                keys.setdefault(k, set()).add(float(v))
    lower = {k.lower(): k for k in keys}
    for c in candidates or []:
        if c.lower() in lower:
            return lower[c.lower()]
    best = None
    for k, vals in keys.items():
        if best is None or len(vals) > len(keys[best]):
            best = k
    return best


def model_values(r, y, keys):
    """The prediction(s) in y's unit: [(key, value)], from the hinted keys or the usual names."""
    p = r.get("predicted")
    if not isinstance(p, dict):
        return []
    unit = "gbps" if y == "gbps" else "ms"
    keys = [k for k in (keys or []) if k.endswith(unit)] or (
        ["gbps"] if unit == "gbps" else ["ms", "time_ms", "median_ms", "predicted_ms"])
    hinted = [k for k in (keys or []) if k.endswith(unit)]
    out = [(k, num(p, k)) for k in keys if num(p, k) is not None]
    return out if hinted else out[:1]


# A prediction that counts passes reads against time directly: time = passes x the one-pass time.
PROPORTIONAL_WORDS = ("wavefront", "passes", "slowdown", "degree")


def other_model_key(rows):
    """A numeric prediction in another unit (e.g. a conflict degree), for a second axis."""
    found = []
    for r in rows:
        p = r.get("predicted")
        if isinstance(p, dict):
            for k, v in p.items():
                if isinstance(v, (int, float)) and not isinstance(v, bool) and not k.endswith(("gbps", "ms")):
                    if k not in found:
                        found.append(k)
    for w in PROPORTIONAL_WORDS:
        for k in found:
            if w in k:
                return k
    return found[0] if found else None


def short(v):
    return "%.0f" % v if abs(v) >= 100 else "%.3g" % v


def pretty_key(k):
    k = k.replace("_gbps", " GB/s").replace("gbps", "GB/s")
    if k.endswith("_ms"):
        k = k[:-3] + " (ms)"
    return k.replace("_", " ")


def named_in(variant, value):
    """Whether the variant's name already says a parameter's (non-numeric) value: pinned_h2d, memory=pinned."""
    if not isinstance(value, str) or not value:
        return False
    return value in variant.split("_") or value == variant


def sort_value(v):
    try:
        return (0, float(json.loads(v) if isinstance(v, str) else v), "")
    except (TypeError, ValueError):
        return (1, 0.0, str(v))


def facet_value(r, facet):
    if facet == "variant":
        return str(r.get("variant", "?"))
    v = params(r).get(facet)
    return param_text(facet, v)


class Series:
    """How the rows split into lines: colour by variant and the varying parameters, line style by one of them."""

    def __init__(self, rs, hints, varying, style_key):
        self.hints, self.varying, self.style_key = hints, varying, style_key
        self.colors = {}
        for r in rs:
            self.colors.setdefault(self.label(r), None)
        cmap = plt.get_cmap("tab20" if len(self.colors) > 10 else "tab10")
        for i, k in enumerate(self.colors):
            self.colors[k] = (cmap(i % cmap.N), MARKERS[i % len(MARKERS)])
        vals = sorted({json.dumps(params(r).get(style_key)) for r in rs}, key=sort_value, reverse=True) \
            if style_key else []
        self.styles = {v: LINESTYLES[i % len(LINESTYLES)] for i, v in enumerate(vals)}

    def label(self, r):
        v = str(r.get("variant", "") or "")
        parts = [v] if self.hints.get("facet") != "variant" and v else []
        parts += [param_text(k, params(r).get(k)) for k in self.varying
                  if k != self.style_key and not named_in(v, params(r).get(k))]
        return " ".join(parts) or v or "measured"

    def key(self, r):
        return (self.label(r), json.dumps(params(r).get(self.style_key)) if self.style_key else None)


def draw_series(ax, rs, x, y, hints, ser):
    """One line per series in rs; returns (legend handles, labels, whether a model line was drawn)."""
    from matplotlib.lines import Line2D
    series = {}
    for r in rs:
        series.setdefault(ser.key(r), []).append(r)
    model_styles = ["--", ":", "-."] if not ser.style_key else [":", "-."]
    drew_model = False
    any_failed = False
    lines = {}
    for (label, sval), pts in series.items():
        pts.sort(key=lambda r: num(params(r), x))
        xs = [num(params(r), x) for r in pts]
        ys = [num(r, y) for r in pts]
        c, m = ser.colors[label]
        ax.plot(xs, ys, marker=m, ms=4, lw=1.5, color=c, ls=ser.styles.get(sval, "-"))
        bad = [(a, b) for a, b, r in zip(xs, ys, pts) if failed(r)]
        if bad:
            ax.scatter([a for a, _ in bad], [b for _, b in bad], marker="x", s=80, color="red", zorder=5)
            any_failed = True
        if hints.get("model"):
            models = {}
            for a, r in zip(xs, pts):
                for k, v in model_values(r, y, hints.get("model_keys")):
                    models.setdefault(k, []).append((a, v))
            for k, mp in models.items():
                lines.setdefault((k, tuple(mp)), []).append(c)
    # Model lines: one per distinct curve; a curve that several series share (a link rate) is drawn once, in gray.
    keys_seen = []
    for (k, mp), cs in lines.items():
        if k not in keys_seen:
            keys_seen.append(k)
        ax.plot([a for a, _ in mp], [b for _, b in mp], ls=model_styles[keys_seen.index(k) % len(model_styles)],
                lw=1.2, color=cs[0] if len(cs) == 1 else "gray")
        drew_model = True
    handles, labels = [], []
    present = []
    for (label, _sval) in series:
        if label not in present:
            present.append(label)
    for label in present:
        c, m = ser.colors[label]
        handles.append(Line2D([], [], color=c, marker=m, ms=4, lw=1.5))
        labels.append(label)
    if ser.style_key:
        for sval, st in ser.styles.items():
            handles.append(Line2D([], [], color="black", ls=st, lw=1.5))
            labels.append(param_text(ser.style_key, json.loads(sval)))
    for j, k in enumerate(keys_seen):
        handles.append(Line2D([], [], ls=model_styles[j % len(model_styles)], color="black", lw=1.2))
        labels.append("model" if k in ("gbps", "ms") else "model: " + pretty_key(k))
    if any_failed:
        handles.append(Line2D([], [], ls="none", marker="x", color="red", ms=8))
        labels.append("failed verification")
    return handles, labels, drew_model


def plain_log_labels(axis):
    """0.2, 0.5, 1, 10 instead of 2x10^-1 on a log axis that spans a decade or two."""
    fmt = FuncFormatter(lambda v, _p: "%g" % v)
    axis.set_major_formatter(fmt)

    def minor(v, _p):
        lo, hi = sorted(axis.get_view_interval())
        few = lo > 0 and hi / lo < 100  # within two decades the minor ticks need numbers too
        return "%g" % v if few and v > 0 and ("%e" % v)[0] in "235" else ""
    axis.set_minor_formatter(FuncFormatter(minor))


def is_pow2(v):
    return v > 0 and v == int(v) and (int(v) & (int(v) - 1)) == 0


def set_x_ticks(ax, xs_all, logx, nf, x):
    from matplotlib.ticker import MultipleLocator, NullLocator
    distinct = sorted(set(xs_all))
    if logx:
        ax.set_xscale("log", base=2)
        pos = [v for v in distinct if v > 0]
        if not pos:
            return
        if len(pos) <= 8:
            ticks = pos
        else:
            lo, hi = int(math.floor(math.log2(min(pos)))), int(math.ceil(math.log2(max(pos))))
            step = max(1, int(math.ceil((hi - lo) / (8.0 if nf == 1 else 5.0))))
            if step > 1 and step % 2:
                step += 1
            lo_in = int(math.ceil(math.log2(min(pos))))  # a tick left of the data would widen the axis
            ticks = [2.0 ** k for k in range(lo_in + (-lo_in) % step, hi + 1, step)]
        ax.set_xticks(ticks)
        ax.xaxis.set_minor_locator(NullLocator())
        if is_size_key(x):
            ax.xaxis.set_major_formatter(FuncFormatter(human_bytes))
        elif max(ticks) >= 2 ** 14:
            ax.xaxis.set_major_formatter(FuncFormatter(pow2_text))
        else:
            ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _p: "%g" % v))
        return
    if is_size_key(x):
        ax.xaxis.set_major_formatter(FuncFormatter(human_bytes))
    integral = all(v == int(v) for v in distinct)
    gaps = [b - a for a, b in zip(distinct, distinct[1:])]
    if len(distinct) <= 8 and gaps and min(gaps) >= (distinct[-1] - distinct[0]) / 14.0:
        ax.set_xticks(distinct)  # a handful of points: tick exactly those
    elif integral and distinct and min(distinct) >= 0 and 16 <= max(distinct) <= 64:
        ax.xaxis.set_major_locator(MultipleLocator(8))  # offsets and strides: multiples of 8 are the aligned ones
        ax.xaxis.set_minor_locator(MultipleLocator(1 if max(distinct) <= 32 else 4))


def draw_grouped_bars(rec, rs, x, y, hints, title, ser, note):
    """A 'sweep' over two or three values of x with many variants: variants on the axis, one bar per x value."""
    labels = list(ser.colors)
    xv = sorted({num(params(r), x) for r in rs})
    fig, ax = plt.subplots(figsize=(max(8, 0.9 * len(labels) + 3), 5))
    w = 0.8 / len(xv)
    cmap = plt.get_cmap("tab10")
    for j, v in enumerate(xv):
        vals, bad = [], []
        for lab in labels:
            m = [r for r in rs if ser.label(r) == lab and num(params(r), x) == v]
            vals.append(num(m[0], y) if m else float("nan"))
            bad.append(bool(m) and failed(m[0]))
        pos = [i - 0.4 + w * (j + 0.5) for i in range(len(labels))]
        ax.bar(pos, [0 if math.isnan(a) else a for a in vals], w, color=cmap(j % 10),
               edgecolor=["red" if b else "none" for b in bad], lw=2, label=param_text(x, v))
    ceil = num(rec.get("ceilings") or {}, "d2d_copy_gbps")
    if y == "gbps" and ceil:
        ax.axhline(ceil, color="gray", ls=":", lw=1.2, label="cudaMemcpy D2D (%.0f GB/s)" % ceil)
    ax.set_xticks(range(len(labels)))
    ax.set_xticklabels(labels, rotation=30, ha="right")
    ax.set_xlabel("variant")
    ax.set_ylabel("effective bandwidth (GB/s)" if y == "gbps" else "median time (ms)")
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    return finish(fig, ax, title, rec, note)


def draw_sweep(rec, rows, hints, title):
    from matplotlib.lines import Line2D
    rs = rows_of(rows, hints["experiment"])
    x = pick_x(rs, hints.get("x"))
    if x is None:
        raise ValueError("no numeric parameter to put on the x axis")
    rs = [r for r in rs if num(params(r), x) is not None]
    if not rs:
        raise ValueError("no timed row has the parameter " + x)
    generic = not hints.get("xlabel")  # the catalog's catch-all plot for an experiment without its own
    y = hints.get("y", "auto")
    if y in ("gbps", "auto"):
        y = "gbps" if all(num(r, "gbps") is not None for r in rs) else "median_ms"
    xs_all = [num(params(r), x) for r in rs]
    xs_pos = [v for v in xs_all if v > 0]
    distinct_x = sorted(set(xs_all))
    if "logx" not in hints and len(xs_pos) == len(rs):
        span = max(xs_pos) / min(xs_pos)
        # Sizes and counts over decades, or a doubling sweep (1, 2, 4, ... streams), read on a log axis.
        if span >= 64 or (len(distinct_x) >= 3 and span >= 4 and all(is_pow2(v) for v in distinct_x)):
            hints = dict(hints, logx=True)
    ys_pos = [num(r, y) for r in rs if num(r, y) and num(r, y) > 0]
    if "logy" not in hints and y == "median_ms" and ys_pos and max(ys_pos) / min(ys_pos) >= 10:
        hints = dict(hints, logy=True)  # times over a decade or more (conflict degrees 1..32)
    facet = hints.get("facet")
    if facet and facet != "variant" and not any(facet in params(r) for r in rs):
        facet = None
    # Parameters that never change are named once under the title, not in every label.
    vals = {}
    for r in rs:
        for k, v in params(r).items():
            if k != x and k != facet:
                vals.setdefault(k, set()).add(json.dumps(v, sort_keys=True))
    varying = sorted(k for k, v in vals.items() if len(v) > 1)
    constant = sorted(k for k, v in vals.items() if len(v) == 1)
    n_series = len({json.dumps([r.get("variant")] + [params(r).get(k) for k in varying]) for r in rs})
    variants = {str(r.get("variant", "") or "") for r in rs} - {""}
    stack = False
    style_key = None
    if not facet and varying:
        # Too many lines for one panel (or dense x with several lines): one panel per value of a parameter.
        dense = len(distinct_x) > 24
        if n_series > 10 or (dense and n_series >= 4):
            cands = [k for k in varying if 2 <= len(vals[k]) <= 6]
            if cands:
                facet = sorted(cands, key=lambda k: (len(vals[k]), k))[-1] if dense else \
                    sorted(cands, key=lambda k: (len(vals[k]), [-ord(c) for c in k]))[0]
                stack = dense
                varying = [k for k in varying if k != facet]
    if len(variants) >= 2 and varying:
        per_panel = len({json.dumps([r.get("variant")] + [params(r).get(k) for k in varying]) for r in rs})
        cands = [k for k in varying if len(vals[k]) <= 3]
        if per_panel > 6 and cands:
            style_key = cands[0]  # aligned=1 solid, aligned=0 dashed, in the variant's colour
    ser = Series(rs, hints, varying, style_key)
    note = ", ".join(param_text(k, json.loads(next(iter(vals[k])))) for k in constant)
    sub = gpu_name(rec) + ("  [SYNTHETIC TEST DATA]" if rec.get("synthetic_fixture") else "")
    if note:
        sub += "  ·  " + note
    if generic and not facet and len(distinct_x) <= 3 and len(ser.colors) >= 5:
        return draw_grouped_bars(rec, rs, x, y, hints, title, ser, note or None)
    groups = {}
    for r in rs:
        groups.setdefault(facet_value(r, facet) if facet else "", []).append(r)
    if facet and facet != "variant" and all(isinstance(params(r).get(facet), (int, float)) for r in rs):
        order = sorted({json.dumps(params(r).get(facet)) for r in rs}, key=sort_value)
        groups = {param_text(facet, json.loads(v)): groups[param_text(facet, json.loads(v))] for v in order}
    nf = len(groups)
    outside = nf == 1 and len(ser.colors) + len(ser.styles) > 6
    if nf == 1 and hints.get("model") and not any(model_values(r, y, hints.get("model_keys")) for r in rs) \
            and other_model_key(rs):
        outside = True  # a second axis for the model: the legend goes to the right of it
    if stack:
        fig, axes = plt.subplots(nf, 1, figsize=(10, 1.5 + 2.1 * nf), sharex=True, sharey=True, squeeze=False)
        axes = [a[0] for a in axes]
    else:
        fig, axes = plt.subplots(1, nf, figsize=((10 if outside else 8) if nf == 1 else min(5.2 * nf, 16), 5),
                                 sharey=True, squeeze=False)
        axes = list(axes[0])
    drew_model = False
    legends = []
    for ax, (name, g) in zip(axes, groups.items()):
        h, lab, dm = draw_series(ax, g, x, y, hints, ser)
        legends.append((h, lab))
        drew_model |= dm
        if name:
            ax.set_title(name, fontsize=10, loc="left" if stack else "center")
    ceil = num(rec.get("ceilings") or {}, "d2d_copy_gbps")
    want_ceiling = hints.get("ceiling", generic and y == "gbps")
    for i, ax in enumerate(axes):
        if want_ceiling and y == "gbps" and ceil:
            ax.axhline(ceil, color="gray", ls=":", lw=1.2)
            legends[i][0].append(Line2D([], [], color="gray", ls=":", lw=1.2))
            legends[i][1].append("cudaMemcpy D2D (%.0f GB/s)" % ceil)
        vkey = hints.get("vline_device_key")
        if vkey and num(rec.get("device") or {}, vkey):
            v = num(rec.get("device") or {}, vkey)
            ax.axvline(v, color="black", ls=":", lw=1.2)
            legends[i][0].append(Line2D([], [], color="black", ls=":", lw=1.2))
            legends[i][1].append("persisting L2 max (%s)" % human_bytes(v))
        if hints.get("vline_x") is not None:
            ax.axvline(hints["vline_x"], color="black", ls=":", lw=1.2)
            legends[i][0].append(Line2D([], [], color="black", ls=":", lw=1.2))
            legends[i][1].append(hints.get("vline_label", ""))
        set_x_ticks(ax, xs_all, hints.get("logx"), nf if not stack else 1, x)
        if hints.get("logy"):
            ax.set_yscale("log")
            plain_log_labels(ax.yaxis)
        xl = hints.get("xlabel") or x.replace("_", " ")
        if not stack or i == nf - 1:
            ax.set_xlabel(xl + (" (bytes)" if is_size_key(x) and "byte" not in xl else ""))
        ax.grid(True, alpha=0.3)
        if not hints.get("logy"):
            ax.set_ylim(bottom=0)
    # The model in another unit (passes, a conflict degree) on a second axis, in each series' colour.
    twin = None
    k = other_model_key(rs) if hints.get("model") and not drew_model else None
    if k:
        by_series = {}
        for r in rs:
            if num(r.get("predicted"), k) is not None:
                by_series.setdefault(ser.key(r), []).append(num(r["predicted"], k))
        if all(len(set(v)) <= 1 for v in by_series.values()):
            k = None  # the same prediction at every x says nothing against x
    if k:
        proportional = y == "median_ms" and any(w in k for w in PROPORTIONAL_WORDS)
        factor = None
        if proportional:
            pairs = [(num(r, y), num(r["predicted"], k)) for r in rs
                     if num(r.get("predicted"), k) is not None and num(r.get("predicted"), k) > 0]
            if pairs:
                m0 = min(m for _, m in pairs)
                factor = m0 / min(t for t, m in pairs if m == m0)  # one pass = the fastest one-pass time
        for i, (ax, (name, g)) in enumerate(zip(axes, groups.items())):
            ax2 = ax.twinx()
            for skey in dict.fromkeys(ser.key(r) for r in g):
                pts = sorted((r for r in g if ser.key(r) == skey and num(r.get("predicted"), k) is not None),
                             key=lambda r: num(params(r), x))
                mv = [num(r["predicted"], k) for r in pts]
                if hints.get("logy") and factor:
                    pts, mv = [r for r, m in zip(pts, mv) if m > 0], [m for m in mv if m > 0]
                ax2.plot([num(params(r), x) for r in pts], mv, ls="none", marker="_", ms=12, mew=2,
                         color=ser.colors[skey[0]][0], alpha=0.9)
            if not factor:
                top = max([num(r["predicted"], k) for r in g if num(r.get("predicted"), k) is not None] + [0])
                ax2.set_ylim(min(0, ax2.get_ylim()[0]), top * 1.25 if top > 0 else None)
            if factor:
                if hints.get("logy"):
                    ax2.set_yscale("log")
                    plain_log_labels(ax2.yaxis)
                lo, hi = ax.get_ylim()
                ax2.set_ylim(lo * factor, hi * factor)
            last = stack or i == nf - 1
            if last and (not stack or i == nf // 2):
                ax2.set_ylabel("model: " + pretty_key(k), fontsize=9)
            if factor and not last:
                ax2.tick_params(labelright=False)
            legends[i][0].append(Line2D([], [], ls="none", marker="_", ms=12, mew=2, color="black"))
            legends[i][1].append("model: %s (right axis)" % pretty_key(k))
            twin = ax2
    # One legend where every panel would show the same; otherwise one per panel.
    same = all(lab == legends[0][1] for _, lab in legends)
    if nf > 1 and not stack:
        # Side-by-side panels: one legend (every panel's entries), to the right of the last panel,
        # where it cannot cover a line.
        hs, ls = [], []
        for h, lab in legends:
            for a, b in zip(h, lab):
                if b not in ls:
                    hs.append(a)
                    ls.append(b)
        host = fig.axes[len(axes) + nf - 1] if k and len(fig.axes) >= 2 * nf else axes[-1]
        host.legend(hs, ls, fontsize=7, loc="upper left", bbox_to_anchor=(1.11 if k else 1.02, 1.0))
        legends = []
    for i, ax in enumerate(axes[:len(legends)]):
        if same and i > 0:
            break
        h, lab = legends[i]
        host = twin if (twin is not None and nf == 1) else ax
        if k and nf > 1:
            host = ax.figure.axes[len(axes) + i] if len(ax.figure.axes) > len(axes) + i else ax
        if outside or (twin is not None and nf == 1 and not stack):
            # With a second axis, 'best' sees only that axis's marks and may cover the lines: go outside.
            host.legend(h, lab, fontsize=7, loc="upper left", bbox_to_anchor=(1.11 if twin is not None else 1.01, 1.0))
        else:
            host.legend(h, lab, fontsize=7, loc="upper left" if stack else "best")
    axes[nf // 2 if stack else 0].set_ylabel("effective bandwidth (GB/s)" if y == "gbps" else "median time (ms)")
    if nf == 1:
        axes[0].set_title(title + "\n" + sub, fontsize=10)
    else:
        fig.suptitle(title + "\n" + sub, fontsize=10)
    fig.tight_layout()
    return fig


# ---------------------------------------------------------------- seed bars

def draw_seed_bars(rec, rows, hints, title):
    rs = rows_of(rows, hints["experiment"])
    # Where the experiment marks the rows run at the seed's problem size, draw those.
    at_seed = [r for r in rs if isinstance(r.get("extra"), dict)
               and any(k.startswith("seed_") or k.startswith("guide_") for k in r["extra"])]
    rs = at_seed or rs
    seed = hints.get("seed") or []
    unit = hints.get("seed_unit") or ""
    y = hints.get("y", "median_ms")
    if hints.get("x") == "variant":
        labels, vals, bad, ann = [], [], [], []
        seen = set()
        for r in rs:
            v = r.get("variant", "?")
            if v in seen:
                continue
            seen.add(v)
            labels.append(v)
            vals.append(num(r, y))
            bad.append(failed(r))
            ann.append("")
    else:
        x = pick_x(rs, hints.get("x"))
        by = {}
        for r in rs:
            t = num(params(r), x)
            if t is not None and t not in by:
                by[t] = r
        keys = sorted(by)
        labels = ["%g" % k for k in keys]
        vals = [num(by[k], y) for k in keys]
        bad = [failed(by[k]) for k in keys]
        ann = []
        for k in keys:
            ex = by[k].get("extra") if isinstance(by[k].get("extra"), dict) else {}
            regs = num(ex, "registers")
            spill = num(ex, "spill_bytes") if num(ex, "spill_bytes") is not None else num(ex, "local_bytes")
            a = []
            if regs is not None:
                a.append("%d regs" % regs)
            if spill:
                a.append("local %d B" % spill)
            ann.append("\n".join(a))
    fig, axes = plt.subplots(1, 2 if seed else 1, figsize=(11 if seed else 7, 4.6))
    axes = list(axes) if seed else [axes]
    ylab = "effective bandwidth (GB/s)" if y == "gbps" else "median time (ms)"
    if seed:
        a0 = axes[0]
        a0.bar([s["label"] for s in seed], [s["value"] for s in seed], color="#999999")
        a0.set_title("seed's figure (%s)" % (hints.get("seed_device") or "seed"), fontsize=10)
        a0.set_ylabel(("effective bandwidth (GB/s)" if unit == "GB/s" else "time (ms)"))
        a0.set_xlabel("tile size" if hints.get("x") != "variant" else "kernel")
        for i, s in enumerate(seed):
            a0.annotate("%.4g" % s["value"], (i, s["value"]), ha="center", va="bottom", fontsize=8)
        a0.tick_params(axis="x", labelrotation=20 if hints.get("x") == "variant" else 0)
    a1 = axes[-1]
    colors = ["#d62728" if b else "#1f77b4" for b in bad]
    a1.bar(labels, [v or 0 for v in vals], color=colors)
    for i, (v, a) in enumerate(zip(vals, ann)):
        if v is not None:
            a1.annotate(short(v) + ("\n" + a if a else ""), (i, v), ha="center", va="bottom", fontsize=7)
    a1.set_ylabel(ylab)
    a1.set_xlabel("tile size" if hints.get("x") != "variant" else "kernel")
    a1.tick_params(axis="x", labelrotation=20 if hints.get("x") == "variant" else 0)
    a1.margins(y=0.2)
    # A spill cliff or a tile-1 outlier spans decades: on a linear axis the other bars vanish.
    panels = ([(axes[0], [s["value"] for s in seed])] if seed else []) + [(a1, [v for v in vals if v])]
    if any(v and min(v) > 0 and max(v) / min(v) >= 50 for _, v in panels):
        for a, v in panels:
            if v and min(v) > 0:
                a.set_yscale("log")
                plain_log_labels(a.yaxis)
                a.set_ylim(min(v) / 2.5, max(v) * 8)
                a.set_ylabel(a.get_ylabel() + ", log scale")
    size = ""
    if rs:
        p = {k: v for k, v in params(rs[0]).items() if k in ("m", "n", "k", "shape")}
        if all(k in p for k in ("m", "n", "k")):
            p.pop("shape", None)
            if p["m"] == p["n"] == p["k"]:
                p = {"M=N=K": p["m"]}
        size = " ".join(param_text(k, v) for k, v in sorted(p.items(), key=lambda kv: "mnk".find(kv[0][0].lower())))
    a1.set_title("this GPU%s%s" % (" (red: failed)" if any(bad) else "", (", " + size) if size else ""),
                 fontsize=10)
    sub = gpu_name(rec) + ("  [SYNTHETIC TEST DATA]" if rec.get("synthetic_fixture") else "")
    fig.suptitle(title + "\n" + sub, fontsize=11)
    fig.tight_layout()
    return fig


# ---------------------------------------------------------------- GEMM ladder

def draw_ladder(rec, rows, hints, title):
    rs = [r for r in rows_of(rows, hints["experiment"]) if num(r, "ratio_to_peer") is not None]
    if not rs:
        raise ValueError("no gemm.ladder row has a ratio to cuBLAS")
    variants = []
    for r in rs:
        if r.get("variant") not in variants:
            variants.append(r.get("variant"))
    shapes = {}
    for r in rs:
        p = params(r)
        if "shape" in p:
            key = str(p["shape"])
            key = key if "x" in key else "%s³" % key
        else:
            key = "%s×%s×%s" % (p.get("m", "?"), p.get("n", "?"), p.get("k", "?"))
        shapes.setdefault(key, {})[r.get("variant")] = r
    fig, ax = plt.subplots(figsize=(10, 5.2))
    cmap = plt.get_cmap("tab10")
    for i, (shape, byv) in enumerate(shapes.items()):
        xs = [j for j, v in enumerate(variants) if v in byv]
        ys = [100.0 * num(byv[variants[j]], "ratio_to_peer") for j in xs]
        # A rung this shape skipped is a gap, not a straight line across it.
        full = [100.0 * num(byv[v], "ratio_to_peer") if v in byv else float("nan") for v in variants]
        ax.plot(range(len(variants)), full, marker="o", ms=4, color=cmap(i % 10), label=shape)
        bad = [(j, yy) for j, yy in zip(xs, ys) if failed(byv[variants[j]])]
        if bad:
            ax.scatter([b[0] for b in bad], [b[1] for b in bad], marker="x", s=90, color="red", zorder=5,
                       label="failed verification")
    ax.axhline(100, color="gray", ls=":", lw=1.2, label="cuBLAS SGEMM (same run)")
    ax.set_xticks(range(len(variants)))
    ax.set_xticklabels(variants, rotation=30, ha="right")
    ax.set_xlabel("kernel (the ladder, in order)")
    ax.set_ylabel("% of cuBLAS SGEMM throughput")
    top = max([100.0] + [100.0 * num(r, "ratio_to_peer") for r in rs])
    ax.set_ylim(0, top * 1.08)
    ax.grid(True, alpha=0.3)
    h, lab = ax.get_legend_handles_labels()
    uniq = dict(zip(lab, h))
    ax.legend(uniq.values(), uniq.keys(), fontsize=8, title="shape (M×N×K)", loc="upper left")
    return finish(fig, ax, title, rec)


# ---------------------------------------------------------------- timeline

def draw_timeline(rec, rows, hints, title):
    cands = [r for r in rows if isinstance(r.get("extra"), dict) and isinstance(r["extra"].get("timeline"), list)
             and r["extra"]["timeline"]]
    pref = [r for r in cands if r.get("experiment") == hints.get("experiment")]
    r = (pref or cands)[0]
    events = []
    for e in r["extra"]["timeline"]:
        if not isinstance(e, dict):
            continue
        s, t = num(e, "start_ms"), num(e, "end_ms")
        if s is None or t is None or t < s:
            continue
        lane = e.get("stream", e.get("lane", e.get("engine", "?")))
        op = str(e.get("op", e.get("kind", e.get("name", "?"))))
        events.append((str(lane), op, s, t))
    if not events:
        raise ValueError("the timeline holds no event with start_ms and end_ms")
    t0 = min(e[2] for e in events)
    events = [(ln, op, s - t0, t - t0) for ln, op, s, t in events]
    lanes = []
    for ln, _, _, _ in sorted(events, key=lambda e: (e[0].isdigit() and int(e[0]) or 0, e[0])):
        if ln not in lanes:
            lanes.append(ln)
    ops = []
    for _, op, _, _ in events:
        if op not in ops:
            ops.append(op)
    colors = {op: plt.get_cmap("Set2")(i % 8) for i, op in enumerate(ops)}
    fig, ax = plt.subplots(figsize=(10, 1.2 + 0.45 * len(lanes)))
    for ln, op, s, t in events:
        y = lanes.index(ln)
        ax.broken_barh([(s, t - s)], (y - 0.38, 0.76), facecolors=colors[op], edgecolor="black", lw=0.4)
    ax.set_yticks(range(len(lanes)))
    ax.set_yticklabels(["stream " + ln for ln in lanes])
    ax.invert_yaxis()
    ax.set_xlabel("time since the first event (ms)")
    from matplotlib.patches import Patch
    ax.legend([Patch(color=colors[o]) for o in ops], ops, fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    ax.grid(True, axis="x", alpha=0.3)
    what = "%s %s %s" % (r.get("experiment", ""), r.get("variant", ""),
                         " ".join(param_text(k, v) for k, v in sorted(params(r).items())))
    return finish(fig, ax, title, rec, what.strip())


# ---------------------------------------------------------------- roofline

def draw_roofline(rec, rows, hints, title):
    pts = []
    skip = tuple(hints.get("exclude_prefixes") or ())
    for r in rows:
        if skip and str(r.get("experiment", "")).startswith(skip):
            continue
        f, b, ms = num(r, "flops"), num(r, "bytes"), num(r, "median_ms")
        if timed(r) and f and b and f > 0 and b > 0 and ms > 0:
            pts.append((r.get("experiment", "?"), f / b, f / (ms * 1e-3) / 1e12, failed(r)))
    if not pts:
        raise ValueError("no row has flops, bytes and a time")
    ce = rec.get("ceilings") if isinstance(rec.get("ceilings"), dict) else {}
    dev = rec.get("device") if isinstance(rec.get("device"), dict) else {}
    bw, bw_label = num(ce, "d2d_copy_gbps"), "measured cudaMemcpy D2D"
    if bw is None:
        bw, bw_label = num(dev, "dram_peak_gbps"), "DRAM peak (datasheet)"
    peak = num(ce, "fp32_peak_tflops")
    fig, ax = plt.subplots(figsize=(11, 5.5))
    exps = sorted({p[0] for p in pts})
    cmap = plt.get_cmap("tab20" if len(exps) > 10 else "tab10")
    markers = "os^vD<>pPhX*"
    for i, e in enumerate(exps):
        mine = [p for p in pts if p[0] == e]
        ax.scatter([p[1] for p in mine], [p[2] for p in mine], s=22, color=cmap(i % cmap.N),
                   marker=markers[i % len(markers)], label=e, alpha=0.85)
    bad = [p for p in pts if p[3]]
    if bad:
        ax.scatter([p[1] for p in bad], [p[2] for p in bad], s=90, marker="x", color="red", label="failed verification")
    xmin = min(p[1] for p in pts) / 2
    xmax = max(p[1] for p in pts) * 2
    if bw and peak:
        xmax = max(xmax, 4 * peak * 1e3 / bw)
    xs = [xmin * (xmax / xmin) ** (i / 200.0) for i in range(201)]
    if bw:
        roof = [bw * x / 1e3 for x in xs]
        if peak:
            roof = [min(peak, v) for v in roof]
        ax.plot(xs, roof, color="black", lw=1.5,
                label="roof: %s %.0f GB/s%s" % (bw_label, bw, (", FP32 peak %.1f TFLOP/s" % peak) if peak else ""))
        if peak:
            ridge = peak * 1e3 / bw
            ax.axvline(ridge, color="gray", ls=":", lw=1)
            ax.annotate("ridge %.1f FLOP/B" % ridge, (ridge, peak), textcoords="offset points", xytext=(4, -14),
                        fontsize=8, color="gray")
    elif peak:
        ax.axhline(peak, color="black", lw=1.5, label="FP32 peak %.1f TFLOP/s" % peak)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("arithmetic intensity (FLOP/byte of declared DRAM traffic)")
    ax.set_ylabel("achieved TFLOP/s (FP32)")
    ax.grid(True, which="both", alpha=0.25)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    return finish(fig, ax, title, rec)


DRAW = {"sweep": draw_sweep, "seed_bars": draw_seed_bars, "ladder": draw_ladder, "timeline": draw_timeline,
        "roofline": draw_roofline}


def main(argv):
    if len(argv) != 2:
        print("usage: plots.py PLAN.json", file=sys.stderr)
        return 2
    with open(argv[1]) as f:
        plan = json.load(f)
    with open(plan["record"]) as f:
        rec = json.load(f)
    if not isinstance(rec, dict):
        print("the record is not a JSON object", file=sys.stderr)
        return 2
    rows = [r for r in (rec.get("rows") or []) if isinstance(r, dict)]
    failures = 0
    for p in plan.get("plots", []):
        path = plan["out_dir"].rstrip("/") + "/" + p["file"]
        try:
            draw = DRAW[p["kind"]]
            fig = draw(rec, rows, p.get("hints") or {}, p.get("title", p["file"]))
            fig.savefig(path, dpi=110)
            plt.close(fig)
            print("wrote", path)
        except Exception as e:  # one bad plot must not cost the others
            failures += 1
            plt.close("all")
            print("%s: not drawn: %s: %s" % (p.get("file"), type(e).__name__, e), file=sys.stderr)
            traceback.print_exc(limit=3, file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
