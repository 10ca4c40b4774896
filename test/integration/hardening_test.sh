# Issue 18's reproducers, as a user meets them: each input is answered with a result or
# exit 2 naming the file and line; never a crash (exit 1 or a signal), a hang or a wrong value.
source test/integration/lib.sh
cd "$SCRATCH"

# run_status ARGS...: runs gpuplan with a time limit; its exit status in $status, stderr in err.
run_status() { status=0; timeout 60 "$GPUPLAN" "$@" >out 2>err || status=$?; }

# 1. The last line without a newline (was a use-after-free in the line reader).
printf '//a:b_test' >last.label
run_status targets last.label
[ "$status" = 0 ] && grep -q '//a:b_test' out || fail "label without final newline: exit $status $(cat err)"
printf 'py_test rule //a:b_test (9f87702)' >last.cquery_label_kind
run_status targets --input-format cquery_label_kind last.cquery_label_kind
[ "$status" = 0 ] || fail "cquery_label_kind without final newline: exit $status $(cat err)"

# 2. JSON that simdjson rejects before parsing (a TAB inside a string), first object or later.
printf '{"type":"RULE","rule":{"name":"//a:\tb","ruleClass":"sh_test"}}\n' >tab.streamed_jsonproto
run_status targets --input-format streamed_jsonproto tab.streamed_jsonproto
[ "$status" = 2 ] && grep -q '^gpuplan: tab.streamed_jsonproto:1:.*not valid JSON' err || fail "TAB: exit $status $(cat err)"
{ echo '{"type":"RULE","rule":{"name":"//a:a","ruleClass":"sh_test"}}'; cat tab.streamed_jsonproto; } >tab.jsonproto
run_status targets --input-format jsonproto tab.jsonproto
[ "$status" = 2 ] && grep -q '^gpuplan: tab.jsonproto:2:' err || fail "TAB, 2nd object: exit $status $(cat err)"

# 3. A rules regex that std::regex could not finish: RE2 answers at once.
cat >rules.yaml <<'YAML'
rules:
  - tag: 'team-gpus-(\d+)'
    set: {gpus: $1}
  - tag: '(a+)+b'
    set: {gpus: 1}
YAML
{ printf '<query version="2"><rule class="sh_test" name="//a:t"><list name="tags"><string value="team-gpus-'
  head -c 100000 /dev/zero | tr '\0' 7; printf '"/><string value="aaaaaaaaaaaaaaaaaaaaaaaaaaaa"/></list></rule></query>\n'; } >long_tag.xml
run_status classify --rules rules.yaml long_tag.xml
[ "$status" != 1 ] && [ "$status" -lt 124 ] || fail "long tag against rules: exit $status $(cat err)"

# 4. Numbers JSON and doubles cannot carry, bytes that are not UTF-8.
sed 's/"makespan_s": [0-9.]*/"makespan_s": 1e999/' "$SOURCE_DIR/test/data/plans/example.plan.json" >huge.plan.json
grep -q 1e999 huge.plan.json || fail "the fixture has no makespan_s to replace"
run_status show huge.plan.json
[ "$status" = 2 ] && grep -q '^gpuplan: huge.plan.json:[0-9]*:[0-9]*: a number beyond the range' err ||
  fail "1e999 in a plan: exit $status $(cat err)"
# A field of the wrong type deep in a plan: the message names the line it is on, and its path,
# from every command that reads a plan, read from a file or piped (before: only the path).
awk '/"end_s":/ && ++n == 3 { sub(/"end_s": [0-9.]*/, "\"end_s\": \"late\"") } 1' \
  "$SOURCE_DIR/test/data/plans/example.plan.json" >late.plan.json
