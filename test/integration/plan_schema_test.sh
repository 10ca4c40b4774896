# Every plan this suite has: the fixtures, and what `gpuplan plan` writes for the examples
# under each policy, validates against schemas/plan.schema.json; a broken plan does not.
source test/integration/lib.sh
requires jq python3
validate=test/integration/validate_plan.py

"$validate" test/data/plans/*.json || fail "a plan fixture does not match the schema"

# The schema has teeth: each of these breaks one promise and must be rejected.
n=0
for edit in 'del(.assignments[0].env.CUDA_VISIBLE_DEVICES)' '.assignments[0].gpus = "0,1"' \
            '.policy = "greedy"' '.assignments[0].shard_index = -1' '.summary.makespan_s = -5' \
            '.unschedulable[0] |= del(.reason)' '.assignments[0].requirements.cuda = "12.4"' \
            '.diagnostics[0].severity = "fatal"' 'del(.schema_version)'; do
  n=$((n + 1))
  jq "$edit" test/data/plans/example.plan.json > "$SCRATCH/broken-$n.json"
  if "$validate" "$SCRATCH/broken-$n.json" 2>/dev/null; then fail "the schema accepts a plan with $edit"; fi
done

# What the planner writes, under every policy, on both example fleets.
[ -f examples/fleet.yaml ] || fail "examples/fleet.yaml is missing"
for fleet in examples/fleet.yaml examples/workstation.yaml; do
  [ -f "$fleet" ] || continue
  for policy in whole-node exact pack; do
    out=$SCRATCH/$(basename "$fleet" .yaml)-$policy.json
    status=0
    "$GPUPLAN" plan --fleet "$fleet" --policy "$policy" examples/query.xml -o "$out" || status=$?
    [ "$status" -eq 0 ] || [ "$status" -eq 3 ] || fail "gpuplan plan --policy $policy on $fleet exited $status"
    "$validate" "$out" || fail "the $policy plan for $fleet does not match the schema"
  done
done
echo "PASS: plans match schemas/plan.schema.json"
