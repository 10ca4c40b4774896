#!/usr/bin/env bash
# Where the dependency graph does not show GPU code by its labels, through the real Bazel on
# test/data/cuda_ws: rules_cuda's cuda_test (a cc_test over a cuda_library, whose CUDA runtime is
# an implicit dependency through a label_flag) is GPU code by its rule class; a .cu file that a
# genrule compiles and the machine's libcudart.so, imported under a repository name no pattern
# knows, are GPU code by their file names (so those cc_tests are not called GPU-free because other
# cc_tests reach GPU code); a library that links the machine's libcuda through linkopts is GPU code
# by its linkopts; and Ray-style py_tests whose torch comes from the Python that runs
# them are never called GPU-free: no py_test of the graph reaches GPU code, so the graph cannot tell.
source test/integration/lib.sh
requires bazel jq

WS=$SOURCE_DIR/test/data/cuda_ws
ws_query() {
  (cd "$WS" && bazel --output_user_root="$BAZEL_ROOT" --max_idle_secs=60 query "$@" \
     --override_repository=remote_coverage_tools="$STUBS/remote_coverage_tools" \
     --override_repository=rules_cc="$STUBS/rules_cc" --override_repository=rules_java="$STUBS/rules_java" \
     --output=xml) 2>>"$SCRATCH/bazel.log" || { cat "$SCRATCH/bazel.log" >&2; fail "bazel query $1 of cuda_ws failed"; }
}
ws_query 'deps(tests(//...))' --noimplicit_deps >"$SCRATCH/noimplicit.xml"
ws_query 'deps(tests(//...))' >"$SCRATCH/deps.xml"
# What makes the labels blind: --noimplicit_deps drops cuda_library's _builtin_deps, and even
# with it the label_flag's default (@cuda//:cuda_runtime) is no rule input of the query.
! grep -q 'rule-input name="//rules_cuda:runtime"' "$SCRATCH/noimplicit.xml" ||
  fail "--noimplicit_deps kept the implicit runtime dependency"
grep -q 'rule-input name="//rules_cuda:runtime"' "$SCRATCH/deps.xml" || fail "the implicit runtime dependency is missing"
! grep -q 'rule-input name="@cuda//:cuda_runtime"' "$SCRATCH/deps.xml" ||
  fail "Bazel now lists the label_flag's default as an input: the rule class is no longer the only sign"

