#!/usr/bin/env bash
# run-under --claims stopped (SIGTERM: a Slurm time limit, a pod evicted; SIGINT: Ctrl-C) while
# its test still waits for its GPU, before the test starts: it gives its claim up at once, as it
# does for a running test, and another node runs the test now. Before, the stop killed it with
# the claim in place, and no node could take the test until the lease ran out. A few seconds.
source test/integration/lib.sh
requires python3
GPUPLAN=$(realpath "$GPUPLAN")
l4_fleet n0 n1
# n0 runs //t:first, then //t:term and //t:int, all on GPU 0.
printf '%s\n' "//t:first n0 0 0" "//t:term n0 0 1" "//t:int n0 0 2" | one_gpu_plan
install -d -m 0700 "$SCRATCH/claims" "$SCRATCH/locks-n0" "$SCRATCH/locks-n1"
under() {  # under NODE LABEL COMMAND...: one run-under as Bazel starts it, in place of this shell
  local node=$1 label=$2; shift 2
  # A lease far longer than the test waits below: only a claim given up lets n1 run the test.
  # SIGINT as a terminal sends it (a background job of this shell would ignore it).
  TEST_TARGET=$label exec ${LIMIT:+timeout "$LIMIT"} env --default-signal=INT "$GPUPLAN" run-under --plan "$SCRATCH/plan.json" \
    --node "$node" --claims "${CLAIMS_DIR:-$SCRATCH/claims}" --lease 120 --fleet "$SCRATCH/fleet.yaml" \
    --lock-dir "$SCRATCH/locks-$node" "$@"
}
wait_for() {  # wait_for CONDITION: up to 60 s (a loaded CI machine) for the shell condition to hold
  for _ in $(seq 600); do eval "$1" && return; sleep 0.1; done
  fail "timed out waiting for: $1"
}
# blocked_on LOCK: until a process waits in flock for the file LOCK (/proc/locks: "-> FLOCK"). A
# fixed 0.3 s after the claim, a loaded machine's launch need not have got to its wait.
blocked_on() {
  local inode
  inode=$(stat -c %i "$1")
  wait_for 'grep -q -- "-> FLOCK .*:'"$inode"' " /proc/locks'
}
# //t:first holds GPU 0 until told to end.
(under n0 //t:first sh -c "touch '$SCRATCH/first.started'; while [ ! -e '$SCRATCH/release' ]; do sleep 0.1; done") &
first=$!
# On a failure too: //t:first ends (it would wait for ever), and the scratch folder goes.
trap 'touch "$SCRATCH/release"; wait "$first" 2>/dev/null; rm -rf "$SCRATCH"' EXIT
wait_for '[ -e "$SCRATCH/first.started" ]'
claims=1
for signal in TERM INT; do
  label=//t:${signal,,}
  log=$SCRATCH/$signal.log
  # n0's launch claims the unit and waits for GPU 0; the stop comes before its test starts.
  (under n0 "$label" sh -c "echo n0 >>'$log'") 2>"$SCRATCH/$signal-n0.err" &
  pid=$!
  claims=$((claims + 1))
  wait_for '[ "$(ls "$SCRATCH/claims" | grep -c "^[^-]*\.0$")" -ge '$claims' ]'
  blocked_on "$SCRATCH/locks-n0/gpu-0.lock"  # in its wait for the GPU's lock
  kill -"$signal" "$pid"
  status=0
  wait "$pid" || status=$?
  [ "$status" = $((128 + $(kill -l "$signal"))) ] ||
    fail "run-under stopped by SIG$signal while it waited exited $status: $(cat "$SCRATCH/$signal-n0.err")"
  # n1, idle, takes the test over now: the claim was given up (a held one waits 120 s here).
  status=0
  (LIMIT=20 under n1 "$label" sh -c "echo n1 >>'$log'") 2>"$SCRATCH/$signal-n1.err" || status=$?
  [ "$status" = 0 ] || fail "n1 did not take $label over at once (exit $status): $(cat "$SCRATCH/$signal-n1.err")"
  [ "$(cat "$log")" = n1 ] || fail "$label ran $(tr '\n' ' ' <"$log")"
  ! grep -q "waiting for it to end" "$SCRATCH/$signal-n1.err" ||
    fail "n1 waited for n0's stopped launch: $(cat "$SCRATCH/$signal-n1.err")"
done
touch "$SCRATCH/release"
wait "$first" || fail "//t:first failed"
for signal in TERM INT; do
  [ "$(cat "$SCRATCH/$signal.log")" = n1 ] || fail "//t:${signal,,} ran $(tr '\n' ' ' <"$SCRATCH/$signal.log")"
done

# exec --claims --lock-dir stopped while a unit it claimed waits for a GPU another process locks
# (a run-under of another job): the unit never started, and its claim is given up as exec ends,
# for another node to run it now. Before, it stayed held until the lease ran out.
install -d -m 0700 "$SCRATCH/claims-exec"
# Until told, or until the scratch folder goes (a failure below: it held up CTest for its timeout).
flock "$SCRATCH/locks-n0/gpu-0.lock" sh -c "touch '$SCRATCH/locked'; while [ ! -e '$SCRATCH/unlock' ] && [ -d '$SCRATCH' ]; do sleep 0.1; done" &
locker=$!
wait_for '[ -e "$SCRATCH/locked" ]'
env --default-signal=INT "$GPUPLAN" exec "$SCRATCH/plan.json" --node n0 --claims "$SCRATCH/claims-exec" --lease 120 \
  --lock-dir "$SCRATCH/locks-n0" --static --command "echo n0 >>'$SCRATCH/first-exec.log'" \
  >"$SCRATCH/exec.out" 2>"$SCRATCH/exec.err" &
exec_pid=$!
wait_for '[ "$(ls "$SCRATCH/claims-exec" | grep -c "^[^-]*\.0$")" -ge 1 ]'
sleep 0.5  # exec polls the lock (no flock to see it blocked in): claimed, it is in its wait
kill -TERM "$exec_pid"
status=0
wait "$exec_pid" || status=$?
touch "$SCRATCH/unlock"
wait "$locker"
[ "$status" = 143 ] || fail "exec stopped while its unit waited for a GPU lock: exit $status: $(cat "$SCRATCH/exec.err")"
[ ! -e "$SCRATCH/first-exec.log" ] || fail "//t:first ran on n0 after the stop"
status=0
(CLAIMS_DIR=$SCRATCH/claims-exec LIMIT=20 under n1 //t:first sh -c "echo n1 >>'$SCRATCH/first-exec.log'") \
  2>"$SCRATCH/first-n1.err" || status=$?
[ "$status" = 0 ] && [ "$(cat "$SCRATCH/first-exec.log")" = n1 ] ||
  fail "n1 did not take //t:first over at once after n0's exec was stopped (exit $status): $(cat "$SCRATCH/first-n1.err")"
echo "claims_stop_test: ok"
