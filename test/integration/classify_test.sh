#!/usr/bin/env bash
# End to end through the real Bazel: the example workspace's tests, classified with the
# example rules file, land in the right buckets with the right requirements; explain says
# why; malformed annotations fail under --strict; the rules file matches its schema.
source test/integration/lib.sh
requires bazel jq python3

bazel_ws query 'tests(//...)' --output=xml > "$SCRATCH/query.xml" 2> "$SCRATCH/bazel.log" ||
  { cat "$SCRATCH/bazel.log" >&2; fail "bazel query failed"; }

"$GPUPLAN" classify --rules examples/rules.yaml --json "$SCRATCH/query.xml" > "$SCRATCH/classify.json"

# One line a test: label bucket gpus gpu_mem_mib cuda compute_capability gpu_models nvlink exclusive.
jq -r '(.gpu_tests[] | [.label, .bucket, .requirements.gpus, .requirements.gpu_mem_mib, .requirements.cuda,
         .requirements.compute_capability, (.requirements.gpu_models | if . then join("|") else null end),
         .requirements.nvlink, .requirements.exclusive] | map(if . == null then "-" else tostring end) | join(" ")),
       (.cpu_tests[] | "\(.label) cpu"), (.skipped_tests[] | "\(.label) skipped")' \
  "$SCRATCH/classify.json" | sort > "$SCRATCH/actual.txt"
sort > "$SCRATCH/expected.txt" <<'EXPECTED'
//core:config_test cpu
//core:parser_test cpu
//core:unit_test cpu
//jax:docker_runtime_test gpu 1 - >=12.0 - - false false
//jax:pmap_test gpu 8 - >=12.0 - - false false
//ml:allreduce_test gpu 8 - - - - true true
//ml:benchmark_test skipped
//ml:cuda11_compat_test gpu 1 - <12.0 - - false false
//ml:flaky_kernel_test gpu 1 8192 - - - false false
//ml:inference_test gpu 1 16384 - - - false false
//ml:pool_test gpu 1 - - - - false false
//ml:remote_exec_test gpu 1 - - - a100 false false
//ml:resources_test gpu 2 - - - - false false
//ml:team_macro_test gpu 4 16384 - - - false false
//ml:train_test gpu 2 40960 >=12.4 - - true false
//ml:video_decode_test gpu 1 - - - l4|l40s false false
//tf:conv_test gpu 1 - - - - false false
//tf:cpu_fallback_test cpu
//tf:mirrored_strategy_test gpu 2 - - - - false false
//tf:nccl_test gpu 2 - - - - false false
//xla:collective_ops_test gpu 4 - - >=8.0 - false false
//xla:fp8_gemm_test gpu 1 - - ==9.0 - false false
//xla:triton_test gpu 1 - - >=8.0 - false false
EXPECTED
diff -u "$SCRATCH/expected.txt" "$SCRATCH/actual.txt" || fail "classify put a test in the wrong bucket or with wrong requirements"

# Sources: the team macro's count comes from the rule, remote execution's from exec_properties.
[ "$(jq -r '.gpu_tests[] | select(.label == "//ml:team_macro_test") | .sources.gpus' "$SCRATCH/classify.json")" = \
  "rule examples/rules.yaml:22:5 (tag team-gpus-4)" ] || fail "the team macro's GPU count does not name its rule"
[ "$(jq -r '.gpu_tests[] | select(.label == "//ml:remote_exec_test") | .sources.gpus' "$SCRATCH/classify.json")" = \
  "exec_properties resources:gpu=1" ] || fail "remote_exec_test's GPU count does not name its exec_property"
[ "$(jq '.diagnostics | length' "$SCRATCH/classify.json")" = 0 ] || fail "the example workspace has diagnostics"

# Without the rules file the team macro's tag is not understood: a CPU test, and a warning that
# the tag names a GPU (a team's CI may pick GPU tests by it), saying what to write.
"$GPUPLAN" classify "$SCRATCH/query.xml" > "$SCRATCH/table.txt"
grep -q '^  //ml:team_macro_test  *no GPU annotation$' "$SCRATCH/table.txt" || fail "team_macro_test without rules"
grep -qF "warning: //ml:team_macro_test: tag team-gpus-4 names a GPU, but no convention or rule reads it, so the test is planned as a CPU test, where it runs without a GPU. If the tag marks GPU tests (Ray's CI runs its train_v2_gpu tests on GPU machines), tag the test gpu:4 or give a rule whose tag regex matches it, such as {tag: '^team-gpus-4\$', set: {gpus: 4}}" \
  "$SCRATCH/table.txt" || fail "no warning on team-gpus-4: $(cat "$SCRATCH/table.txt")"
grep -q '^  //ml:train_test  *2 GPUs, ≥ 40GiB each, CUDA ≥ 12.4, NVLink; 4 shards$' "$SCRATCH/table.txt" ||
  fail "the table does not summarise train_test"