for input in noimplicit deps; do
  "$GPUPLAN" explain //cu:kernel_test "$SCRATCH/$input.xml" >"$SCRATCH/explain.txt" 2>/dev/null ||
    fail "explain //cu:kernel_test failed"
  grep -qF "reaches GPU code: //cu:kernel_test → //cu:_kernel_test
  (//cu:_kernel_test is a cuda_library: CUDA code by its rule class)" "$SCRATCH/explain.txt" ||
    fail "$input: a rules_cuda test does not reach GPU code: $(cat "$SCRATCH/explain.txt")"
  "$GPUPLAN" explain //sys:nvml_test "$SCRATCH/$input.xml" 2>/dev/null | grep -qF "reaches GPU code: //sys:nvml_test → @system_gpu//:cudart → @system_gpu//:lib64/libcudart.so
  (@system_gpu//:lib64/libcudart.so is a CUDA library: GPU code by its file name)" ||
    fail "$input: a test linking the machine's libcudart.so: $("$GPUPLAN" explain //sys:nvml_test "$SCRATCH/$input.xml" 2>&1)"
  "$GPUPLAN" explain //sys:driver_test "$SCRATCH/$input.xml" 2>/dev/null | grep -qF "reaches GPU code: //sys:driver_test → //sys:driver
  (//sys:driver links -lcuda: GPU code by its linkopts)" ||
    fail "$input: a test linking the machine's libcuda by linkopts: $("$GPUPLAN" explain //sys:driver_test "$SCRATCH/$input.xml" 2>&1)"
  "$GPUPLAN" explain //gen:saxpy_test "$SCRATCH/$input.xml" 2>/dev/null | grep -qF "reaches GPU code: //gen:saxpy_test → //gen:saxpy.o → //gen:nvcc → //gen:saxpy.cu
  (//gen:saxpy.cu is a CUDA source: GPU code by its file name)" ||
    fail "$input: a test of a kernel nvcc compiles: $("$GPUPLAN" explain //gen:saxpy_test "$SCRATCH/$input.xml" 2>&1)"

  "$GPUPLAN" audit --json "$SCRATCH/$input.xml" >"$SCRATCH/audit.json" 2>"$SCRATCH/audit.err" ||
    fail "audit failed: $(cat "$SCRATCH/audit.err")"
  jq -e '.gpu_without_gpu_code == [] and (.unknown | length) == 1 and .unknown[0].label == "//ray:train_gpu_test"
         and .unknown[0].reason == "no py_test of the graph reaches GPU code: its own may be outside the graph"' \
    "$SCRATCH/audit.json" >/dev/null || fail "$input: audit: $(jq -c '.gpu_without_gpu_code, .unknown' "$SCRATCH/audit.json")"
  grep -q "^gpuplan: warning: no py_test of the dependency graph reaches GPU code (gpu_deps), so the graph cannot tell whether its 1 GPU-annotated py_test needs a GPU" \
    "$SCRATCH/audit.err" || fail "$input: audit gives no warning for the py_tests: $(cat "$SCRATCH/audit.err")"
  # The totals line counts that warning (it said only what the audit found).
  tail -n 1 "$SCRATCH/audit.err" | grep -q '^gpuplan: [0-9]* tests audited: .*; 1 warning, 0 notes$' ||
    fail "$input: audit's totals line does not count its warning: $(cat "$SCRATCH/audit.err")"
done

# cquery's jsonproto carries the linkopts as an attribute of the library.
(cd "$WS" && bazel --output_user_root="$BAZEL_ROOT" --max_idle_secs=60 cquery 'deps(//sys:driver_test)' \
   --override_repository=remote_coverage_tools="$STUBS/remote_coverage_tools" \
   --override_repository=rules_cc="$STUBS/rules_cc" --override_repository=rules_java="$STUBS/rules_java" \
   --output=jsonproto) >"$SCRATCH/driver.cquery.json" 2>>"$SCRATCH/bazel.log" ||
  { cat "$SCRATCH/bazel.log" >&2; fail "bazel cquery of //sys:driver_test failed"; }
"$GPUPLAN" explain //sys:driver_test "$SCRATCH/driver.cquery.json" 2>/dev/null |
  grep -qF "(//sys:driver links -lcuda: GPU code by its linkopts)" ||
  fail "cquery: $("$GPUPLAN" explain //sys:driver_test "$SCRATCH/driver.cquery.json" 2>&1)"

"$GPUPLAN" explain //ray:train_gpu_test "$SCRATCH/deps.xml" 2>/dev/null |
  grep -qF "  unknown: no py_test of the graph reaches GPU code: its own may be outside the graph (name it in the rules file's gpu_deps)" ||
  fail "explain of a blind py_test: $("$GPUPLAN" explain //ray:train_gpu_test "$SCRATCH/deps.xml" 2>&1)"
"$GPUPLAN" explain //ray:train_gpu_test "$SCRATCH/deps.xml" --json 2>/dev/null |
  jq -e '.gpu_code.unknown and .gpu_code.reaches == null and .gpu_code.blind_rule_class == "py_test"' >/dev/null ||
  fail "explain --json of a blind py_test"

# --classify-by-deps moves none: the plan keeps every GPU test, and says why in one line.
"$GPUPLAN" plan --classify-by-deps "$SCRATCH/deps.xml" --fleet examples/fleet.yaml -o "$SCRATCH/plan.json" \
  2>"$SCRATCH/plan.err" || fail "plan --classify-by-deps failed: $(cat "$SCRATCH/plan.err")"
[ "$(jq -r '[.assignments[].label] | unique | join(" ")' "$SCRATCH/plan.json")" = "//cu:kernel_test //gen:saxpy_test //ray:train_gpu_test //sys:driver_test //sys:nvml_test" ] ||
  fail "GPU tests planned: $(jq -c '[.assignments[].label] | unique' "$SCRATCH/plan.json")"
grep -q "^gpuplan: --classify-by-deps moved 0 GPU tests that reach no GPU code to the CPU bucket; 1 left as they are: no test of their rule class reaches GPU code$" \
  "$SCRATCH/plan.err" || fail "the totals line: $(cat "$SCRATCH/plan.err")"
refuses "no py_test of the dependency graph reaches GPU code" \
  plan --classify-by-deps --strict "$SCRATCH/deps.xml" --fleet examples/fleet.yaml -o "$SCRATCH/strict.json"
refuses -F "//ray:train_gpu_test: no py_test of the graph reaches GPU code" audit --strict "$SCRATCH/deps.xml"

echo "deps blind: ok"
