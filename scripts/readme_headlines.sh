#!/usr/bin/env bash
# Regenerates the README's headline table from the committed reference record (the block
# between <!-- headlines:begin --> and <!-- headlines:end -->). Usage:
#   scripts/readme_headlines.sh [path/to/memlab] [record]   (defaults: build/cpu/memlab, the H200 sm_90a run)
set -euo pipefail
cd "$(dirname "$0")/.."
memlab=${1:-build/cpu/memlab}
record=${2:-results/nvidia-h200/sm_90a/run.json}
python3 - "$memlab" "$record" <<'PY'
import subprocess, sys
table = subprocess.run([sys.argv[1], "report", sys.argv[2], "--headlines"], check=True,
                       capture_output=True, text=True).stdout
text = open("README.md").read()
b, e = "<!-- headlines:begin -->\n", "<!-- headlines:end -->"
i, j = text.index(b) + len(b), text.index(e)
open("README.md", "w").write(text[:i] + table + text[j:])
PY
echo "README.md: headline table regenerated from $record"