# Target lists for bazel test --target_pattern_file, read from standard input this time.
"$GPUPLAN" classify --rules examples/rules.yaml --cpu-targets "$SCRATCH/cpu.txt" --gpu-targets "$SCRATCH/gpu.txt" \
  < "$SCRATCH/query.xml" > /dev/null
printf '//core:config_test\n//core:parser_test\n//core:unit_test\n//tf:cpu_fallback_test\n' |
  diff -u - "$SCRATCH/cpu.txt" || fail "wrong CPU target list"
[ "$(wc -l < "$SCRATCH/gpu.txt")" = 18 ] || fail "the GPU target list should hold 18 tests"
grep -qx '//ml:benchmark_test' "$SCRATCH/gpu.txt" && fail "a manual test is in the GPU list"
"$GPUPLAN" classify --include-manual --gpu-targets "$SCRATCH/gpu-manual.txt" "$SCRATCH/query.xml" > /dev/null
grep -qx '//ml:benchmark_test' "$SCRATCH/gpu-manual.txt" || fail "--include-manual did not plan the manual test"

# explain: raw attributes, each requirement with its source, and the bucket.
"$GPUPLAN" explain //xla:triton_test "$SCRATCH/query.xml" > "$SCRATCH/explain.txt"
grep -q '^  tags  *gpu-cc>=8.0, requires-gpu-sm80$' "$SCRATCH/explain.txt" || fail "explain shows no tags"
grep -q '^  compute capability  ≥ 8.0  *from tag gpu-cc>=8.0$' "$SCRATCH/explain.txt" || fail "explain: no cc source"
grep -q '^  gpus  *1  *from tag requires-gpu-sm80$' "$SCRATCH/explain.txt" || fail "explain: no gpus source"
grep -q '^bucket: gpu$' "$SCRATCH/explain.txt" || fail "explain shows no bucket"
"$GPUPLAN" explain @//ml:pool_test --json "$SCRATCH/query.xml" |
  jq -e '.bucket == "gpu" and .sources.gpus == "exec_properties Pool=gpu-pool" and .exec_properties.Pool == "gpu-pool"' \
  > /dev/null || fail "explain --json for pool_test"
if "$GPUPLAN" explain //xla:triton "$SCRATCH/query.xml" 2> "$SCRATCH/err.txt"; then fail "explain of an unknown label"; fi
grep -q 'did you mean //xla:triton_test?' "$SCRATCH/err.txt" || fail "explain of a typo does not suggest the label"
# A label without its //, or a bare target name, is suggested its test (before, none, or another).
for given in xla:triton_test triton_test; do
  "$GPUPLAN" explain "$given" "$SCRATCH/query.xml" 2> "$SCRATCH/err.txt" && fail "explain $given found a test"
  grep -q 'did you mean //xla:triton_test?' "$SCRATCH/err.txt" || fail "explain $given: $(cat "$SCRATCH/err.txt")"
done
# explain --strict is about its test: another test's warning (//ml:team_macro_test's unread tag)
# neither counts nor fails it (before, exit 2 and "1 warning" for a test without one).
"$GPUPLAN" explain //xla:triton_test --strict "$SCRATCH/query.xml" > /dev/null 2> "$SCRATCH/err.txt" ||
  fail "explain --strict of a test without warnings failed: $(cat "$SCRATCH/err.txt")"
grep -qx 'gpuplan: 0 warnings, 0 notes' "$SCRATCH/err.txt" || fail "explain counts other tests': $(cat "$SCRATCH/err.txt")"
status=0
"$GPUPLAN" explain //ml:team_macro_test --strict "$SCRATCH/query.xml" > "$SCRATCH/team.txt" 2>&1 || status=$?
[ "$status" = 2 ] && grep -q 'error: tag team-gpus-4 names a GPU' "$SCRATCH/team.txt" ||
  fail "explain --strict of a test with a warning: exit $status, $(cat "$SCRATCH/team.txt")"

# A label longer than the column gets a line of its own: the other tests' details stay near it
# (one 70-character label pushed every detail past column 72).
sed 's|//ml:pool_test|//ml/a/package/path/long/enough/to/pass/the/column/of/labels:pool_test|' "$SCRATCH/query.xml" \
  > "$SCRATCH/long.xml"
"$GPUPLAN" classify --rules examples/rules.yaml "$SCRATCH/long.xml" 2>/dev/null > "$SCRATCH/long.txt"
grep -q '^  //xla:triton_test  *1 GPU' "$SCRATCH/long.txt" && [ "$(grep '^  //xla:triton_test' "$SCRATCH/long.txt" | grep -o '^  //xla:triton_test  *' | wc -c)" -lt 40 ] ||
  fail "a long label widened the column: $(grep triton "$SCRATCH/long.txt")"
grep -A1 '^  //ml/a/package/path/long/enough/to/pass/the/column/of/labels:pool_test$' "$SCRATCH/long.txt" | grep -q '^   *1 GPU' ||
  fail "the long label's detail is not under it: $(grep -A1 pool_test "$SCRATCH/long.txt")"

