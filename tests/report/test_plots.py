#!/usr/bin/env python3
"""What the report's plots show, read back from the matplotlib figures.

    python3 tests/report/test_plots.py SOURCE_DIR

Draws the committed H200 reference record's declared plots in memory with
report/plots.py and checks their content: panels, series and points per series,
axis labels with units, log axes, reference lines at the run's ceiling, the
seed's figures beside this GPU's. Exits 77 (skipped) without matplotlib.
"""
import json
import math
import os
import sys
import unittest

try:
    import matplotlib  # noqa: F401
except ImportError:
    print("test_plots: no matplotlib; skipped", file=sys.stderr)
    sys.exit(77)

SOURCE = os.path.abspath(sys.argv[1]) if len(sys.argv) > 1 else os.getcwd()
sys.path.insert(0, os.path.join(SOURCE, "report"))
import plots  # noqa: E402

with open(os.path.join(SOURCE, "results", "nvidia-h200", "run.json")) as f:
    RECORD = json.load(f)
CEILING = RECORD["ceilings"]["d2d_copy_gbps"]


def figure(file):
    for exp, spec in plots.declared_plots(RECORD):
        if spec["file"] == file:
            return exp, spec, plots.build_figure(RECORD, exp, spec)
    raise AssertionError("no declared plot %s" % file)


def data_lines(ax):
    return [l for l in ax.get_lines() if not l.get_label().startswith("_") and len(l.get_xdata()) > 1
            and l.get_linestyle() == "-"]


def hlines(ax):
    """Horizontal reference lines: two points at one y spanning the axes."""
    return [l for l in ax.get_lines() if l.get_linestyle() == ":"]


def bar_groups(ax):
    return [c for c in ax.containers if c.get_label() and not c.get_label().startswith("_")]


