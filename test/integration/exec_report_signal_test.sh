#!/usr/bin/env bash
# A SIGTERM that comes as exec writes its --json and --junit at the end (test/faults/signal_at_rename.cpp,
# preloaded, raises it as the file is renamed into place) waits until they are written. Before, the
# output layer's clean-up for a process that dies at the signal removed the file being written, exec
# went on and said "cannot write: No such file or directory": a run whose units had all passed lost its
# report and exited 143, and a stopped run lost its report to a second SIGTERM (a randomized fault
# driver's "SIGTERM twice" found it). A few seconds.
source test/integration/lib.sh
requires python3 jq
GPUPLAN=$(realpath "$GPUPLAN")
SIGNAL=${GPUPLAN_BUILD_DIR:-$(dirname "$GPUPLAN")}/libsignal_at_rename.so
[ -e "$SIGNAL" ] || fail "$SIGNAL is missing: it is built with gpuplan_tests"
printf '%s\n' "//t:a n0 0 0" "//t:b n0 1 0" | one_gpu_plan

# 1. Every unit has passed when the SIGTERM comes, during the --json's write: the report is written,
# says how the units ended, and exec exits as they did (the signal stopped nothing).
status=0
LD_PRELOAD=$SIGNAL GPUPLAN_SIGNAL_AT_RENAME=/exec.json "$GPUPLAN" exec "$SCRATCH/plan.json" --node n0 \
  --command true --json "$SCRATCH/exec.json" --junit "$SCRATCH/exec.xml" >"$SCRATCH/out" 2>"$SCRATCH/err" ||
  status=$?
[ "$status" = 0 ] || fail "a SIGTERM during the report's write: exit $status, not 0: $(cat "$SCRATCH/err")"
! grep -q 'cannot write' "$SCRATCH/err" || fail "a report was not written: $(cat "$SCRATCH/err")"
[ "$(jq -c '[.stopped_by_signal, .totals.passed]' "$SCRATCH/exec.json")" = '[null,2]' ] ||
  fail "the report: $(cat "$SCRATCH/exec.json")"
grep -q '<testsuite' "$SCRATCH/exec.xml" || fail "no JUnit"
[ -z "$(find "$SCRATCH" -name '.*.gpuplan-*')" ] || fail "a temporary file was left: $(ls -a "$SCRATCH")"

# 2. A stopped run (SIGTERM while its units run) and a second SIGTERM during the --json's write: the
# report of the stopped run is written, and exec exits 143.
rm -f "$SCRATCH/exec.json" "$SCRATCH/exec.xml"
LD_PRELOAD=$SIGNAL GPUPLAN_SIGNAL_AT_RENAME=/exec.json "$GPUPLAN" exec "$SCRATCH/plan.json" --node n0 \
  --command "touch '$SCRATCH'/started-\$\$; sleep 30" --json "$SCRATCH/exec.json" --junit "$SCRATCH/exec.xml" \
  >"$SCRATCH/out" 2>"$SCRATCH/err" &
exec_pid=$!
for _ in $(seq 600); do [ "$(ls "$SCRATCH" | grep -c '^started-')" = 2 ] && break; sleep 0.1; done
[ "$(ls "$SCRATCH" | grep -c '^started-')" = 2 ] || fail "the units did not start: $(cat "$SCRATCH/err")"
kill -TERM "$exec_pid"
status=0
wait "$exec_pid" || status=$?
[ "$status" = 143 ] || fail "a stopped exec: exit $status, not 143: $(cat "$SCRATCH/err")"
! grep -q 'cannot write' "$SCRATCH/err" || fail "a stopped run's report was not written: $(cat "$SCRATCH/err")"
[ "$(jq -c '[.stopped_by_signal, .totals.stopped]' "$SCRATCH/exec.json")" = '[15,2]' ] ||
  fail "the stopped run's report: $(cat "$SCRATCH/exec.json")"
echo "exec_report_signal_test: ok"
