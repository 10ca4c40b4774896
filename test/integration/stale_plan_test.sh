#!/usr/bin/env bash
# A plan made at one commit and run at a later one, where a test's tags changed since: gpu -> gpu:2,
# cpu-only -> gpu. Given the query of the commit Bazel runs (--query), run-under, and exec's default
# bazel test through it, refuse such a test rather than run it on the GPUs of the old plan, where a
# test that skips its multi-GPU paths passes; verify with that query reports it too.
source test/integration/lib.sh
requires bazel jq
GPUPLAN=$(realpath "$GPUPLAN")
RULES=$SOURCE_DIR/examples/rules.yaml
FLEET=$SOURCE_DIR/examples/fleet.yaml

# A copy of the example workspace (its deps-repos beside it, as its WORKSPACE names them).
cp -r "$WORKSPACE" "$SCRATCH/ws"
cp -r "$SOURCE_DIR/examples/deps-repos" "$SCRATCH/deps-repos"
rm -f "$SCRATCH"/ws/bazel-*
WORKSPACE=$SCRATCH/ws
bazel_ws query 'tests(//...)' --output=xml >"$SCRATCH/then.xml" 2>/dev/null || fail "bazel query at the plan's commit"
"$GPUPLAN" plan -q --fleet "$FLEET" --rules "$RULES" "$SCRATCH/then.xml" -o "$SCRATCH/plan.json" 2>/dev/null ||
  fail "plan of the copy's query"
