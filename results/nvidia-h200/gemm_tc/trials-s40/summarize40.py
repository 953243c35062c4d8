"""Session 40: the median of each contender over its rounds in a decode40 log, and cublasLt / it
(usage: summarize40.py trial.txt)."""
import re,sys,statistics
from collections import defaultdict
d=defaultdict(lambda: defaultdict(list)); order=[]
for line in open(sys.argv[1]):
    m=re.match(r'r\d+ (\S+)\s+(\S+)\s+median ([\d.]+) us',line)
    if m:
        c,sh,v=m.group(1),m.group(2),float(m.group(3))
        if sh not in order: order.append(sh)
        d[sh][c].append(v)
for sh in order:
    lt=statistics.median(d[sh]['cublasLt'])
    print(sh, '  '.join(f"{c} {statistics.median(v):.2f} ({lt/statistics.median(v):.3f})" for c,v in d[sh].items()))
