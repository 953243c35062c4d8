#!/usr/bin/env bash
# Sets up, builds (the library's kernels for sm_75 and sm_90a, the experiments and GPU tests for
# sm_90a) and runs the tests. Without a GPU the GPU tests are reported as skipped.
# Usage: scripts/test.sh
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh
cmake --workflow --preset cpu
