#!/usr/bin/env bash
# Dynamic execution: three `gpuplan exec` processes on this machine, each playing one node of
# the plan, share one claims directory. Every unit runs to its end exactly once; a node whose
# units run long hands its later units to idle nodes; a node killed mid-run leaves its units
# to the others once its lease expires; --static runs exactly the planned list. Sleeps are
# scaled down (tenths of a second); the lease is the shortest allowed, ten seconds.
source test/integration/lib.sh
requires jq python3
GPUPLAN=$(realpath "$GPUPLAN")
l4_fleet n0 n1 n2
# 6 one-GPU units a node, each planned for 1 s: 3 in a row on each GPU.
for n in 0 1 2; do
  for i in 0 1 2 3 4 5; do echo "//t:n${n}_$i n$n $((i % 2)) $((i / 2))"; done
done | one_gpu_plan
# unit.sh NODE UNIT GPUS: logs its start and its end; n0's units run SLOW seconds in a child
# process (logged too), the others 0.1.
cat >"$SCRATCH/unit.sh" <<'SH'
#!/usr/bin/env bash
echo "start $2 $1 $$" >>"$LOG"
case $1 in n0) sleep "$SLOW" & echo "child $2 $1 $!" >>"$LOG"; wait $! ;; *) sleep 0.1 ;; esac
echo "done $2 $1" >>"$LOG"
SH
run_node() {  # run_node NODE ARGS...: one node's exec in the background
  local node=$1; shift
  "$GPUPLAN" exec "$SCRATCH/plan.json" --node "$node" --results "$SCRATCH/results.csv" \
    --command "bash $SCRATCH/unit.sh $node {unit} {gpus}" "$@" >"$SCRATCH/$node.out" 2>&1 &
}
once_each() {  # every unit of the plan ended exactly once, by the log
  /usr/bin/python3 - "$SCRATCH/plan.json" "$LOG" <<'PY'
import collections, json, sys
units = [a["unit"] for a in json.load(open(sys.argv[1]))["assignments"]]
done = collections.Counter(line.split()[1] for line in open(sys.argv[2]) if line.startswith("done "))
assert sorted(done) == sorted(units) and set(done.values()) == {1}, done
PY
}

# 1. All alive: n0 is slow, so n1 and n2 run some of n0's units; the results say where.
export LOG=$SCRATCH/log1 SLOW=0.6
: >"$LOG"
for node in n0 n1 n2; do
  run_node "$node" --claims "$SCRATCH/claims1" --lease 10 --fleet "$SCRATCH/fleet.yaml" --json "$SCRATCH/$node.json"
done
wait || { cat "$SCRATCH"/n?.out; fail "an exec failed"; }
once_each || fail "not every unit ran exactly once"
moved=$(awk -F, '$1 ~ /n0_/ && $5 != "n0"' "$SCRATCH/results.csv" | wc -l)
[ "$moved" -ge 1 ] || { cat "$SCRATCH/results.csv"; fail "no unit of the slow node ran elsewhere"; }
grep -q 'ran elsewhere' "$SCRATCH/n0.out" || fail "n0's table does not say which units ran elsewhere"
/usr/bin/python3 - "$SCRATCH/n0.json" "$SCRATCH/results.csv" <<'PY' || fail "n0's --json does not say where its units ran"
import csv, json, sys
ran_on = {r["label"]: r["node"] for r in csv.DictReader(open(sys.argv[2]))}
units = json.load(open(sys.argv[1]))["units"]
assert len({u["unit"] for u in units}) == len(units), units
assert len([u for u in units if u["unit"].startswith("//t:n0_")]) == 6, units
for u in units:
    assert u["node"] == ran_on[u["unit"]], (u, ran_on[u["unit"]])
PY
/usr/bin/python3 - "$SCRATCH/plan.json" "$SCRATCH"/n[12].json <<'PY' || fail "a node's --json misnames the planned node of a unit it took"
import json, sys
planned = {a["unit"]: a["node"] for a in json.load(open(sys.argv[1]))["assignments"]}
for path in sys.argv[2:]:
    for u in json.load(open(path))["units"]:
        assert u["planned_node"] == planned[u["unit"]], (path, u)
PY
[ "$(wc -l <"$SCRATCH/results.csv")" = 19 ] || fail "expected 18 results records and a header"

# 1a. A plan made again, handed run 1's claims directory: refused (exit 2), nothing run. Its units
# have the same ids, and those marked done there would have been passed over, exit 0.
jq '.assignments[0].duration_s = 2' "$SCRATCH/plan.json" >"$SCRATCH/plan2.json"
lines=$(wc -l <"$LOG")
refuses "holds the claims of another plan ($SCRATCH/plan.json" \
  exec "$SCRATCH/plan2.json" --node n0 --claims "$SCRATCH/claims1" --command "bash $SCRATCH/unit.sh n0 {unit} {gpus}"
