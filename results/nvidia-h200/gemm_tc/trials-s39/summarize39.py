#!/usr/bin/env python3
"""Session 39's wide-decode trial (F-wide-decode/*.txt, decode39's output) as a Markdown table:
per shape and contender, the median of the rounds' medians in µs, cublasLt's median over it, and
the rounds' range. Usage: python3 summarize39.py F-wide-decode > F-wide-decode/summary.md"""
import collections
import os
import re
import statistics
import sys

folder = sys.argv[1] if len(sys.argv) > 1 else "F-wide-decode"
times = collections.defaultdict(list)
order, contenders = [], []
for name in ("wide.txt", "twowaves.txt", "narrow.txt"):
    for line in open(os.path.join(folder, name)):
        m = re.match(r"r\d (\S+)\s+(\S+)\s+median ([\d.]+)", line)
        if not m:
            continue
        who, shape, us = m.group(1), m.group(2), float(m.group(3))
        times[(shape, who)].append(us)
        if shape not in order:
            order.append(shape)
        if who not in contenders:
            contenders.append(who)
print("| shape | " + " | ".join(contenders) + " |")
print("|---|" + "--:|" * len(contenders))
for shape in order:
    peer = statistics.median(times[(shape, "cublasLt")])
    cells = []
    for who in contenders:
        t = times.get((shape, who))
        cells.append("%.1f (%.3f) [%.1f-%.1f]" % (statistics.median(t), peer / statistics.median(t), min(t), max(t)) if t else "")
    print("| %s | %s |" % (shape, " | ".join(cells)))
print("\nµs, the median of three rounds' medians (cublasLt's over it in brackets), then the rounds' range.")
