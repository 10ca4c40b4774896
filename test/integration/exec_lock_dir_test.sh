#!/usr/bin/env bash
# exec's default bazel test: its launches read their node's name from LOCK_DIR/node. Two nodes
# of a plan tried on one machine share the default lock directory: the second exec is refused
# (exit 2, before its bazel test starts) rather than rename the node under the first one's tests,
# which then ran as the second node's. Another exec of the same node (another checkout's CI job)
# shares the directory, and once the first has ended another node may use it. A few seconds.
source test/integration/lib.sh
requires python3
GPUPLAN=$(realpath "$GPUPLAN")
l4_fleet n0 n1
printf '%s\n' "//t:a n0 0 0" "//t:b n1 0 0" | one_gpu_plan
# The stand-in for bazel notes which node's labels it was given; n0's first waits to be released.
mkdir -p "$SCRATCH/bin"
cat >"$SCRATCH/bin/bazel" <<STUB
#!/bin/bash
echo "\${@: -1}" >>"$SCRATCH/ran"
[ "\${@: -1}" != //t:a ] || [ -e "$SCRATCH/a.started" ] || { touch "$SCRATCH/a.started"; while [ ! -e "$SCRATCH/release" ]; do sleep 0.1; done; }
STUB
chmod +x "$SCRATCH/bin/bazel"
run_exec() {  # run_exec NODE: exec's default command, with the lock directory all of them share
  PATH=$SCRATCH/bin:$PATH "$GPUPLAN" exec "$SCRATCH/plan.json" --node "$1" --lock-dir "$SCRATCH/locks"
}
run_exec n0 >"$SCRATCH/n0.out" 2>&1 &
first=$!
trap 'touch "$SCRATCH/release"; wait "$first" 2>/dev/null; rm -rf "$SCRATCH"' EXIT
for _ in $(seq 100); do [ -e "$SCRATCH/a.started" ] && break; sleep 0.1; done
[ -e "$SCRATCH/a.started" ] || fail "n0's bazel test did not start: $(cat "$SCRATCH/n0.out")"

status=0; run_exec n1 >"$SCRATCH/n1.out" 2>&1 || status=$?
[ "$status" = 2 ] || fail "a second node's exec on n0's lock directory exited $status, not 2: $(cat "$SCRATCH/n1.out")"
grep -q "another gpuplan exec, of node n0, runs its tests with the lock directory $SCRATCH/locks" "$SCRATCH/n1.out" ||
  fail "the refusal does not name the other node and the directory: $(cat "$SCRATCH/n1.out")"
[ "$(cat "$SCRATCH/locks/node")" = n0 ] || fail "n0's launches would now read node $(cat "$SCRATCH/locks/node")"
grep -q //t:b "$SCRATCH/ran" && fail "n1's bazel test ran"
# The same node again shares it.
run_exec n0 >"$SCRATCH/n0-again.out" 2>&1 || fail "a second exec of n0 was refused: $(cat "$SCRATCH/n0-again.out")"

touch "$SCRATCH/release"
wait "$first" || fail "n0's exec failed: $(cat "$SCRATCH/n0.out")"
run_exec n1 >"$SCRATCH/n1.out" 2>&1 || fail "n1's exec after n0's ended failed: $(cat "$SCRATCH/n1.out")"
[ "$(cat "$SCRATCH/locks/node")" = n1 ] || fail "n1's exec did not write its node's name"
echo "exec lock dir: ok"
