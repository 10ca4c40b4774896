#!/usr/bin/env bash
# exec's and run-under's results record on a file server that reports a failed write only as the
# file is closed (EIO from test/faults/results_close_eio.cpp, preloaded), as NFS does: the record
# is said not written, and exec exits 1 where every unit passed; run-under exits 2 where the test
# passed. Before, that close was not checked: both exited 0 and the record was lost unsaid.
source test/integration/lib.sh
requires jq
GPUPLAN=$(realpath "$GPUPLAN")
EIO=${GPUPLAN_BUILD_DIR:-$(dirname "$GPUPLAN")}/libresults_close_eio.so
[ -e "$EIO" ] || fail "$EIO is missing: it is built with gpuplan_tests"
cd "$SCRATCH"
jq '.assignments |= [.[5]]' "$SOURCE_DIR/test/data/plans/workstation_ml.json" >one.json  # //ml:inference_test on ws-0

touch r.csv
status=0
LD_PRELOAD=$EIO GPUPLAN_FAIL_CLOSE_OF=$SCRATCH/r.csv "$GPUPLAN" exec one.json --node ws-0 --lock-dir locks \
  --results r.csv --command true >out 2>err || status=$?
[ "$status" = 1 ] || fail "exec whose results record fails at close: exit $status, not 1: $(cat err)"
grep -qF "gpuplan exec: r.csv: cannot append to the results file: Input/output error" err ||
  fail "exec does not say the record was not written, and why: $(cat err)"
tail -1 err | grep -qx "gpuplan exec: every unit passed, and not written: 1 results record; exit 1" ||
  fail "the last line: $(tail -1 err)"

status=0
TEST_TARGET=//ml:inference_test LD_PRELOAD=$EIO GPUPLAN_FAIL_CLOSE_OF=$SCRATCH/r.csv "$GPUPLAN" run-under \
  --plan one.json --node ws-0 --lock-dir locks --results r.csv true >out 2>err || status=$?
[ "$status" = 2 ] || fail "run-under whose results record fails at close: exit $status, not 2: $(cat err)"
grep -qF "gpuplan run-under: r.csv: cannot append to the results file: Input/output error; the test exited 0" err ||
  fail "run-under does not say the record was not written, and why: $(cat err)"
echo "results_eio_test: ok"
