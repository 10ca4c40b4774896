# explain's planned duration is the plan's, unit by unit: the seconds and source `plan` writes for
# each GPU unit of examples/query.xml, with the same --history, --shards and --policy (pack with a
# pack_slowdown of 1.5). Before, explain showed each shard's estimate unrounded whatever the plan's
# options: 900 s a shard of a test planned whole at 3600 s, 60 s of a unit pack planned at 90 s,
# 1137.1196 s of one planned at 1137.12 s.
source test/integration/lib.sh
sed 's/^pack_slowdown: 1.0/pack_slowdown: 1.5/' examples/rules.yaml >"$SCRATCH/rules.yaml"
history=(--history test/data/history/runs.csv --history test/data/history/bep_run.json)

agrees() {  # agrees OPTIONS...: plan and explain --json, given the same OPTIONS, plan every unit alike
  "$GPUPLAN" plan examples/query.xml --fleet examples/fleet.yaml --rules "$SCRATCH/rules.yaml" "$@" \
    -o "$SCRATCH/plan.json" 2>/dev/null || fail "plan $*"
  for label in $(python3 -c 'import json, sys
print(*sorted({a["label"] for a in json.load(open(sys.argv[1]))["assignments"]}))' "$SCRATCH/plan.json"); do
    "$GPUPLAN" explain --json "$label" examples/query.xml --rules "$SCRATCH/rules.yaml" "$@" \
      >"$SCRATCH/explain.json" 2>/dev/null || fail "explain $label $*"
    python3 - "$SCRATCH/plan.json" "$SCRATCH/explain.json" "$label $*" <<'PY' || fail "explain disagrees with plan"
import json, sys
plan, explain, what = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), sys.argv[3]
key = lambda shard: -1 if shard is None else shard
planned = sorted((key(a["shard_index"]), a["duration_s"], a["duration_source"])
                 for a in plan["assignments"] if a["label"] == explain["label"])
explained = sorted((key(e["shard_index"]), e["seconds"], e["source"]) for e in explain["planned_duration"])
if planned != explained:
    sys.exit(f"{what}: plan {planned}, explain {explained}")
PY
  done
}

agrees
agrees --shards whole
agrees --policy pack "${history[@]}"
agrees --policy pack --shards whole "${history[@]}"
agrees --policy whole-node "${history[@]}"

# The text says so too: the slowdown, and the memory as what is reserved (the peak plus headroom).
out=$("$GPUPLAN" explain //ml:inference_test examples/query.xml --rules "$SCRATCH/rules.yaml" --policy pack \
  --history test/data/history/runs.csv 2>/dev/null)
grep -qF "whole test          61.875s         from history-p90, × pack_slowdown 1.5 (it shares its GPU under pack), VRAM 10599MiB (peak plus 15% headroom)" <<<"$out" \
  || fail "explain --policy pack text: $out"

# Labels-only input is read by explain and verify as plan reads it: refused where no rule reads
# any test (unless --allow-untagged, which they now take too), and where rules read some, each
# other test is a warning naming it, an error under --strict. Before, explain and verify had no
# --allow-untagged, explain of such a test said nothing of the guess that plan warns of (0
# warnings, where plan said 21), and explain --strict passed where plan --strict refused.
labels=test/data/bazel/all.label_kind
refuses "--allow-untagged takes it as it is" explain //ml:pool_test $labels
"$GPUPLAN" explain //ml:pool_test $labels --allow-untagged >/dev/null 2>&1 || fail "explain --allow-untagged"
"$GPUPLAN" plan $labels --fleet examples/fleet.yaml --allow-untagged -o "$SCRATCH/untagged.json" 2>/dev/null
refuses "--allow-untagged takes it as it is" verify "$SCRATCH/untagged.json" $labels --fleet examples/fleet.yaml
"$GPUPLAN" verify "$SCRATCH/untagged.json" $labels --fleet examples/fleet.yaml --allow-untagged >/dev/null 2>&1 ||
  fail "verify --allow-untagged of the plan made so"
"$GPUPLAN" explain //ml:pool_test $labels --rules examples/rules.yaml >"$SCRATCH/untagged.txt" 2>"$SCRATCH/untagged.err" ||
  fail "explain with rules for some of the tests: $(cat "$SCRATCH/untagged.err")"
grep -q "warning: the input has no tags (label_kind output) and no rule of examples/rules.yaml matches this test, so it is planned as a CPU test" \
  "$SCRATCH/untagged.txt" && grep -q "gpuplan: 1 warning" "$SCRATCH/untagged.err" ||
  fail "explain of a test no rule reads: $(cat "$SCRATCH/untagged.txt" "$SCRATCH/untagged.err")"
status=0
"$GPUPLAN" explain --strict //ml:pool_test $labels --rules examples/rules.yaml >/dev/null 2>&1 || status=$?
[ "$status" = 2 ] || fail "explain --strict of a test no rule reads: exit $status, where plan --strict refuses"
