#!/usr/bin/env bash
# A FIFO (or another file that is not a regular one) where gpuplan keeps a file of its own, a
# GPU lock, the plan's index, a claim, the results file, never makes run-under or exec wait for
# a writer that will not come: a lock, a claim or a results file is refused (exit 2, naming
# it), and an index is passed over (the whole plan is read, as when there is none).
source test/integration/lib.sh
requires python3
GPUPLAN=$(realpath "$GPUPLAN")
cd "$SCRATCH"
cp "$SOURCE_DIR/test/data/plans/workstation_ml.json" plan.json
export TEST_TARGET=//ml:inference_test  # planned on ws-0, GPU 2

# run_status ARGS...: gpuplan within 20 s; its exit status in $status, stderr in err.
run_status() { status=0; timeout 20 "$GPUPLAN" "$@" >out 2>err || status=$?; }

# 1. A GPU lock file that is a FIFO.
mkdir -m 700 locks
mkfifo locks/gpu-2.lock
run_status run-under --plan plan.json --node ws-0 --lock-dir locks true
[ "$status" = 2 ] && grep -q 'gpu-2.lock.*FIFO' err || fail "a FIFO lock file: exit $status $(cat err)"
run_status exec plan.json --node ws-0 --lock-dir locks --command true
[ "$status" = 2 ] && grep -q 'gpu-2.lock.*FIFO' err || fail "exec, a FIFO lock file: exit $status $(cat err)"
rm locks/gpu-2.lock

# 2. A FIFO where the plan's index goes: run-under reads the whole plan and runs the test.
rm -f plan.json.index
mkfifo plan.json.index
run_status run-under --plan plan.json --node ws-0 --lock-dir locks sh -c 'echo "gpus $CUDA_VISIBLE_DEVICES"'
[ "$status" = 0 ] && grep -q '^gpus 2$' out || fail "a FIFO index: exit $status $(cat err)"
rm plan.json.index

# 3. A results file that is a FIFO.
mkfifo results.csv
run_status run-under --plan plan.json --node ws-0 --lock-dir locks --results results.csv true
[ "$status" = 2 ] && grep -q 'results.csv.*FIFO' err || fail "a FIFO results file: exit $status $(cat err)"
run_status exec plan.json --node ws-0 --lock-dir locks --results results.csv --command true
[ "$status" = 2 ] && grep -q 'results.csv.*FIFO' err || fail "exec, a FIFO results file: exit $status $(cat err)"

# 4. A claim file that is a FIFO: the unit's "done" mark (DIR/HASH.done, HASH its id's FNV-1a).
mkdir claims
done_mark=claims/$(python3 -c '
import sys
h = 14695981039346656037
for c in sys.argv[1].encode(): h = ((h ^ c) * 1099511628211) % 2**64
print(f"{h:016x}.done")' "$TEST_TARGET")
mkfifo "$done_mark"
run_status run-under --plan plan.json --node ws-0 --lock-dir locks --claims claims true
[ "$status" = 2 ] && grep -q "$done_mark.*FIFO" err || fail "a FIFO claim: exit $status $(cat err)"
