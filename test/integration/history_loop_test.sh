# A CI's feedback loop over weeks, as the README's commands run it: plan --history H, results
# records of the run, history summarize H results -o H. What a repository does between runs: a
# test's GPU count lowered (its runs on more GPUs left out), a test moved to another package (named
# beside its old label's runs), tests removed (left out of the rolling history by --max-age).
source test/integration/lib.sh
requires jq

h100_fleet "$SCRATCH/fleet.yaml"
query() {  # query FILE LABEL TAG [LABEL TAG]...
  local out=$1
  shift
  {
    echo '<?xml version="1.1" encoding="UTF-8" standalone="no"?>'
    echo '<query version="2">'
    while [ $# -gt 0 ]; do
      echo "  <rule class=\"py_test\" location=\"/w/BUILD:1:1\" name=\"$1\">"
      echo "    <string name=\"name\" value=\"${1##*:}\"/>"
      echo "    <list name=\"tags\"><string value=\"$2\"/></list>"
      echo '    <string name="size" value="medium"/>'
      echo '  </rule>'
      shift 2
    done
    echo '</query>'
  } >"$out"
}
# The header of a gpuplan of before gpus_asked: its rows are read as before.
HEADER=label,shard,seconds,peak_vram_mib,node,gpus,start,exit_status,gpu_touched,peak_up_front,shard_count,filtered

# Runs of the week before: //ml:train_test on 2 GPUs (100 s, 18,000 MiB a GPU), //ml:old_test and
# //ml:moved_test, all on day 1 to 4 of November.
{
  echo "$HEADER"
  for day in 1 2 3 4; do
    echo "//ml:train_test,,10$day.000,18000,h100-0,\"0,1\",2026-11-0${day}T10:00:00.000Z,0,true,false,,"
    echo "//ml:old_test,,30.000,5000,h100-0,2,2026-11-0${day}T10:00:00.000Z,0,true,false,,"
    echo "//ml:moved_test,,40.000,5000,h100-0,3,2026-11-0${day}T10:00:00.000Z,0,true,false,,"
  done
} >"$SCRATCH/week1.csv"
"$GPUPLAN" history summarize "$SCRATCH/history.json" "$SCRATCH/week1.csv" -o "$SCRATCH/history.json" \
  2>/dev/null || fail "first summarize"

# The train test's tag is now gpu (1 GPU). Its runs on 2 GPUs are not its time on one, nor their
# memory a GPU its need: before, they planned it at 104 s and reserved 20,700 MiB, where it takes
# 170 s and 36,000 MiB (pack would have shared its GPU on that word).
query "$SCRATCH/q1.xml" //ml:train_test gpu //ml:old_test gpu //ml:moved_test gpu
"$GPUPLAN" plan "$SCRATCH/q1.xml" --fleet "$SCRATCH/fleet.yaml" --history "$SCRATCH/history.json" \
  -o "$SCRATCH/p0.json" 2>"$SCRATCH/p0.err" || fail "plan: $(cat "$SCRATCH/p0.err")"
train() { jq -c '[.assignments[] | select(.label == "//ml:train_test") | .duration_s, .duration_source, .vram_mib]' "$1"; }
[ "$(train "$SCRATCH/p0.json")" = '[35,"size-median",null]' ] ||
  fail "train_test planned from its runs on 2 GPUs: $(train "$SCRATCH/p0.json")"
jq -e '[.diagnostics[] | select(.label == "//ml:train_test")] | length == 1 and (.[0] | .severity == "note"
        and (.message | startswith("4 of its last 4 runs in the history were given more GPUs than the 1 it asks for now (as many as 2: runs from before its GPU count was lowered)")))' \
  "$SCRATCH/p0.json" >/dev/null || fail "no note of the runs on more GPUs: $(jq -c .diagnostics "$SCRATCH/p0.json")"
grep -qF "4 runs of GPU tests given more GPUs than they ask for now left out" "$SCRATCH/p0.err" ||
  fail "the totals line does not count them: $(cat "$SCRATCH/p0.err")"
