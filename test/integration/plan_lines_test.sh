# A plan that reads as JSON but is wrong as a plan is refused naming the file, the line and the
# column of the unit at fault, as a wrong field is: a unit planned twice, shards of one test
# that disagree on their count, a unit on a node or GPU the fleet lacks. Before, these errors
# found after the plan was read named the file alone (which unit of 100,000?).
source test/integration/lib.sh
requires jq
PLAN=test/data/plans/example.plan.json

# line_of N FILE: the line of assignments[N] in FILE (jq's layout: an element's "{" alone).
line_of() {
  awk -v n="$1" '/^  "assignments": \[/ { on = 1; next }
                 on && /^    \{$/ { if (i++ == n) { print NR; exit } }' "$2"
}

# A unit planned twice: the error is at the second, assignments[16].
jq '.assignments += [.assignments[3]]' "$PLAN" >"$SCRATCH/twice.json"
unit=$(jq -r '.assignments[3].unit' "$PLAN")
node=$(jq -r '.assignments[3].node' "$PLAN")
at="$SCRATCH/twice.json:$(line_of 16 "$SCRATCH/twice.json"):5: assignments[16]: $unit is planned twice"
refuses -F "$at" export slurm "$SCRATCH/twice.json" -o "$SCRATCH/slurm"
refuses -F "$at" export github-matrix "$SCRATCH/twice.json" -o "$SCRATCH/gh.json"
refuses -F "$at" exec "$SCRATCH/twice.json" --node "$node" --command true --dry-run
# From standard input there is no file to read again: the JSON path still names the unit.
refuses -F "<stdin>: assignments[16]: $unit is planned twice" export github-matrix - -o "$SCRATCH/gh.json" <"$SCRATCH/twice.json"

# A wrong field outside the units, piped: at its line, from every command that reads a plan (before,
# from standard input the JSON path alone: `<stdin>: summary.makespan_s: expected a number`).
jq '.summary.makespan_s = "soon"' "$PLAN" >"$SCRATCH/makespan_s.json"
jq '.policy = 7' "$PLAN" >"$SCRATCH/policy.json"
for field in makespan_s policy; do
  line=$(grep -n -m1 "\"$field\": " "$SCRATCH/$field.json" | cut -d: -f1)
  for command in "export slurm - -o $SCRATCH/slurm" "export kubernetes - -o $SCRATCH/k8s --image example.com/gpuplan:1" \
    "export github-matrix - -o $SCRATCH/gh.json" "export buildkite - -o $SCRATCH/bk.yml" \
    "export gitlab - -o $SCRATCH/gl.yml" "show -"; do
    # shellcheck disable=SC2086 # the command's words
    refuses "^gpuplan: <stdin>:$line:[0-9]*: [$.a-z_]*$field: expected a" $command <"$SCRATCH/$field.json"
  done
done

# Shards of one test with two counts: at the later of the two shards that disagree.
jq '(.assignments[] | select(.unit == "//ml:train_test#shard-2-of-4")).shard_count = 5' "$PLAN" >"$SCRATCH/counts.json"
mapfile -t shards < <(jq '[.assignments[].unit] | map(startswith("//ml:train_test#")) | indices(true) | .[]' "$PLAN")
i=$(jq '[.assignments[].unit] | index("//ml:train_test#shard-2-of-4")' "$PLAN")
[ "$i" = "${shards[0]}" ] && i=${shards[1]}  # the first shard read is the one the others disagree with
refuses -F "$SCRATCH/counts.json:$(line_of "$i" "$SCRATCH/counts.json"):5: assignments[$i]: the shards of //ml:train_test disagree on their count" \
  export slurm "$SCRATCH/counts.json" -o "$SCRATCH/slurm"

# A unit with no GPUs (exec would run it on none): at that unit.
jq '.assignments[5].gpus = []' "$PLAN" >"$SCRATCH/nogpu.json"
unit=$(jq -r '.assignments[5].unit' "$PLAN")
refuses -F "$SCRATCH/nogpu.json:$(line_of 5 "$SCRATCH/nogpu.json"):5: assignments[5]: $unit on node" \
  export kubernetes "$SCRATCH/nogpu.json" -o "$SCRATCH/k8s" --image example.com/gpuplan:1

# show and render with a fleet that lacks a node of the plan: at the plan's first unit there.
sed '/- name: l4$/,$d' test/data/plans/fleet.yaml >"$SCRATCH/fleet.yaml"
grep -q 'l4-0' "$SCRATCH/fleet.yaml" && fail "the fleet still has l4-0"
i=$(jq '[.assignments[].node] | index("l4-0")' "$PLAN")
jq . "$PLAN" >"$SCRATCH/plan.json"
at="$SCRATCH/plan.json:$(line_of "$i" "$SCRATCH/plan.json"):5: assignments[$i]: the plan puts"
refuses -F "$at" show "$SCRATCH/plan.json" --fleet "$SCRATCH/fleet.yaml"
grep -qF "which this fleet does not have ($SCRATCH/fleet.yaml)" "$SCRATCH/refused.err" ||
  fail "show --fleet: $(cat "$SCRATCH/refused.err")"
refuses -F "$at" render "$SCRATCH/plan.json" --fleet "$SCRATCH/fleet.yaml" -o "$SCRATCH/chart.svg"

# run-under reads only its test's records (through the plan's index, which its first launch
# writes): a unit planned twice, or one without GPUs, is refused at its line in the plan too, as
# exec refuses it. Before, a unit planned twice ran, and one without GPUs was refused naming the
# plan file alone.
install -d -m 0700 "$SCRATCH/locks"
unit=$(jq -r '.assignments[3].unit' "$PLAN")
node=$(jq -r '.assignments[3].node' "$PLAN")
for _ in first indexed; do  # the first launch writes the plan's index, the second reads it
  TEST_TARGET="$unit" refuses -F \
    "$SCRATCH/twice.json:$(line_of 16 "$SCRATCH/twice.json"):5: assignments[16]: $unit is planned twice" \
    run-under --plan "$SCRATCH/twice.json" --node "$node" --lock-dir "$SCRATCH/locks" true
  [ -e "$SCRATCH/twice.json.index" ] || fail "run-under wrote no index of the plan"
done
unit=$(jq -r '.assignments[5].unit' "$PLAN")
node=$(jq -r '.assignments[5].node' "$PLAN")
for _ in first indexed; do  # the first launch writes the plan's index, the second reads it
  TEST_TARGET="$(jq -r '.assignments[5].label' "$PLAN")" TEST_SHARD_INDEX=0 TEST_TOTAL_SHARDS=4 refuses -F \
    "$SCRATCH/nogpu.json:$(line_of 5 "$SCRATCH/nogpu.json"):5: assignments[5]: $unit on node $node has no GPUs" \
    run-under --plan "$SCRATCH/nogpu.json" --node "$node" --lock-dir "$SCRATCH/locks" true
done

# verify: each violation of a unit at its record's line and column, in --json too; the second of
# a unit listed twice at the second. Before, the plan file alone.
jq '.assignments[5].node = "a100-9"' "$PLAN" >"$SCRATCH/unknown.json"
status=0
"$GPUPLAN" verify "$SCRATCH/unknown.json" --fleet test/data/plans/fleet.yaml >"$SCRATCH/out" || status=$?
[ "$status" -eq 4 ] &&
  grep -qF "$SCRATCH/unknown.json:$(line_of 5 "$SCRATCH/unknown.json"):5: $unit: node \"a100-9\" is not in the fleet" \
    "$SCRATCH/out" || fail "verify, a node the fleet lacks: exit $status: $(cat "$SCRATCH/out")"
status=0
"$GPUPLAN" verify "$SCRATCH/unknown.json" --fleet test/data/plans/fleet.yaml --json >"$SCRATCH/out.json" || status=$?
[ "$status" -eq 4 ] &&
  jq -e --argjson line "$(line_of 5 "$SCRATCH/unknown.json")" \
    '[.violations[] | select(.kind == "unknown-node") | [.line, .column]] == [[$line, 5]]' "$SCRATCH/out.json" >/dev/null ||
  fail "verify --json, a node the fleet lacks: exit $status: $(cat "$SCRATCH/out.json")"
status=0
"$GPUPLAN" verify "$SCRATCH/twice.json" --fleet test/data/plans/fleet.yaml >"$SCRATCH/out" || status=$?
unit=$(jq -r '.assignments[3].unit' "$PLAN")
[ "$status" -eq 4 ] &&
  grep -qF "$SCRATCH/twice.json:$(line_of 16 "$SCRATCH/twice.json"):5: $unit: is listed more than once" "$SCRATCH/out" ||
  fail "verify, a unit twice: exit $status: $(cat "$SCRATCH/out")"
# From standard input: no file to read again, the lines as before.
status=0
"$GPUPLAN" verify - --fleet test/data/plans/fleet.yaml <"$SCRATCH/twice.json" >"$SCRATCH/out" || status=$?
[ "$status" -eq 4 ] && grep -qF "<stdin>: $unit: is listed more than once" "$SCRATCH/out" ||
  fail "verify from standard input, a unit twice: exit $status: $(cat "$SCRATCH/out")"
echo "PASS: errors about a plan's units name their line"
