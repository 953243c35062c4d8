#!/usr/bin/env bash
# Helpers for a session on a lent GPU machine (docs/ARCHITECTURE.md, "Verifying on a GPU"):
#   source tools/lent_gpu.sh
#   ml_build NAME ARCHS [cmake args...]   configure + build build/NAME (-j16, tests on)
#   ml_tests NAME [ctest args...]         every test of build/NAME, log in $OUT/NAME-tests.log
# Logs go to $OUT (or /tmp when unset). The machine has no network: run
# ../shared/device/fetch-deps.sh here first and carry .deps.
set -u
: "${OUT:=/tmp}"
[ -f .deps/use.sh ] && source .deps/use.sh
ml_build() {
  local name=$1 archs=$2; shift 2
  local t0=$SECONDS
  cmake -S . -B "build/$name" -G Ninja -DCMAKE_BUILD_TYPE=Release "-DCMAKE_CUDA_ARCHITECTURES=$archs" \
        -DMEMLAB_GIT_REVISION="${MEMLAB_GIT_REVISION:-unknown}" "$@" >"$OUT/$name-configure.log" 2>&1 &&
    cmake --build "build/$name" -j16 >"$OUT/$name-build.log" 2>&1
  local rc=$?
  echo "build $name ($archs): rc=$rc in $((SECONDS - t0)) s"
  [ $rc -eq 0 ] || tail -30 "$OUT/$name-build.log"
  return $rc
}
ml_tests() {
  local name=$1; shift
  local t0=$SECONDS
  ctest --test-dir "build/$name" --output-on-failure -j4 "$@" >"$OUT/$name-tests.log" 2>&1
  local rc=$?
  echo "tests $name: rc=$rc in $((SECONDS - t0)) s: $(grep -E 'tests passed|tests failed' "$OUT/$name-tests.log" | tail -1)"
  grep -E '\(Failed\)|\(Timeout\)|\*\*\*Failed|Exception' "$OUT/$name-tests.log" | head -30
  return $rc
}
