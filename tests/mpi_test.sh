#!/bin/sh
# memlab-mpi under mpirun (tests/CMakeLists.txt). Usage:
#   mpi_test.sh MPIEXEC MEMLAB_MPI MEMLAB OUT_DIR collectives|bad_input|no_gpu
# collectives: 2 ranks (one GPU each), every collective at 8 B, 4 KiB, 1 MiB and 64 MiB; exit 0
#   with every row verified and a record memlab report reads; 77 (skipped) on a host with fewer
#   than 2 GPUs, as memlab-mpi itself says.
# bad_input: an unknown collective ends both ranks with exit 2 and one line naming it.
# no_gpu: with no GPU visible both ranks end with exit 77 and one line saying so.
mpiexec=$1 mpi=$2 memlab=$3 out=$4 mode=$5
# MPI carries a few hundred bytes here: Open MPI's plain shared-memory and TCP transports, no
# single-copy (containers often forbid the ptrace it needs), no UCX/libfabric probing of NICs.
run() {
  "$mpiexec" -np 2 --oversubscribe --mca pml ob1 --mca btl self,vader,tcp \
    --mca btl_vader_single_copy_mechanism none "$mpi" "$@"
}
fail() { echo "mpi_test $mode: $*"; exit 1; }
rm -rf "$out.$mode"
mkdir -p "$out.$mode"
case $mode in
  collectives)
    run --collectives all --bytes 8,4K,1M,64M -o "$out.$mode"
    rc=$?
    [ $rc -eq 77 ] && { echo "skipped: memlab-mpi needs a GPU per rank (2)"; exit 77; }
    [ $rc -eq 0 ] || fail "memlab-mpi exited $rc"
    rows=$(grep -c '"experiment": "link.nccl_mpi"' "$out.$mode/run.json")
    [ "$rows" -eq 24 ] || fail "expected 24 rows (6 collectives x 4 sizes), found $rows"
    passed=$(grep -c '"verified": "passed"' "$out.$mode/run.json")
    [ "$passed" -eq 24 ] || fail "expected 24 verified rows, found $passed"
    grep -q '"ranks": 2' "$out.$mode/run.json" || fail "the record's mpi.ranks is not 2"
    "$memlab" report "$out.$mode/run.json" --no-plots -o "$out.$mode/report" || fail "memlab report refused the record"
    grep -q 'link.nccl_mpi' "$out.$mode/report/report.md" || fail "report.md does not show link.nccl_mpi"
    echo "mpi_test collectives: 24 rows verified, report written"
    ;;
  bad_input)
    run --collectives all_reduce,nope -o "$out.$mode" > "$out.$mode/stdout" 2> "$out.$mode/stderr"
    rc=$?
    cat "$out.$mode/stderr"
    [ $rc -eq 2 ] || fail "expected exit 2, got $rc"
    [ "$(grep -c "unknown collective 'nope'" "$out.$mode/stderr")" -eq 1 ] || fail "expected one line naming 'nope'"
    run --bytes 8:oops > /dev/null 2>&1
    rc=$?
    [ $rc -eq 2 ] || fail "--bytes 8:oops: expected exit 2, got $rc"
    echo "mpi_test bad_input: exit 2 with one line"
    ;;
  no_gpu)
    (CUDA_VISIBLE_DEVICES= && export CUDA_VISIBLE_DEVICES && run -o "$out.$mode") > "$out.$mode/stdout" 2> "$out.$mode/stderr"
    rc=$?
    cat "$out.$mode/stderr"
    [ $rc -eq 77 ] || fail "expected exit 77, got $rc"
    grep -q "no GPU visible" "$out.$mode/stderr" || fail "expected a line saying no GPU is visible"
    echo "mpi_test no_gpu: exit 77 with one line"
    ;;
  *) fail "unknown mode" ;;
esac
