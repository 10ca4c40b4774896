# gpuplan plan on the example workspace, as the README runs it: a valid plan with a bound and
# a gap, the same bytes whatever the input order, the policies compared, exit codes, atomic -o.
source test/integration/lib.sh
requires bazel jq python3

bazel_ws query 'tests(//...)' --output=xml > "$SCRATCH/query.xml" 2> "$SCRATCH/bazel.log" || {
  cat "$SCRATCH/bazel.log" >&2; fail "bazel query"; }

# plan QUERY FLEET [ARGS...]: stdout to $SCRATCH/out.json, stderr to $SCRATCH/err.txt, sets $rc.
plan() {
  local query=$1 fleet=$2; shift 2
  rc=0
  "$GPUPLAN" plan "$query" --fleet "$fleet" "$@" > "$SCRATCH/out.json" 2> "$SCRATCH/err.txt" || rc=$?
}

# The main command. Exit 3 exactly when some unit is unschedulable.
plan "$SCRATCH/query.xml" examples/fleet.yaml
unschedulable=$(jq '.unschedulable | length' "$SCRATCH/out.json")
if [ "$unschedulable" = 0 ]; then expected=0; else expected=3; fi
[ "$rc" = "$expected" ] || fail "exit $rc with $unschedulable unschedulable units"
jq -e '.summary.lower_bound_s > 0 and .summary.makespan_s >= .summary.lower_bound_s and (.summary.gap | type) == "number"' \
  "$SCRATCH/out.json" > /dev/null || fail "no makespan, bound and gap in the summary"
jq -e '(.assignments | length) + (.unschedulable | length) == .summary.gpu_units' "$SCRATCH/out.json" > /dev/null ||
  fail "a GPU unit is missing or listed twice"
jq -e '[.assignments[] | select(.unit == "//ml:train_test#shard-1-of-4")] | length == 1' "$SCRATCH/out.json" > /dev/null ||
  fail "the sharded test is not planned shard by shard"
jq -e '.assignments[] | select(.unit == "//ml:train_test#shard-1-of-4")
       | .env.TEST_SHARD_INDEX == "1" and .env.TEST_TOTAL_SHARDS == "4" and (.gpus | length) == 2' \
  "$SCRATCH/out.json" > /dev/null || fail "a shard's environment is wrong"
jq -e '[.assignments[] | select(.label == "//ml:allreduce_test")][0].node | startswith("h100")' "$SCRATCH/out.json" \
  > /dev/null || fail "the 8-GPU NVLink test is not on an H100 node"
grep -q "lower bound" "$SCRATCH/err.txt" || fail "no human summary on stderr"
grep -q "GPU units placed" "$SCRATCH/err.txt" || fail "no unit count on stderr"
cp "$SCRATCH/out.json" "$SCRATCH/plan.json"
[ -e schemas/plan.schema.json ] && /usr/bin/python3 -c '
import json, sys, jsonschema
jsonschema.validate(json.load(open(sys.argv[2])), json.load(open(sys.argv[1])))' \
  schemas/plan.schema.json "$SCRATCH/plan.json"

# The same targets in another order give the same bytes.
/usr/bin/python3 - "$SCRATCH/query.xml" "$SCRATCH/shuffled.xml" <<'PY'
import random, sys, xml.etree.ElementTree as ET
tree = ET.parse(sys.argv[1])
root = tree.getroot()
children = list(root)
random.Random(5).shuffle(children)
for c in list(root): root.remove(c)
root.extend(children)
tree.write(sys.argv[2], encoding="utf-8", xml_declaration=True)
PY
plan "$SCRATCH/shuffled.xml" examples/fleet.yaml
cmp -s "$SCRATCH/out.json" "$SCRATCH/plan.json" || fail "shuffled input gave a different plan"

# whole-node is never faster than exact; pack says which slowdown it used.
plan "$SCRATCH/query.xml" examples/fleet.yaml --policy whole-node
jq -e --slurpfile exact "$SCRATCH/plan.json" '.policy == "whole-node" and .summary.makespan_s >= $exact[0].summary.makespan_s' \
  "$SCRATCH/out.json" > /dev/null || fail "whole-node beat exact"