class plot_content(unittest.TestCase):
    def tearDown(self):
        plots.plt.close("all")

    def test_every_declared_plot_draws_with_labelled_axes(self):
        drawn = plots.declared_plots(RECORD)
        self.assertGreaterEqual(len(drawn), 20)
        for exp, spec in drawn:
            with self.subTest(plot=spec["file"]):
                fig = plots.build_figure(RECORD, exp, spec)
                axes = fig.get_axes()
                self.assertTrue(axes)
                self.assertTrue(axes[0].get_ylabel(), "no y label")
                for ax in axes:
                    if spec["kind"] in ("line", "bars"):
                        self.assertTrue(ax.get_xlabel().startswith(spec["x"]), ax.get_xlabel())
                    self.assertTrue(data_lines(ax) or bar_groups(ax) or ax.collections, "an empty panel")
                plots.plt.close(fig)

    def test_coalescing_offset_one_line_per_offset_with_model_ceiling_and_seed(self):
        _, _, fig = figure("coalescing_offset.png")
        (ax,) = fig.get_axes()
        self.assertEqual(ax.get_xlabel(), "offset (elements)")
        self.assertEqual(ax.get_ylabel(), "bandwidth (GB/s)")
        lines = data_lines(ax)
        self.assertEqual(len(lines), 1)
        self.assertEqual(len(lines[0].get_xdata()), 33)  # offsets 0..32
        model = [l for l in ax.get_lines() if l.get_linestyle() == "--"]
        self.assertEqual(len(model), 1)
        self.assertEqual(len(model[0].get_xdata()), 33)
        (ceiling,) = hlines(ax)
        self.assertAlmostEqual(ceiling.get_ydata()[0], CEILING)
        self.assertIn("cudaMemcpy D2D", ceiling.get_label())
        seed = [l for l in ax.get_lines() if l.get_marker() == "*"]
        self.assertEqual(len(seed), 1)
        self.assertEqual(list(seed[0].get_xdata()), [0])
        self.assertEqual(list(seed[0].get_ydata()), [790])
        self.assertIn("V100", seed[0].get_label())

    def test_reduce_sum_panels_per_dtype_series_per_step_log_x(self):
        exp, _, fig = figure("reduce_sum.png")
        axes = fig.get_axes()
        self.assertEqual([a.get_title() for a in axes], ["dtype = float", "dtype = int"])
        steps = [v for a in exp["axes"] if a["name"] == "variant" for v in a["values"]]
        for ax in axes:
            self.assertEqual(ax.get_xscale(), "log")
            lines = data_lines(ax)
            self.assertEqual([l.get_label() for l in lines], steps)
            for l in lines:
                self.assertEqual(len(l.get_xdata()), 10, l.get_label())  # 2^10 .. 2^28 by 4x
            self.assertEqual(len(hlines(ax)), 1)

    def test_transpose_square_bars_per_step_and_size(self):
        _, _, fig = figure("transpose_square.png")
        (ax,) = fig.get_axes()
        groups = bar_groups(ax)
        self.assertEqual([g.get_label() for g in groups], ["n=2048 elements", "n=8191 elements", "n=8192 elements"])
        for g in groups:
            self.assertEqual(len(g.patches), 11)  # every step, copy included
        self.assertEqual(len(ax.get_xticklabels()), 11)
        self.assertEqual(ax.get_xlabel(), "variant")
        self.assertAlmostEqual(hlines(ax)[0].get_ydata()[0], CEILING)

    def test_seed_thread_tile_puts_the_p100_beside_this_gpu(self):
        _, _, fig = figure("seed_thread_tile.png")
        (ax,) = fig.get_axes()
        self.assertEqual(ax.get_yscale(), "log")
        self.assertEqual(ax.get_ylabel(), "time (ms)")
        groups = bar_groups(ax)
        self.assertEqual(len(groups), 2)
        self.assertEqual(groups[0].get_label(), "this GPU")
        self.assertIn("P100", groups[1].get_label())
        self.assertEqual(len(groups[1].patches), 7)
        self.assertAlmostEqual(groups[1].patches[6].get_height(), 83.601498)

    def test_gemm_ladder_ratio_with_cublas_line(self):
        _, _, fig = figure("gemm_ladder.png")
        (ax,) = fig.get_axes()
        self.assertIn("cuBLAS", ax.get_ylabel())
        self.assertEqual(len(data_lines(ax)), 6)  # one per shape
        (one,) = hlines(ax)
        self.assertEqual(one.get_ydata()[0], 1.0)

    def test_roofline_holds_every_flops_row_under_the_measured_roofs(self):
        _, _, fig = figure("roofline.png")
        (ax,) = fig.get_axes()
        declares = {e["id"] for e in RECORD["experiments"] if any(m["name"] == "tflops" for m in e["metrics"])}
        self.assertIn("gemm.ladder", declares)
        self.assertNotIn("transfer.overlap", declares)
        expected = sum(1 for r in RECORD["rows"] if r["experiment"] in declares and plots.usable(r)
                       and (r.get("flops") or 0) > 0 and (r.get("bytes") or 0) > 0)
        self.assertEqual(sum(len(c.get_offsets()) for c in ax.collections), expected)
        (roof,) = [l for l in ax.get_lines() if l.get_label().startswith("roof")]
        self.assertAlmostEqual(max(roof.get_ydata()), RECORD["ceilings"]["fp32_peak_tflops"])
        self.assertEqual((ax.get_xscale(), ax.get_yscale()), ("log", "log"))

    def test_roofline_without_flops_rows_draws_a_note_instead_of_raising(self):
        # The hierarchy family's record: bandwidth and latency rows only (the FP32 ceiling's
        # row has flops but no bytes). The roofline must still draw, saying why it is empty.
        path = os.path.join(SOURCE, "results", "nvidia-h200", "hierarchy", "run.json")
        with open(path) as f:
            record = json.load(f)
        specs = [(e, p) for e, p in plots.declared_plots(record) if p.get("kind") == "roofline"]
        self.assertEqual(len(specs), 1)
        exp, spec = specs[0]
        fig = plots.build_figure(record, exp, spec)
        (ax,) = fig.get_axes()
        self.assertEqual(sum(len(c.get_offsets()) for c in ax.collections), 0)
        notes = [t for t in ax.texts if t.get_gid() == "roofline_note"]
        self.assertEqual(len(notes), 1)
        self.assertIn("nothing to place under the roofs", notes[0].get_text())
        # The same record with every flops row removed, and one with no ceilings at all.
        bare = dict(record, rows=[dict(r, flops=0) for r in record["rows"]], ceilings={})
        fig = plots.build_figure(bare, exp, spec)
        self.assertEqual(len([t for t in fig.get_axes()[0].texts if t.get_gid() == "roofline_note"]), 1)

    def test_timeline_has_a_lane_per_stream(self):
        _, spec, fig = figure("transfer_timeline.png")
        (ax,) = fig.get_axes()
        self.assertEqual([t.get_text() for t in ax.get_yticklabels()], ["stream 0", "stream 1", "stream 2", "stream 3"])
        self.assertEqual(ax.get_xlabel(), "time since the first event (ms)")
        self.assertGreaterEqual(len(ax.collections), 12)  # h2d, kernel, d2h on each of 4 streams

    def test_transfer_bandwidth_bytes_axis_in_binary_units(self):
        _, _, fig = figure("transfer_bandwidth.png")
        axes = fig.get_axes()
        self.assertEqual([a.get_title() for a in axes], ["direction = h2d", "direction = d2h", "direction = both"])
        ax = axes[0]
        self.assertEqual(ax.get_xlabel(), "bytes")
        fig.canvas.draw()
        labels = [t.get_text() for t in ax.get_xticklabels()]
        self.assertIn("1 GiB", labels)
        self.assertEqual(len(data_lines(ax)), 4)  # pageable, pinned, registered, write-combined


