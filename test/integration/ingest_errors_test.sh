# Each kind of bad input of issue 2 is exit 2 with file:line[:col] and what is wrong;
# empty input is an empty list and exit 0.
source test/integration/lib.sh
requires jq

# expect_bad FILE POSITION TEXT [ARGS...]: gpuplan targets FILE exits 2 saying "FILE:POSITION: ...TEXT"
expect_bad() {
  local file=$1 position=$2 text=$3; shift 3
  local status=0
  timeout 60 "$GPUPLAN" targets "$@" "$file" >"$SCRATCH/out" 2>"$SCRATCH/err" || status=$?
  [ "$status" = 2 ] || fail "$file: exit $status, expected 2 ($(cat "$SCRATCH/err"))"
  grep -qF "gpuplan: $file:$position: " "$SCRATCH/err" || fail "$file: no position $position in: $(cat "$SCRATCH/err")"
  grep -qF "$text" "$SCRATCH/err" || fail "$file: \"$text\" not in: $(cat "$SCRATCH/err")"
  [ ! -s "$SCRATCH/out" ] || fail "$file: printed a result although the input is bad"
}

cd "$SCRATCH"
head -c 5000 "$SOURCE_DIR/test/data/bazel/all.query.xml" >truncated.xml
expect_bad truncated.xml 92:9 "malformed XML"

{ head -n 2 "$SOURCE_DIR/test/data/bazel/tests.streamed_jsonproto"; echo '{"type":"RULE","rule":{"name":"//a:b",'; } >notjson.streamed_jsonproto
expect_bad notjson.streamed_jsonproto 3:1 "not valid JSON"

printf 'name,seconds\n//a:b,3\n' >history.csv
expect_bad history.csv 1 "unknown input format"
refuses "^gpuplan: --input-format: unknown format \"yml\"" targets --input-format yml "$SOURCE_DIR/test/data/bazel/tests.label"

head -c 4096 /bin/sh >binary
expect_bad binary 1:5 "binary input"  # 0x7f E L F, then 0x02

# A whole object with text after it is not one that "ended early" (simdjson's words).
{ head -n 2 "$SOURCE_DIR/test/data/bazel/tests.streamed_jsonproto"; printf '{"type":"RULE","rule":{"name":"//a:b_test","ruleClass":"sh_test"}} garbage\n'; } >trailing.streamed_jsonproto
expect_bad trailing.streamed_jsonproto 3:68 "text after the end of the JSON object"

# Bazel writes rule inputs only inside their rule; one outside any rule is refused, not skipped.
sed 's|^</query>|<rule-input name="//a:stray"/>\n</query>|' "$SOURCE_DIR/test/data/bazel/all.query.xml" >stray.xml
stray_line=$(grep -n '<rule-input name="//a:stray"/>' stray.xml | cut -d: -f1)
expect_bad stray.xml "$stray_line:1" "a <rule-input> outside any <rule>"

# The stray rule-input, and an empty input label, where commands read the dependency graph
# (audit, plan and classify --classify-by-deps): exit 2 at the position, nothing on standard output.
printf '%s\n' '{"type":"RULE","rule":{"name":"//a:t_test","ruleClass":"sh_test","ruleInput":["//a:lib",""]}}' \
  '{"type":"RULE","rule":{"name":"//a:lib","ruleClass":"cc_library"}}' >empty_input.streamed_jsonproto
expected_stray="gpuplan: stray.xml:$stray_line:1: a <rule-input> outside any <rule>"
expected_empty='gpuplan: empty_input.streamed_jsonproto:1:89: an empty label "" in the ruleInput of //a:t_test:'
for file in stray.xml empty_input.streamed_jsonproto; do
  expected=$expected_stray
  [ "$file" = stray.xml ] || expected=$expected_empty
  for command in audit "classify --classify-by-deps" "plan --classify-by-deps --fleet $SOURCE_DIR/examples/fleet.yaml"; do
    status=0
    # shellcheck disable=SC2086  # $command is the command and its options
    timeout 60 "$GPUPLAN" $command "$file" >out 2>err || status=$?
    [ "$status" = 2 ] || fail "$command $file: exit $status, expected 2 ($(cat err))"
    grep -qF "$expected" err || fail "$command $file: \"$expected\" not in: $(cat err)"
    [ ! -s out ] || fail "$command $file: printed a result although the input is bad"
  done
done

{ echo '//a:ok_test'; head -c 100000000 /dev/zero | tr '\0' x; echo; } >long.label
expect_bad long.label 2 "longer than 1 MiB"
{ head -n 1 "$SOURCE_DIR/test/data/bazel/tests.streamed_jsonproto"; printf '{"type":"RULE","rule":{"name":"//a:'
  head -c 100000000 /dev/zero | tr '\0' x; echo '"}}'; } >long.streamed_jsonproto
expect_bad long.streamed_jsonproto 2 "longer than 64 MiB"

{ printf '<query version="2">\n<rule class="sh_test" name="//a:'; head -c 100000000 /dev/zero | tr '\0' x; echo '"/></query>'; } >long.xml
expect_bad long.xml 2:1 "an XML element longer than 64 MiB"

# A test with two, then four million rule inputs (about 130 and 260 MB) is read without
# holding them: the extra 130 MB of input must not show in the peak RSS. (Comparing two runs
# rather than one against a fixed bound keeps this true under ASan, whose RSS is larger.)
rule_with_inputs() {
  printf '<query version="2">\n<rule class="sh_test" name="//a:big_test">\n'
  awk -v n="$1" 'BEGIN { for (i = 0; i < n; i++) print "    <rule-input name=\"@bazel_tools//tools/test:test_wrapper\"/>" }'
  echo '</rule></query>'
}
peak_rss_kib() {  # FILE: reads it, prints the peak RSS in KiB
  /usr/bin/time -f %M -o rss "$GPUPLAN" targets "$1" >out || fail "$1: $(cat out)"
  grep -q "^1 test (xml)" out || fail "$1: $(cat out)"
  cat rss
}
rule_with_inputs 2000000 >big.xml
rule_with_inputs 4000000 >bigger.xml
small=$(peak_rss_kib big.xml)
large=$(peak_rss_kib bigger.xml)
[ $((large - small)) -lt 30000 ] || fail "peak RSS $small KiB for 2M rule inputs, $large KiB for 4M: rule inputs are kept"

sed 's|<int name="shard_count" value="2"/>|<int name="shard_count" value="four"/>|' \
  "$SOURCE_DIR/test/data/bazel/all.query.xml" >four.xml
expect_bad four.xml 110:9 "attribute shard_count of //tf:mirrored_strategy_test: \"four\" is not an integer"
sed 's|"intValue":2,|"intValue":"four",|' "$SOURCE_DIR/test/data/bazel/tests.streamed_jsonproto" >four.streamed_jsonproto
expect_bad four.streamed_jsonproto 19:5000 "\"intValue\" is not an integer"

: >empty
status=0
"$GPUPLAN" targets empty >out 2>err || status=$?
[ "$status" = 0 ] || fail "empty input: exit $status"
grep -qx "no tests: empty is empty" out || fail "empty input: no clear note: $(cat out)"
[ "$("$GPUPLAN" targets --json <empty 2>err | jq '.tests | length')" = 0 ] || fail "empty input: --json is not an empty list"
grep -q "no tests" err || fail "empty input: --json says nothing on stderr"
echo ok
