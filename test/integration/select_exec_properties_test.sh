#!/usr/bin/env bash
# A select()ed exec_properties in bazel query's XML (real Bazel 4 output, test/data/bazel/
# select_props.*): query prints the branches merged, each key with the first branch's value, and
# no mark, so {"gpu": "1"} before {"gpu": "4"} read as 1 GPU without a word. classify and plan now
# warn of the test, naming the input no attribute names (an error under --strict); plain tests
# of each kind, and a test with a select()ed deps but no exec_properties, get no such warning.
source test/integration/lib.sh
requires jq

XML=test/data/bazel/select_props.query.xml
"$GPUPLAN" classify --json "$XML" > "$SCRATCH/classify.json" 2> "$SCRATCH/classify.err" ||
  fail "classify failed: $(cat "$SCRATCH/classify.err")"
{ grep 'exec_properties may be a select()' "$SCRATCH/classify.err" || true; } | sed 's/: exec_properties may.*//' | sort \
  > "$SCRATCH/warned.txt"
printf '%s\n' 'gpuplan: warning: //:selected_deps_test' 'gpuplan: warning: //:selected_gpu_test' > "$SCRATCH/expected.txt"
diff "$SCRATCH/expected.txt" "$SCRATCH/warned.txt" > /dev/null ||
  fail "warned of $(cat "$SCRATCH/warned.txt"), expected $(cat "$SCRATCH/expected.txt"); stderr: $(cat "$SCRATCH/classify.err")"
grep -q '^gpuplan: warning: //:selected_gpu_test: exec_properties may be a select(): the test has the input //:cuda_big, which none of its attributes names' \
  "$SCRATCH/classify.err" || fail "the warning should name the config_setting: $(cat "$SCRATCH/classify.err")"
grep -q 'it is planned by exec_properties gpu=1' "$SCRATCH/classify.err" ||
  fail "the warning should say what gpuplan planned by: $(cat "$SCRATCH/classify.err")"
tail -n 1 "$SCRATCH/classify.err" | grep -q '^gpuplan: 2 warnings' ||
  fail "the totals line should count both warnings: $(tail -n 1 "$SCRATCH/classify.err")"
# Still read as its first branch (the warning says so): one GPU.
jq -e '.gpu_tests[] | select(.label == "//:selected_gpu_test") | .requirements.gpus == 1' "$SCRATCH/classify.json" \
  > /dev/null || fail "//:selected_gpu_test should still read as 1 GPU"

status=0
"$GPUPLAN" plan --strict "$XML" --fleet examples/fleet.yaml -o "$SCRATCH/plan.json" 2> "$SCRATCH/plan.err" || status=$?
[ "$status" = 2 ] || fail "a select()ed exec_properties under --strict should exit 2, not $status: $(cat "$SCRATCH/plan.err")"
[ ! -e "$SCRATCH/plan.json" ] || fail "--strict left a plan behind"
grep -q '^  //:selected_gpu_test: exec_properties may be a select()' "$SCRATCH/plan.err" ||
  fail "--strict should make it an error: $(cat "$SCRATCH/plan.err")"
echo "ok"
