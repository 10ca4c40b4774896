#!/usr/bin/env bash
# exec --claims --fleet's looks at the claims directory, counted (lstat calls there, by
# test/faults/count_lookups.cpp, preloaded): a node alone dispatching 200 short units looks at a
# few of a unit's files a unit it runs, however many units the plan has. Each look is a round trip
# to an NFS server. Before, each unit ended looked again at every unit not yet run here, two files
# each: 200 units took 48,266 looks, and a 147,000-unit plan 58,826 file-system calls a unit.
source test/integration/lib.sh
requires python3 jq
GPUPLAN=$(realpath "$GPUPLAN")
COUNT=${GPUPLAN_BUILD_DIR:-$(dirname "$GPUPLAN")}/libcount_lookups.so
[ -e "$COUNT" ] || fail "$COUNT is missing: it is built with gpuplan_tests"
l4_fleet n0 n1
for i in $(seq 0 199); do echo "//t:u$i n0 $((i % 2)) $((i / 2))"; done | one_gpu_plan
mkdir "$SCRATCH/locks"
status=0
LD_PRELOAD=$COUNT GPUPLAN_COUNT_LOOKUPS_IN=$SCRATCH/claims GPUPLAN_COUNT_LOOKUPS_TO=$SCRATCH/lookups \
  "$GPUPLAN" exec "$SCRATCH/plan.json" --node n0 --claims "$SCRATCH/claims" --fleet "$SCRATCH/fleet.yaml" \
  --lock-dir "$SCRATCH/locks" --command true --json "$SCRATCH/exec.json" >"$SCRATCH/out" 2>"$SCRATCH/err" ||
  status=$?
[ "$status" = 0 ] || fail "exec: exit $status: $(cat "$SCRATCH/err")"
[ "$(jq '[.units[] | select(.outcome == "passed")] | length' "$SCRATCH/exec.json")" = 200 ] ||
  fail "not every unit passed: $(cat "$SCRATCH/out")"
[ "$(wc -l <"$SCRATCH/lookups")" = 1 ] || fail "the counts: $(cat "$SCRATCH/lookups" 2>&1)"
lookups=$(cat "$SCRATCH/lookups")
# A unit's claim is 5 looks (the done mark and the first claim number, twice: to choose it and to
# claim it; the done mark after the link), and no other node holds any. The loop's first pass asks
# whether other nodes hold units: a pending() that looks at every unit not run here, as before,
# made that one ask look at all 200 units' files again (1,398 in all, with the asks of the loop
# already once a retry interval; 48,266 asked on every pass).
[ "$lookups" -le $((200 * 6)) ] ||
  fail "exec looked at the claims directory's files $lookups times for 200 units (at most 6 a unit)"
echo "claims_scale_test: $lookups looks for 200 units"