# Malformed annotations: warnings, exit 0; under --strict errors, exit 2 and no file written.
"$GPUPLAN" classify --json test/data/annotate/malformed.query.xml > "$SCRATCH/malformed.json"
[ "$(jq '[.diagnostics[] | select(.severity == "warning")] | length' "$SCRATCH/malformed.json")" = 7 ] ||
  fail "the malformed fixture should give 7 warnings"
refuses '//bad:zero_test: tag gpu:0 is malformed' \
  classify --strict --cpu-targets "$SCRATCH/strict.txt" test/data/annotate/malformed.query.xml
# One file for both lists: the GPU list would replace the CPU one, and CPU runners run GPU tests.
cd "$SCRATCH"
refuses "name the same file" classify "$SOURCE_DIR/examples/query.xml" --cpu-targets same.txt --gpu-targets ./same.txt
cd "$SOURCE_DIR"

# A bad rules file fails with file:line:col.
printf 'rules:\n  - tag: x\n    set: {gpu: 2}\n' > "$SCRATCH/bad-rules.yaml"
refuses "bad-rules.yaml:3:11: unknown key \"gpu\" in set (did you mean \"gpus\"?)" \
  classify --rules "$SCRATCH/bad-rules.yaml" "$SCRATCH/query.xml"

# The example rules file matches its schema.
/usr/bin/python3 - <<'PY' || fail "examples/rules.yaml does not match schemas/rules.schema.json"
import json, yaml, jsonschema
schema = json.load(open("schemas/rules.schema.json"))
jsonschema.Draft202012Validator.check_schema(schema)
jsonschema.validate(yaml.safe_load(open("examples/rules.yaml")), schema, cls=jsonschema.Draft202012Validator)
PY
# Real repositories' conventions, through the real Bazel: test/data/variants_ws expands tests the
# way JAX's jax_multiplatform_test/jax_multiprocess_test, XLA's xla_test, TensorFlow's cuda_py_test
# and rules_cuda's cuda_test do (its defs.bzl says how).
VARIANTS=$SOURCE_DIR/test/data/variants_ws
(cd "$VARIANTS" && bazel --output_user_root="$BAZEL_ROOT" --max_idle_secs=60 query 'tests(//...)' --output=xml) \
  > "$SCRATCH/variants.xml" 2> "$SCRATCH/variants.log" || { cat "$SCRATCH/variants.log" >&2; fail "bazel query of variants_ws failed"; }
"$GPUPLAN" classify --json "$SCRATCH/variants.xml" > "$SCRATCH/variants.json" 2> "$SCRATCH/variants.err"
jq -r '(.gpu_tests[] | [.label, .bucket, .requirements.gpus, (.requirements.vendor // "-"), .requirements.exclusive] | map(tostring) | join(" ")),
       (.cpu_tests[] | "\(.label) cpu"), (.skipped_tests[] | "\(.label) skipped")' "$SCRATCH/variants.json" | sort > "$SCRATCH/actual.txt"
sort > "$SCRATCH/expected.txt" <<'EXPECTED'
//:api_test_cpu cpu
//:api_test_gpu gpu 1 nvidia false
//:api_test_tpu skipped
//:collective_ops_test_cpu cpu
//:collective_ops_test_gpu gpu 2 nvidia false
//:collective_ops_test_2gpu skipped
//:kernel_test gpu 1 nvidia false
//:collective_test_amdgpu_any gpu 2 amd true
//:collective_test_cpu cpu
//:collective_test_h100 gpu 2 nvidia false
//:collective_test_intelgpu_any gpu 2 intel false
//:collective_test_nvgpu_any gpu 2 nvidia false
//:pmap_test_cpu cpu
//:pmap_test_gpu gpu 8 nvidia false
//:pmap_test_tpu skipped
//:ray_exclusive_test gpu 1 - true
//:rocm_kernel_test gpu 1 amd false
//:typo_test cpu
//:check_cuda_sort.mlir gpu 1 nvidia false
//:check_rocm_hip_sort.mlir gpu 1 amd false
//:check_vulkan-spirv_vulkan_sort.mlir gpu 1 - true
//:check_llvm-cpu_local-task_sort.mlir cpu
//:check_rocm_hip_cdna3_matmul.mlir gpu 1 amd false
//:check_rocm_hip_rdna4_matmul.mlir gpu 1 amd false
//:vulkan_core_driver_test gpu 1 - true
EXPECTED
diff -u "$SCRATCH/expected.txt" "$SCRATCH/actual.txt" || fail "the real conventions landed in the wrong buckets"
grep -q '^gpuplan: warning: //:typo_test: tag gpus:2 looks like a GPU annotation but is not one: did you mean "gpu:2"?' \
  "$SCRATCH/variants.err" || fail "the near miss gpus:2 is not a warning on stderr: $(cat "$SCRATCH/variants.err")"