# A note, not a warning: the repository changed the test, and --strict plans it (a warning would
# fail every plan until the test ran on 1 GPU, which a failed plan never lets it).
"$GPUPLAN" plan "$SCRATCH/q1.xml" --fleet "$SCRATCH/fleet.yaml" --history "$SCRATCH/history.json" --strict \
  -o "$SCRATCH/p0s.json" 2>"$SCRATCH/p0s.err" || fail "--strict refused a lowered GPU count: $(cat "$SCRATCH/p0s.err")"
# So with a history of that test alone, all of whose runs are its older count's: before, also
# "no GPU unit has a run in it", as if it were another repository's history, an error under --strict.
{ echo "$HEADER"; grep '^//ml:train_test' "$SCRATCH/week1.csv"; } >"$SCRATCH/train_only.csv"
"$GPUPLAN" plan "$SCRATCH/q1.xml" --fleet "$SCRATCH/fleet.yaml" --history "$SCRATCH/train_only.csv" --strict \
  -o "$SCRATCH/p0t.json" 2>"$SCRATCH/p0t.err" || fail "--strict refused a history of one retagged test: $(cat "$SCRATCH/p0t.err")"
# One run on 1 GPU took 170 s at 36,000 MiB: the test is planned from it alone (before: 143.6 s,
# the p90 of 101-104 s and 170 s).
echo "$HEADER" >"$SCRATCH/run5.csv"
echo "//ml:train_test,,170.000,36000,h100-0,0,2026-11-05T10:00:00.000Z,0,true,false,," >>"$SCRATCH/run5.csv"
"$GPUPLAN" history summarize "$SCRATCH/history.json" "$SCRATCH/run5.csv" -o "$SCRATCH/history.json" \
  2>/dev/null || fail "second summarize"
"$GPUPLAN" plan "$SCRATCH/q1.xml" --fleet "$SCRATCH/fleet.yaml" --history "$SCRATCH/history.json" \
  -o "$SCRATCH/p1.json" 2>"$SCRATCH/p1.err" || fail "plan: $(cat "$SCRATCH/p1.err")"
[ "$(train "$SCRATCH/p1.json")" = '[170,"history-p90",41400]' ] ||
  fail "train_test after a run on 1 GPU: $(train "$SCRATCH/p1.json")"

# //ml:moved_test moved to //vision:moved_test, and //ml:old_test was removed. Before, the moved
# test was planned from its size class without a word.
query "$SCRATCH/q2.xml" //ml:train_test gpu //vision:moved_test gpu
"$GPUPLAN" plan "$SCRATCH/q2.xml" --fleet "$SCRATCH/fleet.yaml" --history "$SCRATCH/history.json" \
  -o "$SCRATCH/p2.json" 2>"$SCRATCH/p2.err" || fail "plan after the move: $(cat "$SCRATCH/p2.err")"
jq -e '[.diagnostics[] | select(.label == "//vision:moved_test")] | length == 1 and (.[0] | .severity == "note"
        and (.message | startswith("has no runs in the history, and a test of its name has some, which the query no longer names (//ml:moved_test)")))' \
  "$SCRATCH/p2.json" >/dev/null || fail "the moved test is not named beside its old runs: $(jq -c .diagnostics "$SCRATCH/p2.json")"
grep -qF "0 warnings, 2 notes" "$SCRATCH/p2.err" || fail "the note is not counted: $(cat "$SCRATCH/p2.err")"
"$GPUPLAN" explain //vision:moved_test "$SCRATCH/q2.xml" --history "$SCRATCH/history.json" >"$SCRATCH/e2.txt" 2>&1 ||
  fail "explain of the moved test: $(cat "$SCRATCH/e2.txt")"
grep -qF "//ml:moved_test" "$SCRATCH/e2.txt" || fail "explain does not name the old label: $(cat "$SCRATCH/e2.txt")"

# Thirty days on, the loop has run the tests the query names; the removed and moved tests' old
# labels have not run since November 4th.
echo "$HEADER" >"$SCRATCH/run35.csv"
echo "//ml:train_test,,171.000,36000,h100-0,0,2026-12-05T10:00:00.000Z,0,true,false,," >>"$SCRATCH/run35.csv"
echo "//vision:moved_test,,41.000,5000,h100-0,1,2026-12-05T10:00:00.000Z,0,true,false,," >>"$SCRATCH/run35.csv"
"$GPUPLAN" history summarize "$SCRATCH/history.json" "$SCRATCH/run35.csv" -o "$SCRATCH/kept.json" \
  2>/dev/null || fail "summarize without --max-age"