plan "$SCRATCH/query.xml" examples/fleet.yaml --policy pack
jq -e '.policy == "pack" and .summary.pack_slowdown == 1' "$SCRATCH/out.json" > /dev/null || fail "pack"

# --shards=whole: one unit per test.
plan "$SCRATCH/query.xml" examples/fleet.yaml --shards whole
jq -e '[.assignments[].unit | select(contains("#shard-"))] | length == 0' "$SCRATCH/out.json" > /dev/null ||
  fail "--shards=whole still split a test into shards"

# The workstation: one node, so the NVLink and exclusive tests that need 8 GPUs cannot run there.
plan "$SCRATCH/query.xml" examples/workstation.yaml
[ "$rc" = 3 ] || fail "workstation: expected exit 3, got $rc"
jq -e '.unschedulable[] | select(.label == "//ml:allreduce_test") | .reason | test("needs 8 GPUs; the largest node has 4")' \
  "$SCRATCH/out.json" > /dev/null || fail "workstation: the 8-GPU test's reason"
jq -e '[.assignments[].node] | unique == ["ws-0"]' "$SCRATCH/out.json" > /dev/null || fail "workstation: nodes"

# -o writes atomically: an error leaves the old file as it was and makes no new one.
"$GPUPLAN" plan "$SCRATCH/query.xml" --fleet examples/fleet.yaml -o "$SCRATCH/written.json" 2> /dev/null || true
cmp -s "$SCRATCH/written.json" "$SCRATCH/plan.json" || fail "-o wrote something else than stdout"
printf 'version: 1\npools: [{name: x, count: 0}]\n' > "$SCRATCH/bad-fleet.yaml"
rc=0; "$GPUPLAN" plan "$SCRATCH/query.xml" --fleet "$SCRATCH/bad-fleet.yaml" -o "$SCRATCH/written.json" 2> "$SCRATCH/err.txt" || rc=$?
[ "$rc" = 2 ] || fail "a bad fleet: expected exit 2, got $rc"
grep -q "bad-fleet.yaml" "$SCRATCH/err.txt" || fail "a bad fleet's error does not name the file"
cmp -s "$SCRATCH/written.json" "$SCRATCH/plan.json" || fail "an error changed the -o file"
refuses "" plan "$SCRATCH/query.xml" --fleet "$SCRATCH/bad-fleet.yaml" -o "$SCRATCH/new.json"
[ -z "$(ls "$SCRATCH" | grep '\.tmp\.')" ] || fail "a temporary file was left behind"

# compare plans the same tests: the same warnings and totals line as plan on standard error (it
# printed none: a test sent to the CPU runners went unsaid), exit 2 under --strict.
"$GPUPLAN" plan "$SCRATCH/query.xml" --fleet examples/fleet.yaml -o "$SCRATCH/compared.json" 2> "$SCRATCH/plan.err" || true
"$GPUPLAN" compare "$SCRATCH/query.xml" --fleet examples/fleet.yaml --policies exact,pack > "$SCRATCH/compare.txt" \
  2> "$SCRATCH/compare.err" || fail "compare failed: $(cat "$SCRATCH/compare.err")"
grep -q "^gpuplan: warning: //ml:team_macro_test: tag team-gpus-4 names a GPU" "$SCRATCH/compare.err" ||
  fail "compare does not name the untagged team-gpus-4 test: $(cat "$SCRATCH/compare.err")"
diff <(grep '^gpuplan: warning:\|explain' "$SCRATCH/plan.err") <(grep '^gpuplan: warning:\|explain' "$SCRATCH/compare.err") ||
  fail "compare's warnings differ from plan's"
grep -q "^   exact " "$SCRATCH/compare.txt" && grep -q "^   pack " "$SCRATCH/compare.txt" ||
  fail "compare does not list both policies: $(cat "$SCRATCH/compare.txt")"
# compare's gpu_utilization is the plan's, under one name one definition (it was the held share).
u_plan=$(jq '.summary.gpu_utilization' "$SCRATCH/compared.json")
u_compare=$("$GPUPLAN" compare "$SCRATCH/query.xml" --fleet examples/fleet.yaml --policies exact --json 2>/dev/null |
  jq '.comparisons[0].gpu_utilization')