# rules_cuda's cuda_test adds no tag: only the macro says CUDA. It is read as 1 NVIDIA GPU, with a
# warning (before, a CPU test with a warning that the macro was not read).
grep -q "^gpuplan: warning: //:kernel_test: rules_cuda's cuda_test made the test: .* read as 1 NVIDIA GPU" \
  "$SCRATCH/variants.err" || fail "the cuda_test test said nothing: $(cat "$SCRATCH/variants.err")"
grep -q '^gpuplan: 2 warnings, 4 notes; gpuplan explain //:kernel_test for one test$' "$SCRATCH/variants.err" ||
  fail "no totals line: $(cat "$SCRATCH/variants.err")"
# IREE's AMD architectures: CDNA3 is the MI300 models, RDNA4 (no fleet field says it) any AMD GPU, with a note;
# a Vulkan test holds its node (Vulkan does not read CUDA_VISIBLE_DEVICES), with a note for each tag saying so.
jq -e '.gpu_tests[] | select(.label == "//:check_rocm_hip_cdna3_matmul.mlir") | .requirements.gpu_models == ["mi300a", "mi300x", "mi325x"]' \
  "$SCRATCH/variants.json" > /dev/null || fail "requires-gpu-cdna3 is not the MI300 models"
jq -e '[.diagnostics[] | select(.severity == "note") | .label] == ["//:check_rocm_hip_rdna4_matmul.mlir",
        "//:check_vulkan-spirv_vulkan_sort.mlir", "//:vulkan_core_driver_test", "//:vulkan_core_driver_test"]' \
  "$SCRATCH/variants.json" > /dev/null || fail "the notes of requires-gpu-rdna4 and Vulkan: $(jq -c .diagnostics "$SCRATCH/variants.json")"
refuses "" classify --strict "$SCRATCH/variants.xml"
# AMD and Intel tests never land on NVIDIA GPUs; the Intel one has no Intel node and says so.
status=0
"$GPUPLAN" plan "$SCRATCH/variants.xml" --fleet "$VARIANTS/fleet.yaml" -o "$SCRATCH/variants.plan.json" \
  2> "$SCRATCH/plan.err" || status=$?
[ "$status" = 3 ] || fail "the Intel test should be unschedulable (exit 3), not $status"
jq -e '[.assignments[] | select(.requirements.vendor == "amd") | .node] | unique == ["mi250x-0"]' \
  "$SCRATCH/variants.plan.json" > /dev/null || fail "AMD tests were placed off the AMD node"
jq -e '[.assignments[] | select(.requirements.vendor == "nvidia") | .node] | unique == ["h100-0"]' \
  "$SCRATCH/variants.plan.json" > /dev/null || fail "NVIDIA tests were placed off the NVIDIA node"
jq -r '.unschedulable[] | "\(.label): \(.reason)"' "$SCRATCH/variants.plan.json" |
  grep -q '^//:collective_test_intelgpu_any: needs 2 Intel GPUs; ' || fail "the Intel test's reason: $(jq -c .unschedulable "$SCRATCH/variants.plan.json")"
jq -r '.unschedulable[] | "\(.label): \(.reason)"' "$SCRATCH/variants.plan.json" |
  grep -q '^//:check_rocm_hip_cdna3_matmul.mlir: needs 1 AMD GPU.*mi300x' ||
  fail "the CDNA3 test should be unschedulable on an MI250X fleet: $(jq -c .unschedulable "$SCRATCH/variants.plan.json")"
"$GPUPLAN" verify "$SCRATCH/variants.plan.json" --fleet "$VARIANTS/fleet.yaml" > /dev/null ||
  fail "verify rejects the vendor-aware plan"
# Each node's Kubernetes Job asks for its own vendor's device plugin resource.
"$GPUPLAN" export kubernetes "$SCRATCH/variants.plan.json" --fleet "$VARIANTS/fleet.yaml" --image ci:1 \
  -o "$SCRATCH/k8s" > /dev/null 2>&1 || fail "export kubernetes of the two-vendor plan failed"
grep -q '^ *amd.com/gpu: 8$' "$SCRATCH/k8s/gpuplan-mi250x-0.yaml" && ! grep -q 'nvidia.com/gpu' "$SCRATCH/k8s/gpuplan-mi250x-0.yaml" ||
  fail "the AMD node's Job does not ask for amd.com/gpu: $(grep -A3 limits "$SCRATCH/k8s/gpuplan-mi250x-0.yaml")"
grep -q '^ *nvidia.com/gpu: 8$' "$SCRATCH/k8s/gpuplan-h100-0.yaml" || fail "the NVIDIA node's Job does not ask for nvidia.com/gpu"
# A plan that puts the ROCm test on the NVIDIA node is caught by verify.
jq '(.assignments[] | select(.label == "//:rocm_kernel_test")) |= (.node = "h100-0" | .gpus = [7] | .env.CUDA_VISIBLE_DEVICES = "7")' \
  "$SCRATCH/variants.plan.json" > "$SCRATCH/wrong-vendor.plan.json"