[ "$(jq '[.units[].label] | length' "$SCRATCH/kept.json")" = 4 ] || fail "without --max-age every test stays"
"$GPUPLAN" history summarize "$SCRATCH/history.json" "$SCRATCH/run35.csv" --max-age 30 \
  -o "$SCRATCH/aged.json" 2>"$SCRATCH/aged.err" || fail "summarize --max-age: $(cat "$SCRATCH/aged.err")"
[ "$(jq -c '[.units[].label]' "$SCRATCH/aged.json")" = '["//ml:train_test","//vision:moved_test"]' ] ||
  fail "--max-age 30 kept: $(jq -c '[.units[].label]' "$SCRATCH/aged.json")"
grep -qF "2 tests with no run in the 30 days before the newest left out" "$SCRATCH/aged.err" ||
  fail "the totals line does not say what --max-age left out: $(cat "$SCRATCH/aged.err")"
# By the runs' own times, not the clock: the same inputs give the same bytes, and a history whose
# newest run is old loses nothing.
"$GPUPLAN" history summarize "$SCRATCH/history.json" "$SCRATCH/run35.csv" --max-age 30 \
  -o "$SCRATCH/aged2.json" 2>/dev/null
cmp -s "$SCRATCH/aged.json" "$SCRATCH/aged2.json" || fail "--max-age gave other bytes the second time"
"$GPUPLAN" history summarize "$SCRATCH/history.json" --max-age 1 -o "$SCRATCH/old.json" 2>/dev/null
[ "$(jq '[.units[].label] | length' "$SCRATCH/old.json")" = 3 ] || fail "--max-age 1 on the week's history"
# JUnit runs and hand-written rows have no start: a test with such a run is kept, its age unknown.
printf 'label,seconds\n//ml:old_test,30\n' >"$SCRATCH/nostart.csv"
"$GPUPLAN" history summarize "$SCRATCH/nostart.csv" "$SCRATCH/run35.csv" --max-age 1 -o "$SCRATCH/ns.json" \
  2>/dev/null || fail "summarize with a row of no start"
jq -e '[.units[].label] | index("//ml:old_test") != null' "$SCRATCH/ns.json" >/dev/null ||
  fail "a test whose run has no start time was left out"
# //ml:dist_test's tag went from gpu to gpu:2. Its runs on 1 GPU, with none on 2 yet, may be a
# machine short of GPUs as well as its older count: a warning, an error under --strict (as
# run_under_test's run on 1 of 2 GPUs). Once it has run on 2 GPUs (a plan without --strict), the
# runs on 1 before that are its older count's: a note. Before, they stayed a warning for as long
# as they were in the window, and every --strict plan failed.
{
  echo "$HEADER"
  for day in 1 2 3; do
    echo "//ml:dist_test,,50.000,9000,h100-0,4,2026-11-0${day}T10:00:00.000Z,0,true,false,,"
    echo "//ml:other_test,,10.000,9000,h100-0,5,2026-11-0${day}T10:00:00.000Z,0,true,false,,"
  done
} >"$SCRATCH/dist.csv"
query "$SCRATCH/q3.xml" //ml:dist_test gpu:2 //ml:other_test gpu
dist_plan() {  # dist_plan NAME [--strict]: plan q3 with the dist history, NAME.json and NAME.err
  local name=$1; shift
  "$GPUPLAN" plan "$SCRATCH/q3.xml" --fleet "$SCRATCH/fleet.yaml" --history "$SCRATCH/dist.csv" "$@" \
    -o "$SCRATCH/$name.json" 2>"$SCRATCH/$name.err"
}
dist_severity() {  # dist_severity NAME: the severities of //ml:dist_test's diagnostics in NAME.json
  jq -c '[.diagnostics[] | select(.label == "//ml:dist_test") | .severity]' "$SCRATCH/$1.json"
}
! dist_plan raised-strict --strict || fail "--strict planned a test whose every run was short of GPUs"
dist_plan raised || fail "plan: $(cat "$SCRATCH/raised.err")"
[ "$(dist_severity raised)" = '["warning"]' ] || fail "runs on 1 GPU, none on 2: $(jq -c .diagnostics "$SCRATCH/raised.json")"
# Its first run on 2 GPUs: the runs on 1 before it are the older count's.
echo "//ml:dist_test,,30.000,9000,h100-0,\"4,5\",2026-11-04T10:00:00.000Z,0,true,false,," >>"$SCRATCH/dist.csv"
dist_plan whole --strict || fail "--strict refused the older count's runs after a run on 2 GPUs: $(cat "$SCRATCH/whole.err")"
jq -e '[.diagnostics[] | select(.label == "//ml:dist_test")] | length == 1 and (.[0] | .severity == "note"
        and (.message | startswith("3 of its last 4 runs in the history were given fewer GPUs than the 2 it needs")))' \
  "$SCRATCH/whole.json" >/dev/null || fail "no note of the runs on 1 GPU: $(jq -c .diagnostics "$SCRATCH/whole.json")"
