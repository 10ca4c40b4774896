#!/usr/bin/env bash
# run-under --claims keeps renewing a test's claim while the test waits for its GPUs. Bazel
# starts a node's tests at once (--local_test_jobs), so a test planned after another on the same
# GPU claims its unit and waits for that GPU's lock, as long as the first test runs. Before, its
# claim was not renewed meanwhile: past the lease another node took the test over, and both
# nodes ran it. Takes the lease, ten seconds, and a little more; then Bazel's timeout after such
# a wait, about 4 s.
source test/integration/lib.sh
requires python3
GPUPLAN=$(realpath "$GPUPLAN")
l4_fleet n0 n1
# n0 runs //t:first and then //t:second on GPU 0.
printf '%s\n' "//t:first n0 0 0" "//t:second n0 0 1" | one_gpu_plan
install -d -m 0700 "$SCRATCH/claims" "$SCRATCH/locks-n0" "$SCRATCH/locks-n1"
under() {  # under NODE LABEL COMMAND...: one run-under as Bazel starts it, in place of this shell
  local node=$1 label=$2; shift 2
  TEST_TARGET=$label exec "$GPUPLAN" run-under --plan "$SCRATCH/plan.json" --node "$node" \
    --claims "${CLAIMS:-$SCRATCH/claims}" --lease 10 --fleet "$SCRATCH/fleet.yaml" --lock-dir "$SCRATCH/locks-$node" "$@"
}
wait_for() {  # wait_for CONDITION: up to 60 s (a loaded CI machine) for the shell condition to hold
  for _ in $(seq 600); do eval "$1" && return; sleep 0.1; done
  fail "timed out waiting for: $1"
}
# //t:first holds GPU 0 until told to end; //t:second claims its unit and waits for GPU 0.
(under n0 //t:first sh -c "touch '$SCRATCH/first.started'; while [ ! -e '$SCRATCH/release' ] && [ -d '$SCRATCH' ]; do sleep 0.1; done") &
first=$!
wait_for '[ -e "$SCRATCH/first.started" ]'
(under n0 //t:second sh -c "echo n0 >>'$SCRATCH/second.log'") 2>"$SCRATCH/second-n0.err" &
second=$!
wait_for '[ "$(ls "$SCRATCH/claims" | grep -c "\.0$")" = 2 ]'
sleep 12  # past the lease: a claim not renewed has expired
# n1, idle, with the fleet: it takes //t:second over only if n0's claim expired.
(under n1 //t:second sh -c "echo n1 >>'$SCRATCH/second.log'") 2>"$SCRATCH/second-n1.err" &
taker=$!
wait_for '[ -s "$SCRATCH/second-n1.err" ]'
touch "$SCRATCH/release"
status=0
for pid in "$first" "$second" "$taker"; do wait "$pid" || status=$?; done
[ "$(cat "$SCRATCH/second.log")" = n0 ] ||
  fail "//t:second ran $(tr '\n' ' ' <"$SCRATCH/second.log")(n1 said: $(cat "$SCRATCH/second-n1.err"))"
grep -q "//t:second is running on node n0; waiting for it to end" "$SCRATCH/second-n1.err" &&
  grep -q "//t:second ran on node n0 (exit 0)" "$SCRATCH/second-n1.err" ||
  fail "n1 did not wait for n0's run: $(cat "$SCRATCH/second-n1.err")"
[ "$status" = 0 ] || fail "a run-under failed: exit $status"

# Bazel's test timeout counts from when it launched run-under, the wait for GPUs too: its SIGTERM
# to a test that waited 3 s for GPU 0 under TEST_TIMEOUT=7 is a timeout, the test done (exit
# 143), not a stop that gives the claim up for another node to run the test again. Before, it
# was judged by the test's own second or so, and n1 ran //t:late again. About 4 s.
install -d -m 0700 "$SCRATCH/claims2"
rm -f "$SCRATCH/release"
late() { CLAIMS=$SCRATCH/claims2 under "$@"; }  # late NODE LABEL COMMAND...: with the second claims folder
sed 's|//t:second|//t:late|' "$SCRATCH/plan.json" >"$SCRATCH/plan2.json" && mv "$SCRATCH/plan2.json" "$SCRATCH/plan.json"
# //t:first holds GPU 0 until 3 s after //t:late's launch claimed its unit (a fixed 3 s from
# //t:first's start left a loaded machine's //t:late, launched late, under the 2 s).
(late n0 //t:first sh -c "touch '$SCRATCH/first2.started'; until [ -e '$SCRATCH/release2' ] || [ ! -d '$SCRATCH' ]; do sleep 0.1; done") &
first=$!
wait_for '[ -e "$SCRATCH/first2.started" ]'
(TEST_TIMEOUT=7 late n0 //t:late sh -c "echo n0 >>'$SCRATCH/late.log'; touch '$SCRATCH/late.started'; sleep 30") \
  2>"$SCRATCH/late-n0.err" &
late_pid=$!
wait_for '[ "$(ls "$SCRATCH/claims2" | grep -c "^[0-9a-f]*\.0$")" -ge 2 ]'  # both units claimed: //t:late launched
sleep 3
touch "$SCRATCH/release2"
wait_for '[ -e "$SCRATCH/late.started" ]'  # its log written first: the SIGTERM may come at once
kill -TERM "$late_pid"  # Bazel's SIGTERM, 3 s after it launched run-under, 7 - 5 s being Bazel's
wait "$late_pid" && fail "//t:late ended 0 after SIGTERM"
wait "$first" || fail "//t:first failed"
(late n1 //t:late sh -c "echo n1 >>'$SCRATCH/late.log'") 2>"$SCRATCH/late-n1.err" || true
[ "$(cat "$SCRATCH/late.log")" = n0 ] ||
  fail "//t:late ran $(tr '\n' ' ' <"$SCRATCH/late.log")(n1 said: $(cat "$SCRATCH/late-n1.err"))"
grep -q "//t:late.* ran on node n0 (exit 143)" "$SCRATCH/late-n1.err" ||
  fail "n1 did not end //t:late as n0's timeout: $(cat "$SCRATCH/late-n1.err")"
echo "claims_wait_test: ok"
