# History read by the commands that also read the query, as a user runs them: stale
# shard_N_of_M folders in bazel-testlogs give way to the query's shard count in explain, audit and
# --classify-by-deps as in plan; explain shows the memory floor history sets; history suggest
# tells that floor, written in the plan, from a declared gpu-mem tag.
source test/integration/lib.sh
requires jq

# Bazel left //ml:shard_test's shard_N_of_4 folders (50 s each) beside today's shard_N_of_2 (150 s).
TESTLOGS="$SCRATCH/testlogs/bazel-testlogs"
stale_shard_testlogs "$TESTLOGS"
# deps(...) of it (shard_count 2, reaching only a gpu_free label) and of a test that reaches CUDA.
cat >"$SCRATCH/deps.xml" <<'XML'
<?xml version="1.1" encoding="UTF-8" standalone="no"?>
<query version="2">
  <rule class="cc_test" location="/w/ml/BUILD:2:8" name="//ml:shard_test">
    <string name="name" value="shard_test"/>
    <list name="tags"><string value="gpu"/></list>
    <int name="shard_count" value="2"/>
    <string name="size" value="medium"/>
    <list name="deps"><label value="//ml:lib"/></list>
    <rule-input name="//ml:lib"/>
  </rule>
  <rule class="cc_library" location="/w/ml/BUILD:9:11" name="//ml:lib">
    <string name="name" value="lib"/>
    <list name="deps"><label value="@local_config_cuda//cuda:headers"/></list>
    <rule-input name="@local_config_cuda//cuda:headers"/>
  </rule>
  <rule class="cc_library" location="/w/ext/cuda/BUILD:9:11" name="@local_config_cuda//cuda:headers">
    <string name="name" value="headers"/>
  </rule>
  <rule class="cc_test" location="/w/ml/BUILD:14:8" name="//ml:cuda_test">
    <string name="name" value="cuda_test"/>
    <list name="tags"><string value="gpu"/></list>
    <list name="deps"><label value="@local_config_cuda//cuda:cudart"/></list>
    <rule-input name="@local_config_cuda//cuda:cudart"/>
  </rule>
  <rule class="cc_library" location="/w/ext/cuda/BUILD:4:11" name="@local_config_cuda//cuda:cudart">
    <string name="name" value="cudart"/>
  </rule>
</query>
XML
printf 'version: 1\ngpu_free: ["@local_config_cuda//cuda:headers"]\n' >"$SCRATCH/rules.yaml"
h100_fleet "$SCRATCH/fleet.yaml"
stale_warning="nothing in them says which are newer"
q=(--rules "$SCRATCH/rules.yaml")

# plan: today's two shards of 150 s.
"$GPUPLAN" plan "${q[@]}" "$SCRATCH/deps.xml" --fleet "$SCRATCH/fleet.yaml" --history "$TESTLOGS" \
  -o "$SCRATCH/plan.json" 2>/dev/null || fail "plan failed"
