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

# //... also holds two test_suites and a filegroup: both formats drop and count them.
all_xml=$(query xml '//...')
all_kinds=$(query label_kind '//...')
[ "$(dropped "$all_xml")" = "$(dropped "$all_kinds")" ] || fail "xml and label_kind drop different targets"
[ "$(dropped "$all_xml" | jq -c '[.test_suites, .non_test_rules]')" = "[2,1]" ] || fail "dropped counts of //...: $(dropped "$all_xml")"
"$GPUPLAN" targets <"$all_xml" | tail -n 1 | grep -q "^23 tests (xml); dropped 1 non-test rule, 2 test_suites$" ||
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
echo ok
