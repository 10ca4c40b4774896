# The same input in another order gives the same bytes (README "Order of the input"): each case
# writes one input twice, its records in two orders, and compares what the commands print.
source test/integration/lib.sh
requires python3

# same_output NAME DIR_A DIR_B COMMAND...: COMMAND run in each folder (its files named relative)
# prints the same standard output, standard error and exit status in both.
same_output() {
  local name=$1 a=$2 b=$3
  shift 3
  local status_a=0 status_b=0
  (cd "$a" && "$GPUPLAN" "$@" >"$SCRATCH/out.a" 2>"$SCRATCH/err.a") || status_a=$?
  (cd "$b" && "$GPUPLAN" "$@" >"$SCRATCH/out.b" 2>"$SCRATCH/err.b") || status_b=$?
  [ "$status_a" = "$status_b" ] || fail "$name: exit $status_a in one order, $status_b in the other"
  cmp -s "$SCRATCH/out.a" "$SCRATCH/out.b" ||
    fail "$name: standard output differs with the input in another order: $(diff "$SCRATCH/out.a" "$SCRATCH/out.b" | head -20)"
  cmp -s "$SCRATCH/err.a" "$SCRATCH/err.b" ||
    fail "$name: standard error differs with the input in another order: $(diff "$SCRATCH/err.a" "$SCRATCH/err.b" | head -20)"
}

