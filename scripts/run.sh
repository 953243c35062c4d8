#!/usr/bin/env bash
# Sets up, builds the release preset (for the GPU in this machine) and runs memlab's
# default suite on GPU 0.
# Results (run.json, run.md, report.md and plots) go to memlab-results/<time>/, or to
# the folder given with -o. Extra arguments go to `memlab run`, e.g.
#   scripts/run.sh coalescing -o out/     scripts/run.sh --quick
set -euo pipefail
cd "$(dirname "$0")/.."
# Say plainly, before a long build, when this machine has no usable NVIDIA GPU.
if ! { command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L 2>/dev/null | grep -q '^GPU '; } &&
   ! ls /dev/nvidia[0-9]* >/dev/null 2>&1; then
  echo "memlab: error: no CUDA device is present (nvidia-smi lists no GPU and there is no /dev/nvidia*)." >&2
  echo "memlab: scripts/test.sh builds and tests without a GPU; MEMLAB_BUILD_ANYWAY=1 scripts/run.sh builds first." >&2
  [ "${MEMLAB_BUILD_ANYWAY:-0}" = 1 ] || exit 1
fi
source scripts/setup.sh --plots
# The release preset builds for the GPU in this machine (nvidia-smi's compute capability).
if ! configure_log=$(cmake --preset release 2>&1); then
  echo "$configure_log" >&2
  exit 1
fi
grep -E '^-- memlab:' <<<"$configure_log" | sed 's/^-- //' >&2 || true
cmake --build --preset release
exec build/release/memlab run -d 0 "$@"
