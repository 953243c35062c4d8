#!/usr/bin/env bash
# Sets up, builds the release preset and runs memlab's default suite on GPU 0.
# Results (run.json, run.md, report.md and plots) go to memlab-results/<time>/, or to
# the folder given with -o. Extra arguments go to `memlab run`, e.g.
#   scripts/run.sh coalescing -o out/     scripts/run.sh --quick
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh --plots
cmake --preset release >/dev/null
cmake --build --preset release
exec build/release/memlab run -d 0 "$@"
