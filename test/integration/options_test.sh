# Numbers on the command line, as a user mistypes them: every floating-point option refuses
# NaN and infinities, every integer option a sign, a number past its type and its range;
# each exits 2 naming the option, at once (NaN once made simulate spin forever).
source test/integration/lib.sh
# Without gpuplan's rerun of itself with huge pages (src/cli/main.cpp; output_test.sh tests it):
# these ~200 runs test how options are read, and under ASan, whose allocator ignores the
# tunable, the rerun was a second process start each, over a quarter of this test's time.
export GLIBC_TUNABLES=glibc.malloc.hugetlb=0
PLAN=$SOURCE_DIR/test/data/plans/example.plan.json
FLEET=$SOURCE_DIR/test/data/plans/fleet.yaml
HISTORY=$SOURCE_DIR/test/data/history/runs.csv
QUERY=$SOURCE_DIR/examples/query.xml
cd "$SCRATCH"

# refused OPTION VALUE ARGS...: gpuplan ARGS OPTION VALUE exits 2 within 20 s, naming OPTION.
refused() {
  local option=$1 value=$2 status=0; shift 2
  timeout 20 "$GPUPLAN" "$@" "$option" "$value" >out 2>err || status=$?
  [ "$status" = 2 ] || fail "$* $option $value: exit $status, not 2: $(head -c 300 err)"
  grep -q -- "$option" err || fail "$* $option $value: the message does not name $option: $(head -c 300 err)"
}
# accepted OPTION VALUE ARGS...: the same, exit 0.
accepted() {
  local option=$1 value=$2 status=0; shift 2
  timeout 20 "$GPUPLAN" "$@" "$option" "$value" >out 2>err || status=$?
  [ "$status" = 0 ] || fail "$* $option $value: exit $status: $(head -c 300 err)"
}

simulate=(simulate "$PLAN" --fleet "$FLEET" --runs 1)
exec_=(exec "$PLAN" --node h100-0 --dry-run)
slurm=(export slurm "$PLAN" -o "$SCRATCH/slurm")
k8s=(export kubernetes "$PLAN" -o "$SCRATCH/k8s" --image i)
for bad in nan NaN -nan inf -inf infinity 1e999 0x1p3 " 0.5" ''; do
  refused --sigma "$bad" "${simulate[@]}"
  refused --lease "$bad" "${exec_[@]}"
  refused --lease "$bad" "${slurm[@]}"
  refused --time-margin "$bad" "${slurm[@]}"
  refused --time-margin "$bad" "${k8s[@]}"
  refused --time-margin "$bad" export github-matrix "$PLAN"
  refused --time-margin "$bad" export buildkite "$PLAN"
  refused --time-margin "$bad" export gitlab "$PLAN"
  refused --percentile "$bad" history show //a:b --history "$HISTORY"
  refused --over "$bad" history suggest --history "$HISTORY"
  refused --time-limit "$bad" plan "$QUERY" --fleet "$FLEET"
done
# run-under takes its options before the test's command.
for bad in nan inf; do
  status=0
  TEST_TARGET=//a:b timeout 20 "$GPUPLAN" run-under --plan "$PLAN" --node h100-0 --lease "$bad" true 2>err || status=$?
  [ "$status" = 2 ] && grep -q -- --lease err || fail "run-under --lease $bad: exit $status: $(cat err)"
done
grep -q '"inf" is not a number from' err || fail "the message does not say what is wrong: $(cat err)"

# Integers: written in decimal, within their type and range; never wrapped or saturated.
for bad in -1 18446744073709551616 99999999999999999999999 0x10 1.5 +3 ''; do
  refused --seed "$bad" "${simulate[@]}"
done
for bad in -1 0 100001 4294967297 0x10 1e3 nan; do
  refused --runs "$bad" simulate "$PLAN" --fleet "$FLEET"
  refused --window "$bad" history summarize "$HISTORY"
  refused --window "$bad" history show //a:b --history "$HISTORY"
  refused --last "$bad" history suggest --history "$HISTORY"
  refused --min-runs "$bad" history suggest --history "$HISTORY"
done
for bad in -1 0 4294967297 31622401 nan; do refused --timeout "$bad" "${exec_[@]}"; done
for bad in -1 4294967296 nan; do refused --startup "$bad" "${k8s[@]}"; done
for bad in 39 1001 -80 nan; do refused --width "$bad" show "$PLAN"; done

# A lease shorter than 10 s is refused (a live holder could not keep its claims), with a
# readable bound; export slurm would pass it on to exec.
for bad in 0 0.001 9.99 -5 31622401; do
  refused --lease "$bad" "${exec_[@]}"
  refused --lease "$bad" "${slurm[@]}"
done
TEST_TARGET=//a:b refuses '--lease: "0.001" is not a number from 10 to 31622400' run-under --plan "$PLAN" --node h100-0 --lease 0.001 true
[ "$(wc -c <"$SCRATCH/refused.err")" -lt 200 ] || fail "the message is not short: $(cat "$SCRATCH/refused.err")"
accepted --lease 10 "${exec_[@]}"

# The largest seed is a seed, reported as given; "010" is ten, not octal eight.
accepted --seed 18446744073709551615 "${simulate[@]}" --json
grep -q '"seed": 18446744073709551615' out || fail "the largest seed was not kept: $(cat out)"
accepted --runs 010 simulate "$PLAN" --fleet "$FLEET" --json
grep -q '"runs": 10' out || fail "--runs 010 is not ten runs: $(cat out)"
accepted --sigma 0.25 "${simulate[@]}"
accepted --time-margin 2 "${slurm[@]}"
# An empty value (an unset shell variable) is refused, naming the option: -o "" had written to
# standard output and --fleet "" had read standard input, both with exit 0.
refused -o "" plan "$QUERY" --fleet "$FLEET"
refused --fleet "" plan "$QUERY"
refused --rules "" classify "$QUERY"
refused --node "" exec "$PLAN" --dry-run
grep -q "an empty value" err || fail "the refusal of an empty value does not say so: $(cat err)"
# A command left out or misspelt names the word given and the commands there are (it said only
# "A subcommand is required").
refuses '"plna" is no command (did you mean plan?); the commands are: targets, classify' plna
refuses "fleet's commands are: check, import" fleet
echo "options: ok"
