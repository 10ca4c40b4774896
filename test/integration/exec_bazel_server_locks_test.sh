#!/usr/bin/env bash
# exec --lock-dir with a --command whose unit starts a Bazel server: the server inherits its
# client's descriptors (Bazel's daemonizing closes only 0-2; Debian's Bazel 4 server was seen
# holding a descriptor of the process that started it), the unit's GPU locks among them. Such a
# server is killed as the unit ends, like any process it left; before, it was spared, held the
# GPU's lock for its idle time (3 h by default), and the next unit on that GPU waited for it.
# The stand-in server is `sleep` named .../A-server.jar, detached (setsid) as Bazel's is.
source test/integration/lib.sh
GPUPLAN=$(realpath "$GPUPLAN")
printf '%s\n' "//t:a n0 0 0" "//t:b n0 0 1" | one_gpu_plan
mkdir -p "$SCRATCH/srv"
cp "$(command -v sleep)" "$SCRATCH/srv/sleep"
cat >"$SCRATCH/unit.sh" <<SH
#!/bin/bash
echo "\$1 \$(date +%s)" >>"$SCRATCH/ran.log"
if [ "\$1" = //t:a ]; then
  setsid bash -c 'exec -a $SCRATCH/srv/A-server.jar $SCRATCH/srv/sleep 60' </dev/null >/dev/null 2>&1 &
  # Ends only once the server runs under its name: before, the supervisor would see a plain bash.
  for i in \$(seq 400); do pgrep -f '^$SCRATCH/srv/A-server.jar' >/dev/null && break; sleep 0.05; done
fi
true
SH
chmod +x "$SCRATCH/unit.sh"
timeout 120 "$GPUPLAN" exec "$SCRATCH/plan.json" --node n0 --lock-dir "$SCRATCH/locks" \
  --command "$SCRATCH/unit.sh {label}" >"$SCRATCH/out" 2>"$SCRATCH/err" || fail "exec: $(cat "$SCRATCH/err")"
a=$(awk '$1 == "//t:a" {print $2}' "$SCRATCH/ran.log")
b=$(awk '$1 == "//t:b" {print $2}' "$SCRATCH/ran.log")
[ -n "$a" ] && [ -n "$b" ] && [ $((b - a)) -lt 30 ] ||
  fail "//t:b waited for the Bazel server //t:a left holding GPU 0's lock: $(cat "$SCRATCH/ran.log")"
grep -q "gpuplan exec: the unit left processes running; they were killed before its GPUs were released" \
  "$SCRATCH/err" || fail "exec does not say it killed what the unit left: $(cat "$SCRATCH/err")"
! pgrep -f "^$SCRATCH/srv/A-server.jar" >/dev/null || fail "the Bazel server the unit started still runs"
echo "exec_bazel_server_locks_test: ok"
