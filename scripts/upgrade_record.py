#!/usr/bin/env python3
"""Upgrades a format-1 run record to format 2 by adding each experiment's declaration.

    memlab list --json > decls.json
    python3 scripts/upgrade_record.py OLD/run.json decls.json [-o NEW/run.json]

Format 1 records carry rows but not what they mean (axes with units, headline, seed
figures, prose, plots). Those declarations live with the experiments, so this takes
them from a memlab build's `memlab list --json` and writes them into the record's
`experiments` entries, keeping every row and header field as it was. The record is
marked with `upgraded_from_format: 1`, so a reader knows the declarations came later
than the rows. An experiment the build no longer has gets an empty declaration.
Without -o the record is rewritten in place.
"""
import argparse
import json
import os
import sys

EMPTY = {"axes": [], "metrics": [], "headline": {"question": "", "where": {}, "best_by": "median_ms",
                                                   "higher_is_better": False, "compare": "", "baseline": {}},
         "seed_figures": [], "prose": {"shows": "", "look_for": "", "seed": ""}, "plots": [], "ceiling": "none"}


def upgrade(record, decls):
    if record.get("format_version") != 1:
        raise ValueError("format_version is %r, not 1" % record.get("format_version"))
    by_id = {d["id"]: d for d in decls}
    entries = []
    for e in record.get("experiments", []):
        d = by_id.get(e.get("id"), EMPTY)
        new = dict(e)
        for k in ("axes", "metrics", "headline", "seed_figures", "prose", "plots", "ceiling"):
            new[k] = d[k]
        # The declaration's one-line description and seed reference are today's; the
        # record's own are kept where it has them.
        new.setdefault("description", d.get("description", ""))
        new.setdefault("seed_ref", d.get("seed_ref", ""))
        entries.append(new)
    out = dict(record)
    out["format_version"] = 2
    out["upgraded_from_format"] = 1
    out["experiments"] = entries
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("record")
    ap.add_argument("declarations", help="the output of `memlab list --json`")
    ap.add_argument("-o", "--output", help="where to write (default: in place)")
    a = ap.parse_args()
    try:
        with open(a.record) as f:
            record = json.load(f)
        with open(a.declarations) as f:
            decls = json.load(f)
        out = upgrade(record, decls)
    except (OSError, ValueError, KeyError) as e:
        print("upgrade_record: %s: %s" % (a.record, e), file=sys.stderr)
        return 2
    path = a.output or a.record
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(out, f, indent=1, sort_keys=True, ensure_ascii=False)
        f.write("\n")
    os.replace(tmp, path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
