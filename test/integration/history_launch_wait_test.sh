#!/usr/bin/env bash
# Bazel times a test from its launch of --run_under, so a test that waited in run-under for its GPU
# (planned after another test on it; Bazel starts both at once) has that wait in the time its
# test.xml and build events give. run-under says so in the test's log, and history takes it out:
# before, the test that waited 3 s for its GPU and ran 3 s was read, and planned, as 6 s.
source test/integration/lib.sh
requires bazel python3
GPUPLAN=$(realpath "$GPUPLAN")
install -d -m 0700 "$SCRATCH/locks"
: >"$SCRATCH/results.csv"
# Both on GPU 0 of ws-0, one after the other.
printf '%s\n' "//ml:inference_test ws-0 0 0" "//ml:pool_test ws-0 0 1" | one_gpu_plan

bazel_ws test //ml:inference_test //ml:pool_test \
  --run_under="$GPUPLAN run-under --plan $SCRATCH/plan.json --node ws-0 --lock-dir $SCRATCH/locks --results $SCRATCH/results.csv" \
  --local_test_jobs=2 --nocache_test_results --sandbox_writable_path="$SCRATCH" --test_env=GPU_PROBE_SLEEP=3 \
  --build_event_json_file="$SCRATCH/bep.json" >"$SCRATCH/bazel.out" 2>&1 ||
  { cat "$SCRATCH/bazel.out"; fail "bazel test with run-under failed"; }
# A copy at once: other tests of the suite run these two in the same output base.
# This run's files only: an earlier run's test_attempts/ may still lie beside them.
bazel_testlogs=$(bazel_ws info bazel-testlogs 2>/dev/null)
for test in inference_test pool_test; do
  mkdir -p "$SCRATCH/bazel-testlogs/ml/$test"
  cp "$bazel_testlogs/ml/$test/"{test.xml,test.log,test.cache_status} "$SCRATCH/bazel-testlogs/ml/$test/"
done
testlogs=$SCRATCH/bazel-testlogs

# Each run as history reads it, from the build events and from bazel-testlogs: about 3 s, not 6.
for input in "$SCRATCH/bep.json" "$testlogs"; do
  "$GPUPLAN" history summarize "$input" -o "$SCRATCH/history.json" 2>"$SCRATCH/summarize.err" ||
    fail "summarize $input: $(cat "$SCRATCH/summarize.err")"
  /usr/bin/python3 -c '
import json, sys
units = {u["label"]: u["seconds"] for u in json.load(open(sys.argv[1]))["units"]}
for label in ("//ml:inference_test", "//ml:pool_test"):
    [seconds] = units[label]
    assert 2 <= seconds < 4.5, f"{label}: {seconds} s, its wait for the GPU not taken out ({units})"
' "$SCRATCH/history.json" || fail "history of $input holds the wait for the GPU"
done

# Which test waited: the later start in run-under's records; its log says how long.
waited=$(/usr/bin/python3 -c '
import csv, sys
rows = sorted(csv.DictReader(open(sys.argv[1])), key=lambda r: r["start"])
assert len(rows) == 2 and all(r["exit_status"] == "0" for r in rows), rows
print(rows[1]["label"].split(":")[1])' "$SCRATCH/results.csv") || fail "run-under's records: $(cat "$SCRATCH/results.csv")"
grep -q "^gpuplan run-under: waited [0-9.]* s for GPU 0 (launched 20[0-9-]*T[0-9:.]*Z) before //ml:$waited started" \
  "$testlogs/ml/$waited/test.log" || fail "no wait in the log of //ml:$waited: $(cat "$testlogs/ml/$waited/test.log")"