status=0
"$GPUPLAN" verify "$SCRATCH/wrong-vendor.plan.json" --fleet "$VARIANTS/fleet.yaml" > "$SCRATCH/verify.txt" || status=$?
[ "$status" = 4 ] || fail "verify of a wrong-vendor plan should exit 4, not $status"
grep -q 'needs an AMD GPU' "$SCRATCH/verify.txt" || fail "verify does not name the vendor: $(cat "$SCRATCH/verify.txt")"

# Labels only: plan refuses rather than planning everything on CPU runners, unless told.
(cd "$VARIANTS" && bazel --output_user_root="$BAZEL_ROOT" --max_idle_secs=60 query 'tests(//...)' --output=label) \
  > "$SCRATCH/labels.txt" 2>> "$SCRATCH/variants.log"
refuses '--output=xml' plan "$SCRATCH/labels.txt" --fleet "$VARIANTS/fleet.yaml"
"$GPUPLAN" plan "$SCRATCH/labels.txt" --fleet "$VARIANTS/fleet.yaml" --allow-untagged > /dev/null 2>&1 ||
  fail "--allow-untagged should plan labels-only input"
# classify's --cpu-targets feeds CPU runners: it refuses labels-only input too.
refuses "" classify "$SCRATCH/labels.txt" --cpu-targets "$SCRATCH/untagged-cpu.txt"
# A rules file whose rules cannot read these labels (a rule class, which --output=label lacks)
# classifies nothing: still refused, naming the rules file.
printf 'rules:\n  - {label: "//...", rule_class: py_test, set: {gpus: 1}}\n' > "$SCRATCH/class-rules.yaml"
refuses "no rule of $SCRATCH/class-rules.yaml matches any of them" \
  plan "$SCRATCH/labels.txt" --fleet "$VARIANTS/fleet.yaml" --rules "$SCRATCH/class-rules.yaml"
# label_kind output and a rule for one test: each other test is a warning naming it (their tags
# are unknown, so CPU is a guess), an error under --strict.
(cd "$VARIANTS" && bazel --output_user_root="$BAZEL_ROOT" --max_idle_secs=60 query 'tests(//...)' --output=label_kind) \
  > "$SCRATCH/label_kind.txt" 2>> "$SCRATCH/variants.log"
printf 'rules:\n  - {label: "//:pmap_test_gpu", set: {gpus: 8}}\n' > "$SCRATCH/label-rules.yaml"
"$GPUPLAN" plan "$SCRATCH/label_kind.txt" --fleet "$VARIANTS/fleet.yaml" --rules "$SCRATCH/label-rules.yaml" \
  -o "$SCRATCH/label_kind.plan.json" 2> "$SCRATCH/untagged.err" ||
  fail "plan of label_kind with a label rule failed: $(cat "$SCRATCH/untagged.err")"
jq -e '[.assignments[] | [.label, (.gpus | length)]] == [["//:pmap_test_gpu", 8]]' "$SCRATCH/label_kind.plan.json" \
  > /dev/null || fail "the label rule did not plan //:pmap_test_gpu on 8 GPUs alone"
grep -q "warning: //:[a-z_0-9]*: the input has no tags (label_kind output) and no rule of $SCRATCH/label-rules.yaml matches this test" \
  "$SCRATCH/untagged.err" && grep -q "gpuplan: 24 warnings" "$SCRATCH/untagged.err" || fail "a test no rule reads became a CPU test without a word: $(cat "$SCRATCH/untagged.err")"
refuses "" plan "$SCRATCH/label_kind.txt" --fleet "$VARIANTS/fleet.yaml" --rules "$SCRATCH/label-rules.yaml" --strict
# A byte order mark (PowerShell's redirection writes one) is no part of the first test's rule class.
printf '\xef\xbb\xbf' | cat - "$SCRATCH/label_kind.txt" > "$SCRATCH/bom.label_kind"
first=$(head -1 "$SCRATCH/label_kind.txt")
printf 'rules:\n  - {label: "%s", rule_class: %s, set: {gpus: 1}}\n' "${first##* }" "${first%% *}" > "$SCRATCH/bom-rules.yaml"
"$GPUPLAN" classify --json "$SCRATCH/bom.label_kind" --rules "$SCRATCH/bom-rules.yaml" > "$SCRATCH/bom.json" 2>/dev/null ||
  fail "classify of label_kind with a byte order mark failed"
[ "$(jq -r '[.gpu_tests[].label] | join(" ")' "$SCRATCH/bom.json")" = "${first##* }" ] ||
  fail "the byte order mark hid the first test's rule class: $(jq -c '[.gpu_tests[].label]' "$SCRATCH/bom.json")"

