#!/usr/bin/env python3
"""Session 38: summarizes decode.txt (E-64x96/): per shape, the median over the rounds of each
contender's median launch time, and cuBLAS's time over ours (above 1: ours faster)."""
import re
import statistics
import sys

rx = re.compile(r"^r\d+ (\S+)\s+(\S+)\s+median ([\d.]+) us")
t = {}
for line in open(sys.argv[1]):
    if m := rx.match(line):
        t.setdefault(m.group(2), {}).setdefault(m.group(1), []).append(float(m.group(3)))
print("| shape | rule (64 x 96) µs | 64 x 128 µs | cublasLt µs | 64 x 128 / rule | cublasLt / rule | cublasLt / 64 x 128 |")
print("|---|--:|--:|--:|--:|--:|--:|")
for shape, d in t.items():
    r, w, lt = (statistics.median(d[k]) for k in ("rule", "64x128", "cublasLt"))
    print(f"| {shape} | {r:.2f} | {w:.2f} | {lt:.2f} | {w / r:.3f} | {lt / r:.3f} | {lt / w:.3f} |")
