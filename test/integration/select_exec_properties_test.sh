#!/usr/bin/env bash
# A select()ed exec_properties in bazel query's XML (real Bazel 4 output, test/data/bazel/
# select_props.*): query prints the branches merged, each key with the first branch's value, and
# no mark, so {"gpu": "1"} before {"gpu": "4"} read as 1 GPU without a word. classify and plan now
# warn of the test, naming the input no attribute names (an error under --strict); plain tests
# of each kind, and a test with a select()ed deps but no exec_properties, get no such warning.
source test/integration/lib.sh
requires jq

XML=test/data/bazel/select_props.query.xml
classify_warns_of "$XML" "exec_properties may be a select()" //:selected_deps_test //:selected_gpu_test
grep -q '^gpuplan: warning: //:selected_gpu_test: exec_properties may be a select(): the test has the input //:cuda_big, which none of its attributes names' \
  "$SCRATCH/classify.err" || fail "the warning should name the config_setting: $(cat "$SCRATCH/classify.err")"
grep -q 'it is planned by exec_properties gpu=1' "$SCRATCH/classify.err" ||
  fail "the warning should say what gpuplan planned by: $(cat "$SCRATCH/classify.err")"
# Still read as its first branch (the warning says so): one GPU.
jq -e '.gpu_tests[] | select(.label == "//:selected_gpu_test") | .requirements.gpus == 1' "$SCRATCH/classify.json" \
  > /dev/null || fail "//:selected_gpu_test should still read as 1 GPU"

strict_plan_refuses "$XML" //:selected_gpu_test "exec_properties may be a select()"
echo "ok"
