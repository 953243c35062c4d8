#!/usr/bin/env bash
# Sets up, builds (every kernel, for sm_75 and sm_90a) and runs the tests. Without a GPU the
# GPU tests are reported as skipped. Usage: scripts/test.sh
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh
cmake --workflow --preset cpu
