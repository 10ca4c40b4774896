# gpuplan history suggest and audit --history as a user runs them, on results records like the
# ones exec and run-under write: a GPU test that never touched its GPU (a CPU-bucket candidate
# with its tag change), a peak near its GPU's memory, a declared gpu-mem far above use.
source test/integration/lib.sh
requires jq
plan=test/data/plans/example.plan.json
fleet=test/data/plans/fleet.yaml

records=$SCRATCH/results.csv
echo "label,shard,seconds,peak_vram_mib,node,gpus,start,exit_status,gpu_touched" > "$records"
for day in 1 2 3 4; do
  echo "//tf:conv_test,,12.0,0,a100-0,2,2026-11-0${day}T10:00:00.000Z,0,false" >> "$records"
  echo "//ml:inference_test,0,40.0,21000,l4-0,1,2026-11-0${day}T10:00:00.000Z,0,true" >> "$records"
  echo "//ml:inference_test,1,40.0,20500,l4-0,0,2026-11-0${day}T10:00:00.000Z,0,true" >> "$records"
  for shard in 0 1 2 3; do
    echo "//ml:train_test,$shard,250.0,5000,h100-0,0,2026-11-0${day}T10:00:00.000Z,0,true" >> "$records"
  done
done
# Its first run used the GPU; the last 3 did not: with --last 3 it is a candidate, with --last 4 not.
echo "//xla:triton_test,,5.0,800,a100-0,3,2026-11-01T10:00:00.000Z,0,true" >> "$records"
for day in 2 3 4; do
  echo "//xla:triton_test,,5.0,0,a100-0,3,2026-11-0${day}T10:00:00.000Z,0,false" >> "$records"
done

"$GPUPLAN" history suggest --history "$records" --plan "$plan" --fleet "$fleet" --last 3 \
  > "$SCRATCH/text" 2> "$SCRATCH/err" || fail "suggest failed: $(cat "$SCRATCH/err")"
grep -q "^  //tf:conv_test$" "$SCRATCH/text" || fail "conv_test not a CPU candidate: $(cat "$SCRATCH/text")"
grep -q "^  //xla:triton_test$" "$SCRATCH/text" || fail "triton_test (no GPU in its last 3) missing: $(cat "$SCRATCH/text")"
# Not "add tag cpu-only": beside the test's GPU tags that is a conflict (a warning, an error under --strict).
grep -q "change: remove its GPU annotations (--query names them)" "$SCRATCH/text" || fail "no tag change: $(cat "$SCRATCH/text")"
grep -q "peak 21000 MiB of 23034 MiB on l4-0" "$SCRATCH/text" || fail "no near-capacity line: $(cat "$SCRATCH/text")"
# The peak measured on a larger GPU than the one it is held against is named where it was measured:
# "peak 22000 MiB of 23034 MiB on l4-0" said l4-0 had held it.
{ cat "$records"; echo "//ml:inference_test,0,40.0,22000,a100-0,1,2026-11-05T10:00:00.000Z,0,true"; } > "$SCRATCH/elsewhere.csv"
"$GPUPLAN" history suggest --history "$SCRATCH/elsewhere.csv" --plan "$plan" --fleet "$fleet" --last 3 \
  > "$SCRATCH/elsewhere" 2> /dev/null || fail "suggest failed"
grep -q "peak 22000 MiB on a100-0 (40960 MiB); held against 23034 MiB on l4-0, the smallest GPU it ran on" \
  "$SCRATCH/elsewhere" || fail "the near-capacity line does not say where the peak was: $(cat "$SCRATCH/elsewhere")"
grep -q "replace gpu-mem:16GiB with gpu-mem:24GiB" "$SCRATCH/text" || fail "no gpu-mem change: $(cat "$SCRATCH/text")"
grep -q "replace gpu-mem:40GiB with gpu-mem:6GiB" "$SCRATCH/text" || fail "no lower gpu-mem: $(cat "$SCRATCH/text")"
grep -q "suggestions" "$SCRATCH/err" || fail "no totals line: $(cat "$SCRATCH/err")"

"$GPUPLAN" history suggest --history "$records" --plan "$plan" --fleet "$fleet" --last 4 --json > "$SCRATCH/a.json"
jq -e '[."never-touched-gpu"[].label] == ["//tf:conv_test"]
  and ."near-capacity"[0].label == "//ml:inference_test" and ."near-capacity"[0].suggested_gpu_mem_mib == 24576
  and ."gpu-mem-too-high"[0].label == "//ml:train_test" and ."gpu-mem-too-high"[0].declared_gpu_mem_mib == 40960
  and ."never-touched-gpu"[0].runs == 4' "$SCRATCH/a.json" > /dev/null || fail "suggest --json: $(cat "$SCRATCH/a.json")"
"$GPUPLAN" history suggest --history "$records" --plan "$plan" --fleet "$fleet" --last 4 --json > "$SCRATCH/b.json"
cmp -s "$SCRATCH/a.json" "$SCRATCH/b.json" || fail "the same input gave different output"

# With the query the change is the exact annotation to remove.
"$GPUPLAN" history suggest --history "$records" --query examples/query.xml --plan "$plan" --json > "$SCRATCH/q.json" 2>/dev/null ||
  fail "suggest --query failed"
jq -e '."never-touched-gpu"[0].change == "remove tag requires-gpu-nvidia"' "$SCRATCH/q.json" > /dev/null ||
  fail "the change does not name the tag: $(cat "$SCRATCH/q.json")"

