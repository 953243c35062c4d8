#!/usr/bin/env bash
# Is a run repeatable? Runs the default suite twice with the same build into DIR/run1 and
# DIR/run2, then `memlab compare --repeat` (docs/timing.md): rows above 50 us or with noise
# at most 1% must agree within 3%, and no more rows than a 95% noise allows may differ by more
# than their noise. Exits with compare's status (0 passed, 1 failed).
#   scripts/repeat.sh [-o DIR] [--build DIR] [memlab run arguments, e.g. --quick or reduce]
set -euo pipefail
cd "$(dirname "$0")/.."
out="memlab-results/repeat-$(date +%Y%m%d-%H%M%S)"
build="build/release"
args=()
while [ $# -gt 0 ]; do
  case "$1" in
    -o) out="$2"; shift 2 ;;
    --build) build="$2"; shift 2 ;;
    *) args+=("$1"); shift ;;
  esac
done
if [ ! -x "$build/memlab" ]; then
  source scripts/setup.sh
  cmake --preset release >/dev/null
  cmake --build --preset release
fi
memlab="$build/memlab"
echo "memlab repeat: $("$memlab" --version), results in $out" >&2
for i in 1 2; do
  echo "memlab repeat: run $i of 2" >&2
  # A run with failed rows exits 1; the comparison still says whether the timings repeat.
  "$memlab" run -d 0 --no-report --no-progress -o "$out/run$i" --md "$out/run$i/run.md" ${args[@]+"${args[@]}"} ||
    echo "memlab repeat: run $i exited $? (see $out/run$i/run.md)" >&2
  [ -f "$out/run$i/run.json" ] || { echo "memlab repeat: error: run $i wrote no record" >&2; exit 1; }
done
status=0
"$memlab" compare --repeat "$out/run1/run.json" "$out/run2/run.json" >"$out/compare.md" || status=$?
sed -n '/^## Repeatability/,/^# memlab compare/p' "$out/compare.md" | sed '$d' >&2
echo "memlab repeat: full comparison in $out/compare.md" >&2
exit "$status"
