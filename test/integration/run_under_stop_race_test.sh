#!/usr/bin/env bash
# run-under --claims and a stop (SIGTERM: Bazel's timeout or Ctrl-C, a Slurm time limit, a pod evicted)
# that comes as its test ends. A test that had ended by itself (test/faults/signal_after_wait.cpp,
# preloaded, raises the SIGTERM just after run-under's wait for it) ended as it ended: exit 0 is passed,
# exit 3 failed, each recorded so and marked done, and another node does not run it again. Before, a
# test that had passed was called stopped (exit 143, results record "stopped"), its claim was given up,
# and another node ran it a second time. A test that the stop reached while it ran, that traps SIGTERM
# and exits 0, still did not pass: stopped (143), its claim given up for another node. A few seconds.
source test/integration/lib.sh
requires python3
GPUPLAN=$(realpath "$GPUPLAN")
SIGNAL=${GPUPLAN_BUILD_DIR:-$(dirname "$GPUPLAN")}/libsignal_after_wait.so
[ -e "$SIGNAL" ] || fail "$SIGNAL is missing: it is built with gpuplan_tests"
l4_fleet n0 n1
printf '%s\n' "//t:passed n0 0 0" "//t:failed n0 0 1" "//t:trapped n0 0 2" | one_gpu_plan
install -d -m 0700 "$SCRATCH/claims" "$SCRATCH/locks-n0" "$SCRATCH/locks-n1"
: >"$SCRATCH/results.csv"
under() {  # under NODE LABEL COMMAND...: one run-under as Bazel starts it, the leader of its process group
  local node=$1 label=$2; shift 2
  # A lease far longer than the test: only a claim given up lets n1 run the test (LIMIT: n1's wait ends).
  TEST_TARGET=$label ${LIMIT:+timeout "$LIMIT"} setsid --wait "$GPUPLAN" run-under --plan "$SCRATCH/plan.json" --node "$node" \
    --claims "$SCRATCH/claims" --lease 120 --fleet "$SCRATCH/fleet.yaml" --lock-dir "$SCRATCH/locks-$node" \
    --results "$SCRATCH/results.csv" "$@"
}
recorded() {  # recorded LABEL: the exit_status column of the label's records (number, stopped, timeout)
  awk -F, -v label="$1" '$1 == label { print $8 }' "$SCRATCH/results.csv" | tr '\n' ' ' | sed 's/ $//'
}

# 1, 2. The test ends by itself, then the SIGTERM comes: n0 exits as the test did, its record says
# so, and n1 does not run the test again but ends as n0's run did.
for case in "passed 0" "failed 3"; do
  set -- $case
  label=//t:$1 code=$2 log=$SCRATCH/$1.log
  status=0
  LD_PRELOAD=$SIGNAL GPUPLAN_SIGNAL_AFTER_WAIT=1 under n0 "$label" sh -c "echo n0 >>'$log'; exit $code" \
    2>"$SCRATCH/$1-n0.err" || status=$?
  grep -q 'signal_after_wait: SIGTERM' "$SCRATCH/$1-n0.err" || fail "no SIGTERM came: $(cat "$SCRATCH/$1-n0.err")"
  [ "$status" = "$code" ] ||
    fail "$label ended by itself (exit $code) before the SIGTERM: run-under exited $status: $(cat "$SCRATCH/$1-n0.err")"
  [ "$(recorded "$label")" = "$code" ] || fail "$label's results record: $(recorded "$label"), not $code"
  status=0
  LIMIT=20 under n1 "$label" sh -c "echo n1 >>'$log'" 2>"$SCRATCH/$1-n1.err" || status=$?
  [ "$status" = "$code" ] || fail "n1 after $label ran on n0: exit $status, not $code: $(cat "$SCRATCH/$1-n1.err")"
  [ "$(tr '\n' ' ' <"$log")" = "n0 " ] || fail "$label ran on $(tr '\n' ' ' <"$log")"
  grep -q "ran on node n0 (exit $code); not again on n1" "$SCRATCH/$1-n1.err" ||
    fail "n1 did not say $label ran on n0: $(cat "$SCRATCH/$1-n1.err")"
done

# 3. The stop reaches the test while it runs (SIGTERM to the process group, as Bazel sends it), and the
# test traps it and exits 0: it was cut short, did not pass (143, recorded stopped), and its claim is
# given up: n1 runs it now.
log=$SCRATCH/trapped.log
status=0
under n0 //t:trapped sh -c "trap 'echo trapped >>\"$log\"; exit 0' TERM; echo n0 >>'$log'; kill -TERM 0; sleep 30" \
  2>"$SCRATCH/trapped-n0.err" || status=$?
[ "$status" = 143 ] || fail "a test that trapped the stop's SIGTERM and exited 0: run-under exited $status, not 143: $(cat "$SCRATCH/trapped-n0.err")"
[ "$(head -2 "$log" | tr '\n' ' ')" = "n0 trapped " ] || fail "//t:trapped ran $(tr '\n' ' ' <"$log")"
[ "$(recorded //t:trapped)" = stopped ] || fail "//t:trapped's results record: $(recorded //t:trapped), not stopped"
status=0
LIMIT=20 under n1 //t:trapped sh -c "echo n1 >>'$log'" 2>"$SCRATCH/trapped-n1.err" || status=$?
[ "$status" = 0 ] || fail "n1 did not run //t:trapped, given up by n0: exit $status: $(cat "$SCRATCH/trapped-n1.err")"
[ "$(tail -1 "$log")" = n1 ] || fail "//t:trapped ran $(tr '\n' ' ' <"$log")"
echo "run_under_stop_race_test: ok"