[ "$u_plan" = "$u_compare" ] || fail "compare's gpu_utilization $u_compare is not the plan's $u_plan"
refuses "" compare --strict "$SCRATCH/query.xml" --fleet examples/fleet.yaml -o "$SCRATCH/strict-compare.txt"
# So does verify given the query: a plan that leaves a GPU test on the CPU runners is valid, not unsaid.
"$GPUPLAN" verify "$SCRATCH/compared.json" --fleet examples/fleet.yaml "$SCRATCH/query.xml" > /dev/null \
  2> "$SCRATCH/verify.err" || fail "verify failed: $(cat "$SCRATCH/verify.err")"
diff <(grep '^gpuplan: warning:\|explain' "$SCRATCH/plan.err") <(grep '^gpuplan: warning:\|explain' "$SCRATCH/verify.err") ||
  fail "verify's warnings differ from plan's"

# Ray's exclusive GPU tests give no GPU count and start 2 GPU workers: each is given every GPU of
# the node it holds (before, 1 of the 8 the plan kept for it), and verify and explain agree.
"$GPUPLAN" plan test/data/ray/train.query.xml --fleet examples/fleet.yaml -o "$SCRATCH/ray.json" 2>/dev/null ||
  fail "plan of Ray's exclusive tests failed"
jq -e '[.assignments[] | .env.CUDA_VISIBLE_DEVICES] == ["0,1,2,3,4,5,6,7", "0,1,2,3,4,5,6,7"] and
  ([.assignments[].requirements.every_node_gpu] | all)' "$SCRATCH/ray.json" >/dev/null ||
  fail "Ray's exclusive tests do not see every GPU of their node: $(jq -c '[.assignments[] | .gpus]' "$SCRATCH/ray.json")"
"$GPUPLAN" verify "$SCRATCH/ray.json" --fleet examples/fleet.yaml test/data/ray/train.query.xml >/dev/null 2>&1 ||
  fail "verify refused the plan of Ray's exclusive tests"
"$GPUPLAN" explain //python/ray/train:test_torch_fsdp test/data/ray/train.query.xml 2>/dev/null |
  grep -q "every GPU of it *yes *from tag exclusive with no GPU count" || fail "explain does not say every GPU"

# RLlib's tests as Bazel writes ray-project/ray's rllib BUILD text (test/data/ray/rllib.BUILD): `gpu`
# and `multi_gpu` beside Bazel's `exclusive` are GPU tests (every GPU of the node; 2 GPUs), each
# alone on its node while it runs (Bazel's exclusive: run alone), and the CPU tests beside them
# (`exclusive` alone, `fake_gpus`) stay CPU tests. On one 8-GPU node they run one after another.
cat > "$SCRATCH/one-node.yaml" <<'EOF'
version: 1
pools:
  - name: box
    count: 1
    gpu: {model: H100-SXM-80GB, count: 8}
    cuda: "12.4"
EOF
"$GPUPLAN" plan test/data/ray/rllib.query.xml --fleet "$SCRATCH/one-node.yaml" -o "$SCRATCH/rllib.json" 2>/dev/null ||
  fail "plan of RLlib's tests failed"
jq -e '([.assignments[] | {(.label | sub("//rllib:learning_tests_"; "")): [(.gpus | length), .requirements.exclusive]}] | add) ==
    {"cartpole_appo_multi_gpu": [2, true], "cartpole_dqn_gpu": [8, true], "multi_agent_cartpole_appo_gpu": [8, true]}
  and ([.cpu_tests[].label] | sort) == ["//rllib:learning_tests_cartpole_a2c_fake_gpus", "//rllib:learning_tests_cartpole_appo"]
  and ([.assignments[] | [.start_s, .end_s]] | sort | . as $a | [range(1; length) | $a[.][0] >= $a[. - 1][1]] | all)' \
  "$SCRATCH/rllib.json" >/dev/null ||
  fail "RLlib's tests are not planned as Ray's CI runs them: $(jq -c '[.assignments[] | [.label, .gpus, .start_s]]' "$SCRATCH/rllib.json")"