# shard_count = select(...), through the real Bazel: query cannot say which branch applies, so the
# test is planned unsharded with a warning (an error under --strict); cquery resolves it.
SELECT_WS=$SOURCE_DIR/test/data/select_ws
select_bazel() {
  (cd "$SELECT_WS" && bazel --output_user_root="$BAZEL_ROOT" --max_idle_secs=60 "$@") 2>> "$SCRATCH/select.log" ||
    { cat "$SCRATCH/select.log" >&2; fail "bazel $1 of select_ws failed"; }
}
select_bazel query 'tests(//:*)' --output=xml > "$SCRATCH/select.xml"
grep -q '<int configurable="yes" name="shard_count"/>' "$SCRATCH/select.xml" ||
  fail "Bazel no longer prints a select()ed shard_count without a value: $(grep shard_count "$SCRATCH/select.xml")"
"$GPUPLAN" classify --json "$SCRATCH/select.xml" > "$SCRATCH/select.json" 2> "$SCRATCH/select.err" ||
  fail "a select()ed shard_count stopped classify: $(cat "$SCRATCH/select.err")"
jq -e '.gpu_tests[0].label == "//:sharded_on_cuda_test"' "$SCRATCH/select.json" > /dev/null || fail "the test is not a GPU test"
grep -q '^gpuplan: warning: //:sharded_on_cuda_test: shard_count is a select(), which bazel query cannot resolve: it is planned unsharded' \
  "$SCRATCH/select.err" || fail "no warning for the select()ed shard_count: $(cat "$SCRATCH/select.err")"
[ "$("$GPUPLAN" targets --json "$SCRATCH/select.xml" | jq -c '.tests[0].shard_count')" = null ] ||
  fail "targets --json should show an unresolved shard_count as null, not a number"
"$GPUPLAN" targets "$SCRATCH/select.xml" | grep -q "^//:sharded_on_cuda_test  *sh_test  *medium  *select()" ||
  fail "the targets table should show select() for the shards: $("$GPUPLAN" targets "$SCRATCH/select.xml")"
refuses "" plan --strict "$SCRATCH/select.xml" --fleet examples/fleet.yaml -o "$SCRATCH/select.plan.json"
select_bazel cquery 'tests(//:*)' --define cuda=1 --output=jsonproto --override_repository=remote_coverage_tools="$STUBS/remote_coverage_tools" \
  --override_repository=rules_cc="$STUBS/rules_cc" --override_repository=rules_java="$STUBS/rules_java" > "$SCRATCH/select.cquery.json"
"$GPUPLAN" plan --strict "$SCRATCH/select.cquery.json" --fleet examples/fleet.yaml -o "$SCRATCH/select.plan.json" 2> /dev/null ||
  fail "cquery's resolved shard_count should plan under --strict"
jq -e '[.assignments[].unit] | sort == [range(4) | "//:sharded_on_cuda_test#shard-\(.)-of-4"]' "$SCRATCH/select.plan.json" > /dev/null ||
  fail "cquery --define cuda=1 should plan four shards: $(jq -c '[.assignments[].unit]' "$SCRATCH/select.plan.json")"

# A query that fails writes nothing: a warning says so (not a silent empty plan), --strict fails.
(cd "$SELECT_WS" && bazel --output_user_root="$BAZEL_ROOT" --max_idle_secs=60 query 'tests(//no/such/...)' --output=xml 2>/dev/null ||
  echo "bazel query failed with $?" > "$SCRATCH/failed-query.status") > "$SCRATCH/failed-query.xml"
grep -q "failed with 7" "$SCRATCH/failed-query.status" || fail "the query of a missing package did not fail as expected"
"$GPUPLAN" plan "$SCRATCH/failed-query.xml" --fleet examples/fleet.yaml -o "$SCRATCH/empty.plan.json" 2> "$SCRATCH/empty.err" ||
  fail "empty input is still a (warned) empty plan without --strict"
grep -q "failed-query.xml is empty, so there are no tests. A bazel query that fails writes nothing" "$SCRATCH/empty.err" ||
  fail "no warning for empty input: $(cat "$SCRATCH/empty.err")"
grep -q "^gpuplan: 1 warning, 0 notes" "$SCRATCH/empty.err" || fail "the totals line does not count it: $(cat "$SCRATCH/empty.err")"
refuses "" plan --strict - --fleet examples/fleet.yaml -o "$SCRATCH/strict-empty.plan.json" < "$SCRATCH/failed-query.xml"

# A test_suite queried as itself: Bazel lists the suite, not its tests. Not a silent empty plan.
select_bazel query //:gpu_suite --output=xml > "$SCRATCH/suite.xml"
grep -q '<rule class="test_suite"' "$SCRATCH/suite.xml" || fail "the query of a test_suite does not list it"
"$GPUPLAN" plan "$SCRATCH/suite.xml" --fleet examples/fleet.yaml -o "$SCRATCH/suite.plan.json" 2> "$SCRATCH/suite.err" ||
  fail "a suite without its tests is still a (warned) plan without --strict"
