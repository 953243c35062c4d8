#!/usr/bin/env python3
"""Every committed record and fixture matches docs/record.schema.json (jsonschema).

    python3 tests/report/test_record_schema.py SOURCE_DIR [MEMLAB_EXE]

With MEMLAB_EXE, the declarations `memlab list --json` prints today are checked too
(each must be a valid format-2 experiment entry, with a headline, prose and described
axes), and every fixture's experiment entries must carry exactly those declarations,
so the fixtures cannot drift from the experiments.
"""
import glob
import json
import multiprocessing
import os
import subprocess
import sys
import unittest

try:
    import jsonschema
except ImportError:  # a missing validator is a setup problem, not a pass
    print("test_record_schema: python3 has no jsonschema; install python3-jsonschema (scripts/setup.sh)",
          file=sys.stderr)
    sys.exit(1)

SOURCE = os.path.abspath(sys.argv[1]) if len(sys.argv) > 1 else os.getcwd()
MEMLAB = sys.argv[2] if len(sys.argv) > 2 else ""
# CMake's MEMLAB_FAMILIES for MEMLAB_EXE ("all" by default): a build of some families lists
# only their experiments, so there a fixture's experiment the build lacks is left out; a full
# build must list every one.
FULL_BUILD = os.environ.get("MEMLAB_TEST_FAMILIES", "all") in ("", "all")


def load(path):
    with open(path) as f:
        return json.load(f)


SCHEMA = load(os.path.join(SOURCE, "docs", "record.schema.json"))
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)


def problems(doc):
    return ["%s: %s" % ("/".join(map(str, e.absolute_path)) or "(top)", e.message)
            for e in sorted(VALIDATOR.iter_errors(doc), key=lambda e: list(e.absolute_path))]


def problems_of_file(path):
    return problems(load(path))


class schema_test(unittest.TestCase):
    def test_schema_is_a_valid_schema(self):
        jsonschema.Draft202012Validator.check_schema(SCHEMA)

    def test_committed_records_and_fixtures(self):
        files = sorted(glob.glob(os.path.join(SOURCE, "results", "**", "*.json"), recursive=True) +
                       glob.glob(os.path.join(SOURCE, "tests", "data", "synthetic_*.json")))
        self.assertGreaterEqual(len(files), 4, "no records found under results/ and tests/data/")
        # One process a core: the records are hundreds of megabytes of JSON, and CI has two cores.
        with multiprocessing.Pool(max(1, min(len(os.sched_getaffinity(0)), 8))) as pool:
            found = pool.map(problems_of_file, files, chunksize=4)
        for path, errors in zip(files, found):
            with self.subTest(record=os.path.relpath(path, SOURCE)):
                self.assertEqual(errors, [])

    def test_reference_record_is_format_2(self):
        # The report of the committed reference run draws its plots from declarations.
        rec = load(os.path.join(SOURCE, "results", "nvidia-h200", "run.json"))
        self.assertEqual(rec["format_version"], 2)
        self.assertGreaterEqual(sum(len(e["plots"]) for e in rec["experiments"]), 20)

    def test_summary_table_cells(self):
        # A table is optional; each cell has exactly one source (or none).
        entry = {"id": "a.b", "description": "", "seed_ref": "", "status": "completed", "points": 1, "axes": [],
                 "metrics": [], "headline": {"question": "", "where": {}, "best_by": "median_ms",
                                             "higher_is_better": False, "compare": "", "baseline": {}},
                 "seed_figures": [], "prose": {"shows": "", "look_for": "", "seed": ""}, "plots": [], "ceiling": "none"}
        doc = {"format_version": 2, "experiments": [entry], "rows": []}
        self.assertEqual(problems(doc), [])
        cells = [{}, {"device": "l2_bytes"}, {"value": 29, "source": "Luo et al. 2024"},
                 {"experiment": "c.d", "where": {"x": ["max"]}, "metric": "gbps", "pick": "max"}]
        entry["tables"] = [{"title": "t", "note": "", "columns": [{"label": "c", "unit": ""}] * 4,
                            "rows": [{"label": "r", "cells": cells}]}]
        self.assertEqual(problems(doc), [])
        for bad in [{"device": "l2_bytes", "value": 3, "source": "s"},  # two sources
                    {"experiment": "c.d", "where": {}, "metric": "gbps", "pick": "best"},
                    {"value": "29", "source": "s"}]:
            with self.subTest(bad=bad):
                entry["tables"][0]["rows"][0]["cells"] = [bad]
                self.assertTrue(problems(doc), "accepted: %r" % bad)

    def test_wrong_shapes_are_rejected(self):
        good = {"format_version": 2, "experiments": [], "rows": []}
        self.assertEqual(problems(good), [])
        for bad, where in [({"rows": "nope", "format_version": 2, "experiments": []}, "rows"),
                           ({"format_version": 3, "rows": []}, "format_version"),
                           ({"format_version": 2, "rows": []}, "(top)"),  # format 2 needs experiments
                           ({"format_version": 2, "experiments": [{"id": "a.b"}], "rows": []}, "experiments/0"),
                           ({"format_version": 1, "rows": [{"experiment": "a.b", "variant": "", "params": {},
                                                             "median_ms": "1"}]}, "rows/0/median_ms")]:
            with self.subTest(bad=bad):
                p = problems(bad)
                self.assertTrue(p, "accepted: %r" % bad)
                self.assertTrue(p[0].startswith(where), p)

    @unittest.skipUnless(MEMLAB, "no memlab executable given")
    def test_live_declarations(self):
        out = subprocess.run([MEMLAB, "list", "--json"], check=True, capture_output=True, text=True).stdout
        decls = json.loads(out)
        self.assertGreaterEqual(len(decls), 20)
        for d in decls:
            entry = dict(d, points=1, status="completed")
            with self.subTest(experiment=d["id"]):
                self.assertEqual(problems({"format_version": 2, "experiments": [entry], "rows": []}), [])
                self.assertTrue(d["headline"]["question"], "no headline declared")
                self.assertTrue(d["prose"]["shows"], "no prose declared")
                for a in d["axes"]:
                    self.assertTrue(a["description"], "axis %s has no description" % a["name"])
        live = {d["id"]: d for d in decls}
        for path in glob.glob(os.path.join(SOURCE, "tests", "data", "synthetic_*.json")):
            for e in load(path)["experiments"]:
                with self.subTest(fixture=os.path.basename(path), experiment=e["id"]):
                    if not FULL_BUILD and e["id"] not in live:
                        self.skipTest("not in this build (MEMLAB_FAMILIES=%s)" % os.environ["MEMLAB_TEST_FAMILIES"])
                    self.assertIn(e["id"], live)
                    self.assertEqual({k: e[k] for k in live[e["id"]]}, live[e["id"]],
                                     "the fixture's declaration differs from the build's: rerun "
                                     "python3 tests/data/make_synthetic_fixtures.py MEMLAB_EXE")

if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0], "-v"])
