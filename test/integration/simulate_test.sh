# gpuplan simulate as a user runs it: a report in text and JSON, byte-identical for one seed,
# the dynamic executor never behind the static one here, history as the noise, bad input exit 2.
source test/integration/lib.sh
requires jq
plan=test/data/plans/example.plan.json
fleet=test/data/plans/fleet.yaml

"$GPUPLAN" simulate "$plan" --fleet "$fleet" --sigma 0.5 --runs 30 --seed 7 --json > "$SCRATCH/a.json" ||
  fail "simulate failed"
"$GPUPLAN" simulate "$plan" --fleet "$fleet" --sigma 0.5 --runs 30 --seed 7 --json > "$SCRATCH/b.json"
cmp -s "$SCRATCH/a.json" "$SCRATCH/b.json" || fail "the same seed gave different reports"
"$GPUPLAN" simulate "$plan" --fleet "$fleet" --sigma 0.5 --runs 30 --seed 8 --json > "$SCRATCH/c.json"
cmp -s "$SCRATCH/a.json" "$SCRATCH/c.json" && fail "another seed gave the same report"
for key in static.median static.p95 dynamic.median dynamic.p95 hindsight_bound_median; do
  jq -e ".$key | numbers" "$SCRATCH/a.json" > /dev/null || fail "no $key in $(cat "$SCRATCH/a.json")"
done
jq -e '.runs == 30 and .noise.sigma == 0.5' "$SCRATCH/a.json" > /dev/null || fail "runs or sigma not reported"
jq -e '.static.median >= .hindsight_bound_median and .dynamic.median >= .hindsight_bound_median' \
  "$SCRATCH/a.json" > /dev/null || fail "an executor beat the hindsight bound: $(cat "$SCRATCH/a.json")"
jq -e '.dynamic.median <= .static.median' "$SCRATCH/a.json" > /dev/null ||
  fail "the dynamic executor is behind the static one: $(cat "$SCRATCH/a.json")"

# No noise: every run is the plan.
"$GPUPLAN" simulate "$plan" --fleet "$fleet" --sigma 0 --runs 3 --json > "$SCRATCH/exact.json"
planned=$(jq '.summary.makespan_s' "$plan")
jq -e --argjson p "$planned" '.static.median == $p and .static.p95 == $p' "$SCRATCH/exact.json" > /dev/null ||
  fail "with sigma 0 the static executor does not end at the plan's $planned: $(cat "$SCRATCH/exact.json")"

# The text report names the executors and the bound.
"$GPUPLAN" simulate "$plan" --fleet "$fleet" --runs 5 > "$SCRATCH/text"
for row in "static executor" "dynamic executor" "hindsight bound"; do
  grep -q "^$row" "$SCRATCH/text" || fail "no '$row' row: $(cat "$SCRATCH/text")"
done
# Durations as the other commands write them (1m30s, 18h39m), not raw seconds ("1871033.8").
grep -Eq '^static executor +[0-9]+(h|m|s|\.)[0-9hms.]* +[0-9]+(h|m|s|\.)' "$SCRATCH/text" ||
  fail "the text report's makespans are not durations: $(cat "$SCRATCH/text")"
! grep -Eq '^static executor +[0-9]+\.[0-9] ' "$SCRATCH/text" ||
  fail "the text report prints raw seconds: $(cat "$SCRATCH/text")"

# History as the noise: each unit's own samples; units without any are counted on stderr.
printf 'label,seconds\n//tf:conv_test,12\n//tf:conv_test,14\n' > "$SCRATCH/history.csv"
"$GPUPLAN" simulate "$plan" --fleet "$fleet" --history "$SCRATCH/history.csv" --runs 5 --json \
  > "$SCRATCH/h.json" 2> "$SCRATCH/h.err" || fail "simulate --history failed: $(cat "$SCRATCH/h.err")"
jq -e '.noise.model == "history"' "$SCRATCH/h.json" > /dev/null || fail "history noise not reported"
grep -q "have no history and keep their planned durations" "$SCRATCH/h.err" ||
  fail "no warning for units without history: $(cat "$SCRATCH/h.err")"

# A bad history row is skipped with a warning that names --strict; under --strict it is an error.
printf '//tf:conv_test,-3\n' >> "$SCRATCH/history.csv"
"$GPUPLAN" simulate "$plan" --fleet "$fleet" --history "$SCRATCH/history.csv" --runs 2 > /dev/null \
  2> "$SCRATCH/bad.err" || fail "a bad history row stopped simulate: $(cat "$SCRATCH/bad.err")"
grep -q "history.csv:4: .*--strict makes this an error" "$SCRATCH/bad.err" ||
  fail "no warning for the bad row: $(cat "$SCRATCH/bad.err")"
refuses "history.csv:4: " simulate "$plan" --fleet "$fleet" --history "$SCRATCH/history.csv" --runs 2 --strict

# Bad usage and bad input: exit 2.
refuses "" simulate "$plan" --fleet "$fleet" --sigma 0.5 --history "$SCRATCH/history.csv"
jq '.assignments[0].node = "nowhere-9"' "$plan" > "$SCRATCH/other.json"
refuses "nowhere-9" simulate "$SCRATCH/other.json" --fleet "$fleet"
echo "simulate: ok"