[ "$(wc -l <"$LOG")" = "$lines" ] || fail "a unit ran with another plan's claims directory"
# The same plan with another --lease: it judges and renews by the directory's (a node whose lease
# was shorter than another's renewal took that node's running units).
"$GPUPLAN" exec "$SCRATCH/plan.json" --node n0 --claims "$SCRATCH/claims1" --lease 30 \
  --command "bash $SCRATCH/unit.sh n0 {unit} {gpus}" >/dev/null 2>"$SCRATCH/lease.err" || true
grep -q "warning: this node's lease (30 s, --lease) is not the 10 s of the claims directory's first node" "$SCRATCH/lease.err" ||
  fail "no word of another --lease: $(cat "$SCRATCH/lease.err")"

# 2. n0 is killed mid-run: its units' processes, children too, end with it (none runs on
# beside the retry), and the units it held are run by the others after its lease expired.
export LOG=$SCRATCH/log2 SLOW=30
: >"$LOG"
for node in n0 n1 n2; do run_node "$node" --claims "$SCRATCH/claims2" --lease 10 --fleet "$SCRATCH/fleet.yaml"; done
pids=$(jobs -p)
n0=$(echo "$pids" | head -1)
for _ in $(seq 600); do [ "$(grep -c ' n0 ' "$LOG")" -ge 2 ] && break; sleep 0.1; done
kill -KILL "$n0"
for pid in $(echo "$pids" | tail -n +2); do
  timeout 30 tail --pid="$pid" -f /dev/null || fail "a live node did not finish"
  wait "$pid" || { cat "$SCRATCH"/n1.out "$SCRATCH"/n2.out; fail "a live node's exec failed"; }
done
wait "$n0" 2>/dev/null || true
left=$(grep -E '^(start|child) .* n0 ' "$LOG" | while read -r _ _ _ pid; do
  if [ -e "/proc/$pid" ] && [ "$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null)" != Z ]; then
    kill "$pid" 2>/dev/null || true
    echo "$pid"
  fi
done)
[ -z "$left" ] || fail "processes of n0's units outlived its SIGKILL: $left"
once_each || fail "after n0 was killed, not every unit ended exactly once"

# 3. --static: exactly the planned list, however slow the others are.
export LOG=$SCRATCH/log3 SLOW=0.3
: >"$LOG"
for node in n0 n1 n2; do run_node "$node" --claims "$SCRATCH/claims3" --static; done
wait || fail "a static exec failed"
once_each || fail "static: not every unit ran exactly once"
/usr/bin/python3 -c "
import sys
for line in open('$LOG'):
    kind, unit, node = line.split()[:3]
    assert unit.startswith('//t:' + node + '_'), line
" || fail "--static ran a unit on another node"
# 3a. A --static exec killed mid-run and started again: the units its dead self held are run once
# their lease expires (before, the new exec gave them up at once as held elsewhere: exit 3).
export LOG=$SCRATCH/log4 SLOW=30
: >"$LOG"
run_node n0 --claims "$SCRATCH/claims-restart" --lease 10 --static
n0=$!
for _ in $(seq 600); do [ "$(grep -c '^start ' "$LOG")" -ge 2 ] && break; sleep 0.1; done
kill -KILL "$n0"
wait "$n0" 2>/dev/null || true
killed=$(grep -c '^start ' "$LOG")
[ "$killed" -ge 1 ] || fail "no unit had started when n0 was killed"
awk '$1 == "child" { print $4 }' "$LOG" | xargs -r kill 2>/dev/null || true  # should be gone with it
export SLOW=0.1
timeout 60 "$GPUPLAN" exec "$SCRATCH/plan.json" --node n0 --claims "$SCRATCH/claims-restart" --lease 10 --static \
  --command "bash $SCRATCH/unit.sh n0 {unit} {gpus}" >"$SCRATCH/n0-again.out" 2>&1 ||
  fail "the static exec started again failed: $(cat "$SCRATCH/n0-again.out")"
