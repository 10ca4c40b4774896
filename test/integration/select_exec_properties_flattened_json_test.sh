#!/usr/bin/env bash
# A select()ed exec_properties in bazel query's JSON output under its default
# --proto:flatten_selects (test/data/bazel/select_props.{jsonproto,streamed_jsonproto}: real Bazel 4
# --output=proto of select_props.BUILD, reprinted in the JSON formats' layout by
# query_json_from_proto.py): Bazel prints the branches merged, each key with the last branch's
# value, unmarked, so {"gpu": "1"} before {"gpu": "4"} read as 4 GPUs without a word. classify and
# plan now warn of the test, naming the config_setting its $config_dependencies names (an error
# under --strict), as they do for --output=xml; plain tests, and a test with a select()ed deps
# but no exec_properties, get no such warning.
source test/integration/lib.sh
requires jq

for INPUT in test/data/bazel/select_props.jsonproto test/data/bazel/select_props.streamed_jsonproto; do
  classify_warns_of "$INPUT" "exec_properties may be a select()" //:selected_deps_test //:selected_gpu_test
  grep -qF "gpuplan: warning: //:selected_gpu_test: exec_properties may be a select(): the test's \$config_dependencies names //:cuda_big" \
    "$SCRATCH/classify.err" || fail "$INPUT: the warning should name the config_setting: $(cat "$SCRATCH/classify.err")"
  grep -qF "each key with the last branch's value" "$SCRATCH/classify.err" ||
    fail "$INPUT: the warning should say JSON keeps the last branch's value: $(cat "$SCRATCH/classify.err")"
  grep -qF 'it is planned by exec_properties gpu=4' "$SCRATCH/classify.err" ||
    fail "$INPUT: the warning should say what gpuplan planned by: $(cat "$SCRATCH/classify.err")"
  # Still read as Bazel printed it (the warning says so): the last branch, 4 GPUs.
  jq -e '.gpu_tests[] | select(.label == "//:selected_gpu_test") | .requirements.gpus == 4' \
    "$SCRATCH/classify.json" > /dev/null || fail "$INPUT: //:selected_gpu_test should still read as 4 GPUs"

  strict_plan_refuses "$INPUT" //:selected_gpu_test "exec_properties may be a select()"
done
echo "ok"