# SGLang's CUDA tests as Bazel writes its BUILD text (test/data/sglang/integration.BUILD): tagged
# requires-cuda beside requires-gpu, they go to the NVIDIA node of a fleet with AMD GPUs too, with
# no warning (before, requires-cuda was a near miss of requires-gpu, and they went to the AMD node).
cat > "$SCRATCH/mixed.yaml" <<'EOF'
version: 1
pools:
  - name: mi
    count: 1
    gpu: {model: MI300X, count: 8}
  - name: h
    count: 1
    gpu: {model: H100-SXM-80GB, count: 8}
    cuda: "12.4"
EOF
"$GPUPLAN" plan --strict --include-manual test/data/sglang/integration.query.xml --fleet "$SCRATCH/mixed.yaml" \
  -o "$SCRATCH/sglang.json" 2>"$SCRATCH/sglang.err" || fail "plan of SGLang's CUDA tests failed: $(cat "$SCRATCH/sglang.err")"
jq -e '[.assignments[] | [.node, .requirements.vendor]] == [["h-0", "nvidia"], ["h-0", "nvidia"]]' \
  "$SCRATCH/sglang.json" >/dev/null ||
  fail "SGLang's requires-cuda tests are not on the NVIDIA node: $(jq -c '[.assignments[] | [.label, .node]]' "$SCRATCH/sglang.json")"

# TensorFlow's dtensor_test variants as Bazel writes them (test/data/tensorflow/dtensor.BUILD): the
# NAME_2gpus one, tagged requires-gpu:2 beside gpu, has 2 GPUs (before, a near miss: the 1 of gpu).
"$GPUPLAN" plan --strict test/data/tensorflow/dtensor.query.xml --fleet examples/fleet.yaml \
  -o "$SCRATCH/dtensor.json" 2>"$SCRATCH/dtensor.err" || fail "plan of dtensor_test's variants failed: $(cat "$SCRATCH/dtensor.err")"
jq -e '([.assignments[] | {(.label): (.gpus | length)}] | add) ==
    {"//dtensor:example_test_2gpus": 2, "//dtensor:example_test_gpu": 1}
  and [.cpu_tests[].label] == ["//dtensor:example_test_cpu"]' "$SCRATCH/dtensor.json" >/dev/null ||
  fail "dtensor_test's variants are not planned as written: $(jq -c '[.assignments[] | [.label, .gpus]]' "$SCRATCH/dtensor.json")"

# ZKX's CUDA tests as Bazel writes its BUILD text (test/data/zkx/codegen.BUILD): tagged cuda_only
# beside gpu, they go to the NVIDIA node (before, cuda_only was a near miss of cuda-only and they
# went to the AMD node, with a warning).
"$GPUPLAN" plan --strict test/data/zkx/codegen.query.xml --fleet "$SCRATCH/mixed.yaml" \
  -o "$SCRATCH/zkx.json" 2>"$SCRATCH/zkx.err" || fail "plan of ZKX's CUDA tests failed: $(cat "$SCRATCH/zkx.err")"
jq -e '[.assignments[] | [.node, .requirements.vendor]] == [["h-0", "nvidia"], ["h-0", "nvidia"]]' \
  "$SCRATCH/zkx.json" >/dev/null ||
  fail "ZKX's cuda_only tests are not on the NVIDIA node: $(jq -c '[.assignments[] | [.label, .node]]' "$SCRATCH/zkx.json")"

# Android Cuttlefish's GPU e2e tests as Bazel writes them (test/data/cuttlefish/e2etests.BUILD):
# tagged requires_gpu beside exclusive, each holds a GPU node (before, requires_gpu was a near
# miss of requires-gpu: CPU tests with a warning, and --strict failed).
"$GPUPLAN" plan --strict test/data/cuttlefish/e2etests.query.xml --fleet "$SCRATCH/mixed.yaml" \
  -o "$SCRATCH/cuttlefish.json" 2>"$SCRATCH/cuttlefish.err" || fail "plan of Cuttlefish's GPU tests failed: $(cat "$SCRATCH/cuttlefish.err")"