grep -q "suite.xml holds 1 test_suite and no tests: bazel query lists a test_suite as itself, not its tests" "$SCRATCH/suite.err" ||
  fail "no warning for a test_suite queried as itself: $(cat "$SCRATCH/suite.err")"
refuses "" plan --strict "$SCRATCH/suite.xml" --fleet examples/fleet.yaml -o "$SCRATCH/strict-suite.plan.json"
select_bazel query 'tests(//:gpu_suite)' --output=xml > "$SCRATCH/suite-tests.xml"
"$GPUPLAN" plan "$SCRATCH/suite-tests.xml" --fleet examples/fleet.yaml -o "$SCRATCH/suite-tests.plan.json" 2> /dev/null &&
  [ "$(jq '.assignments | length' "$SCRATCH/suite-tests.plan.json")" -ge 1 ] || fail "tests(//:gpu_suite) does not plan its test"

# A test that asks for a GPU platform only through target_compatible_with: a CPU test, with a
# warning (an error under --strict), in query and cquery output alike; a rule reads the constraint.
select_bazel query 'tests(//platform/...)' --output=xml > "$SCRATCH/constraint.xml"
select_bazel cquery 'tests(//platform/...)' --output=jsonproto --override_repository=remote_coverage_tools="$STUBS/remote_coverage_tools" \
  --override_repository=rules_cc="$STUBS/rules_cc" --override_repository=rules_java="$STUBS/rules_java" > "$SCRATCH/constraint.cquery.json"
for input in constraint.xml constraint.cquery.json; do
  "$GPUPLAN" classify --json "$SCRATCH/$input" > /dev/null 2> "$SCRATCH/constraint.err" || fail "classify $input failed"
  grep -q "^gpuplan: warning: //platform:four_gpu_test: target_compatible_with //platform:has_4_gpus looks like a GPU platform's constraint" \
    "$SCRATCH/constraint.err" || fail "$input: no warning for a GPU constraint: $(cat "$SCRATCH/constraint.err")"
  refuses "" classify --strict "$SCRATCH/$input"
done
printf 'version: 1\nrules:\n  - tag: "//platform:has_(\\\\d+)_gpus"\n    set: {gpus: $1}\n' > "$SCRATCH/constraint.rules.yaml"
"$GPUPLAN" classify --strict --json --rules "$SCRATCH/constraint.rules.yaml" "$SCRATCH/constraint.xml" 2> /dev/null |
  jq -e '.gpu_tests[0].label == "//platform:four_gpu_test" and .gpu_tests[0].requirements.gpus == 4' > /dev/null ||
  fail "a rule does not read the constraint: $(cat "$SCRATCH/constraint.rules.yaml")"

# GPU models and vendors named where no convention reads them: a warning each (errors under
# --strict), saying what to write; a rule that reads the constraint makes the test that model's.
select_bazel query 'tests(//model/...)' --output=xml > "$SCRATCH/model.xml"
"$GPUPLAN" classify --json "$SCRATCH/model.xml" > /dev/null 2> "$SCRATCH/model.err" || fail "classify model.xml failed"
grep -qF "gpuplan: warning: //model:h100_test: target_compatible_with //model:h100_gpu names the GPU model h100, but no convention or rule reads it, so the test may be planned on a GPU of another model, whose platform lacks it, so Bazel skips the test there as incompatible and passes. If it needs h100, tag it gpu-model:h100 or give a rule whose tag regex matches it, such as {tag: '^//model:h100_gpu\$', set: {gpu_models: h100}}" \
  "$SCRATCH/model.err" || fail "no warning for //model:h100_gpu: $(cat "$SCRATCH/model.err")"
grep -qF "gpuplan: warning: //model:a100_only_test: tag a100_only names a GPU model (a100), but no convention or rule reads it, so the test is planned as a CPU test" \
  "$SCRATCH/model.err" || fail "no warning for tag a100_only: $(cat "$SCRATCH/model.err")"
grep -qF "gpuplan: warning: //model:amd_test: target_compatible_with //model:amd_gpu names the GPU vendor amd, but no convention or rule reads it, so the test may be planned on a GPU of another vendor" \
  "$SCRATCH/model.err" || fail "no warning for //model:amd_gpu: $(cat "$SCRATCH/model.err")"
refuses "" classify --strict "$SCRATCH/model.xml"
printf 'version: 1\nrules:\n  - tag: "//model:h100_gpu"\n    set: {gpu_models: h100}\n  - tag: "a100_only"\n    set: {gpu_models: a100}\n  - tag: "//model:amd_gpu"\n    set: {vendor: amd}\n' \
  > "$SCRATCH/model.rules.yaml"
"$GPUPLAN" classify --strict --json --rules "$SCRATCH/model.rules.yaml" "$SCRATCH/model.xml" 2> /dev/null |
  jq -e '[.gpu_tests[] | [.label, .requirements.gpu_models // .requirements.vendor]] ==
         [["//model:a100_only_test", ["a100"]], ["//model:amd_test", "amd"], ["//model:h100_test", ["h100"]]]' > /dev/null ||
  fail "the rules do not read the models: $(cat "$SCRATCH/model.rules.yaml")"