# query_xml FILE RULE...: a `bazel query --output=xml` document of the rules (each
# "CLASS NAME TAGS DEPS", TAGS and DEPS comma-separated or "-"), in the order given.
query_xml() {
  local file=$1 class name tags deps item
  shift
  {
    echo '<?xml version="1.1" encoding="UTF-8" standalone="no"?>'
    echo '<query version="2">'
    for rule in "$@"; do
      read -r class name tags deps <<<"$rule"
      echo "    <rule class=\"$class\" location=\"/w/BUILD:1:1\" name=\"$name\">"
      if [ "$tags" != - ]; then
        echo '        <list name="tags">'
        for item in ${tags//,/ }; do echo "            <string value=\"$item\"/>"; done
        echo '        </list>'
      fi
      if [ "$deps" != - ]; then
        echo '        <list name="deps">'
        for item in ${deps//,/ }; do echo "            <label value=\"$item\"/>"; done
        echo '        </list>'
        for item in ${deps//,/ }; do echo "        <rule-input name=\"$item\"/>"; done
      fi
      echo '    </rule>'
    done
    echo '</query>'
  } >"$file"
}

mkdir -p "$SCRATCH/a" "$SCRATCH/b"

# A test reaches GPU code by two paths of one length: explain and audit name the step with the
# smallest label (//lib:x), whichever rule the input lists first. Before, the first GPU dep in
# the input's order chose: //lib:y in one order, //lib:x in the other.
cudart='cc_library @local_config_cuda//cuda:cudart - -'
cublas='cc_library @local_config_cuda//cuda:cublas - -'
x='cc_library //lib:x - @local_config_cuda//cuda:cublas'
y='cc_library //lib:y - @local_config_cuda//cuda:cudart'
t='cc_test //t:a_test gpu //lib:y,//lib:x'
u='cc_test //t:b_test - //lib:x,//lib:y,//lib:undeclared'
query_xml "$SCRATCH/a/deps.xml" "$cudart" "$cublas" "$x" "$y" "$t" "$u"
query_xml "$SCRATCH/b/deps.xml" "$cublas" "$cudart" "$y" "$x" "$u" "$t"
same_output "explain, two equal paths" "$SCRATCH/a" "$SCRATCH/b" explain //t:a_test deps.xml
grep -q 'reaches GPU code: //t:a_test → //lib:x → @local_config_cuda//cuda:cublas' "$SCRATCH/out.a" ||
  fail "explain does not take the smallest label among equal paths: $(cat "$SCRATCH/out.a")"
same_output "explain --json, two equal paths" "$SCRATCH/a" "$SCRATCH/b" explain //t:b_test deps.xml --json
same_output "audit --json, two equal paths" "$SCRATCH/a" "$SCRATCH/b" audit deps.xml --json
# The same where a cycle leaves the graph to the breadth-first walk.
c1='cc_library //lib:c1 - //lib:c2'
c2='cc_library //lib:c2 - //lib:c1'
query_xml "$SCRATCH/a/deps.xml" "$cudart" "$cublas" "$x" "$y" "$t" "$u" "$c1" "$c2"
query_xml "$SCRATCH/b/deps.xml" "$c2" "$c1" "$cublas" "$cudart" "$y" "$x" "$u" "$t"
same_output "explain, two equal paths, a cycle" "$SCRATCH/a" "$SCRATCH/b" explain //t:a_test deps.xml
grep -q 'reaches GPU code: //t:a_test → //lib:x → @local_config_cuda//cuda:cublas' "$SCRATCH/out.a" ||
  fail "explain (a cycle) does not take the smallest label among equal paths: $(cat "$SCRATCH/out.a")"
same_output "audit --json, two equal paths, a cycle" "$SCRATCH/a" "$SCRATCH/b" audit deps.xml --json

# Runs of one test that started in the same millisecond (--runs_per_test starts them together;
# a CSV's start may have whole seconds), in either order: the same newest run, so the same window
# and estimate, and the same summary. Before, the row or event read last was the newest.
rm -rf "$SCRATCH/a" "$SCRATCH/b" && mkdir -p "$SCRATCH/a" "$SCRATCH/b"
header='label,shard,seconds,peak_vram_mib,node,gpus,start,exit_status'
row1='//a:t,,10,100,n1,"0",2024-05-01T10:00:00Z,0'
row2='//a:t,,20,200,n2,"0",2024-05-01T10:00:00Z,0'
row3='//a:t,,30,300,n1,"0",2024-04-01T10:00:00Z,0'
printf '%s\n' "$header" "$row1" "$row2" "$row3" >"$SCRATCH/a/runs.csv"
printf '%s\n' "$header" "$row2" "$row3" "$row1" >"$SCRATCH/b/runs.csv"
bep_run() {
  echo "{\"id\":{\"testResult\":{\"label\":\"//a:t\",\"run\":$1,\"shard\":1,\"attempt\":1,\"configuration\":{\"id\":\"c1\"}}},\"testResult\":{\"testAttemptDurationMillis\":\"$2\",\"status\":\"PASSED\",\"testAttemptStartMillisEpoch\":\"1796036238472\"}}"
}
summary='{"id":{"testSummary":{"label":"//a:t","configuration":{"id":"c1"}}},"testSummary":{"overallStatus":"PASSED","totalRunCount":2,"runCount":2,"shardCount":1}}'
{ bep_run 1 10000 && bep_run 2 20000 && echo "$summary"; } >"$SCRATCH/a/bep.json"
{ bep_run 2 20000 && bep_run 1 10000 && echo "$summary"; } >"$SCRATCH/b/bep.json"
for input in runs.csv bep.json; do
  same_output "history show --window 1, $input" "$SCRATCH/a" "$SCRATCH/b" history show //a:t --history "$input" --window 1
  grep -q 'estimate: 20.000s' "$SCRATCH/out.a" || fail "$input: the longer of two runs started together is not the newest: $(cat "$SCRATCH/out.a")"
  same_output "history summarize, $input" "$SCRATCH/a" "$SCRATCH/b" history summarize "$input"
done

# A plan whose units are listed in another order (reversed: other nodes first, and later units
# first on each node) is the same plan to simulate: the same durations drawn from a seed, in
# the order gpuplan writes a plan in. Before, the n-th listed unit took the n-th draw.
rm -rf "$SCRATCH/a" "$SCRATCH/b" && mkdir -p "$SCRATCH/a" "$SCRATCH/b"
cp test/data/plans/example.plan.json "$SCRATCH/a/plan.json"
python3 -c 'import json, sys
plan = json.load(open(sys.argv[1]))
plan["assignments"].reverse()
json.dump(plan, open(sys.argv[2], "w"), indent=1)' test/data/plans/example.plan.json "$SCRATCH/b/plan.json"
cp test/data/plans/fleet.yaml "$SCRATCH/a/fleet.yaml" && cp test/data/plans/fleet.yaml "$SCRATCH/b/fleet.yaml"
same_output "simulate --seed, units in another order" "$SCRATCH/a" "$SCRATCH/b" simulate plan.json --fleet fleet.yaml --sigma 0.5 --runs 20 --seed 7 --json
# show and render draw it as they draw ours: with --fleet the nodes in the fleet's order, and
# on each node the units by start, first GPU and unit id (before, in the order listed: another
# row for a bar, other bars first in the SVG and the trace).
for command in "show plan.json --fleet fleet.yaml --width 100" "show plan.json --fleet fleet.yaml --summary" \
  "render plan.json --fleet fleet.yaml -o chart.svg" "render plan.json --fleet fleet.yaml -o chart.html"; do
  # shellcheck disable=SC2086
  same_output "$command, units in another order" "$SCRATCH/a" "$SCRATCH/b" $command
  case $command in *-o*) cmp -s "$SCRATCH/a/${command##* }" "$SCRATCH/b/${command##* }" ||
    fail "$command: ${command##* } differs with the plan's units in another order" ;; esac
done
# Without a fleet the nodes come in the order the plan first names them (gpuplan names them in
# the fleet's); the units on each node are ordered as above.
python3 -c 'import json, sys
plan = json.load(open(sys.argv[1]))
first = {}
for a in plan["assignments"]:
    first.setdefault(a["node"], len(first))
plan["assignments"].reverse()
plan["assignments"].sort(key=lambda a: first[a["node"]])
json.dump(plan, open(sys.argv[2], "w"), indent=1)' test/data/plans/example.plan.json "$SCRATCH/b/plan.json"
for command in "show plan.json --width 100" "render plan.json -o chart.svg" "render plan.json -o chart.trace.json"; do
  # shellcheck disable=SC2086
  same_output "$command, units of a node in another order" "$SCRATCH/a" "$SCRATCH/b" $command
  case $command in *-o*) cmp -s "$SCRATCH/a/${command##* }" "$SCRATCH/b/${command##* }" ||
    fail "$command: ${command##* } differs with a node's units in another order" ;; esac
done
