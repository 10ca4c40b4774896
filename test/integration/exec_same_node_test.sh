#!/usr/bin/env bash
# Two execs of one node on one machine without --lock-dir (a requeued job, or a replaced pod,
# started while its predecessor still ends its units; two runs' execs, each with its own claims
# directory): nothing else keeps them apart,
# and before, each ran every unit of the node, two on a GPU at once. The second is refused, exit 2
# before any unit runs, naming the first exec's process. With the same --lock-dir (two checkouts'
# jobs sharing the GPUs one unit at a time) the second runs, and once the first has ended a new
# exec of the node runs. A few seconds.
source test/integration/lib.sh
requires python3
GPUPLAN=$(realpath "$GPUPLAN")
printf '%s\n' "//t:a n0 0 0" "//t:b n0 1 0" | one_gpu_plan
# A node name no other test uses: the lock is in the default lock directory, shared by this user.
node=same-node-$$-$RANDOM
sed -i "s/\"n0\"/\"$node\"/g" "$SCRATCH/plan.json"
lock=/tmp/gpuplan-locks-$(id -u)/exec-$(python3 -c '
import sys
h = 14695981039346656037
for c in sys.argv[1].encode(): h = ((h ^ c) * 1099511628211) % 2**64
print(f"{h:016x}.lock")' "$node")
cat >"$SCRATCH/unit.sh" <<SH
#!/bin/sh
echo "\$1 \$2" >>"$SCRATCH/ran.log"
[ "\$2" != first ] || [ "\$1" != //t:a ] || { touch "$SCRATCH/a.started"; while [ ! -e "$SCRATCH/release" ]; do sleep 0.1; done; }
SH
chmod +x "$SCRATCH/unit.sh"
exec_of() {  # exec_of NAME: in $exec, the exec of the node whose units are noted as NAME's
  exec=("$GPUPLAN" exec "$SCRATCH/plan.json" --node "$node" --command "$SCRATCH/unit.sh {label} $1")
}
run_exec() { exec_of "$1"; shift; "${exec[@]}" "$@"; }  # run_exec NAME [OPTIONS...]
exec_of first
"${exec[@]}" >"$SCRATCH/first.out" 2>&1 &  # a simple command: $! is the exec's own process
first=$!
trap 'touch "$SCRATCH/release"; wait "$first" 2>/dev/null; rm -rf "$SCRATCH" "$lock"' EXIT
for _ in $(seq 600); do [ -e "$SCRATCH/a.started" ] && break; sleep 0.1; done  # 60 s: a loaded CI machine
[ -e "$SCRATCH/a.started" ] || fail "the first exec's unit did not start: $(cat "$SCRATCH/first.out")"

status=0; run_exec second --json "$SCRATCH/second.json" >"$SCRATCH/second.out" 2>&1 || status=$?
[ "$status" = 2 ] || fail "a second exec of $node exited $status, not 2: $(cat "$SCRATCH/second.out")"
grep -q "$lock: node $node is already run on this machine by another gpuplan exec (process $first on host " "$SCRATCH/second.out" ||
  fail "the refusal does not name the first exec's process ($first): $(cat "$SCRATCH/second.out")"
grep -q "give both the same --lock-dir" "$SCRATCH/second.out" || fail "the refusal says not what to do: $(cat "$SCRATCH/second.out")"
grep -q second "$SCRATCH/ran.log" && fail "the second exec ran units: $(cat "$SCRATCH/ran.log")"
grep -q '"refused": "[^"]*is already run on this machine' "$SCRATCH/second.json" ||
  fail "the second exec's --json does not say why it ran nothing: $(cat "$SCRATCH/second.json")"

# Nor does a claims directory of its own: it holds the node in its own run only (two runs of
# two plans, say two pipelines' execs of the node on one host).
status=0; run_exec second --claims "$SCRATCH/claims-of-another-run" >"$SCRATCH/second.out" 2>&1 || status=$?
[ "$status" = 2 ] && grep -q "is already run on this machine by another gpuplan exec (process $first " "$SCRATCH/second.out" ||
  fail "a second exec of $node with a claims directory of its own exited $status: $(cat "$SCRATCH/second.out")"
grep -q second "$SCRATCH/ran.log" && fail "the second exec with --claims ran units: $(cat "$SCRATCH/ran.log")"

touch "$SCRATCH/release"
wait "$first" || fail "the first exec failed: $(cat "$SCRATCH/first.out")"
# An ended exec's words go with it: the next exec to take the lock may not have written its own
# when a second reads them, which then named the ended one.
[ -s "$lock" ] && fail "the ended exec is still named in $lock: $(cat "$lock")"
run_exec third >"$SCRATCH/third.out" 2>&1 || fail "an exec of $node after the first ended failed: $(cat "$SCRATCH/third.out")"
[ "$(grep -c third "$SCRATCH/ran.log")" = 2 ] || fail "the third exec ran: $(cat "$SCRATCH/ran.log")"

# With the same --lock-dir both run: each GPU goes to one unit at a time.
rm -f "$SCRATCH/release" "$SCRATCH/a.started"
exec_of first
"${exec[@]}" --lock-dir "$SCRATCH/locks" >"$SCRATCH/first.out" 2>&1 &
first=$!
for _ in $(seq 600); do [ -e "$SCRATCH/a.started" ] && break; sleep 0.1; done  # 60 s: a loaded CI machine
[ -e "$SCRATCH/a.started" ] || fail "the first exec's unit did not start: $(cat "$SCRATCH/first.out")"
( sleep 1; touch "$SCRATCH/release" ) &
run_exec fourth --lock-dir "$SCRATCH/locks" >"$SCRATCH/fourth.out" 2>&1 ||
  fail "a second exec of $node with the same --lock-dir was refused: $(cat "$SCRATCH/fourth.out")"
wait "$first" || fail "the first exec failed: $(cat "$SCRATCH/first.out")"
[ "$(grep -c fourth "$SCRATCH/ran.log")" = 2 ] || fail "the exec beside it ran: $(cat "$SCRATCH/ran.log")"
echo "exec same node: ok"
