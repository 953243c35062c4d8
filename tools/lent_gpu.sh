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
# ml_sanitize NAME TOOL [gtest filter]: the GPU tests of build/NAME under compute-sanitizer at
# small sizes (the sanitize preset's gate, in any build).
ml_sanitize() {
  local name=$1 tool=$2 filter=${3:-*}
  local t0=$SECONDS
  MEMLAB_TEST_SMALL=1 compute-sanitizer --tool "$tool" --error-exitcode 1 --print-limit 20 \
    "build/$name/tests/memlab_gpu_tests" --gtest_filter="$filter" --gtest_brief=1 >"$OUT/$name-$tool.log" 2>&1
  local rc=$?
  echo "$tool $name: rc=$rc in $((SECONDS - t0)) s: $(grep -E 'ERROR SUMMARY|HAZARD|RACECHECK SUMMARY' "$OUT/$name-$tool.log" | tail -1)"
  [ $rc -eq 0 ] || grep -E '^\[  FAILED|=========   ' "$OUT/$name-$tool.log" | head -10
  return $rc
}
# ml_suite NAME [memlab run args...]: the default suite of build/NAME into $OUT/NAME.tar.gz
# (run.json, run.md, report.md, plots/), with a one-line summary.
ml_suite() {
  local name=$1; shift
  local t0=$SECONDS dir=/tmp/suite-$name
  rm -rf "$dir"
  "build/$name/memlab" run -d 0 -o "$dir" --md "$dir/stdout.md" "$@" 2>"$dir.err"
  local rc=$?
  tail -1 "$dir.err"
  echo "suite $name: rc=$rc in $((SECONDS - t0)) s"
  cp "$dir.err" "$dir/stderr.txt" 2>/dev/null
  tar -C "$dir" -czf "$OUT/$name.tar.gz" .
  return $rc
}
