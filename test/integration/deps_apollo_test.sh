#!/usr/bin/env bash
# ApolloAuto/apollo's untagged GPU tests through the real Bazel on test/data/apollo/workspace: the
# captured query output is still what Bazel prints; audit finds every test that reaches CUDA, in the
# query of every configuration and in cquery of the GPU build; in cquery of the CPU build, LibTorch's
# CPU build (@libtorch_cpu, which @libtorch_* covers) is no GPU code, and Apollo's CPU PyTorch
# (@pytorch, a name the CUDA build has elsewhere) is GPU code until a rules file's gpu_free says not.
source test/integration/lib.sh
requires bazel jq

WS=$SOURCE_DIR/test/data/apollo/workspace
apollo() {
  local command=$1; shift
  (cd "$WS" && bazel --output_user_root="$BAZEL_ROOT" --max_idle_secs=60 "$command" "$@" \
     --override_repository=remote_coverage_tools="$STUBS/remote_coverage_tools" \
     --override_repository=rules_cc="$STUBS/rules_cc" --override_repository=rules_java="$STUBS/rules_java") \
    2>>"$SCRATCH/bazel.log" || { cat "$SCRATCH/bazel.log" >&2; fail "bazel $command $1 of the Apollo workspace failed"; }
}
# The fixture's paths, as its README says they were rewritten.
normalized() { sed -e "s#$WS#/w#g" -e 's#/[^" ]*/external/#/o/external/#g'; }

apollo query 'deps(tests(//...))' --noimplicit_deps --output=xml | normalized >"$SCRATCH/deps.xml"
diff <(sed 2,4d test/data/apollo/deps.query.xml) "$SCRATCH/deps.xml" >"$SCRATCH/deps.diff" ||
  fail "test/data/apollo/deps.query.xml is no longer what Bazel prints: $(head -20 "$SCRATCH/deps.diff")"

# Which tests reach GPU code, and through what (label, file name or linkopts).
reached() { # FILE [--rules RULES]: "label<TAB>path" of each test that reaches GPU code, sorted
  "$GPUPLAN" audit --json "$@" 2>/dev/null | jq -r '.gpu_code_without_annotation[] | "\(.label)\t\(.path)"' | sort
}
T=//modules/perception/common/inference/tensorrt
P=//modules/prediction/evaluator/vehicle
L=//third_party/libtorch
expect_reached() { # FILE EXPECTED [--rules RULES]
  local file=$1 expected=$2; shift 2
  [ "$(reached "$file" "$@")" = "$expected" ] || fail "$file: $(reached "$file" "$@")"
}
both_tensorrt="$T:rt_common_test	$T:rt_common_test → $T:apollo_perception_inference_rt_common → @local_config_cuda//cuda:cuda_headers
$T:slice_plugin_test	$T:slice_plugin_test → $T:apollo_perception_common_inference_tensorrt_plugins → $T:plugins/slice_plugin.cu"

# query follows both branches of Apollo's select()s: the GPU build of LibTorch is the one named.
expect_reached "$SCRATCH/deps.xml" "$both_tensorrt
$P:junction_mlp_evaluator_test	$P:junction_mlp_evaluator_test → $P:junction_mlp_evaluator → @pytorch//:pytorch
$L:libtorch_test	$L:libtorch_test → $L:libtorch → @libtorch_gpu//:libtorch_gpu"

# cquery of the GPU build (--define USE_GPU=true, and cuda_configure's nvcc).
apollo cquery 'deps(tests(//...))' --noimplicit_deps --define USE_GPU=true --define using_cuda_nvcc=true \
  --output=jsonproto >"$SCRATCH/gpu.json"
expect_reached "$SCRATCH/gpu.json" "$both_tensorrt
$P:junction_mlp_evaluator_test	$P:junction_mlp_evaluator_test → $P:junction_mlp_evaluator → @pytorch_gpu//:pytorch_gpu → @pytorch_gpu//:lib/libc10_cuda.so
$L:libtorch_test	$L:libtorch_test → $L:libtorch → @libtorch_gpu//:libtorch_gpu"

# cquery of the CPU build: @libtorch_cpu is no GPU code; @pytorch is, until gpu_free names it.
apollo cquery 'deps(tests(//...))' --noimplicit_deps --output=jsonproto >"$SCRATCH/cpu.json"
expect_reached "$SCRATCH/cpu.json" "$both_tensorrt
$P:junction_mlp_evaluator_test	$P:junction_mlp_evaluator_test → $P:junction_mlp_evaluator → @pytorch//:pytorch"
printf 'version: 1\ngpu_free: ["@pytorch//..."]\n' >"$SCRATCH/rules.yaml"
expect_reached "$SCRATCH/cpu.json" "$both_tensorrt" --rules "$SCRATCH/rules.yaml"

# The tests are CPU tests to classify: Apollo tags none.
"$GPUPLAN" classify --json "$SCRATCH/deps.xml" 2>/dev/null |
  jq -e '(.gpu_tests | length) == 0 and (.cpu_tests | length) == 5' >/dev/null ||
  fail "classify: $("$GPUPLAN" classify "$SCRATCH/deps.xml" 2>&1)"
echo "deps apollo: ok"