[ "$(jq -c '[.assignments[] | select(.label == "//ml:dist_test") | .duration_s, .duration_source]' "$SCRATCH/whole.json")" = '[30,"history-p90"]' ] ||
  fail "//ml:dist_test is not planned from its run on 2 GPUs: $(jq -c .assignments "$SCRATCH/whole.json")"
# A run on 1 GPU after one on 2 is a machine short of GPUs (--missing-gpus=warn): a warning.
echo "//ml:dist_test,,20.000,9000,h100-0,4,2026-11-05T10:00:00.000Z,0,true,false,," >>"$SCRATCH/dist.csv"
dist_plan short || fail "plan with a run short of GPUs: $(cat "$SCRATCH/short.err")"
[ "$(dist_severity short)" = '["warning"]' ] || fail "a run on 1 GPU after one on 2: $(jq -c .diagnostics "$SCRATCH/short.json")"
! dist_plan short-strict --strict || fail "--strict planned a test whose run was short of GPUs"

# The same retag, with the runs recorded by run-under, whose records say what the test asked for
# when it ran (gpus_asked): 1, and it was given 1. They are its older count's with no run on 2 GPUs
# after them: a note, and --strict plans it. Before, a warning until a run on 2 GPUs came, which
# no --strict plan ever ran (the plan that would run it failed).
mkdir -p "$SCRATCH/locks"
: >"$SCRATCH/asked.csv"  # run-under never creates its results file
query "$SCRATCH/q4.xml" //ml:dist_test gpu //ml:other_test gpu
"$GPUPLAN" plan "$SCRATCH/q4.xml" --fleet "$SCRATCH/fleet.yaml" -o "$SCRATCH/p4.json" 2>/dev/null || fail "plan of q4"
run_under() {  # run_under PLAN RESULTS [run-under options]: //ml:dist_test's run on h100-0, recorded
  local plan=$1 results=$2
  shift 2
  TEST_TARGET=//ml:dist_test "$GPUPLAN" run-under --plan "$plan" --node h100-0 --lock-dir "$SCRATCH/locks" \
    --results "$results" "$@" true 2>>"$SCRATCH/run_under.err" || fail "run-under: $(cat "$SCRATCH/run_under.err")"
}
for run in 1 2 3; do run_under "$SCRATCH/p4.json" "$SCRATCH/asked.csv"; done
[ "$(cut -d, -f13 "$SCRATCH/asked.csv" | sort -u | tr '\n' ' ')" = "1 gpus_asked " ] ||
  fail "run-under's records do not say the test asked for 1 GPU: $(cat "$SCRATCH/asked.csv")"
asked_plan() {  # asked_plan NAME [--strict]: plan q3 (gpu:2) with asked.csv, NAME.json and NAME.err
  local name=$1; shift
  "$GPUPLAN" plan "$SCRATCH/q3.xml" --fleet "$SCRATCH/fleet.yaml" --history "$SCRATCH/asked.csv" "$@" \
    -o "$SCRATCH/$name.json" 2>"$SCRATCH/$name.err"
}
asked_plan asked --strict || fail "--strict refused runs given all the GPUs they asked for: $(cat "$SCRATCH/asked.err")"
jq -e '[.diagnostics[] | select(.label == "//ml:dist_test")] | length == 1 and (.[0] | .severity == "note"
        and (.message | startswith("3 of its last 3 runs in the history were given fewer GPUs than the 2 it needs"))
        and (.message | contains("by their gpus_asked, 3 given all it asked for then: runs of its older count")))' \
  "$SCRATCH/asked.json" >/dev/null || fail "no note of the older count's runs: $(jq -c .diagnostics "$SCRATCH/asked.json")"
