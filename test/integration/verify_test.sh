# gpuplan verify as a user runs it: a valid plan exits 0; each kind of broken promise
# exits 4 naming the unit and the kind; an unreadable plan exits 2.
source test/integration/lib.sh
requires jq
plan=test/data/plans/example.plan.json
fleet=test/data/plans/fleet.yaml

"$GPUPLAN" verify "$plan" --fleet "$fleet" > "$SCRATCH/out" || fail "the example plan is not valid: $(cat "$SCRATCH/out")"
grep -q "valid: 16 units" "$SCRATCH/out" || fail "verify does not say the plan is valid"

# expect_violation KIND UNIT JQ-EDIT: the edited plan exits 4 with a line "UNIT: ... [KIND]".
expect_violation() {
  local kind=$1 unit=$2 edit=$3 status=0
  jq "$edit" "$plan" > "$SCRATCH/broken.json"
  "$GPUPLAN" verify "$SCRATCH/broken.json" --fleet "$fleet" > "$SCRATCH/out" || status=$?
  [ "$status" -eq 4 ] || fail "$kind: exit $status, not 4: $(cat "$SCRATCH/out")"
  grep -qF ": $unit: " "$SCRATCH/out" || fail "$kind: $unit not named: $(cat "$SCRATCH/out")"
  grep -qF "[$kind]" "$SCRATCH/out" || fail "$kind: not reported: $(cat "$SCRATCH/out")"
}
at() { echo "(.assignments[] | select(.unit == \"$1\"))"; }
expect_violation unknown-node //tf:conv_test "$(at //tf:conv_test) .node = \"a100-9\""
expect_violation gpu-index //xla:triton_test "$(at //xla:triton_test) |= (.gpus = [4] | .env.CUDA_VISIBLE_DEVICES = \"4\")"
expect_violation gpu-count //tf:nccl_test "$(at //tf:nccl_test) |= (.gpus = [1] | .env.CUDA_VISIBLE_DEVICES = \"1\")"
expect_violation double-booked //xla:fp8_gemm_test "$(at //xla:fp8_gemm_test) |= (.start_s = 1100 | .end_s = 1400)"
expect_violation requirement //tf:conv_test "$(at //tf:conv_test) .requirements.gpu_mem_mib = 65536"
expect_violation exclusive //tf:conv_test "$(at //tf:conv_test) |= (.start_s = 500 | .end_s = 545)"
expect_violation coverage //tf:conv_test ".unschedulable += [$(at //tf:conv_test) | del(.node, .gpus, .start_s, .end_s, .env) | .reason = \"copied\"]"
expect_violation times //tf:conv_test "$(at //tf:conv_test) .end_s = 640"
expect_violation env //tf:nccl_test "$(at //tf:nccl_test) .env.CUDA_VISIBLE_DEVICES = \"0,1\""

# Unreadable plans: exit 2 with the position.
printf '{"schema_version": 1,\n  "policy": exact}\n' > "$SCRATCH/bad.json"
refuses "bad.json:2:13: not valid JSON" verify "$SCRATCH/bad.json" --fleet "$fleet"
refuses "" verify "$SCRATCH/missing.json" --fleet "$fleet"

# Against the query: the planner's own plans of the examples, under every policy, keep every
# promise and cover every GPU test once.
for policy in whole-node pack exact; do
  "$GPUPLAN" plan --fleet examples/fleet.yaml --rules examples/rules.yaml --policy "$policy" examples/query.xml \
    -o "$SCRATCH/examples.json" 2> /dev/null || [ $? -eq 3 ] || fail "gpuplan plan --policy $policy failed on the examples"
  "$GPUPLAN" verify "$SCRATCH/examples.json" --fleet examples/fleet.yaml --rules examples/rules.yaml \
    examples/query.xml > "$SCRATCH/out" || fail "the planner's $policy plan of the examples is not valid: $(cat "$SCRATCH/out")"
done
jq 'del(.assignments[0])' "$SCRATCH/examples.json" > "$SCRATCH/short.json"
status=0
"$GPUPLAN" verify "$SCRATCH/short.json" --fleet examples/fleet.yaml examples/query.xml > "$SCRATCH/out" || status=$?
[ "$status" -eq 4 ] && grep -q "is not in the plan \[coverage\]\|missing from the plan \[coverage\]" "$SCRATCH/out" ||
  fail "a unit dropped from the plan is not reported: $(cat "$SCRATCH/out")"

# --json for CI scripts: the same verdict and exit code as one object.
"$GPUPLAN" verify "$plan" --fleet "$fleet" --json > "$SCRATCH/ok.json" || fail "verify --json of a valid plan did not exit 0"
jq -e '.valid == true and .units == 16 and .violations == [] and .query_checked == false' "$SCRATCH/ok.json" >/dev/null ||
  fail "verify --json of a valid plan: $(cat "$SCRATCH/ok.json")"
jq "$(at //tf:conv_test) .node = \"a100-9\"" "$plan" > "$SCRATCH/broken.json"
status=0
"$GPUPLAN" verify "$SCRATCH/broken.json" --fleet "$fleet" --json > "$SCRATCH/bad.json" || status=$?
[ "$status" -eq 4 ] || fail "verify --json of an invalid plan: exit $status, not 4"
jq -e '.valid == false and (.violations | length) == 1 and .violations[0].unit == "//tf:conv_test"
       and .violations[0].kind == "unknown-node" and (.violations[0].reason | test("a100-9"))' "$SCRATCH/bad.json" >/dev/null ||
  fail "verify --json of an invalid plan: $(cat "$SCRATCH/bad.json")"
echo "PASS: verify"

# A pack plan made with the rules' vram_headroom: 0.05 puts two 36 GiB units on one 80 GB H100;
# verify without the rules file checked it against the default 15% and called it invalid (exit 4).
# The plan now keeps the knobs it was made with.
cat >"$SCRATCH/pack-fleet.yaml" <<'YAML'
version: 1
pools:
  - name: h
    count: 1
    gpu: {model: H100-SXM-80GB, count: 1}
    cuda: "12.4"
YAML
printf 'version: 1\nvram_headroom: 0.05\n' >"$SCRATCH/pack-rules.yaml"
{
  echo '<?xml version="1.1" encoding="UTF-8" standalone="no"?>'
  echo '<query version="2">'
  for t in a b; do
    echo "  <rule class=\"py_test\" location=\"/w/BUILD:1:1\" name=\"//t:$t\"><list name=\"tags\"><string value=\"gpu-mem:36GiB\"/></list></rule>"
  done
  echo '</query>'
} >"$SCRATCH/pack-query.xml"
"$GPUPLAN" plan "$SCRATCH/pack-query.xml" --fleet "$SCRATCH/pack-fleet.yaml" --policy pack \
  --rules "$SCRATCH/pack-rules.yaml" -o "$SCRATCH/pack.json" 2>/dev/null || fail "the pack plan"
[ "$(jq '[.assignments[].gpus[0]] | unique | length' "$SCRATCH/pack.json")" = 1 ] || fail "the two units do not share the GPU"
"$GPUPLAN" verify "$SCRATCH/pack.json" --fleet "$SCRATCH/pack-fleet.yaml" >"$SCRATCH/out" ||
  fail "a pack plan made with its rules' headroom, verified without them: $(cat "$SCRATCH/out")"
