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
# exec: a FIFO with the name of the unit's claim (HASH.0) or done mark is named, once, and that unit
# alone is not run here (exit 3), at once. Before, the FIFO was judged by its time as another node's
# live claim: the unit waited a lease (60 s) and was run, or was "held elsewhere", without a word.
for mark in "${done_mark%.done}.0" "$done_mark"; do
  for dispatch in "" --fleet; do
    rm -rf claims ran.log
    mkdir claims
    mkfifo "$mark"
    options=(--command 'echo {label} >>ran.log')
    [ -z "$dispatch" ] || options+=(--fleet "$SOURCE_DIR/examples/workstation.yaml")
    run_status exec plan.json --node ws-0 --lock-dir locks --claims claims "${options[@]}"
    [ "$status" = 3 ] && [ "$(grep -c "//ml:inference_test not run here: $mark: a FIFO has the name of a unit's claim" err)" = 1 ] &&
      ! grep -q //ml:inference_test ran.log && [ "$(wc -l <ran.log)" -ge 1 ] ||
      fail "exec ${dispatch:-(static)}, a FIFO at $mark: exit $status, ran $(cat ran.log): $(cat err)"
  done
done

# 5. A fleet or rules file that never ends (/dev/zero given by mistake) was read until memory ran
# out; one with a NUL byte, or saved as UTF-16 without its byte-order mark, was read as YAML
# (the NUL in a comment: accepted; UTF-16LE: the whole fleet, exit 0).
fleet=$SOURCE_DIR/examples/fleet.yaml
query=$SOURCE_DIR/examples/query.xml
run_status fleet check /dev/zero
[ "$status" = 2 ] && grep -q '/dev/zero: is larger than 64 MiB' err || fail "fleet check /dev/zero: exit $status $(cat err)"
run_status plan "$query" --fleet "$fleet" --rules /dev/zero -o p.json
[ "$status" = 2 ] && [ ! -e p.json ] && grep -q '/dev/zero: is larger than 64 MiB' err ||
  fail "--rules /dev/zero: exit $status $(cat err)"
iconv -f UTF-8 -t UTF-16LE "$fleet" > utf16le.yaml
run_status fleet check utf16le.yaml
[ "$status" = 2 ] && grep -q 'utf16le.yaml:1:2: a NUL byte' err || fail "a UTF-16LE fleet: exit $status $(cat err)"
iconv -f UTF-8 -t UTF-16 "$fleet" > utf16.yaml
run_status fleet check utf16.yaml
[ "$status" = 2 ] && grep -q 'utf16.yaml:1:1: the file is UTF-16' err || fail "a UTF-16 fleet: exit $status $(cat err)"
printf 'version: 1\n# a comment \0 with a NUL\nrules: []\n' > nul.yaml
run_status plan "$query" --fleet "$fleet" --rules nul.yaml -o p.json
[ "$status" = 2 ] && grep -q 'nul.yaml:2:13: a NUL byte' err || fail "a NUL in a rules file: exit $status $(cat err)"