jq -e '([.assignments[] | [(.gpus | length), .requirements.exclusive]] == [[8, true], [8, true], [8, true]])
  and (.cpu_tests | length) == 0' "$SCRATCH/cuttlefish.json" >/dev/null ||
  fail "Cuttlefish's requires_gpu tests are not GPU tests holding their node: $(jq -c '[.assignments[] | [.label, .gpus]]' "$SCRATCH/cuttlefish.json")"

# rtp-llm's tests routed to GPU worker classes (test/data/rtp_llm/distributed.BUILD): the
# MI308X-ROCM7 one goes to the AMD node, the H20 one to the NVIDIA node, whichever pool comes first
# (before, both were any vendor's, and with the NVIDIA pool first each went to the other's node).
cat > "$SCRATCH/mixed-h-first.yaml" <<'EOF'
version: 1
pools:
  - name: h
    count: 1
    gpu: {model: H100-SXM-80GB, count: 8}
    cuda: "12.4"
  - name: mi
    count: 1
    gpu: {model: MI300X, count: 8}
EOF
"$GPUPLAN" plan test/data/rtp_llm/distributed.query.xml --fleet "$SCRATCH/mixed-h-first.yaml" \
  -o "$SCRATCH/rtp.json" 2>"$SCRATCH/rtp.err" || fail "plan of rtp-llm's tests failed: $(cat "$SCRATCH/rtp.err")"
jq -e '([.assignments[] | {(.label | sub(".*:"; "")): [.node, .requirements.vendor, (.gpus | length)]}] | add) ==
    {"moriep_test": ["mi-0", "amd", 8], "deepep_test": ["h-0", "nvidia", 2]}' "$SCRATCH/rtp.json" >/dev/null ||
  fail "rtp-llm's worker classes are not on their vendor's node: $(jq -c '[.assignments[] | [.label, .node]]' "$SCRATCH/rtp.json")"
grep -qF "warning: //rtp_llm/models_py/distributed/test:moriep_test: exec_properties gpu=MI308X-ROCM7 is neither a GPU count nor a model gpuplan knows: read as 1 AMD GPU of any model, as its name is written" \
  "$SCRATCH/rtp.err" || fail "no warning that MI308X-ROCM7's model is a guess: $(cat "$SCRATCH/rtp.err")"

# A GPU test whose env's WORLD_SIZE is more than any node has (test/data/bazel/world_size_values.*):
# unschedulable, with the planner's reason, and a warning in the totals line. Before, a value
# above 255 was not read, and the 512-process test was planned on 1 GPU with no word; so were
# "$(WORLD_SIZE)", "0" and "-1", now each a warning naming the value.
plan test/data/bazel/world_size_values.query.xml examples/fleet.yaml
[ "$rc" = 3 ] || fail "plan of the WORLD_SIZE fixture: exit $rc, not 3: $(cat "$SCRATCH/err.txt")"
jq -e '([.unschedulable[] | {(.label): .reason}] | add) ==
    {"//t:ranks_512": "needs 512 GPUs; the largest node has 8", "//t:ranks_5000": "needs 1024 GPUs; the largest node has 8"}
  and ([.assignments[] | {(.label): (.gpus | length)}] | add) ==
    {"//t:ranks_make_variable": 1, "//t:ranks_zero": 1, "//t:ranks_negative": 1, "//t:ranks_empty": 1,
     "//t:ranks_blank": 4, "//t:ranks_counted": 2}' "$SCRATCH/out.json" >/dev/null ||
  fail "the WORLD_SIZE fixture is not planned as its values say: $(jq -c '[.assignments[] | [.label, .gpus]], .unschedulable' "$SCRATCH/out.json")"
# shellcheck disable=SC2016 # $(WORLD_SIZE) is the value as gpuplan prints it
grep -qF 'warning: //t:ranks_make_variable: the test'"'"'s env sets WORLD_SIZE=$(WORLD_SIZE), which is a Make variable' \
  "$SCRATCH/err.txt" || fail "no warning of WORLD_SIZE=\$(WORLD_SIZE): $(cat "$SCRATCH/err.txt")"