grep -qF "3 runs of GPU tests given fewer GPUs than they need left out" "$SCRATCH/asked.err" ||
  fail "the totals line does not count them: $(cat "$SCRATCH/asked.err")"
# A run on a machine short of GPUs (--missing-gpus=warn, 1 of the 2 it asked for) stays a warning,
# an error under --strict, and so it does with a run on 2 GPUs after it, which before made any run
# on fewer before it a note.
"$GPUPLAN" plan "$SCRATCH/q3.xml" --fleet "$SCRATCH/fleet.yaml" -o "$SCRATCH/p3.json" 2>/dev/null || fail "plan of q3"
first=$(jq '[.assignments[] | select(.label == "//ml:dist_test") | .gpus[0]][0]' "$SCRATCH/p3.json")
GPUPLAN_FAKE_NVML_GPUS=$((first + 1)) run_under "$SCRATCH/p3.json" "$SCRATCH/asked.csv" --missing-gpus=warn
[ "$(tail -1 "$SCRATCH/asked.csv" | cut -d, -f6,13)" = "$first,2" ] ||
  fail "the run short of a GPU is not recorded as given 1 of 2: $(cat "$SCRATCH/asked.csv")"
! asked_plan asked-short --strict || fail "--strict planned a test whose run was short of the GPUs it asked for"
[ ! -e "$SCRATCH/asked-short.json" ] || fail "--strict left a plan behind"
asked_plan asked-short || fail "plan: $(cat "$SCRATCH/asked-short.err")"
[ "$(jq -c '[.diagnostics[] | select(.label == "//ml:dist_test") | .severity]' "$SCRATCH/asked-short.json")" = '["warning"]' ] ||
  fail "a run given 1 of the 2 GPUs it asked for: $(jq -c .diagnostics "$SCRATCH/asked-short.json")"
run_under "$SCRATCH/p3.json" "$SCRATCH/asked.csv"
! asked_plan asked-whole --strict || fail "--strict planned a test whose run, before one on 2 GPUs, was short of GPUs"
# history show says it of each run, in --json too.
"$GPUPLAN" history show //ml:dist_test --history "$SCRATCH/asked.csv" 2>/dev/null | grep -qF "given 1 GPU of the 2 it asked for then" ||
  fail "history show does not say the run was short of a GPU"
"$GPUPLAN" history show //ml:dist_test --history "$SCRATCH/asked.csv" --json 2>/dev/null |
  jq -e '[.units[0].recent[] | .gpus_asked] == [1,1,1,2,2]' >/dev/null || fail "history show --json's gpus_asked"
# history summarize keeps the column, and a plan from the summary says the same.
"$GPUPLAN" history summarize "$SCRATCH/asked.csv" -o "$SCRATCH/asked_summary.json" 2>/dev/null || fail "summarize"
jq -e '.gpuplan_history == 2 and ([.units[] | select(.label == "//ml:dist_test") | .gpus, .gpus_asked] == [[1,1,1,1,2],[1,1,1,2,2]])' \
  "$SCRATCH/asked_summary.json" >/dev/null || fail "summarize's gpus_asked: $(cat "$SCRATCH/asked_summary.json")"
"$GPUPLAN" plan "$SCRATCH/q3.xml" --fleet "$SCRATCH/fleet.yaml" --history "$SCRATCH/asked_summary.json" \
  -o "$SCRATCH/from_summary.json" 2>/dev/null || fail "plan from the summary"
[ "$(jq -c '[.diagnostics[] | select(.label == "//ml:dist_test") | .severity]' "$SCRATCH/from_summary.json")" = '["warning"]' ] ||
  fail "from the summary: $(jq -c .diagnostics "$SCRATCH/from_summary.json")"
echo "history_loop_test: ok"