line=$(grep -n '"end_s": "late"' late.plan.json | cut -d: -f1)
[ -n "$line" ] || fail "the fixture has no third end_s to replace"
for command in show "render -o late.svg" "verify --fleet $SOURCE_DIR/test/data/plans/fleet.yaml" "export slurm -o late.sh"; do
  run_status $command late.plan.json
  [ "$status" = 2 ] && grep -q "^gpuplan: late.plan.json:$line:[0-9]*: assignments\[2\]\.end_s: expected a number" err ||
    fail "$command: a string end_s on line $line: exit $status $(cat err)"
done
status=0; "$GPUPLAN" show - <late.plan.json >out 2>err || status=$?
[ "$status" = 2 ] && grep -q "^gpuplan: <stdin>:$line:[0-9]*: assignments\[2\]\.end_s:" err ||
  fail "show -: a string end_s on line $line: exit $status $(cat err)"
status=0; cat late.plan.json | "$GPUPLAN" show - >out 2>err || status=$?
[ "$status" = 2 ] && grep -q "^gpuplan: <stdin>:$line:[0-9]*: assignments\[2\]\.end_s:" err ||
  fail "show from a pipe: a string end_s on line $line: exit $status $(cat err)"
printf '{"gpuplan_history":1,"units":[{"label":"//a:b","shard": nul,"seconds":[1]}]}\n' >nul.json
run_status history summarize nul.json
[ "$status" = 0 ] || [ "$status" = 2 ] || fail "\"shard\": nul: exit $status $(cat err)"
printf '//a:\xff_test\n' >latin1.label
run_status targets --input-format label latin1.label
[ "$status" = 2 ] && grep -q '^gpuplan: latin1.label:1: not UTF-8' err || fail "non-UTF-8 label: exit $status $(cat err)"
cp "$SOURCE_DIR/examples/fleet.yaml" "$(printf 'fleet-\xff.yaml')"
run_status fleet check --json "$(printf 'fleet-\xff.yaml')"
[ "$status" = 0 ] && grep -qF '"fleet-\\xff.yaml"' out || fail "a fleet file name that is not UTF-8: exit $status $(cat err)"

# 7-9. Values beyond the limits of README "Limits".
printf 'label,seconds\n//a:b,1e308\n' >long.csv
run_status history summarize --strict long.csv
[ "$status" = 2 ] && grep -q 'long.csv:2: .*longer than a year' err || fail "1e308 s: exit $status $(cat err)"
printf '<query version="2"><rule class="sh_test" name="//a:t"><int name="shard_count" value="2147483647"/></rule></query>\n' >shards.xml
run_status targets shards.xml
[ "$status" = 2 ] && grep -q "shards.xml:1:.*above gpuplan's limit of 10000" err || fail "2^31-1 shards: exit $status $(cat err)"
# A measured peak is at most 2^29 MiB, so that with the most VRAM headroom (under 100%) a plan's
# reservation is one a plan may hold (2^30 MiB): a peak of 10^9 MiB had made a plan, exit 3,
# that show, verify and every other reader refused (vram_mib outside 0 to 1073741824).
printf 'vram_headroom: 0.99\n' >headroom.yaml
printf 'label,seconds,peak_vram_mib\n//xla:collective_ops_test,10,536870912\n' >most.csv
run_status plan "$SOURCE_DIR/examples/query.xml" --fleet "$SOURCE_DIR/examples/fleet.yaml" --rules headroom.yaml \
  --history most.csv -o most.plan.json
[ "$status" = 3 ] || fail "a peak of 2^29 MiB: plan exit $status $(cat err)"
run_status show most.plan.json
[ "$status" = 0 ] || fail "the plan of a peak of 2^29 MiB does not read back: exit $status $(cat err)"
printf 'label,seconds,peak_vram_mib\n//xla:collective_ops_test,10,1000000000\n' >over.csv
run_status history summarize --strict over.csv
[ "$status" = 2 ] && grep -q 'over.csv:2: .*peak_vram_mib "1000000000" is not a number of MiB from 0 to 536870912' err ||
  fail "a peak of 10^9 MiB: exit $status $(cat err)"
echo ok