# Rules-file mistakes that classified GPU tests as CPU tests with exit 0 and no word, even under
# --strict: a doubled backslash in a single-quoted tag regex, a macro named as a rule_class, a
# cpu_only: false that a nogpu tag overrules. Each warns (exit 2 under --strict); a rule that only
# matches no test of this query is a note, which --strict lets pass.
cat > "$SCRATCH/sim.xml" <<'XML'
<?xml version="1.1" encoding="UTF-8" standalone="no"?>
<query version="2">
  <rule class="py_test" location="/repo/sim/BUILD:1:1" name="//sim:physics_test"><string name="name" value="physics_test"/><list name="tags"><string value="accel-4"/></list></rule>
  <rule class="py_test" location="/repo/sim/BUILD:9:1" name="//sim:render_test"><string name="name" value="render_test"/><list name="tags"><string value="accel-1"/><string value="nogpu"/></list><string name="generator_function" value="accel_test"/></rule>
</query>
XML
printf "rules:\n  - tag: 'accel-(\\\\\\\\d+)'\n    set: {gpus: \$1}\n" > "$SCRATCH/escaped.rules.yaml"
printf "rules:\n  - rule_class: accel_test\n    set: {gpus: 1}\n" > "$SCRATCH/macro.rules.yaml"
printf "rules:\n  - label: //sim:render_test\n    set: {cpu_only: false}\n" > "$SCRATCH/cpuonly.rules.yaml"
printf "rules:\n  - label: //sim:physics_test\n    set: {gpus: 1}\n  - label: //other/...\n    set: {gpus: 1}\n" > "$SCRATCH/other.rules.yaml"
for case in "escaped:escaped.rules.yaml:2:10: tag: \"accel-(\\\\d+)\" has \\\\d" \
            "macro:rule $SCRATCH/macro.rules.yaml:2:5 (rule_class accel_test) matches no test of the query, but" \
            "cpuonly:says no but tag nogpu asks for CPU only; it runs as a CPU test; to override the built-in tag, write disable: [cpu-only]"; do
  name=${case%%:*} expected=${case#*:}
  "$GPUPLAN" classify --rules "$SCRATCH/$name.rules.yaml" "$SCRATCH/sim.xml" > "$SCRATCH/$name.err" 2>&1 ||
    fail "$name: classify failed: $(cat "$SCRATCH/$name.err")"
  grep -F -- "$expected" "$SCRATCH/$name.err" | grep -q "warning: " ||
    fail "$name: no warning saying '$expected': $(cat "$SCRATCH/$name.err")"
  refuses "" classify --strict --rules "$SCRATCH/$name.rules.yaml" "$SCRATCH/sim.xml"
done
"$GPUPLAN" classify --strict --rules "$SCRATCH/other.rules.yaml" "$SCRATCH/sim.xml" > "$SCRATCH/other.txt" 2>&1 ||
  fail "a rule matching no test of the query fails --strict: $(cat "$SCRATCH/other.txt")"
grep -qF "note: rule $SCRATCH/other.rules.yaml:4:5 (label //other/...) matches no test of the query" "$SCRATCH/other.txt" ||
  fail "no note on the rule that matches no test: $(cat "$SCRATCH/other.txt")"
# A rule's label is a target pattern as gpu_deps reads it: //pkg/ refused at its line.
printf "rules:\n  - label: //sim/\n    set: {gpus: 1}\n" > "$SCRATCH/slash.rules.yaml"
refuses -F "slash.rules.yaml:2:12: label: \"//sim/\" has an empty segment" classify --rules "$SCRATCH/slash.rules.yaml" "$SCRATCH/sim.xml"

# XLA's tests as its macros tag them (test/data/xla/): --strict passes (before, each lit test's
# xla_device_h100 was a warning that it named a GPU model), and the Intel copy of a test tagged
# no-oneapi is skipped (before, it was planned on an Intel GPU, where XLA's CI never runs it).
"$GPUPLAN" classify --strict --json test/data/xla/tests.query.xml > "$SCRATCH/xla.json" 2> "$SCRATCH/xla.err" ||
  fail "classify --strict of XLA's tests failed: $(cat "$SCRATCH/xla.err")"
jq -e '[.skipped_tests[].label] == ["//xla/stream_executor/gpu:gpu_kernel_test_intelgpu_any"]
  and [.gpu_tests[] | select(.requirements.vendor == "intel") | .label] == ["//xla/stream_executor/gpu:memcpy_test_intelgpu_any"]
  and ([.gpu_tests[] | select(.label | contains(".hlo.test_"))] | length) == 4' "$SCRATCH/xla.json" > /dev/null ||
  fail "XLA's tests are not classified as its CI runs them: $(jq -c '[.skipped_tests[].label]' "$SCRATCH/xla.json")"

echo "classify: ok"