def matrix_record():
    """A two-GPU link.peer-shaped record, made here: the committed reference run has no GPU pairs."""
    exp = {"id": "link.peer",
           "axes": [{"name": "src", "kind": "integer", "unit": "", "description": "", "log_scale": False,
                     "values": [0, 1, 2]},
                    {"name": "dst", "kind": "integer", "unit": "", "description": "", "log_scale": False,
                     "values": [0, 1, 2]},
                    {"name": "variant", "kind": "string", "unit": "", "description": "", "log_scale": False,
                     "values": ["ce", "sm_push"]}],
           "metrics": [{"name": "gbps", "unit": "GB/s", "description": ""}],
           "plots": [{"file": "m.png", "title": "matrix", "kind": "heatmap", "x": "dst", "y": "gbps", "log_y": False,
                      "series": ["src"], "panels": "variant", "where": {}, "refs": [], "model": ""}]}
    rows = []
    for v, base in (("ce", 390.0), ("sm_push", 385.0)):
        for s, d in ((0, 1), (1, 0)):
            rows.append({"experiment": "link.peer", "variant": v, "params": {"src": s, "dst": d},
                         "median_ms": 1.0, "gbps": base + s, "verified": "passed", "skipped": None, "error": None})
        rows.append({"experiment": "link.peer", "variant": v, "params": {"src": 0, "dst": 0}, "median_ms": None,
                     "gbps": None, "verified": "not_verified", "skipped": "src = dst", "error": None})
    return {"format_version": 2, "experiments": [exp], "rows": rows}


class heatmap_content(unittest.TestCase):
    def tearDown(self):
        plots.plt.close("all")

    def test_matrix_cells_hold_each_pair_and_leave_the_rest_blank(self):
        rec = matrix_record()
        exp = rec["experiments"][0]
        fig = plots.build_figure(rec, exp, exp["plots"][0])
        axes = [a for a in fig.get_axes() if a.get_title()]
        self.assertEqual([a.get_title() for a in axes], ["variant = ce", "variant = sm_push"])
        ce = axes[0]
        self.assertEqual(ce.get_xlabel(), "dst")
        self.assertEqual(ce.get_ylabel(), "src")
        (img,) = ce.get_images()
        m = img.get_array()
        self.assertEqual(m.shape, (2, 2))  # only the GPUs with timed rows: 0 and 1
        import numpy
        self.assertTrue(numpy.ma.getmaskarray(m)[0][0] or math.isnan(numpy.ma.getdata(m)[0][0]))  # the diagonal: blank
        self.assertAlmostEqual(float(m[0][1]), 390.0)  # src 0 -> dst 1
        self.assertAlmostEqual(float(m[1][0]), 391.0)  # src 1 -> dst 0
        self.assertEqual(sorted(t.get_text() for t in ce.texts), ["390", "391"])
        # One colour scale for every panel.
        self.assertEqual(img.get_clim(), axes[1].get_images()[0].get_clim())


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0], "-v"])
