#!/usr/bin/env bash
# The dependency graph through the real Bazel (issue 16): `bazel query 'deps(tests(//...))'` on
# the example workspace, whose tests reach stand-ins for torch, JAX's CUDA plugin and CUDA
# (examples/deps-repos). audit lists each mis-tagged test with its path, explain shows the path,
# --classify-by-deps moves the GPU-free tests to the CPU bucket and nothing the other way. GPU
# tests that reach nothing of @pypi, where the other tests of their rule class get their GPU
# code (sh_tests of a probe script, py_tests without deps), are unknown: their GPU code would be
# the machine's.
source test/integration/lib.sh
requires bazel jq

stubs=(--override_repository=remote_coverage_tools="$STUBS/remote_coverage_tools"
       --override_repository=rules_cc="$STUBS/rules_cc" --override_repository=rules_java="$STUBS/rules_java")
bazel_ws query 'deps(tests(//...))' "${stubs[@]}" --output=xml >"$SCRATCH/deps.xml" 2>"$SCRATCH/bazel.log" ||
  { cat "$SCRATCH/bazel.log" >&2; fail "bazel query deps(tests(//...)) failed"; }

# Built-in gpu_deps only: the tokenizer's CUDA version header counts as GPU code (and without
# the rules file, //ml:team_macro_test's team-gpus-4 tag means nothing: it is a CPU test).
"$GPUPLAN" audit --json "$SCRATCH/deps.xml" >"$SCRATCH/audit.json" 2>"$SCRATCH/audit.err" ||
  fail "audit failed: $(cat "$SCRATCH/audit.err")"
idle() { jq -r '.gpu_without_gpu_code[].label' "$1" | sort | tr '\n' ' '; }
[ "$(idle "$SCRATCH/audit.json")" = "//tf:conv_test //xla:collective_ops_test //xla:fp8_gemm_test " ] ||
  fail "GPU tests without GPU code: $(idle "$SCRATCH/audit.json")"