NODE=$(jq -r '.assignments[] | select(.label == "//ml:inference_test") | .node' "$SCRATCH/plan.json")
[ "$(jq -c '.assignments[] | select(.label == "//ml:inference_test") | .gpus | length' "$SCRATCH/plan.json")" = 1 ] ||
  fail "//ml:inference_test is not planned on 1 GPU"
jq -e '.cpu_tests[] | select(.label == "//core:config_test")' "$SCRATCH/plan.json" >/dev/null ||
  fail "//core:config_test is not a CPU test of the plan"

# A later commit: inference_test asks for 2 GPUs, config_test for a GPU.
sed -i 's/tags = \["gpu", "gpu-mem:16G"\]/tags = ["gpu:2", "gpu-mem:16G"]/' "$WORKSPACE/ml/BUILD"
sed -i 's/tags = \["cpu-only"\]/tags = ["gpu"]/' "$WORKSPACE/core/BUILD"
grep -q '"gpu:2", "gpu-mem:16G"' "$WORKSPACE/ml/BUILD" && grep -q 'tags = \["gpu"\]' "$WORKSPACE/core/BUILD" ||
  fail "the edits of the copy's BUILD files did not take"
bazel_ws query 'tests(//...)' --output=xml >"$SCRATCH/now.xml" 2>/dev/null || fail "bazel query at the later commit"

# verify with the later query says both.
set +e
"$GPUPLAN" verify "$SCRATCH/plan.json" --fleet "$FLEET" --rules "$RULES" "$SCRATCH/now.xml" >"$SCRATCH/verify.out" 2>&1
status=$?
set -e
[ "$status" = 4 ] || fail "verify with the later query: exit $status, not 4: $(cat "$SCRATCH/verify.out")"
grep -q '//ml:inference_test: .*\[gpu-count\]' "$SCRATCH/verify.out" &&
  grep -q '//core:config_test: is a GPU test of the query but is not in the plan \[coverage\]' "$SCRATCH/verify.out" ||
  fail "verify does not name both changed tests: $(cat "$SCRATCH/verify.out")"

# run-under with the later query refuses both (exit 2, naming the test and what changed) ...
mkdir -m 0700 "$SCRATCH/locks"
under() {
  TEST_TARGET=$1 "$GPUPLAN" run-under --plan "$SCRATCH/plan.json" --node "$NODE" --lock-dir "$SCRATCH/locks" \
    --query "$SCRATCH/now.xml" --rules "$RULES" "${@:2}"
}
set +e
under //ml:inference_test sh -c 'echo ran on $CUDA_VISIBLE_DEVICES' >"$SCRATCH/ru.out" 2>&1
status=$?
set -e
[ "$status" = 2 ] && ! grep -q '^ran on' "$SCRATCH/ru.out" || fail "run-under ran //ml:inference_test: $(cat "$SCRATCH/ru.out")"
grep -q "refusing to run //ml:inference_test on node $NODE: the plan gives //ml:inference_test 1 GPU (1), and $SCRATCH/now.xml asks for 2" "$SCRATCH/ru.out" ||
  fail "run-under's refusal does not say what changed: $(cat "$SCRATCH/ru.out")"
set +e
under //core:config_test sh -c 'echo ran' >"$SCRATCH/cpu.out" 2>&1
status=$?
set -e
[ "$status" = 2 ] && grep -q "the plan has //core:config_test among its CPU tests, and $SCRATCH/now.xml gives it 1 GPU" "$SCRATCH/cpu.out" ||
  fail "run-under ran //core:config_test with no GPU: exit $status: $(cat "$SCRATCH/cpu.out")"
# ... --unplanned=warn runs them as planned, with a warning; an unchanged test runs without a word.
under //ml:inference_test --unplanned=warn sh -c 'echo ran on $CUDA_VISIBLE_DEVICES' >"$SCRATCH/warn.out" 2>&1 ||
  fail "--unplanned=warn did not run it: $(cat "$SCRATCH/warn.out")"
grep -q 'warning: the plan gives //ml:inference_test 1 GPU' "$SCRATCH/warn.out" && grep -qx 'ran on 1' "$SCRATCH/warn.out" ||
  fail "--unplanned=warn: $(cat "$SCRATCH/warn.out")"
# A plan of a gpuplan from before every_node_gpu gave an exclusive test with no GPU count one GPU
# (Bazel runs it alone with all of the machine's: a Ray test starting two GPU workers waited or
# failed); today's query gives it every GPU of the node, and run-under refuses the old plan's one.
sed -i 's/tags = \["requires-gpu-nvidia"\]/tags = ["requires-gpu-nvidia", "exclusive"]/' "$WORKSPACE/tf/BUILD"
bazel_ws query 'tests(//...)' --output=xml >"$SCRATCH/excl.xml" 2>/dev/null || fail "bazel query with conv_test exclusive"
jq '(.assignments[] | select(.label == "//tf:conv_test") | .requirements.exclusive) = true' "$SCRATCH/plan.json" \
  >"$SCRATCH/old-planner.json"
set +e
CONV_NODE=$(jq -r '.assignments[] | select(.label == "//tf:conv_test") | .node' "$SCRATCH/plan.json")
TEST_TARGET=//tf:conv_test "$GPUPLAN" run-under --plan "$SCRATCH/old-planner.json" --node "$CONV_NODE" \
  --fleet "$FLEET" --lock-dir "$SCRATCH/locks" --query "$SCRATCH/excl.xml" --rules "$RULES" sh -c 'echo ran' >"$SCRATCH/excl.out" 2>&1
status=$?
set -e
[ "$status" = 2 ] && grep -q "the plan gives //tf:conv_test 1 GPU (.*), and .* gives it every GPU of the node it holds ([0-9]* GPUs) by its tags" "$SCRATCH/excl.out" ||
  fail "run-under ran an exclusive test on the 1 GPU an old plan gave it: exit $status: $(cat "$SCRATCH/excl.out")"
sed -i 's/tags = \["requires-gpu-nvidia", "exclusive"\]/tags = ["requires-gpu-nvidia"]/' "$WORKSPACE/tf/BUILD"
under //ml:remote_exec_test sh -c 'echo ran' >"$SCRATCH/same.out" 2>&1 || fail "an unchanged test: $(cat "$SCRATCH/same.out")"
[ "$(cat "$SCRATCH/same.out")" = ran ] || fail "an unchanged test got a word: $(cat "$SCRATCH/same.out")"
# Dynamic execution: a node that takes the test over from the node it is planned on (--claims
# --fleet) checks the query's tags as that node does, and refuses it retagged gpu:2. Before, it was
# not checked there: the other node ran it on the 1 GPU of the plan, and it passed.
OTHER=$(jq -r --arg n "$NODE" '[.assignments[] | select(.node != $n and (.gpus | length) == 1) | .node] | sort | .[0]' \
  "$SCRATCH/plan.json")
mkdir -p "$SCRATCH/claims" "$SCRATCH/claims-needs"
CLAIMS=$SCRATCH/claims
taken() {
  TEST_TARGET=//ml:inference_test "$GPUPLAN" run-under --plan "$SCRATCH/plan.json" --node "$OTHER" \
    --lock-dir "$SCRATCH/locks" --claims "$CLAIMS" --fleet "$FLEET" --rules "$RULES" "$@" \
    sh -c 'echo ran on $CUDA_VISIBLE_DEVICES'
}
set +e
taken --query "$SCRATCH/now.xml" >"$SCRATCH/taken.out" 2>&1
status=$?
set -e
[ "$status" = 2 ] && ! grep -q '^ran on' "$SCRATCH/taken.out" &&
  grep -q "refusing to run //ml:inference_test on node $OTHER: the plan gives //ml:inference_test 1 GPU on $NODE, and $SCRATCH/now.xml asks for 2 GPUs by its tags" "$SCRATCH/taken.out" ||
  fail "a node taking over a test retagged gpu:2 ran it: exit $status: $(cat "$SCRATCH/taken.out")"
# With the query of the plan's commit, the same node takes it (so the refusal above is the tags').
taken --query "$SCRATCH/then.xml" >"$SCRATCH/taken-then.out" 2>&1 ||
  fail "$OTHER did not take //ml:inference_test over: $(cat "$SCRATCH/taken-then.out")"
grep -q "takes it (dynamic execution)" "$SCRATCH/taken-then.out" && grep -q '^ran on' "$SCRATCH/taken-then.out" ||
  fail "$OTHER did not take //ml:inference_test over: $(cat "$SCRATCH/taken-then.out")"

# A test whose tags have not changed is not checked again for --query: on GPUs smaller than the plan's
# fleet said, run-under refuses it for the fleet (as without --query), not as a test that changed.
set +e
GPUPLAN_FAKE_NVML_MEM_GIB=8 TEST_TARGET=//ml:inference_test "$GPUPLAN" run-under --plan "$SCRATCH/plan.json" \
  --node "$NODE" --lock-dir "$SCRATCH/locks" --query "$SCRATCH/then.xml" --rules "$RULES" sh -c 'echo ran' \
  >"$SCRATCH/small.out" 2>&1
status=$?
set -e
[ "$status" = 2 ] && grep -q "the fleet the plan was made from is wrong about this machine" "$SCRATCH/small.out" &&
  ! grep -q "the test changed" "$SCRATCH/small.out" ||
  fail "an unchanged test on GPUs smaller than the fleet said: exit $status: $(cat "$SCRATCH/small.out")"

# Another later commit: of the tests planned on the node's 80 GiB A100s (CUDA 12.2), inference_test
# asks for 96 GiB of GPU memory, conv_test for CUDA >= 12.4, docker_runtime_test for an H100, and
# remote_exec_test for less (no GPU model). Run as planned, a test that skips what its GPU is too
# small or too old for passes: with --fleet (the plan's) run-under checks the planned GPUs as exec
# --claims --fleet checks a node, and refuses the first three; without it, NVML (the stand-in's
# 81920 MiB A100s) refuses the first, and of the model, which NVML does not say, it warns; fewer
# requirements run without a word.
cp "$WORKSPACE/ml/BUILD" "$SCRATCH/ml.BUILD" && cp "$WORKSPACE/tf/BUILD" "$SCRATCH/tf.BUILD" &&
  cp "$WORKSPACE/jax/BUILD" "$SCRATCH/jax.BUILD"
sed -i 's/tags = \["gpu:2", "gpu-mem:16G"\]/tags = ["gpu", "gpu-mem:96G"]/' "$WORKSPACE/ml/BUILD"
sed -i 's/"resources:gpu": "1", "gpu_model": "a100"/"resources:gpu": "1"/' "$WORKSPACE/ml/BUILD"
sed -i 's/tags = \["requires-gpu-nvidia"\]/tags = ["requires-gpu-nvidia", "cuda>=12.4"]/' "$WORKSPACE/tf/BUILD"
sed -i 's/exec_properties = {"dockerRuntime": "nvidia"},/&\n    tags = ["gpu-model:h100"],/' "$WORKSPACE/jax/BUILD"
grep -q '"gpu", "gpu-mem:96G"' "$WORKSPACE/ml/BUILD" && grep -q '{"resources:gpu": "1"}' "$WORKSPACE/ml/BUILD" &&
  grep -q '"requires-gpu-nvidia", "cuda>=12.4"' "$WORKSPACE/tf/BUILD" && grep -q '"gpu-model:h100"' "$WORKSPACE/jax/BUILD" ||
  fail "the edits for the GPUs' needs did not take"
bazel_ws query 'tests(//...)' --output=xml >"$SCRATCH/needs.xml" 2>/dev/null || fail "bazel query with the GPUs' needs changed"
cp "$SCRATCH/ml.BUILD" "$WORKSPACE/ml/BUILD" && cp "$SCRATCH/tf.BUILD" "$WORKSPACE/tf/BUILD" &&
  cp "$SCRATCH/jax.BUILD" "$WORKSPACE/jax/BUILD"
needs() {
  TEST_TARGET=$1 "$GPUPLAN" run-under --plan "$SCRATCH/plan.json" --node "$NODE" --lock-dir "$SCRATCH/locks" \
    --query "$SCRATCH/needs.xml" --rules "$RULES" "${@:2}" sh -c 'echo ran on $CUDA_VISIBLE_DEVICES'
}
for label in //tf:conv_test //jax:docker_runtime_test //ml:remote_exec_test; do
  [ "$(jq -r --arg l "$label" '.assignments[] | select(.label == $l) | .node' "$SCRATCH/plan.json")" = "$NODE" ] ||
    fail "$label is not planned on $NODE"
done
refused() {  # OUT PATTERN: run-under refused the test (exit 2, it did not run), saying PATTERN
  [ "$status" = 2 ] && ! grep -q '^ran on' "$1" && grep -q "$2" "$1" ||
    fail "run-under ran a test whose planned GPUs lack what it asks for: exit $status: $(cat "$1")"
}
set +e
needs //ml:inference_test --fleet "$FLEET" >"$SCRATCH/mem.out" 2>&1
status=$?
refused "$SCRATCH/mem.out" "refusing to run //ml:inference_test on node $NODE: the plan gives //ml:inference_test 1 GPU (1), and $SCRATCH/needs.xml asks for 1 GPU, ≥ 96GiB each by its tags: it needs 96GiB per GPU; node $NODE has GPUs of 80GiB: the test changed after the plan was made"
needs //tf:conv_test --fleet "$FLEET" >"$SCRATCH/cuda.out" 2>&1
status=$?
refused "$SCRATCH/cuda.out" "refusing to run //tf:conv_test on node $NODE: .* asks for 1 GPU, CUDA ≥ 12.4, NVIDIA by its tags: it needs 1 NVIDIA GPU with CUDA >= 12.4; node $NODE has CUDA 12.2"
needs //jax:docker_runtime_test --fleet "$FLEET" >"$SCRATCH/model.out" 2>&1
status=$?
refused "$SCRATCH/model.out" "refusing to run //jax:docker_runtime_test on node $NODE: .* asks for 1 GPU, .*model h100.* by its tags: it needs .*GPU model h100.*; node $NODE has A100-SXM-80GB GPUs"
needs //ml:inference_test >"$SCRATCH/nvml.out" 2>&1
status=$?
refused "$SCRATCH/nvml.out" "asks for 1 GPU, ≥ 96GiB each by its tags: it needs 96GiB (98304 MiB) per GPU, and GPU 1 of this machine has 81920 MiB (NVML): the test changed"
set -e
needs //jax:docker_runtime_test >"$SCRATCH/unknown.out" 2>&1 || fail "without --fleet: $(cat "$SCRATCH/unknown.out")"
grep -q "warning: .*; the plan cannot tell whether its GPU 0 of $NODE meets GPU model h100 (--fleet with the plan's fleet checks it)" "$SCRATCH/unknown.out" &&
  grep -qx 'ran on 0' "$SCRATCH/unknown.out" || fail "without --fleet, no warning: $(cat "$SCRATCH/unknown.out")"
needs //ml:remote_exec_test --fleet "$FLEET" >"$SCRATCH/fewer.out" 2>&1 || fail "fewer needs: $(cat "$SCRATCH/fewer.out")"
# Taken over by another node, the test is checked against that node's GPUs for what the query asks
# (96 GiB: not the 40 GiB A100s of $OTHER), not for the plan's 16 GiB. Before, it ran there.
set +e
CLAIMS=$SCRATCH/claims-needs taken --query "$SCRATCH/needs.xml" >"$SCRATCH/taken-needs.out" 2>&1
status=$?
set -e
[ "$status" = 2 ] && ! grep -q '^ran on' "$SCRATCH/taken-needs.out" ||
  fail "$OTHER took over a test whose tags ask for more memory than its GPUs have: exit $status: $(cat "$SCRATCH/taken-needs.out")"
[ "$(cat "$SCRATCH/fewer.out")" = "ran on 2" ] || fail "a test that asks for less got a word: $(cat "$SCRATCH/fewer.out")"
# Under pack, inference_test (gpu-mem:16G) shares its GPU. Retagged gpu-mem:72G it fits an 80 GiB
# A100, but not what pack shares of one (85% of 81920 MiB: 69632): the planner gives it its GPU to
# itself, and run-under --fleet refuses it where a pack plan has it share; the exact plan's, where
# its GPU is its own, runs it without a word.
"$GPUPLAN" plan -q --fleet "$FLEET" --rules "$RULES" --policy pack "$SCRATCH/then.xml" -o "$SCRATCH/pack.json" 2>/dev/null ||
  fail "pack plan of the copy's query"
PACK_NODE=$(jq -r '.assignments[] | select(.label == "//ml:inference_test") | .node' "$SCRATCH/pack.json")
PACK_GPU=$(jq -r '.assignments[] | select(.label == "//ml:inference_test") | .gpus | join(",")' "$SCRATCH/pack.json")
[ "$(jq -r '.assignments[] | select(.label == "//ml:inference_test") | .vram_mib' "$SCRATCH/pack.json")" = 16384 ] &&
  [ "$(jq -r --arg n "$PACK_NODE" '.assignments[] | select(.node == $n) | .label' "$SCRATCH/pack.json" | wc -l)" -gt 1 ] ||
  fail "//ml:inference_test does not share a node of the pack plan with 16384 MiB"
cp "$WORKSPACE/ml/BUILD" "$SCRATCH/ml.BUILD"
sed -i 's/tags = \["gpu:2", "gpu-mem:16G"\]/tags = ["gpu", "gpu-mem:72G"]/' "$WORKSPACE/ml/BUILD"
grep -q '"gpu", "gpu-mem:72G"' "$WORKSPACE/ml/BUILD" || fail "the edit to gpu-mem:72G did not take"
bazel_ws query 'tests(//...)' --output=xml >"$SCRATCH/pack.xml" 2>/dev/null || fail "bazel query with gpu-mem:72G"
cp "$SCRATCH/ml.BUILD" "$WORKSPACE/ml/BUILD"
set +e
TEST_TARGET=//ml:inference_test "$GPUPLAN" run-under --plan "$SCRATCH/pack.json" --node "$PACK_NODE" --fleet "$FLEET" \
  --lock-dir "$SCRATCH/locks" --query "$SCRATCH/pack.xml" --rules "$RULES" sh -c 'echo ran on $CUDA_VISIBLE_DEVICES' \
  >"$SCRATCH/pack.out" 2>&1
status=$?
set -e
refused "$SCRATCH/pack.out" "asks for 1 GPU, ≥ 72GiB each by its tags: it reserves 72GiB on GPU $PACK_GPU, more than pack shares of its 80GiB (less the headroom of 15%): the planner gives it the GPU to itself, and the plan has it share the GPU with other tests: the test changed"
TEST_TARGET=//ml:inference_test "$GPUPLAN" run-under --plan "$SCRATCH/plan.json" --node "$NODE" --fleet "$FLEET" \
  --lock-dir "$SCRATCH/locks" --query "$SCRATCH/pack.xml" --rules "$RULES" sh -c 'echo ran on $CUDA_VISIBLE_DEVICES' \
  >"$SCRATCH/own.out" 2>&1 || fail "gpu-mem:72G on a GPU of its own: $(cat "$SCRATCH/own.out")"
[ "$(cat "$SCRATCH/own.out")" = "ran on 1" ] || fail "gpu-mem:72G on a GPU of its own got a word: $(cat "$SCRATCH/own.out")"

# exec --command runs no run-under to pass --query to: refused, pointing at verify.
set +e
"$GPUPLAN" exec "$SCRATCH/plan.json" --node "$NODE" --command true --query "$SCRATCH/now.xml" >"$SCRATCH/cmd.out" 2>&1
status=$?
set -e
[ "$status" = 2 ] && grep -q 'with --command, check the plan against the query first: gpuplan verify' "$SCRATCH/cmd.out" ||
  fail "exec --command --query: exit $status: $(cat "$SCRATCH/cmd.out")"
# A --query each test's run-under could not read is refused before Bazel starts (before, every
# test failed as Bazel ran it), and so is standard input, which only the first could read.
set +e
"$GPUPLAN" exec "$SCRATCH/plan.json" --node "$NODE" --query "$SCRATCH/missing.xml" >"$SCRATCH/missing.out" 2>&1
status=$?
"$GPUPLAN" exec "$SCRATCH/plan.json" --node "$NODE" --query - <"$SCRATCH/now.xml" >"$SCRATCH/stdin.out" 2>&1
stdin_status=$?
set -e
[ "$status" = 2 ] && grep -qF "$SCRATCH/missing.xml: cannot read: No such file or directory" "$SCRATCH/missing.out" &&
  ! grep -q 'INFO:' "$SCRATCH/missing.out" || fail "exec --query of a missing file: exit $status: $(cat "$SCRATCH/missing.out")"
[ "$stdin_status" = 2 ] && grep -q -- '--query: each test.s run-under reads it, so it must be a file' "$SCRATCH/stdin.out" ||
  fail "exec --query -: exit $stdin_status: $(cat "$SCRATCH/stdin.out")"

# exec's default bazel test, at the later commit: without --query the stale plan runs
# inference_test on its 1 GPU and Bazel says PASSED (what gpuplan cannot see); with --query,
# run-under refuses it and Bazel says FAILED, with the reason in the test's log.
bazel_wrapper "$SCRATCH/bin" --test_env=GPU_PROBE_LOG="$SCRATCH/probe.log" --sandbox_writable_path="$SCRATCH"
sed -i "s|^command=\$1; shift|WORKSPACE=$WORKSPACE\n&|" "$SCRATCH/bin/bazel"
cd "$WORKSPACE"
PATH=$SCRATCH/bin:$PATH "$GPUPLAN" exec "$SCRATCH/plan.json" --node "$NODE" --lock-dir "$SCRATCH/locks" \
  >"$SCRATCH/exec-blind.out" 2>&1 || fail "exec without --query: $(tail -20 "$SCRATCH/exec-blind.out")"
grep -q '//ml:inference_test .*PASSED' "$SCRATCH/exec-blind.out" && grep -qx 'target=//ml:inference_test shard=/ gpus=1' "$SCRATCH/probe.log" ||
  fail "without --query: $(tail -20 "$SCRATCH/exec-blind.out")"
set +e
PATH=$SCRATCH/bin:$PATH "$GPUPLAN" exec "$SCRATCH/plan.json" --node "$NODE" --lock-dir "$SCRATCH/locks" \
  --query "$SCRATCH/now.xml" --rules "$RULES" >"$SCRATCH/exec.out" 2>&1
status=$?
set -e
[ "$status" != 0 ] || fail "exec --query passed: $(tail -20 "$SCRATCH/exec.out")"
grep -q '//ml:inference_test .*FAILED' "$SCRATCH/exec.out" && grep -q '//ml:remote_exec_test .*PASSED' "$SCRATCH/exec.out" ||
  fail "exec --query: not inference_test failed and the rest passed: $(tail -20 "$SCRATCH/exec.out")"
grep -q 'refusing to run //ml:inference_test .* asks for 2 GPUs by its tags' "$WORKSPACE/bazel-testlogs/ml/inference_test/test.log" ||
  fail "the test's log does not say why: $(head -20 "$WORKSPACE/bazel-testlogs/ml/inference_test/test.log")"
cd "$SOURCE_DIR"
echo "PASS"
