#!/usr/bin/env bash
# A select()ed exec_properties in bazel query's JSON output under --noproto:flatten_selects
# (test/data/bazel/select_props_unflattened.*, written from Bazel's ProtoOutputFormatter, AttributeFormatter
# and build.proto: see select_props_unflattened.py): Bazel prints the branches ("SELECTOR_LIST"), which
# gpuplan refused. Now it plans by the branches merged, as from --output=xml, and warns of a test
# whose branches ask for different things, naming their conditions (an error under --strict);
# branches that agree, and a plain exec_properties, say nothing.
source test/integration/lib.sh
requires jq

for INPUT in test/data/bazel/select_props_unflattened.jsonproto test/data/bazel/select_props_unflattened.streamed_jsonproto; do
  classify_warns_of "$INPUT" "exec_properties is a select()" //:concat_test //:selected_gpu_test \
    //:selected_none_test
  grep -qF 'gpuplan: warning: //:selected_gpu_test: exec_properties is a select() whose branches ask for different things: //conditions:default gives gpu=1 (1 GPU), //:cuda_big gives gpu=4 (4 GPUs); bazel query cannot tell which applies, and it is planned by gpu=1 (1 GPU' \
    "$SCRATCH/classify.err" || fail "$INPUT: the warning should name the branches: $(cat "$SCRATCH/classify.err")"
  for want in selected_gpu_test:1 selected_same_test:2 selected_none_test:2 concat_test:4 plain_test:1; do
    jq -e --arg l "//:${want%:*}" --argjson n "${want#*:}" \
      '.gpu_tests[] | select(.label == $l) | .requirements.gpus == $n' "$SCRATCH/classify.json" > /dev/null ||
      fail "$INPUT: //:${want%:*} should be planned on ${want#*:} GPUs: $(cat "$SCRATCH/classify.json")"
  done

  strict_plan_refuses "$INPUT" //:selected_gpu_test "exec_properties is a select()"
done
echo "ok"