[ "$(jq -c '[.assignments[] | select(.label == "//ml:shard_test") | [.duration_s, .duration_source]] | unique' "$SCRATCH/plan.json")" = '[[150,"history-p90"]]' ] ||
  fail "plan: $(jq -c '[.assignments[] | [.unit, .duration_s]]' "$SCRATCH/plan.json")"

# explain gives what plan gives (before: 100 s each, the stale 4 × 50 s resharded, with a warning).
"$GPUPLAN" explain //ml:shard_test "${q[@]}" "$SCRATCH/deps.xml" --history "$TESTLOGS" --json \
  >"$SCRATCH/explain.json" 2>"$SCRATCH/explain.err" || fail "explain failed: $(cat "$SCRATCH/explain.err")"
[ "$(jq -c '[.planned_duration[] | [.seconds, .source]] | unique' "$SCRATCH/explain.json")" = '[[150,"history-p90"]]' ] ||
  fail "explain disagrees with plan: $(jq -c .planned_duration "$SCRATCH/explain.json")"
! jq -r '.diagnostics[].message' "$SCRATCH/explain.json" | grep -q "$stale_warning" ||
  fail "explain kept the most shards: $(jq -c .diagnostics "$SCRATCH/explain.json")"
jq -e '[.diagnostics[] | select(.severity == "note" and (.message | contains("shard_N_of_4 left out")))] | length == 1' \
  "$SCRATCH/explain.json" >/dev/null || fail "explain names no stale folders: $(jq -c .diagnostics "$SCRATCH/explain.json")"

# audit's GPU-hours are the plan's 2 × 150 s (before, 2 × 100 s), and no warning.
"$GPUPLAN" audit "${q[@]}" --fleet "$SCRATCH/fleet.yaml" --history "$TESTLOGS" --json "$SCRATCH/deps.xml" \
  >"$SCRATCH/audit.json" 2>"$SCRATCH/audit.err" || fail "audit failed: $(cat "$SCRATCH/audit.err")"
[ "$(jq '.gpu_without_gpu_code[] | select(.label == "//ml:shard_test") | .gpu_hours * 3600 | round' "$SCRATCH/audit.json")" = 300 ] ||
  fail "audit's GPU-hours: $(jq -c .gpu_without_gpu_code "$SCRATCH/audit.json")"
! grep -q "$stale_warning" "$SCRATCH/audit.err" || fail "audit kept the most shards: $(cat "$SCRATCH/audit.err")"
grep -q "^gpuplan: note: //ml:shard_test: .*shard_N_of_4 left out" "$SCRATCH/audit.err" ||
  fail "audit names no stale folders (as a note): $(cat "$SCRATCH/audit.err")"

# --classify-by-deps reads the history before it moves tests, with the query's counts all the same.
"$GPUPLAN" classify "${q[@]}" --classify-by-deps --history "$TESTLOGS" "$SCRATCH/deps.xml" \
  >/dev/null 2>"$SCRATCH/classify.err" || fail "classify failed: $(cat "$SCRATCH/classify.err")"
! grep -q "$stale_warning" "$SCRATCH/classify.err" || fail "classify --classify-by-deps kept the most shards"
"$GPUPLAN" plan "${q[@]}" --classify-by-deps "$SCRATCH/deps.xml" --fleet "$SCRATCH/fleet.yaml" --history "$TESTLOGS" \
  -o "$SCRATCH/by-deps.json" 2>/dev/null || fail "plan --classify-by-deps failed"
! jq -r '.diagnostics[].message' "$SCRATCH/by-deps.json" | grep -q "$stale_warning" ||
  fail "plan --classify-by-deps kept the most shards: $(jq -c .diagnostics "$SCRATCH/by-deps.json")"
"$GPUPLAN" explain //ml:shard_test "${q[@]}" --classify-by-deps "$SCRATCH/deps.xml" --history "$TESTLOGS" --json \
  >"$SCRATCH/explain-deps.json" 2>/dev/null || fail "explain --classify-by-deps failed"
! jq -r '.diagnostics[].message' "$SCRATCH/explain-deps.json" | grep -q "$stale_warning" ||
  fail "explain --classify-by-deps kept the most shards"

# The memory floor. //ml:sib_test's shard 0 peaked at 20,000 MiB in two older runs and 3,000 MiB in
# its last ten; shard 1 never ran (cached). Planned whole, the test gets the 20,000 MiB floor.
sharded_gpu_test sib_test 2 "$SCRATCH/sib.xml"
{ echo 'label,shard,seconds,peak_vram_mib,exit_status,shard_count'
  for _ in 1 2; do echo "//ml:sib_test,0,10,20000,0,2"; done
  for _ in $(seq 10); do echo "//ml:sib_test,0,10,3000,0,2"; done; } >"$SCRATCH/sib.csv"
"$GPUPLAN" plan "$SCRATCH/sib.xml" --fleet "$SCRATCH/fleet.yaml" --history "$SCRATCH/sib.csv" --shards whole \
  -o "$SCRATCH/sib-plan.json" 2>/dev/null || fail "plan --shards whole failed"
[ "$(jq -c '.assignments[0].requirements | [.gpu_mem_mib, .gpu_mem_measured]' "$SCRATCH/sib-plan.json")" = '[20000,true]' ] ||
  fail "the plan does not mark its floor measured: $(jq -c .assignments[0].requirements "$SCRATCH/sib-plan.json")"
# history suggest judges declared tags only (before: "declared 20000 MiB", "replace gpu-mem:20000MiB").
"$GPUPLAN" history suggest --plan "$SCRATCH/sib-plan.json" --history "$SCRATCH/sib.csv" --fleet "$SCRATCH/fleet.yaml" \
  --json >"$SCRATCH/suggest.json" 2>"$SCRATCH/suggest.err" || fail "suggest failed: $(cat "$SCRATCH/suggest.err")"
jq -e '.["gpu-mem-too-high"] == [] and ([.. | .declared_gpu_mem_mib? // empty] == [])' "$SCRATCH/suggest.json" >/dev/null ||
  fail "suggest read the measured floor as a gpu-mem tag: $(cat "$SCRATCH/suggest.json")"
# A plan written before the marker still reads, its gpu_mem_mib taken as declared.
jq 'del(.assignments[].requirements.gpu_mem_measured)' "$SCRATCH/sib-plan.json" >"$SCRATCH/old-plan.json"
"$GPUPLAN" history suggest --plan "$SCRATCH/old-plan.json" --history "$SCRATCH/sib.csv" --fleet "$SCRATCH/fleet.yaml" \
  --json 2>/dev/null | jq -e '.["gpu-mem-too-high"] | length == 1' >/dev/null || fail "an older plan is no longer read as it was"
jq '.assignments[0].requirements.gpu_mem_measured = "yes"' "$SCRATCH/sib-plan.json" >"$SCRATCH/bad-plan.json"
refuses "gpu_mem_measured.*expected true or false" history suggest --plan "$SCRATCH/bad-plan.json" --history "$SCRATCH/sib.csv"

# explain shows the floor the plan will require of shard 1 (the per-shard plan's), in text and JSON.
"$GPUPLAN" explain //ml:sib_test "$SCRATCH/sib.xml" --history "$SCRATCH/sib.csv" >"$SCRATCH/sib.txt" 2>/dev/null ||
  fail "explain of the floor failed"
grep -q "^measured memory floor" "$SCRATCH/sib.txt" &&
  grep -q "^  shard 1 .*≥ 20000MiB .*peak 20000MiB of its other shards' runs (23000MiB with the 15% headroom)" "$SCRATCH/sib.txt" ||
  fail "explain shows no memory floor: $(cat "$SCRATCH/sib.txt")"
"$GPUPLAN" explain //ml:sib_test "$SCRATCH/sib.xml" --history "$SCRATCH/sib.csv" --json 2>/dev/null |
  jq -e '.measured_memory_floor == [{"shard_index": 1, "peak_mib": 20000, "vram_headroom": 0.15, "with_headroom_mib": 23000,
         "gpu_mem_mib": 20000, "vram_mib": null, "source": "the most its runs were seen to use (--history)",
         "measured_by": "its other shards'"'"' runs"}]' >/dev/null ||
  fail "explain --json: $("$GPUPLAN" explain //ml:sib_test "$SCRATCH/sib.xml" --history "$SCRATCH/sib.csv" --json 2>/dev/null | jq -c .measured_memory_floor)"
jq -e '[.assignments[] | select(.unit == "//ml:sib_test#shard-1-of-2") | .requirements.gpu_mem_mib] == [20000]' \
  <("$GPUPLAN" plan "$SCRATCH/sib.xml" --fleet "$SCRATCH/fleet.yaml" --history "$SCRATCH/sib.csv" -o - 2>/dev/null) >/dev/null ||
  fail "explain's floor is not the plan's"

# A / in a test's name reads as a package in a bazel-testlogs path: //t:sub/dir_test's runs, at
# t/sub/dir_test/test.xml (Bazel 4's own file), are keyed //t/sub:dir_test. plan names them for the
# test (an error under --strict); before, it planned the test without history and said nothing.
cat >"$SCRATCH/slash.xml" <<'XML'
<?xml version="1.1" encoding="UTF-8" standalone="no"?>
<query version="2">
    <rule class="sh_test" location="/tmp/oddws/t/BUILD:24:8" name="//t:sub/dir_test">
        <string name="name" value="sub/dir_test"/>
        <list name="tags">
            <string value="gpu"/>
        </list>
    </rule>
</query>
XML
"$GPUPLAN" plan "$SCRATCH/slash.xml" --fleet "$SCRATCH/fleet.yaml" --history test/data/history/slash-testlogs \
  -o "$SCRATCH/slash.json" 2>"$SCRATCH/slash.err" || fail "plan with slash-testlogs: $(cat "$SCRATCH/slash.err")"
grep -qF "warning: //t:sub/dir_test: has no runs in the history, but //t/sub:dir_test has" "$SCRATCH/slash.err" ||
  fail "the runs a bazel-testlogs path gives //t/sub:dir_test were not named: $(cat "$SCRATCH/slash.err")"
refuses "" plan --strict "$SCRATCH/slash.xml" --fleet "$SCRATCH/fleet.yaml" --history test/data/history/slash-testlogs \
  -o "$SCRATCH/slash-strict.json"
echo "ok"