grep -q '^gpuplan: 7 warnings' "$SCRATCH/err.txt" || fail "the totals line does not count the 7 warnings: $(cat "$SCRATCH/err.txt")"
plan test/data/bazel/world_size_values.query.xml examples/fleet.yaml --strict
[ "$rc" = 2 ] || fail "plan --strict of the WORLD_SIZE fixture: exit $rc, not 2"

# GPU tests that ask for their GPU only through a remote executor's pool or queue, or a tag naming
# a vendor's GPU stack (test/data/remote/pools.BUILD): before, each was a CPU test, all but
# requires-cuda:2 without a word (whose did-you-mean, requires-gpu:2, dropped the vendor).
"$GPUPLAN" classify --json test/data/remote/pools.query.xml >"$SCRATCH/pools.json" 2>"$SCRATCH/pools.err" ||
  fail "classify of the pool fixture failed: $(cat "$SCRATCH/pools.err")"
jq -e '([.gpu_tests[] | {(.label | sub(".*:"; "")): (.requirements.vendor // "any")}] | add) ==
    {"queued_test": "any", "pooled_n_test": "nvidia", "pooled_a_test": "amd"}
  and ([.cpu_tests[].label | sub(".*:"; "")] | sort) == ["counted_test", "plain_test", "tagged_a_test", "tagged_i_test"]' \
  "$SCRATCH/pools.json" >/dev/null || fail "the pool fixture is not classified as its pools say: $(cat "$SCRATCH/pools.json")"
for expected in \
  "warning: //remote:pooled_n_test: exec_properties Pool=cuda names NVIDIA's GPU stack but not a GPU, so it is read as 1 NVIDIA GPU" \
  'warning: //remote:counted_test: tag requires-cuda:2 looks like a GPU annotation but is not one: did you mean "requires-gpu-nvidia:2"?' \
  'warning: //remote:tagged_a_test: tag hip names a GPU, but no convention or rule reads it' \
  "tag the test requires-gpu-intel or give a rule whose tag regex matches it, such as {tag: '^xpu\$', set: {gpus: 1, vendor: intel}}" \
  'gpuplan: 5 warnings'; do
  grep -qF "$expected" "$SCRATCH/pools.err" || fail "classify of the pool fixture does not say: $expected; it said: $(cat "$SCRATCH/pools.err")"
done
refuses "" classify --strict test/data/remote/pools.query.xml

# A TF-TRT test's variants as Bazel writes them (test/data/tensorflow/tensorrt.BUILD): the GPU one,
# tagged no_rocm beside tf_gpu_tests_tags() that names no vendor, goes to the NVIDIA node (before,
# no_rocm was a note and it went to the AMD node, the first pool of the fleet).
"$GPUPLAN" plan --strict test/data/tensorflow/tensorrt.query.xml --fleet "$SCRATCH/mixed.yaml" \
  -o "$SCRATCH/tensorrt.json" 2>"$SCRATCH/tensorrt.err" || fail "plan of TF-TRT's test failed: $(cat "$SCRATCH/tensorrt.err")"
jq -e '[.assignments[] | [.label, .node, .requirements.vendor]] == [["//tensorrt:trt_mode_test_gpu", "h-0", "nvidia"]]
  and [.cpu_tests[].label] == ["//tensorrt:trt_mode_test_cpu"]' "$SCRATCH/tensorrt.json" >/dev/null ||
  fail "TF-TRT's no_rocm test is not on the NVIDIA node: $(jq -c '[.assignments[] | [.label, .node]]' "$SCRATCH/tensorrt.json")"

# PyTorch's //c10/cuda/test:test (test/data/pytorch/c10_cuda_test.BUILD): target_compatible_with is
# rules_cuda's requires_cuda_enabled(), a select() query prints as @platforms//:incompatible alone,
# its condition only a rule-input. It goes to the NVIDIA node, with a warning that names the
# condition (before, a note, and it was a CPU test: CPU runners skipped it and passed).
"$GPUPLAN" plan test/data/pytorch/c10_cuda_test.query.xml --fleet "$SCRATCH/mixed.yaml" \
  -o "$SCRATCH/c10.json" 2>"$SCRATCH/c10.err" || fail "plan of PyTorch's c10 CUDA test failed: $(cat "$SCRATCH/c10.err")"