for i in 0 1 2 3 4 5; do
  [ "$(grep -c "^done //t:n0_$i " "$LOG")" = 1 ] || fail "//t:n0_$i did not end exactly once: $(cat "$LOG")"
done

# 5. The real executors against the simulation: durations drawn log-normal (sigma 0.5, a fixed
# seed), the same draws handed to `gpuplan simulate --history` (one sample a unit: its draw) and
# slept, scaled by 1.5, by the units of three real execs, once static and once dynamic. The
# simulation says the dynamic executor ends well before the static one (5.96 s against 3.81 s
# for this seed); the real processes must show the same ordering, every unit run exactly once.
# (Scaled by 0.8, the start-up and polling of ASan-built processes on a loaded 2-core machine,
# a second or two, once swapped them.)
/usr/bin/python3 - "$SCRATCH/draws.csv" <<'PY'
import math, random, sys
r = random.Random(2)
with open(sys.argv[1], "w") as f:
    f.write("label,seconds\n")
    for n in range(3):
        for i in range(6):
            f.write(f"//t:n{n}_{i},{math.exp(r.gauss(0, 0.5)):.3f}\n")
PY
"$GPUPLAN" simulate "$SCRATCH/plan.json" --fleet "$SCRATCH/fleet.yaml" --history "$SCRATCH/draws.csv" --runs 1 \
  --json >"$SCRATCH/sim.json" 2>/dev/null || fail "simulate failed"
jq -e '.dynamic.median < 0.8 * .static.median' "$SCRATCH/sim.json" >/dev/null ||
  fail "the simulation no longer separates the executors: $(cat "$SCRATCH/sim.json")"
cat >"$SCRATCH/drawn.sh" <<'SH'
#!/usr/bin/env bash
echo "start $2 $1" >>"$LOG"
sleep "$(awk -F, -v u="$2" '$1 == u { print $2 * 1.5 }' "$DRAWS")"
echo "done $2 $1" >>"$LOG"
SH
export DRAWS=$SCRATCH/draws.csv
real_run() {  # real_run NAME ARGS...: the three execs at once; prints their wall time
  export LOG=$SCRATCH/log-$1
  : >"$LOG"
  local name=$1 begin end; shift
  begin=$EPOCHREALTIME
  for node in n0 n1 n2; do
    "$GPUPLAN" exec "$SCRATCH/plan.json" --node "$node" --command "bash $SCRATCH/drawn.sh $node {unit}" \
      --claims "$SCRATCH/claims-$name" --lease 10 "$@" >"$SCRATCH/$name-$node.out" 2>&1 &
  done
  wait || fail "a $name exec failed"
  end=$EPOCHREALTIME
  once_each || fail "$name: not every unit ran exactly once"
  awk -v a="$begin" -v b="$end" 'BEGIN { printf "%.2f", b - a }'
}
static_s=$(real_run static --static)
dynamic_s=$(real_run dynamic --fleet "$SCRATCH/fleet.yaml")
echo "real executors, durations x1.5: static ${static_s}s, dynamic ${dynamic_s}s; simulated: $(jq -c '[.static.median, .dynamic.median]' "$SCRATCH/sim.json")"
awk -v d="$dynamic_s" -v s="$static_s" 'BEGIN { exit !(d < s) }' ||
  fail "the real dynamic executors ($dynamic_s s) did not finish before the static ones ($static_s s)"

# 4. run-under --claims (dynamic execution inside bazel test): a test planned on n0 runs on n1
# when n1 claims it first (with --fleet), n0 then exits as it ended there without running it
# again; a held test is waited for; without --fleet a test planned elsewhere is refused.
C4=$SCRATCH/claims4
install -d -m 0700 "$C4" "$SCRATCH/claims4b"  # run-under never creates its claims directory
under() {  # under NODE LABEL EXIT [SLEEP] [ARGS...]: one run-under as Bazel would start it
  local node=$1 label=$2 code=$3 pause=${4:-0}; shift 4 2>/dev/null || shift 3
  install -d -m 0700 "$SCRATCH/locks-$node"  # run-under never creates its lock directory
  touch "$SCRATCH/under.csv"                  # nor its results file
  TEST_TARGET=$label "$GPUPLAN" run-under --plan "$SCRATCH/plan.json" --node "$node" --claims "$C4" --lease 10 \
    --lock-dir "$SCRATCH/locks-$node" --results "$SCRATCH/under.csv" "$@" \
    bash -c "echo $label $node >>$SCRATCH/under.log; sleep $pause; exit $code"
}
status=0; under n1 //t:n0_0 0 0 --fleet "$SCRATCH/fleet.yaml" 2>"$SCRATCH/u1.err" || status=$?
[ "$status" = 0 ] || fail "n1 did not take n0's test: $(cat "$SCRATCH/u1.err")"
grep -q "n1 takes it" "$SCRATCH/u1.err" || fail "no word of the takeover: $(cat "$SCRATCH/u1.err")"
status=0; under n0 //t:n0_0 0 2>"$SCRATCH/u0.err" || status=$?
[ "$status" = 0 ] && grep -q "ran on node n1" "$SCRATCH/u0.err" || fail "n0 ran it again: $(cat "$SCRATCH/u0.err")"
status=0; under n1 //t:n0_2 7 0 --fleet "$SCRATCH/fleet.yaml" 2>/dev/null || status=$?
[ "$status" = 7 ] || fail "the failing test: exit $status on n1"
status=0; under n0 //t:n0_2 0 2>/dev/null || status=$?
[ "$status" = 7 ] || fail "n0 does not report the failure seen on n1: exit $status"
# n0's test runs until n1 says it waits: with a fixed 0.3 s head start and a 1 s test, a loaded
# machine's n1 could claim the test first, or start after it ended.
under n0 //t:n0_3 0 "0; until [ -e $SCRATCH/n0_3.end ] || [ ! -d $SCRATCH ]; do sleep 0.1; done" 2>/dev/null &
n0_3=$!
for _ in $(seq 600); do grep -q "^//t:n0_3 n0" "$SCRATCH/under.log" && break; sleep 0.1; done
under n1 //t:n0_3 0 0 --fleet "$SCRATCH/fleet.yaml" 2>"$SCRATCH/u3.err" &
n1_3=$!
for _ in $(seq 600); do grep -q "waiting for it to end" "$SCRATCH/u3.err" && break; sleep 0.1; done
touch "$SCRATCH/n0_3.end"
wait "$n1_3" || fail "n1 waiting for n0 failed: $(cat "$SCRATCH/u3.err")"
wait "$n0_3" || fail "n0's //t:n0_3 failed"
grep -q "waiting for it to end" "$SCRATCH/u3.err" || fail "n1 did not wait: $(cat "$SCRATCH/u3.err")"
status=0; under n2 //t:n0_1 0 2>"$SCRATCH/u2.err" || status=$?
[ "$status" = 2 ] && grep -q "without --fleet" "$SCRATCH/u2.err" || fail "n2 without --fleet: exit $status $(cat "$SCRATCH/u2.err")"
# A test planned elsewhere is checked against this machine before it is claimed: n1, whose GPUs
# are in MIG mode, leaves //t:n0_5 to n0 (before, it claimed it and was refused, and n0 then
# failed it too, without running it).
status=0; GPUPLAN_FAKE_NVML_MIG=0,1 under n1 //t:n0_5 0 0 --fleet "$SCRATCH/fleet.yaml" 2>"$SCRATCH/mig.err" || status=$?
[ "$status" = 2 ] && grep -q "n1 cannot take it: .*MIG mode" "$SCRATCH/mig.err" ||
  fail "n1 took a test its machine cannot run: exit $status $(cat "$SCRATCH/mig.err")"
under n0 //t:n0_5 0 2>"$SCRATCH/mig0.err" || fail "n0 did not run //t:n0_5 after n1 left it: $(cat "$SCRATCH/mig0.err")"
# And a test refused on its own node (n0's GPUs in MIG mode, or lost) is refused before it is
# claimed: n1 with --fleet then runs it (before, n0 marked it done with its refusal, and n1 said
# "ran on node n0 (exit 2); not again on n1" and failed it too).
status=0; GPUPLAN_FAKE_NVML_MIG=0,1 under n0 //t:n0_1 0 2>"$SCRATCH/own-mig.err" || status=$?
[ "$status" = 2 ] && grep -q "refusing to run //t:n0_1 on node n0: it is given GPU ., which is in MIG mode" "$SCRATCH/own-mig.err" ||
  fail "n0 with its GPUs in MIG mode: exit $status $(cat "$SCRATCH/own-mig.err")"
status=0; under n1 //t:n0_1 0 0 --fleet "$SCRATCH/fleet.yaml" 2>"$SCRATCH/own-mig1.err" || status=$?
[ "$status" = 0 ] && grep -q "n1 takes it" "$SCRATCH/own-mig1.err" ||
  fail "n1 did not take the test n0 refused: exit $status $(cat "$SCRATCH/own-mig1.err")"
for label in //t:n0_0 //t:n0_1 //t:n0_2 //t:n0_3 //t:n0_5; do
  [ "$(grep -c "^$label " "$SCRATCH/under.log")" = 1 ] || fail "$label did not run exactly once: $(cat "$SCRATCH/under.log")"
done
awk -F, '$1 == "//t:n0_0" && $5 == "n1"' "$SCRATCH/under.csv" | grep -q . || fail "the record does not say n1 ran it"
# 4a. Bazel's retries and runs. A flaky test's second attempt on a node is an attempt of its own,
# run once across the nodes: n0, whose first attempt ended as n1's run did (7), runs its retry;
# n1's retry then ends as n0's did, without running. Each --runs_per_test run (TEST_RANDOM_SEED)
# is a unit too.
status=0; under n0 //t:n0_2 0 2>"$SCRATCH/retry0.err" || status=$?
[ "$status" = 0 ] || fail "n0's retry of the failed test: exit $status $(cat "$SCRATCH/retry0.err")"
status=0; under n1 //t:n0_2 5 0 --fleet "$SCRATCH/fleet.yaml" 2>"$SCRATCH/retry1.err" || status=$?
[ "$status" = 0 ] && grep -q "//t:n0_2#attempt-2 ran on node n0 (exit 0)" "$SCRATCH/retry1.err" ||
  fail "n1's retry: exit $status $(cat "$SCRATCH/retry1.err")"
[ "$(grep -c "^//t:n0_2 " "$SCRATCH/under.log")" = 2 ] || fail "two attempts did not run twice: $(cat "$SCRATCH/under.log")"
TEST_RANDOM_SEED=2 under n0 //t:n0_0 0 2>/dev/null || fail "run 2 of //t:n0_0 failed"
status=0; TEST_RANDOM_SEED=2 under n1 //t:n0_0 3 0 --fleet "$SCRATCH/fleet.yaml" 2>/dev/null || status=$?
[ "$status" = 0 ] || fail "n1's run 2 of //t:n0_0 ran again or did not report n0's: exit $status"
[ "$(grep -c "^//t:n0_0 " "$SCRATCH/under.log")" = 2 ] || fail "run 2 did not run once: $(cat "$SCRATCH/under.log")"
# 4b. A unit that holds the node holds the GPUs the plan leaves idle there too: with a fleet of
# three GPUs a node (the plan uses two), a test taken from another node finds GPU 2 locked while
# an exclusive test runs, and waits for it to end rather than run beside it (before, it was
# refused: the test failed on this node while its own node would have run it).
sed 's/count: 2/count: 3/' "$SCRATCH/fleet.yaml" >"$SCRATCH/fleet3.yaml"
/usr/bin/python3 - "$SCRATCH/plan.json" "$SCRATCH/excl-plan.json" <<'PY'
import json, sys
plan = json.load(open(sys.argv[1]))
for a in plan["assignments"]:
    if a["unit"] == "//t:n0_4":
        a["requirements"] = dict(a["requirements"], exclusive=True)
json.dump(plan, open(sys.argv[2], "w"), indent=1)
PY
install -d -m 0700 "$SCRATCH/locks4b"
held() {  # held LABEL NAME: run-under on n0 with the three-GPU fleet; its test runs until 4b-go-NAME exists
  TEST_TARGET=$1 "$GPUPLAN" run-under --plan "$SCRATCH/excl-plan.json" --node n0 --claims "$SCRATCH/claims4b" \
    --lease 10 --lock-dir "$SCRATCH/locks4b" --fleet "$SCRATCH/fleet3.yaml" \
    bash -c "echo \$CUDA_VISIBLE_DEVICES >$SCRATCH/4b-$2; until [ -e $SCRATCH/4b-go-$2 ] || [ ! -d $SCRATCH ]; do sleep 0.05; done
             date +%s.%N >$SCRATCH/4b-end-$2"
}
# The exclusive test runs until the other says it waits (it ran 1.5 s, which a loaded machine's
# second run-under could take just to start).
held //t:n0_4 excl 2>"$SCRATCH/4b-excl.err" &
excl=$!
for _ in $(seq 600); do [ -e "$SCRATCH/4b-excl" ] && break; sleep 0.1; done  # the exclusive test runs
touch "$SCRATCH/4b-go-other"
status=0; held //t:n1_5 other 2>"$SCRATCH/4b.err" &
other=$!
for _ in $(seq 600); do grep -q "waiting" "$SCRATCH/4b.err" && break; sleep 0.1; done
touch "$SCRATCH/4b-go-excl"
wait "$other" || status=$?
wait "$excl" || fail "the exclusive test failed: $(cat "$SCRATCH/4b-excl.err")"
[ "$status" = 0 ] && grep -q "has not the GPUs it needs free now: waiting" "$SCRATCH/4b.err" &&
  grep -q "n0 takes it" "$SCRATCH/4b.err" ||
  fail "the test planned on n1 did not wait for n0's GPUs: exit $status $(cat "$SCRATCH/4b.err")"
awk -v a="$(cat "$SCRATCH/4b-end-excl")" -v b="$(cat "$SCRATCH/4b-end-other")" 'BEGIN { exit !(b > a) }' ||
  fail "a test ran beside an exclusive one on GPU $(cat "$SCRATCH/4b-other")"
# A machine that could never run it (its GPUs in MIG mode) refuses it at once, not after
# waiting for this node's own tests to free GPUs it could not use.
install -d -m 0700 "$SCRATCH/claims4d"
# The GPUs stay locked until it has answered; the 30 s limit catches a wait (a limit of 2 s, with
# the locks taken after a fixed 0.3 s, could cut a loaded machine's refusal short, or not be waited).
flock "$SCRATCH/locks4b/gpu-0.lock" flock "$SCRATCH/locks4b/gpu-1.lock" flock "$SCRATCH/locks4b/gpu-2.lock" \
  sh -c "touch $SCRATCH/4d.locked; until [ -e $SCRATCH/4d.unlock ] || [ ! -d $SCRATCH ]; do sleep 0.1; done" &
for _ in $(seq 600); do [ -e "$SCRATCH/4d.locked" ] && break; sleep 0.1; done
status=0
GPUPLAN_FAKE_NVML_MIG=0,1,2 TEST_TARGET=//t:n1_5 timeout 30 "$GPUPLAN" run-under --plan "$SCRATCH/excl-plan.json" --node n0 \
  --claims "$SCRATCH/claims4d" --lease 10 --lock-dir "$SCRATCH/locks4b" --fleet "$SCRATCH/fleet3.yaml" true \
  2>"$SCRATCH/4d.err" || status=$?
touch "$SCRATCH/4d.unlock"; wait
[ "$status" = 2 ] && grep -q "n0 cannot take it: .*MIG mode" "$SCRATCH/4d.err" && ! grep -q "waiting" "$SCRATCH/4d.err" ||
  fail "a test this machine cannot run waited for GPUs: exit $status $(cat "$SCRATCH/4d.err")"
# A fleet whose node has fewer GPUs than the plan uses there is bad input, not a silent skip.
sed 's/count: 2/count: 1/' "$SCRATCH/fleet.yaml" >"$SCRATCH/fleet1.yaml"
TEST_TARGET=//t:n0_0 refuses "node n0 has no GPU 1 here" run-under --plan "$SCRATCH/plan.json" --node n0 \
  --lock-dir "$SCRATCH/locks4b" --fleet "$SCRATCH/fleet1.yaml" --claims "$SCRATCH/claims4c" true
# 6. export slurm --claims without --command would write jobs whose exec refuses at run time: exit 2 now.
refuses "needs --command" export slurm "$SCRATCH/plan.json" -o "$SCRATCH/slurm" --claims "$SCRATCH/c6"
echo PASS

# 6. Dynamic execution starts a node's longest planned unit first (as `simulate` replays it);
# --static keeps the plan's order.
/usr/bin/python3 - "$SCRATCH/plan.json" "$SCRATCH/order-plan.json" <<'PY'
import json, sys
plan = json.load(open(sys.argv[1]))
short, long_ = [dict(a) for a in plan["assignments"][:2]]
short.update(unit="//t:short", label="//t:short", gpus=[0], start_s=0, end_s=1, duration_s=1)
long_.update(unit="//t:long", label="//t:long", gpus=[0], start_s=1, end_s=4, duration_s=3)
plan["assignments"] = [short, long_]
plan["summary"].update(makespan_s=4, scheduled_units=2, gpu_units=2)
json.dump(plan, open(sys.argv[2], "w"), indent=1)
PY
for mode in dynamic static; do
  extra=(--fleet "$SCRATCH/fleet.yaml")
  [ "$mode" = static ] && extra=(--static)
  "$GPUPLAN" exec "$SCRATCH/order-plan.json" --node n0 --command "echo {unit} >>$SCRATCH/order-$mode" \
    --claims "$SCRATCH/claims-order-$mode" --lease 10 "${extra[@]}" >"$SCRATCH/order-$mode.out" 2>&1 ||
    { cat "$SCRATCH/order-$mode.out"; fail "the $mode exec of two units failed"; }
done
# The order exec started them in, from its progress lines: with two GPUs both start at once,
# and which unit's own first line is written first is the machine's choice.
first_started() { grep -m1 '\] start ' "$SCRATCH/order-$1.out" | grep -o '//t:[a-z]*'; }
[ "$(first_started dynamic)" = //t:long ] || fail "dynamic: the longest unit did not start first: $(cat "$SCRATCH/order-dynamic.out")"
[ "$(first_started static)" = //t:short ] || fail "static: the plan's order changed: $(cat "$SCRATCH/order-static.out")"

# 7. Dispatching (--fleet): an exclusive unit, wherever it runs, runs alone on its node; every
# unit runs once. Its node starts nothing beside it, and it waits for an empty node.
/usr/bin/python3 - "$SCRATCH/plan.json" "$SCRATCH/alone-plan.json" <<'PY'
import json, sys
plan = json.load(open(sys.argv[1]))
for a in plan["assignments"]:
    if a["unit"] in ("//t:n0_1", "//t:n1_4"):
        a["requirements"] = dict(a["requirements"], exclusive=True)
        a["end_s"] = a["start_s"] + 0.5  # the shortest: last in dispatch order, so it starts
        a["duration_s"] = 0.5             # mid-run, when some node has one GPU free
json.dump(plan, open(sys.argv[2], "w"), indent=1)
PY
export LOG=$SCRATCH/log7 SLOW=0.3
: >"$LOG"
for node in n0 n1 n2; do
  "$GPUPLAN" exec "$SCRATCH/alone-plan.json" --node "$node" --command "bash $SCRATCH/unit.sh $node {unit} {gpus}" \
    --claims "$SCRATCH/claims7" --lease 10 --fleet "$SCRATCH/fleet.yaml" >"$SCRATCH/alone-$node.out" 2>&1 &
done
wait || { cat "$SCRATCH"/alone-n?.out; fail "a dispatching exec failed"; }
once_each || fail "dispatching: not every unit ran exactly once"
/usr/bin/python3 - "$LOG" <<'PY' || fail "an exclusive unit ran beside another: $(cat "$LOG")"
import collections, sys
alone = {"//t:n0_1", "//t:n1_4"}
running = collections.defaultdict(set)
for line in open(sys.argv[1]):
    kind, unit, node = line.split()[:3]
    if kind == "start":
        assert not (running[node] & alone), line
        assert unit not in alone or not running[node], line
        running[node].add(unit)
    elif kind == "done":
        running[node].discard(unit)
PY

# 8. A node killed while it held units of another: n1, dispatching, took n0's first two units;
# n0 (no --fleet) finds them held, takes them over after the lease, and lists every unit once,
# where it really ran: table, --json totals, and no "ran elsewhere" for a unit no node ran.
# The same when n0 itself is killed and started again.
units_once() {  # units_once OUT JSON: exec's table and --json each list the 6 units once, all passed
  grep -q '^6 units: 6 passed$' "$1" || { cat "$1"; return 1; }
  ! grep -q 'ran elsewhere' "$1" || { cat "$1"; return 1; }
  jq -e '.totals.units == 6 and .totals.passed == 6 and (.units | length) == 6 and
         ([.units[].unit] | unique | length) == 6 and all(.units[]; .node == "n0")' "$2" >/dev/null ||
    { cat "$2"; return 1; }
}
for killed in n1 n0; do
  export LOG=$SCRATCH/log8-$killed SLOW=0.1
  : >"$LOG"
  "$GPUPLAN" exec "$SCRATCH/plan.json" --node "$killed" --claims "$SCRATCH/claims8-$killed" --lease 10 \
    --fleet "$SCRATCH/fleet.yaml" --command 'sleep 30' >"$SCRATCH/8-$killed.out" 2>&1 &
  holder=$!
  for _ in $(seq 600); do
    [ "$(ls "$SCRATCH/claims8-$killed" | grep -c '^[0-9a-f]*\.0$')" = 2 ] && break
    sleep 0.1
  done
  kill -KILL "$holder"
  wait "$holder" 2>/dev/null || true
  "$GPUPLAN" exec "$SCRATCH/plan.json" --node n0 --claims "$SCRATCH/claims8-$killed" --lease 10 \
    --json "$SCRATCH/8-$killed.json" --command "bash $SCRATCH/unit.sh n0 {unit} {gpus}" >"$SCRATCH/8-n0.out" 2>&1 ||
    { cat "$SCRATCH/8-n0.out"; fail "n0 after $killed was killed failed"; }
  units_once "$SCRATCH/8-n0.out" "$SCRATCH/8-$killed.json" ||
    fail "after $killed was killed holding n0's units, n0 did not list each unit once"
done

# 9. Two execs of one node on one claims directory: one runs the node's units, the other is
# refused (exit 2, naming the node, the directory and the holder) instead of handing the
# same GPUs out a second time. The units take 1.6 s, so that the first is still running when
# the second starts, however loaded the machine. Both have one --lock-dir, as two hosts' execs
# would have their own: without it, this machine's own lock of the node refuses the second first
# (exec_same_node_test.sh), and the claims directory's hold is what is tested here.
export LOG=$SCRATCH/log9 SLOW=0.1
: >"$LOG"
pids=()
for i in 1 2; do
  "$GPUPLAN" exec "$SCRATCH/plan.json" --node n2 --claims "$SCRATCH/claims9" --lease 10 --lock-dir "$SCRATCH/locks9" \
    --command "bash $SCRATCH/unit.sh n2 {unit} {gpus}; sleep 1.5" >"$SCRATCH/9-$i.out" 2>&1 &
  pids+=($!)
done
codes=""
for pid in "${pids[@]}"; do status=0; wait "$pid" || status=$?; codes="$codes $status"; done
[ "$(echo $codes | tr ' ' '\n' | sort | tr '\n' ' ')" = "0 2 " ] || { cat "$SCRATCH"/9-?.out; fail "two execs of n2: exit codes$codes"; }
grep -q "node n2 is already live in this claims directory: process [0-9]* on host" "$SCRATCH"/9-?.out ||
  fail "the refusal does not name the node and its holder: $(cat "$SCRATCH"/9-?.out)"
grep -q "claims9" "$SCRATCH"/9-?.out || fail "the refusal does not name the claims directory"
[ "$(grep -c '^done ' "$LOG")" = 6 ] || fail "n2's units did not each run once: $(cat "$LOG")"

# 10. The fleet says every node has compute capability 8.9 GPUs; this machine's NVML (the
# stand-in) says 8.0. n1's units need 8.9: n0, dispatching alone, runs its own and n2's units
# and leaves n1's to the others, saying why, rather than run them on GPUs that lack what they test.
export LOG=$SCRATCH/log10 SLOW=0.1
: >"$LOG"
jq '(.assignments[] | select(.node == "n1") | .requirements.compute_capability) = ">=8.9"' "$SCRATCH/plan.json" \
  >"$SCRATCH/cc.json"
GPUPLAN_FAKE_NVML_CC=8.0 "$GPUPLAN" exec "$SCRATCH/cc.json" --node n0 --claims "$SCRATCH/claims10" --lease 10 \
  --fleet "$SCRATCH/fleet.yaml" --command "bash $SCRATCH/unit.sh n0 {unit} {gpus}" >"$SCRATCH/10.out" 2>&1 ||
  { cat "$SCRATCH/10.out"; fail "n0 with n1's units beyond this machine failed"; }
[ "$(grep -c '^done //t:n[02]_' "$LOG")" = 12 ] && ! grep -q '^start //t:n1_' "$LOG" ||
  fail "n0 should run n0's and n2's units and none of n1's: $(cat "$LOG")"
grep -q "warning: node n0: --fleet says this node can run units planned elsewhere that this machine cannot" "$SCRATCH/10.out" &&
  grep -q "needs compute capability ≥ 8.9, and GPU 0 of this machine has 8.0 (NVML)" "$SCRATCH/10.out" &&
  grep -q "6 such units in all" "$SCRATCH/10.out" || fail "n0 does not say why it left n1's units: $(cat "$SCRATCH/10.out")"

# 11. A claims directory an earlier run left: its units are not run again. Before, exec said
# "ran elsewhere" and exited 0, even where that run had failed them. A unit another node failed
# fails this node's planned units too (exit 3, naming it), and this node's own marks from before
# this exec started (an old directory, or a retry) are a warning naming the directory.
export LOG=$SCRATCH/log11 SLOW=0.1
: >"$LOG"
rc=0; "$GPUPLAN" exec "$SCRATCH/plan.json" --node n1 --claims "$SCRATCH/claims11" --lease 10 --static \
  --command 'exit 1' >"$SCRATCH/11a.out" 2>&1 || rc=$?
[ "$rc" = 3 ] || fail "failing units: exit $rc"
sleep 0.05
cp "$SCRATCH/plan.json" "$SCRATCH/plan11.json"  # tomorrow's plan, the same directory
rc=0; "$GPUPLAN" exec "$SCRATCH/plan11.json" --node n1 --claims "$SCRATCH/claims11" --lease 10 --static \
  --command "bash $SCRATCH/unit.sh n1 {unit} {gpus}" >"$SCRATCH/11b.out" 2>&1 || rc=$?
[ "$rc" = 3 ] && grep -q "gpuplan exec: //t:n1_0 ran on n1 and failed (exit 1)" "$SCRATCH/11b.out" &&
  grep -q "warning: 6 units of n1 had been marked done in $SCRATCH/claims11 by n1 before this exec started" \
    "$SCRATCH/11b.out" || fail "an earlier run's claims: exit $rc, $(cat "$SCRATCH/11b.out")"
[ ! -s "$LOG" ] || fail "units of an earlier run ran again: $(cat "$LOG")"
