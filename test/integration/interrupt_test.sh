#!/usr/bin/env bash
# A run interrupted as real runs are: Ctrl-C, a Slurm time limit or a pod eviction (SIGINT or
# SIGTERM), Bazel's test timeout (SIGTERM, with TEST_TIMEOUT set). The fake tests are shell
# scripts that say through files when they run and what they did; no step waits on a sleep.
source test/integration/lib.sh
requires python3
GPUPLAN=$(realpath "$GPUPLAN")
TEMPLATE=$SOURCE_DIR/test/data/plans/workstation_ml.json
# Two nodes of two GPUs, one unit on each GPU.
l4_fleet n0 n1
for n in 0 1; do for gpu in 0 1; do echo "//t:n${n}_$gpu n$n $gpu 0"; done; done | one_gpu_plan
wait_for() {  # wait_for FILE: up to 60 s (a loaded CI machine) for FILE to exist
  for _ in $(seq 600); do [ -e "$1" ] && return; sleep 0.1; done
  fail "$1 did not appear"
}

# 1. run-under --claims, stopped by SIGTERM that is not Bazel's timeout (a Slurm time limit, a pod
# evicted, Ctrl-C): the test did not run to its end, so its claim is given up for another node to
# run it. Before, it was marked done with exit 143, and every other node ended the test as failed
# without running it ("ran on node n0 (exit 143); not again on n1").
install -d -m 0700 "$SCRATCH/claims" "$SCRATCH/locks-n0" "$SCRATCH/locks-n1"
: >"$SCRATCH/under.csv"
under() {  # under NODE LABEL COMMAND...: one run-under as Bazel starts it, in place of this shell
  local node=$1 label=$2; shift 2
  TEST_TARGET=$label exec "$GPUPLAN" run-under --plan "$SCRATCH/plan.json" --node "$node" --claims "$SCRATCH/claims" \
    --lease 10 --fleet "$SCRATCH/fleet.yaml" --lock-dir "$SCRATCH/locks-$node" --results "$SCRATCH/under.csv" "$@"
}
# stop_under LABEL: n0's run-under of LABEL, stopped by SIGTERM once its test runs; prints its status.
stop_under() {
  local started=$SCRATCH/${1//[\/:]/_}.started
  (under n0 "$1" sh -c "touch '$started'; sleep 30") 2>/dev/null &
  local pid=$! status=0
  wait_for "$started"
  kill -TERM "$pid"
  wait "$pid" || status=$?
  echo "$status"
}
status=$(stop_under //t:n0_0)
[ "$status" = 143 ] || fail "run-under stopped by SIGTERM exited $status, not 143"
grep -q '^//t:n0_0,.*,stopped,' "$SCRATCH/under.csv" || fail "no stopped record: $(cat "$SCRATCH/under.csv")"
status=0
(under n1 //t:n0_0 sh -c "touch '$SCRATCH/n1-ran'") 2>"$SCRATCH/n1.err" || status=$?
[ "$status" = 0 ] && [ -e "$SCRATCH/n1-ran" ] ||
  fail "n1 did not run the test n0 was stopped in: exit $status, $(cat "$SCRATCH/n1.err")"
# At Bazel's timeout the test did run to its end, a failed one: it is done, and n1 ends it as n0
# did rather than run it again (as exec marks a unit past its --timeout).
export TEST_TIMEOUT=1
status=$(stop_under //t:n0_1)
unset TEST_TIMEOUT
status=0
(under n1 //t:n0_1 sh -c "touch '$SCRATCH/n1-ran-again'") 2>"$SCRATCH/n1-timeout.err" || status=$?
[ "$status" = 143 ] && [ ! -e "$SCRATCH/n1-ran-again" ] && grep -q "ran on node n0 (exit 143)" "$SCRATCH/n1-timeout.err" ||
  fail "a test Bazel timed out on n0: n1 exit $status, $(cat "$SCRATCH/n1-timeout.err")"

# 2. exec stopped by SIGTERM (a Slurm time limit; Ctrl-C is SIGINT): each unit's process group gets
# SIGTERM, and SIGKILL 5 s later. The unit's /bin/sh ends at the SIGTERM; the test it started gets
# those seconds to clean up (before, it was killed as the shell ended, within milliseconds). A
# test that ignores SIGTERM is killed after them, and so is a daemon it started with setsid, out
# of the group's reach (exec's SIGKILL spares the unit's supervisor, which kills it).
cat >"$SCRATCH/unit.sh" <<'SH'
# unit.sh GPU: GPU 0's test cleans up on SIGTERM, for half a second; GPU 1's ignores it and has
# a daemon.
if [ "$1" = 0 ]; then
  trap 'sleep 0.5; touch "$S/cleaned"; exit 1' TERM
else
  trap '' TERM
  setsid sleep 300 &
  echo $! >"$S/daemon"
fi
touch "$S/started-$1"
while :; do sleep 0.1; done
SH
export S=$SCRATCH/exec
mkdir "$S"
"$GPUPLAN" exec "$SCRATCH/plan.json" --node n0 --results "$S/results.csv" \
  --command "bash $SCRATCH/unit.sh {gpus}" >"$S/out" 2>&1 &
exec_pid=$!
wait_for "$S/started-0"
wait_for "$S/started-1"
kill -TERM "$exec_pid"
status=0
wait "$exec_pid" || status=$?
[ "$status" = 143 ] || fail "exec stopped by SIGTERM exited $status, not 143: $(cat "$S/out")"
[ -e "$S/cleaned" ] || fail "a unit's test was killed before it could clean up on SIGTERM: $(cat "$S/out")"
daemon=$(cat "$S/daemon")
# One read of its state: a process that ended between a test of /proc/PID and the read of its stat
# read as running, and the kill of it failed the test. Up to 20 s, as run_under_test's daemon.
alive() { local state; state=$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null) && [ -n "$state" ] && [ "$state" != Z ]; }
for _ in $(seq 200); do alive "$daemon" || break; sleep 0.1; done
if alive "$daemon"; then
  kill -KILL "$daemon" 2>/dev/null || true
  fail "a daemon (setsid) of a unit that ignored SIGTERM outlived exec"
fi
grep -q "2 units: 2 stopped" "$S/out" || fail "exec's summary: $(cat "$S/out")"
[ "$(grep -c ',stopped,' "$S/results.csv")" = 2 ] || fail "exec's records: $(cat "$S/results.csv")"

# 3. exec --junit of a run stopped before every unit started: the units that did not run are in
# it, each a failure (no-result), as --json counts them (before, only the units that ran were).
S=$SCRATCH/junit; mkdir "$S"
"$GPUPLAN" exec "$TEMPLATE" --node ws-0 --junit "$S/junit.xml" --json "$S/exec.json" \
  --command "touch $S/started; sleep 30" >"$S/out" 2>&1 &
exec_pid=$!
wait_for "$S/started"
kill -TERM "$exec_pid"
status=0
wait "$exec_pid" || status=$?
[ "$status" = 143 ] || fail "exec --junit stopped by SIGTERM exited $status, not 143: $(cat "$S/out")"
units=$(jq .totals.units "$S/exec.json")
not_run=$(jq .totals.not_run "$S/exec.json")
[ "$not_run" -gt 0 ] && grep -q "<testsuites name=\"gpuplan\" tests=\"$units\"" "$S/junit.xml" &&
  [ "$(grep -c 'message="not run: exec was stopped (signal 15) before it started" type="no-result"' "$S/junit.xml")" = "$not_run" ] ||
  fail "exec --junit of a stopped run: $(jq -c .totals "$S/exec.json") $(grep -o '<testsuites [^>]*>' "$S/junit.xml")"

echo "interrupt_test: ok"