# A plan in which history's memory floor (20,000 MiB) replaced the test's gpu-mem:16GiB tag: the
# change may not ask to add a gpu-mem tag beside the one it has (before: "add tag gpu-mem:24GiB").
jq '(.assignments[] | select(.label == "//ml:inference_test") | .requirements) |= (.gpu_mem_mib = 20000 | .gpu_mem_measured = true)' \
  "$plan" > "$SCRATCH/floor.plan.json"
"$GPUPLAN" history suggest --history "$records" --plan "$SCRATCH/floor.plan.json" --fleet "$fleet" --last 3 \
  > "$SCRATCH/text" 2> "$SCRATCH/err" || fail "suggest on a plan with a floor failed: $(cat "$SCRATCH/err")"
grep -q "change: set gpu-mem:24GiB in place of its gpu-mem tag, if it has one (the plan holds the 20000 MiB" "$SCRATCH/text" ||
  fail "the floor's change: $(cat "$SCRATCH/text")"
if grep -q "add tag gpu-mem" "$SCRATCH/text"; then fail "asks to add a gpu-mem tag the test has: $(cat "$SCRATCH/text")"; fi
# With the query the tag is known again: replace it.
"$GPUPLAN" history suggest --history "$records" --plan "$SCRATCH/floor.plan.json" --query examples/query.xml --fleet "$fleet" \
  --last 3 > "$SCRATCH/text" 2> "$SCRATCH/err" || fail "suggest --query on a plan with a floor failed: $(cat "$SCRATCH/err")"
grep -q "change: replace tag gpu-mem:16G with gpu-mem:24GiB" "$SCRATCH/text" || fail "with --query: $(cat "$SCRATCH/text")"

# A rolling summary keeps what runs measured.
"$GPUPLAN" history summarize "$records" -o "$SCRATCH/summary.json" 2>/dev/null
"$GPUPLAN" history suggest --history "$SCRATCH/summary.json" --plan "$plan" --fleet "$fleet" --last 4 --json > "$SCRATCH/s.json"
cmp -s "$SCRATCH/a.json" "$SCRATCH/s.json" || fail "the summary lost gpu_touched or node: $(diff "$SCRATCH/a.json" "$SCRATCH/s.json")"

# A fleet without the nodes the tests ran on: each peak held against no GPU is named (an error
# under --strict, with no report written), not silently left out of near-capacity.
sed -n '/^  - name: l4/q;p' "$fleet" > "$SCRATCH/no-l4.yaml"
"$GPUPLAN" history suggest --history "$records" --plan "$plan" --fleet "$SCRATCH/no-l4.yaml" \
  > "$SCRATCH/text" 2> "$SCRATCH/err" || fail "suggest with a partial fleet failed"
grep -q "warning: //ml:inference_test: .*it ran on l4-0, which the fleet does not list" "$SCRATCH/err" ||
  fail "no warning for a node the fleet lacks: $(cat "$SCRATCH/err")"
grep -q "1 tests judged without their nodes' GPUs" "$SCRATCH/err" || fail "the totals line: $(cat "$SCRATCH/err")"
refuses "" history suggest --history "$records" --plan "$plan" --fleet "$SCRATCH/no-l4.yaml" --strict -o "$SCRATCH/strict.txt"

# Without --plan or --query it cannot tell GPU tests: exit 2.
refuses "" history suggest --history "$records"

# audit --history: a GPU test that never touched a GPU is listed, in every format.
"$GPUPLAN" audit examples/deps.xml --history "$records" > "$SCRATCH/audit.txt" 2>/dev/null || fail "audit --history failed"
grep -A3 "touched no GPU in any measured run" "$SCRATCH/audit.txt" | grep -q "//tf:conv_test" ||
  fail "audit text misses conv_test: $(cat "$SCRATCH/audit.txt")"
"$GPUPLAN" audit examples/deps.xml --history "$records" --json 2>/dev/null |
  jq -e 'any(.never_touched_gpu[]; .label == "//tf:conv_test" and .runs == 4)' > /dev/null || fail "audit --json"
"$GPUPLAN" audit examples/deps.xml --history "$records" --format markdown 2>/dev/null > "$SCRATCH/audit.md"
grep -q '| `//tf:conv_test` | 4 |' "$SCRATCH/audit.md" || fail "audit markdown: $(cat "$SCRATCH/audit.md")"
# Runs that failed (at import, before their GPU work) or were stopped, touching no GPU, are no
# evidence that a GPU test needs none: neither command offers it for the CPU bucket.
failing=$SCRATCH/failing.csv
head -1 "$records" > "$failing"
for day in 1 2 3 4; do
  echo "//tf:conv_test,,0.5,0,a100-0,2,2026-11-0${day}T10:00:00.000Z,$([ "$day" = 4 ] && echo stopped || echo 1),false" >> "$failing"
done
"$GPUPLAN" history suggest --history "$failing" --plan "$plan" --fleet "$fleet" --json > "$SCRATCH/f.json" 2>/dev/null ||
  fail "suggest on failed runs failed"
jq -e '."never-touched-gpu" == []' "$SCRATCH/f.json" > /dev/null || fail "failed runs made a CPU candidate: $(cat "$SCRATCH/f.json")"
"$GPUPLAN" audit examples/deps.xml --history "$failing" --json 2>/dev/null |
  jq -e '.never_touched_gpu == []' > /dev/null || fail "audit --history took failed runs as untouched"
echo "history suggest: ok"
