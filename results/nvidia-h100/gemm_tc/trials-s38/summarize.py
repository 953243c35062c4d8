#!/usr/bin/env python3
"""Session 38: summarizes peers.txt files (A-peers-ptx/, C-peers/): per size and method, each contender's
median time over the rounds/reps and its ratio (peer time / contender time: above 1 is faster) to cublasLt
and cublasGemmEx. Usage: summarize.py FILE [FILE ...]"""
import re
import statistics
import sys

rx_size = re.compile(r"^== (\d+)\^3")
rx_author = re.compile(r"^author r\d+ (\S+)\s+([\d.]+) ms")
rx_cap = re.compile(r"^cap rep\d+ (\S+)\s+launches\s+\d+\s+median ([\d.]+) ms.*J/launch ([\d.]+)")

def parse(path):
    out = {}
    size = None
    for line in open(path):
        if m := rx_size.match(line):
            size = int(m.group(1))
        elif m := rx_author.match(line):
            out.setdefault((size, "author"), {}).setdefault(m.group(1), []).append(float(m.group(2)))
        elif m := rx_cap.match(line):
            out.setdefault((size, "cap"), {}).setdefault(m.group(1), []).append(float(m.group(2)))
            out.setdefault((size, "cap J"), {}).setdefault(m.group(1), []).append(float(m.group(3)))
    return out

def main(paths):
    merged = {}
    for p in paths:
        for key, d in parse(p).items():
            for name, v in d.items():
                merged.setdefault(key, {}).setdefault(name, []).extend(v)
    print("| size | method | contender | samples | median | range | cublasLt / it | cublasGemmEx / it |")
    print("|---|---|---|--:|--:|--:|--:|--:|")
    for (size, method), d in sorted(merged.items()):
        lt = statistics.median(d["lt"])
        ex = statistics.median(d["ex"])
        unit = "J" if method == "cap J" else "ms"
        for name in ("memlab", "fast12", "lt", "ex"):
            v = d[name]
            med = statistics.median(v)
            print(f"| {size}³ | {method} | {name} | {len(v)} | {med:.4f} {unit} | {min(v):.4f}-{max(v):.4f} | "
                  f"{lt / med:.3f} | {ex / med:.3f} |")

if __name__ == "__main__":
    main(sys.argv[1:])