unknown() { jq -r '.unknown[] | "\(.label): \(.reason)"' "$1"; }
[ "$(unknown "$SCRATCH/audit.json" | grep -c "reaches no label of @local_config_cuda or @pypi, where the other sh_tests get their GPU code: its own may be outside the graph$")" = 7 ] &&
  [ "$(unknown "$SCRATCH/audit.json" | grep -Ec "^//(jax|tf):[a-z_]+: reaches no label of @pypi, where the other py_tests get their GPU code")" = 3 ] &&
  [ "$(jq '.unknown | length' "$SCRATCH/audit.json")" = 10 ] || fail "unknown tests: $(unknown "$SCRATCH/audit.json")"
grep -q "^gpuplan: warning: 7 GPU-annotated sh_tests reach no label of @local_config_cuda or @pypi, where the other sh_tests of the dependency graph get their GPU code, so the graph cannot tell whether they need a GPU" \
  "$SCRATCH/audit.err" || fail "no warning for the sh_tests: $(cat "$SCRATCH/audit.err")"
[ "$(jq -r '.gpu_code_without_annotation[] | "\(.label) \(.path)"' "$SCRATCH/audit.json")" = \
  "//core:unit_test //core:unit_test → //ml:model → @pypi//torch:torch" ] ||
  fail "unannotated test reaching torch: $(jq -c .gpu_code_without_annotation "$SCRATCH/audit.json")"
[ "$(jq -r '.gpu_without_gpu_code[] | select(.label == "//tf:conv_test") | .change' "$SCRATCH/audit.json")" = \
  "remove tag requires-gpu-nvidia" ] || fail "the tag change of //tf:conv_test"
jq -e '.packages[] | select(.package == "//ml") | .tests == 10 and .gpu_annotated == 9 and .reach_gpu_code == 2' \
  "$SCRATCH/audit.json" >/dev/null || fail "the //ml summary: $(jq -c .packages "$SCRATCH/audit.json")"
grep -q "^gpuplan: 22 tests audited: 3 GPU-annotated reach no GPU code, 1 reach GPU code without a GPU annotation, 10 unknown" "$SCRATCH/audit.err" ||
  fail "the totals line: $(cat "$SCRATCH/audit.err")"

# The rules file marks the CUDA version header gpu_free: //ml:inference_test joins the list.
"$GPUPLAN" audit --rules examples/rules.yaml --fleet examples/fleet.yaml "$SCRATCH/deps.xml" \
  >"$SCRATCH/audit.txt" 2>/dev/null || fail "audit --rules --fleet failed"
grep -q "^  //ml:inference_test  [0-9.]* GPU-hours$" "$SCRATCH/audit.txt" ||
  fail "inference_test (gpu_free header) is not listed with its GPU-hours: $(cat "$SCRATCH/audit.txt")"
grep -q "change: remove tags gpu, gpu-mem:16G at .*ml/BUILD" "$SCRATCH/audit.txt" || fail "inference_test's change"
grep -q "path: //core:unit_test → //ml:model → @pypi//torch:torch" "$SCRATCH/audit.txt" || fail "the text path"
grep -A1 "^  //ml:team_macro_test$" "$SCRATCH/audit.txt" | grep -q "why: reaches no label of @pypi, where the other sh_tests" ||
  fail "the macro-made test (a GPU test by the rules file) is not unknown: $(cat "$SCRATCH/audit.txt")"
"$GPUPLAN" audit --rules examples/rules.yaml --format markdown "$SCRATCH/deps.xml" 2>/dev/null |
  grep -q '^| `//core:unit_test` | `//core:unit_test → //ml:model → @pypi//torch:torch` |$' || fail "markdown table"

# A rules pattern that matches no label of the graph is named: a canonical repository name as
# Bazel 7 spells it, on Bazel 8's @@rules_python++pip+pypi, would make every torch user look
# GPU-free without a word. Under --strict it is an error.
printf 'version: 1\ngpu_deps: ["@@rules_python~~pip~pypi//torch:pkg", "@pypi//torch:torch"]\n' >"$SCRATCH/canonical.yaml"
"$GPUPLAN" audit --rules "$SCRATCH/canonical.yaml" "$SCRATCH/deps.xml" >/dev/null 2>"$SCRATCH/canonical.err" ||
  fail "audit with an unmatched pattern failed"
grep -q 'warning: gpu_deps pattern "@@rules_python~~pip~pypi//torch:pkg" of .*canonical.yaml matches no label.* write the apparent name, @pypi//torch:pkg' \
  "$SCRATCH/canonical.err" || fail "no warning for a pattern that matches nothing: $(cat "$SCRATCH/canonical.err")"
! grep -q '"@pypi//torch:torch"' "$SCRATCH/canonical.err" || fail "a pattern that matches was warned about"
"$GPUPLAN" audit --rules examples/rules.yaml "$SCRATCH/deps.xml" >/dev/null 2>"$SCRATCH/example-rules.err"
! grep -q 'matches no label' "$SCRATCH/example-rules.err" ||
  fail "the example's own rules were warned about: $(cat "$SCRATCH/example-rules.err")"
refuses "" audit --rules "$SCRATCH/canonical.yaml" --strict "$SCRATCH/deps.xml"

# explain shows the path; a cpu-only test reaching torch is not a disagreement.
"$GPUPLAN" explain //ml:train_test "$SCRATCH/deps.xml" | grep -q "reaches GPU code: //ml:train_test → //ml:model → @pypi//torch:torch" ||
  fail "explain does not show the path of //ml:train_test"
"$GPUPLAN" explain //xla:triton_test "$SCRATCH/deps.xml" |
  grep -q "reaches GPU code: //xla:triton_test → //third_party/gpus:cuda_headers" || fail "explain //xla:triton_test"
jq -e '[.gpu_code_without_annotation[].label] | index("//core:config_test") == null' "$SCRATCH/audit.json" >/dev/null ||
  fail "a cpu-only test is listed"

# A GPU test of a probe script: explain says why the graph cannot tell.
"$GPUPLAN" explain //ml:allreduce_test "$SCRATCH/deps.xml" 2>/dev/null | grep -qF "  unknown: reaches no label of @local_config_cuda or @pypi, where the other sh_tests get their GPU code: its own may be outside the graph (name it in the rules file's gpu_deps)" ||
  fail "explain of an unsupplied test: $("$GPUPLAN" explain //ml:allreduce_test "$SCRATCH/deps.xml" 2>&1)"
"$GPUPLAN" explain //ml:allreduce_test "$SCRATCH/deps.xml" --json 2>/dev/null |
  jq -e '.gpu_code.unknown and .gpu_code.reaches == null and .gpu_code.suppliers == ["local_config_cuda", "pypi"]' >/dev/null ||
  fail "explain --json of an unsupplied test"

# --classify-by-deps: the 4 GPU-free GPU tests go to the CPU bucket, unit_test stays there, and
# the 11 unknown ones stay GPU tests.
"$GPUPLAN" plan --classify-by-deps --rules examples/rules.yaml --fleet examples/fleet.yaml "$SCRATCH/deps.xml" \
  -o "$SCRATCH/plan.json" 2>"$SCRATCH/plan.err" || true
grep -q "^gpuplan: --classify-by-deps moved 4 GPU tests that reach no GPU code to the CPU bucket; 11 left as they are: they reach no repository where other tests of their rule class get GPU code$" "$SCRATCH/plan.err" ||
  fail "the classify-by-deps totals: $(cat "$SCRATCH/plan.err")"
[ "$(jq -r '[.assignments[].label] | unique | join(" ")' "$SCRATCH/plan.json")" = "//jax:docker_runtime_test //jax:pmap_test //ml:allreduce_test //ml:cuda11_compat_test //ml:flaky_kernel_test //ml:pool_test //ml:remote_exec_test //ml:resources_test //ml:team_macro_test //ml:train_test //ml:video_decode_test //tf:mirrored_strategy_test //tf:nccl_test //xla:triton_test" ] ||
  fail "GPU tests left: $(jq -c '[.assignments[].label] | unique' "$SCRATCH/plan.json")"
jq -e '.cpu_tests[] | select(.label == "//ml:inference_test") | .reason | startswith("--classify-by-deps")' \
  "$SCRATCH/plan.json" >/dev/null || fail "inference_test's CPU reason"
jq -e '[.diagnostics[] | select(.source == "--classify-by-deps" and .label != "" and (.message | startswith("no path from")))] | length == 4' "$SCRATCH/plan.json" >/dev/null ||
  fail "one warning per moved test"
# The test that reaches GPU code with no GPU annotation stays a CPU test, named with its path
# (before, only audit named it; plan sent it to CPU runners without a word).
grep -q "^gpuplan: warning: //core:unit_test: reaches GPU code (//core:unit_test → //ml:model → @pypi//torch:torch) but has no GPU annotation" \
  "$SCRATCH/plan.err" || fail "the GPU-code test without an annotation was not named: $(cat "$SCRATCH/plan.err")"
# The move is a warning under --strict too, in explain as in plan and classify (explain made it
# an error, and exited 2 where they passed).
"$GPUPLAN" explain //ml:inference_test --classify-by-deps --strict --rules examples/rules.yaml "$SCRATCH/deps.xml" \
  >"$SCRATCH/explain.txt" 2>&1 || true
grep -q "^  warning: no path from //ml:inference_test to GPU code" "$SCRATCH/explain.txt" ||
  fail "explain --strict of a moved test: $(cat "$SCRATCH/explain.txt")"

# What runs measured outweighs the graph: //ml:inference_test reaches no GPU code, but run-under
# saw it on its GPU (its torch would be the machine's), so --classify-by-deps --history keeps it
# a GPU test, and audit --history lists it as unknown rather than as a candidate for the CPU bucket.
cat >"$SCRATCH/runs.csv" <<'CSV'
label,shard,seconds,peak_vram_mib,node,gpus,start,exit_status,gpu_touched
//ml:inference_test,,41.5,900,a100-0,"0",2026-11-01T10:00:00Z,0,true
//ml:inference_test,,40.1,0,a100-0,"0",2026-11-02T10:00:00Z,0,false
//tf:conv_test,,12.0,0,a100-0,"1",2026-11-02T10:00:00Z,0,false
//tf:conv_test,,12.0,0,a100-0,"1",2026-11-03T10:00:00Z,0,false
//tf:conv_test,,12.0,0,a100-0,"1",2026-11-04T10:00:00Z,0,false
CSV
"$GPUPLAN" plan --classify-by-deps --rules examples/rules.yaml --fleet examples/fleet.yaml "$SCRATCH/deps.xml" \
  --history "$SCRATCH/runs.csv" -o "$SCRATCH/plan-history.json" 2>"$SCRATCH/plan-history.err" ||
  fail "plan --classify-by-deps --history failed: $(cat "$SCRATCH/plan-history.err")"
grep -q "^gpuplan: --classify-by-deps moved 3 GPU tests that reach no GPU code to the CPU bucket; 1 left as they are: their runs used a GPU (--history); 11 left as they are" "$SCRATCH/plan-history.err" ||
  fail "the classify-by-deps totals with --history: $(cat "$SCRATCH/plan-history.err")"
grep -q "^gpuplan: warning: 1 GPU-annotated test reaches no GPU code in the dependency graph, but its runs used a GPU (--history): //ml:inference_test\." "$SCRATCH/plan-history.err" ||
  fail "no warning naming the test whose runs used a GPU: $(cat "$SCRATCH/plan-history.err")"
jq -e '[.assignments[].label] | index("//ml:inference_test") != null' "$SCRATCH/plan-history.json" >/dev/null ||
  fail "a test whose runs used a GPU went to the CPU bucket"
"$GPUPLAN" audit --rules examples/rules.yaml --history "$SCRATCH/runs.csv" --json "$SCRATCH/deps.xml" 2>/dev/null |
  jq -e '([.gpu_without_gpu_code[].label] | index("//ml:inference_test") == null) and
         (.unknown[] | select(.label == "//ml:inference_test") | .reason | contains("its runs used a GPU (GPU used in 1 of 2 measured runs, peak 900 MiB)"))' >/dev/null ||
  fail "audit --history lists //ml:inference_test as a candidate for the CPU bucket"
"$GPUPLAN" explain //ml:inference_test --rules examples/rules.yaml --history "$SCRATCH/runs.csv" --json "$SCRATCH/deps.xml" 2>/dev/null |
  jq -e '.gpu_code.unknown and .gpu_code.used_gpu == "GPU used in 1 of 2 measured runs, peak 900 MiB"' >/dev/null ||
  fail "explain --json of a test whose runs used a GPU"
# classify's target lists, which CI splits its runners by, and verify agree with the plan; each
# --history takes one path, so the query may follow it.
"$GPUPLAN" classify --classify-by-deps --rules examples/rules.yaml --history "$SCRATCH/runs.csv" "$SCRATCH/deps.xml" \
  --cpu-targets "$SCRATCH/cpu.txt" >/dev/null 2>&1 || fail "classify --classify-by-deps --history failed"
grep -qx '//tf:conv_test' "$SCRATCH/cpu.txt" && ! grep -qx '//ml:inference_test' "$SCRATCH/cpu.txt" ||
  fail "classify --cpu-targets sends a test whose runs used a GPU to the CPU runners: $(cat "$SCRATCH/cpu.txt")"
"$GPUPLAN" verify "$SCRATCH/plan-history.json" --fleet examples/fleet.yaml --classify-by-deps --rules examples/rules.yaml \
  --history "$SCRATCH/runs.csv" "$SCRATCH/deps.xml" >/dev/null 2>&1 || fail "verify --history of the plan made with it"

# The history is read once: from standard input it gives the GPU-hours (12 s, not the size
# default's 0.08 GPU-hours) and the measured use alike.
"$GPUPLAN" audit --rules examples/rules.yaml --fleet examples/fleet.yaml --history - --json "$SCRATCH/deps.xml" \
  <"$SCRATCH/runs.csv" 2>/dev/null |
  jq -e '.never_touched_gpu[0].label == "//tf:conv_test" and
         (.gpu_without_gpu_code[] | select(.label == "//tf:conv_test") | .gpu_hours < 0.01)' >/dev/null ||
  fail "audit --history - --fleet did not use standard input's history for both"
# An external test the query names canonically (@@rules_foo~//x:t) and history by its apparent
# name (history keys): its runs used a GPU, so --classify-by-deps keeps it a GPU test and audit
# calls it unknown (before this was matched at all, the two spellings were two tests).
printf 'label,shard,seconds,peak_vram_mib,node,gpus,start,exit_status,gpu_touched\n@@rules_foo~//x:t,,41.5,900,a100-0,"0",2026-11-01T10:00:00Z,0,true\n' >"$SCRATCH/foo.csv"
canonical=test/data/graph/deps_canonical_repo.xml
"$GPUPLAN" audit --history "$SCRATCH/foo.csv" --json "$canonical" 2>/dev/null |
  jq -e '([.gpu_without_gpu_code[].label] | index("@@rules_foo~//x:t") == null) and ([.unknown[].label] | index("@@rules_foo~//x:t") != null)' >/dev/null ||
  fail "audit --history of a canonically named test"
"$GPUPLAN" classify --classify-by-deps --history "$SCRATCH/foo.csv" "$canonical" --cpu-targets "$SCRATCH/foo-cpu.txt" >/dev/null 2>&1
! grep -q 'rules_foo' "$SCRATCH/foo-cpu.txt" || fail "--classify-by-deps sent a test whose runs used a GPU to the CPU runners"
# As history suggest judges it: fewer than 3 runs, or a sharded test whose every shard was not
# measured, is no candidate (before, one run of one shard of four was).
head -4 "$SCRATCH/runs.csv" >"$SCRATCH/runs-1.csv"
printf '//ml:train_test,0,30,0,a100-0,"0",2026-11-0%dT10:00:00Z,0,false\n' 1 2 3 >"$SCRATCH/shard0.csv"
sed -i '1i label,shard,seconds,peak_vram_mib,node,gpus,start,exit_status,gpu_touched' "$SCRATCH/shard0.csv"
for runs in runs-1 shard0; do
  "$GPUPLAN" audit --rules examples/rules.yaml --history "$SCRATCH/$runs.csv" --json "$SCRATCH/deps.xml" 2>/dev/null |
    jq -e '.never_touched_gpu == []' >/dev/null || fail "audit --history $runs.csv: a CPU candidate on too few runs"
done
refuses "//ml:inference_test" plan --classify-by-deps --strict --rules examples/rules.yaml --fleet examples/fleet.yaml \
  "$SCRATCH/deps.xml" --history "$SCRATCH/runs.csv" -o "$SCRATCH/strict.json"

# cquery's jsonproto carries the inputs too (after select()): the same disagreements.
bazel_ws cquery 'deps(tests(//...))' "${stubs[@]}" --output=jsonproto >"$SCRATCH/deps.cquery.json" 2>>"$SCRATCH/bazel.log" ||
  { cat "$SCRATCH/bazel.log" >&2; fail "bazel cquery deps(tests(//...)) failed"; }
"$GPUPLAN" audit --json "$SCRATCH/deps.cquery.json" >"$SCRATCH/audit.cquery.json" 2>/dev/null || fail "audit of cquery"
[ "$(idle "$SCRATCH/audit.cquery.json")" = "$(idle "$SCRATCH/audit.json")" ] || fail "cquery and query disagree"

# A cquery bounded by depth lists a test's libraries but not theirs: what those reach is
# unknown, never GPU-free (before, every label it named but did not list was taken for a select()
# branch not taken, and GPU tests reaching torch through a library were CPU-bucket candidates).
bazel_ws cquery 'deps(tests(//...), 1)' "${stubs[@]}" --output=jsonproto >"$SCRATCH/deps1.cquery.json" 2>>"$SCRATCH/bazel.log" ||
  { cat "$SCRATCH/bazel.log" >&2; fail "bazel cquery deps(tests(//...), 1) failed"; }
"$GPUPLAN" audit --json "$SCRATCH/deps1.cquery.json" >"$SCRATCH/audit1.cquery.json" 2>"$SCRATCH/audit1.err" || fail "audit of a bounded cquery"
# The three GPU-free tests of the whole graph use libraries whose deps depth 1 leaves out.
[ "$(jq '.summary.gpu_without_gpu_code' "$SCRATCH/audit1.cquery.json")" = 0 ] ||
  fail "a bounded cquery made GPU tests GPU-free: $(idle "$SCRATCH/audit1.cquery.json")"
grep -q "never lists (e.g. .*) were not expanded: what they may reach is unknown" "$SCRATCH/audit1.err" ||
  fail "no note of the labels a bounded cquery did not expand: $(cat "$SCRATCH/audit1.err")"

# tests(//...) alone does not expand the libraries: reach is unknown, nothing is moved.
bazel_ws query 'tests(//...)' --output=xml >"$SCRATCH/tests.xml" 2>>"$SCRATCH/bazel.log"
"$GPUPLAN" audit --json "$SCRATCH/tests.xml" 2>/dev/null | jq -e '.summary.unknown > 0' >/dev/null ||
  fail "tests(//...) input is not reported as unknown"
"$GPUPLAN" classify --classify-by-deps "$SCRATCH/tests.xml" 2>"$SCRATCH/by-deps.err" >/dev/null
grep -q "left as they are: their deps are not in the input" "$SCRATCH/by-deps.err" ||
  fail "classify-by-deps on tests(//...) does not say why it moved less"
bazel_ws query 'tests(//...)' --output=label >"$SCRATCH/tests.label" 2>>"$SCRATCH/bazel.log"
refuses "audit needs the dependency graph" audit "$SCRATCH/tests.label"
echo "deps audit: ok"
