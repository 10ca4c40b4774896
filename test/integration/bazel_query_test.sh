# Real Bazel on examples/workspace: every output format it can print reads as the same tests.
source test/integration/lib.sh
requires bazel jq

query() {  # query FORMAT PATTERN: the query output, kept in $SCRATCH
  local out=$SCRATCH/$1.${2//[^a-z]/}
  bazel_ws query "$2" --output="$1" >"$out" 2>>"$SCRATCH/bazel.log" || { cat "$SCRATCH/bazel.log" >&2; fail "bazel query $2 --output=$1"; }
  echo "$out"
}
cquery() {
  local out=$SCRATCH/cquery.$1
  bazel_ws cquery 'tests(//...)' --output="$1" >"$out" 2>>"$SCRATCH/bazel.log" || { cat "$SCRATCH/bazel.log" >&2; fail "bazel cquery --output=$1"; }
  echo "$out"
}
# what gpuplan read, one test a line: label, kind, size, shards, flaky, tags, exec_properties
read_as() { "$GPUPLAN" targets --json "$@" | jq -r '.tests[] | [.label, .rule_class, .size, .shard_count, .flaky, (.tags|join(",")), (.exec_properties|tostring)] | @tsv' | sort; }
labels() { "$GPUPLAN" targets --json "$@" | jq -r '.tests[].label' | sort; }
dropped() { "$GPUPLAN" targets --json "$@" | jq -c .dropped; }

xml=$(query xml 'tests(//...)')
[ "$(labels "$xml" | wc -l)" = 23 ] || fail "expected the 23 tests of the example workspace from the xml"
diff <(labels "$xml") <(labels "$(query label_kind 'tests(//...)')") || fail "xml and label_kind give different tests"
diff <(labels "$xml") <(labels "$(query label 'tests(//...)')") || fail "xml and label give different tests"
diff <(labels "$xml") <("$GPUPLAN" targets "$xml" | tail -n +2 | head -n -1 | cut -d' ' -f1 | sort) ||
  fail "the table does not list the tests of the xml"

# //... also holds two test_suites, a filegroup and three libraries: both formats drop and count them.
all_xml=$(query xml '//...')
all_kinds=$(query label_kind '//...')
[ "$(dropped "$all_xml")" = "$(dropped "$all_kinds")" ] || fail "xml and label_kind drop different targets"
[ "$(dropped "$all_xml" | jq -c '[.test_suites, .non_test_rules]')" = "[2,4]" ] || fail "dropped counts of //...: $(dropped "$all_xml")"
"$GPUPLAN" targets <"$all_xml" | tail -n 1 | grep -q "^23 tests (xml); dropped 4 non-test rules, 2 test_suites$" ||
  fail "the table's summary line does not state the drops"

# cquery: the same tests, each with its configuration, and the same attributes after select().
kinds=$(cquery label_kind)
diff <(labels "$xml") <(labels "$kinds") || fail "query and cquery label_kind give different tests"
[ "$("$GPUPLAN" targets --json "$kinds" | jq -r '[.tests[].configuration] | unique | map(test("^[0-9a-f]{7}$")) | all')" = true ] ||
  fail "cquery label_kind tests lack a configuration id"
json=$(cquery jsonproto)
diff <(read_as "$xml") <(read_as "$json") || fail "query xml and cquery jsonproto disagree on attributes"
[ "$("$GPUPLAN" targets --json "$json" | jq -r '.tests[0].configuration')" = \
  "$("$GPUPLAN" targets --json "$kinds" | jq -r '.tests[0].configuration')" ] || fail "configuration ids differ between cquery formats"

# The table (targets without --json): a test a line in the order read, each cell what --json
# says, each column starting where its header does (CONFIG only for cquery).
table_matches_json() {  # FILE
  "$GPUPLAN" targets "$1" | head -n -1 >"$SCRATCH/table" || fail "targets $1"
  "$GPUPLAN" targets --json "$1" | jq -r '.tests[] | [.label, (.configuration | select(. != "")), .rule_class,
      .size, (if .shard_count > 0 then .shard_count else "-" end), (if .flaky then "yes" else "-" end),
      (.tags | join(","))] | join(" ")' | sed 's/ $//' >"$SCRATCH/json.rows"
  diff "$SCRATCH/json.rows" <(tail -n +2 "$SCRATCH/table" | tr -s ' ') || fail "$1: the table's cells are not --json's"
  awk 'NR == 1 { for (i = 1; i <= NF; i++) at[i] = index($0, $i); n = NF; next }
       { for (i = 2; i <= n && at[i] <= length($0); i++) if (substr($0, at[i] - 1, 1) != " " || substr($0, at[i], 1) == " ") bad = bad " " NR }
       END { if (bad) { print "misaligned lines:" bad; exit 1 } }' "$SCRATCH/table" || fail "$1: the table's columns do not line up"
}
table_matches_json "$xml"
table_matches_json "$json"
head -n 1 "$SCRATCH/table" | grep -q "^LABEL  *CONFIG  *KIND " || fail "cquery's table has no CONFIG column"

# --attrs: cquery's labels take their tags from a query; a test the attributes lack is named in
# a warning (an error under --strict), never quietly a CPU test for want of tags.
"$GPUPLAN" classify --json "$kinds" --attrs "$xml" > "$SCRATCH/joined.json" 2> "$SCRATCH/joined.err"
[ "$(jq '.gpu_tests | length' "$SCRATCH/joined.json")" = "$("$GPUPLAN" classify --json "$xml" 2>/dev/null | jq '.gpu_tests | length')" ] ||
  fail "the joined labels are not classified as the query is"
! grep -q "not in --attrs" "$SCRATCH/joined.err" || fail "a full --attrs warned: $(cat "$SCRATCH/joined.err")"
ml_xml=$(query xml 'tests(//ml/...)')
"$GPUPLAN" classify --json "$kinds" --attrs "$ml_xml" > /dev/null 2> "$SCRATCH/partial.err"
grep -q "^gpuplan: warning: //jax:pmap_test: not in --attrs .*without its tags it is planned as a CPU test" "$SCRATCH/partial.err" ||
  fail "tests outside the --attrs query are not named: $(cat "$SCRATCH/partial.err")"
refuses "" plan --strict "$kinds" --attrs "$ml_xml" --fleet examples/fleet.yaml -o "$SCRATCH/partial.plan.json"
echo ok