jq -e '[.assignments[] | [.label, .node, .requirements.vendor]] == [["//c10/cuda/test:test", "h-0", "nvidia"]]
  and .cpu_tests == []' "$SCRATCH/c10.json" >/dev/null ||
  fail "PyTorch's c10 CUDA test is not on the NVIDIA node: $(jq -c '[.assignments[] | [.label, .node]], .cpu_tests' "$SCRATCH/c10.json")"
for expected in \
  'warning: //c10/cuda/test:test: target_compatible_with select() on @rules_cuda//cuda:is_cuda_enabled' \
  'Tag it requires-gpu-nvidia (or requires-gpu-nvidia:N)' 'gpuplan: 1 warning'; do
  grep -qF "$expected" "$SCRATCH/c10.err" || fail "plan of PyTorch's c10 CUDA test does not say: $expected; it said: $(cat "$SCRATCH/c10.err")"
done
refuses "" plan --strict test/data/pytorch/c10_cuda_test.query.xml --fleet "$SCRATCH/mixed.yaml" -o "$SCRATCH/c10-strict.json"
# The same test from JSON query output, flattened ($config_dependencies names the condition) and
# under --noproto:flatten_selects (the select() itself): the same node and the same warning (before,
# a CPU test, with a note or with a warning that the select()'s branches differ).
for json in c10_cuda_test.jsonproto c10_cuda_test_unflattened.jsonproto; do
  "$GPUPLAN" plan "test/data/pytorch/$json" --fleet "$SCRATCH/mixed.yaml" -o "$SCRATCH/c10-json.json" \
    2>"$SCRATCH/c10-json.err" || fail "plan of $json failed: $(cat "$SCRATCH/c10-json.err")"
  jq -e '[.assignments[] | [.label, .node, .requirements.vendor]] == [["//c10/cuda/test:test", "h-0", "nvidia"]]
    and .cpu_tests == []' "$SCRATCH/c10-json.json" >/dev/null ||
    fail "PyTorch's c10 CUDA test from $json is not on the NVIDIA node: $(jq -c '[.assignments[] | [.label, .node]], .cpu_tests' "$SCRATCH/c10-json.json")"
  diff <(grep 'warning:' "$SCRATCH/c10.err") <(grep 'warning:' "$SCRATCH/c10-json.err") >/dev/null &&
    grep -qF 'gpuplan: 1 warning' "$SCRATCH/c10-json.err" ||
    fail "plan of $json does not warn as plan of the XML does; it said: $(cat "$SCRATCH/c10-json.err")"
done

# The faiss module of the Bazel Central Registry (test/data/faiss/tests.BUILD): //tests:test_c_api_gpu
# is tagged requires-gpu, with rules_cuda's requires_cuda() as its target_compatible_with, whose
# constraint values no platform has. It goes to the NVIDIA node, with no warning (before, two
# warnings that the constraints were not read, and it went to the AMD node, where Bazel skips it).
"$GPUPLAN" plan --strict test/data/faiss/tests.query.xml --fleet "$SCRATCH/mixed.yaml" \
  -o "$SCRATCH/faiss.json" 2>"$SCRATCH/faiss.err" || fail "plan of the faiss module's GPU test failed: $(cat "$SCRATCH/faiss.err")"
jq -e '[.assignments[] | [.label, .node, .requirements.vendor]] == [["//tests:test_c_api_gpu", "h-0", "nvidia"]]
  and [.cpu_tests[].label] == ["//tests:test_c_api"]' "$SCRATCH/faiss.json" >/dev/null ||
  fail "the faiss module's GPU test is not on the NVIDIA node: $(jq -c '[.assignments[] | [.label, .node]], .cpu_tests' "$SCRATCH/faiss.json")"
grep -qF 'gpuplan: 0 warnings' "$SCRATCH/faiss.err" ||
  fail "plan of the faiss module's GPU test warned: $(cat "$SCRATCH/faiss.err")"

# Bad usage is exit 2.
refuses "" plan "$SCRATCH/query.xml" --fleet examples/fleet.yaml --policy fastest
echo "plan: ok"
