# exec's and run-under's output files as a user meets them: results appended to a file an
# editor left without a final newline, in the columns of the gpuplan that began the file (before
# peak_up_front; before gpus_asked), a filtered run marked (and left unrecorded in a file before that column), a results
# file of other columns refused
# before anything runs, --json and --junit that cannot be written found before anything runs,
# and one that cannot be written at the end never hiding a failed unit; a refusal to start writing
# both, every unit not run, and never leaving an earlier run's file as this run's.
source test/integration/lib.sh
requires jq
PLAN=$SOURCE_DIR/test/data/plans/workstation_ml.json
HEADER=label,shard,seconds,peak_vram_mib,node,gpus,start,exit_status,gpu_touched,peak_up_front,shard_count,filtered,gpus_asked
BEFORE_NEW_COLUMNS=label,shard,seconds,peak_vram_mib,node,gpus,start,exit_status,gpu_touched
cd "$SCRATCH"
jq '.assignments |= [.[5]]' "$PLAN" >one.json  # one unit on ws-0: //ml:inference_test

# 1. A results file whose last line has no newline: the new record starts a line of its own. The
#    file was begun by a gpuplan that wrote no peak_up_front: its records keep its 9 columns (before
#    that column, such a file was refused).
printf '%s\n//a:b,,1.000,,ws-0,0,2026-11-30T10:55:26.120Z,0,' "$BEFORE_NEW_COLUMNS" >nonl.csv
"$GPUPLAN" exec one.json --node ws-0 --lock-dir locks --results nonl.csv --command true >/dev/null ||
  fail "exec with a results file without a final newline failed"
[ "$(wc -l <nonl.csv)" = 3 ] && [ "$(tail -1 nonl.csv | cut -d, -f1)" = //ml:inference_test ] ||
  fail "the record was glued to the last line: $(cat nonl.csv)"
[ "$(tail -1 nonl.csv | awk -F, '{print NF}')" = 9 ] || fail "a record in other columns than its file's: $(cat nonl.csv)"
echo "$BEFORE_NEW_COLUMNS" >nine.csv
"$GPUPLAN" exec one.json --node ws-0 --lock-dir locks --results nine.csv --command true 2>&1 >/dev/null |
  grep -q "note: nine.csv was begun by an earlier gpuplan: its records go on in its nine columns" ||
  fail "exec does not say the file records no peak_up_front and shard_count"
TEST_TARGET=//ml:inference_test "$GPUPLAN" run-under --plan one.json --node ws-0 --lock-dir locks \
  --results nonl.csv true || fail "run-under with that results file failed"
# A file begun before gpus_asked (twelve columns, by a gpuplan of before it) gets records in its own
# twelve: never a row with more fields than its header, which history would refuse as a bad row. A
# new file records the GPUs the plan gave the unit, what the test asked for (1 here).
echo "${HEADER%,gpus_asked}" >twelve.csv
"$GPUPLAN" exec one.json --node ws-0 --lock-dir locks --results twelve.csv --command true >/dev/null 2>&1 ||
  fail "exec with a twelve-column results file failed"
TEST_TARGET=//ml:inference_test "$GPUPLAN" run-under --plan one.json --node ws-0 --lock-dir locks \
  --results twelve.csv true || fail "run-under with a twelve-column results file failed"
[ "$(wc -l <twelve.csv)" = 3 ] && [ "$(awk -F, 'NR > 1 {print NF}' twelve.csv | sort -u)" = 12 ] ||
  fail "records in other columns than their twelve-column file's: $(cat twelve.csv)"
"$GPUPLAN" exec one.json --node ws-0 --lock-dir locks --results asked.csv --command true >/dev/null 2>&1 ||
  fail "exec with a new results file failed"
TEST_TARGET=//ml:inference_test "$GPUPLAN" run-under --plan one.json --node ws-0 --lock-dir locks \
  --results asked.csv true || fail "run-under with a new results file failed"
[ "$(head -1 asked.csv)" = "$HEADER" ] && [ "$(awk -F, 'NR > 1 {print NF ":" $NF}' asked.csv | sort -u)" = 13:1 ] ||
  fail "the records do not say the unit asked for 1 GPU: $(cat asked.csv)"
# A --command that filters the test cases (googletest's --gtest_filter): its records are marked
# filtered, so history leaves them out of the test's duration; a file begun before that column
# (eleven columns) gets no record of such a run, which it could not mark.
# Its --junit and --json say so too (before, a filtered run read as the test's pass there).
"$GPUPLAN" exec one.json --node ws-0 --lock-dir locks --results filtered.csv --junit filtered.xml --json filtered.json \
  --command 'true --gtest_filter=Gemm.Fp16' >/dev/null 2>filtered.err || fail "exec: $(cat filtered.err)"
[ "$(head -1 filtered.csv)" = "$HEADER" ] && grep -q '^//ml:inference_test,.*,true,1$' filtered.csv &&
  grep -q 'the units run under the test filter Gemm.Fp16 in --command: their results records are marked filtered' filtered.err ||
  fail "an exec --command run under --gtest_filter is not marked filtered: $(cat filtered.csv filtered.err)"
grep -q '<property name="filtered" value="true"/>' filtered.xml || fail "--junit of a filtered run: $(cat filtered.xml)"
[ "$(jq -c '[.units[] | .filtered]' filtered.json)" = '[true]' ] || fail "--json of a filtered run: $(cat filtered.json)"
"$GPUPLAN" exec one.json --node ws-0 --lock-dir locks --junit whole.xml --json whole.json --command true >/dev/null ||
  fail "exec --command true failed"
! grep -q 'filtered' whole.xml && [ "$(jq -c '[.units[] | .filtered]' whole.json)" = '[false]' ] ||
  fail "a whole run is marked filtered: $(cat whole.xml whole.json)"
# The template is read as /bin/sh reads it: a pytest -k handed to bazel test as one quoted --test_arg
# filters the run, and so does a --test_filter with a blank in it, named whole. Before, split at
# blanks, the first was a whole run (history took its time for the test's) and the second was named
# "A". A -k inside a `sh -c '...'` script that runs pytest still counts.
mkdir -p bin && printf '#!/bin/sh\nexit 0\n' >bin/bazel && chmod +x bin/bazel  # a bazel test that passes
for case in "bazel test '--test_arg=-k gemm' {label}|gemm" "bazel test --test_filter=\"A B\" {label}|A B" \
  "sh -c 'pytest -k \"gemm and fp16\" x || true'|gemm and fp16"; do
  rm -f quoted.csv
  PATH=$SCRATCH/bin:$PATH "$GPUPLAN" exec one.json --node ws-0 --lock-dir locks --results quoted.csv \
    --command "${case%|*}" >/dev/null 2>quoted.err || fail "exec --command ${case%|*}: $(cat quoted.err)"
  grep -q '^//ml:inference_test,.*,true,1$' quoted.csv &&
    grep -qF "the units run under the test filter ${case##*|} in --command: their results records are marked filtered" quoted.err ||
    fail "exec --command ${case%|*} is not marked filtered by ${case##*|}: $(cat quoted.csv quoted.err)"
done
# run-under takes a -k among the test's arguments for pytest's filter only where the test may be
# pytest: a script (a py_test's stub, an sh_test running pytest), not a compiled test whose -k is its
# own option (a cc_test's -k 3), which ran whole. Before, that one was marked filtered too, and
# history left its every run out of its duration.
if command -v "${CXX:-c++}" >/dev/null; then
  printf 'int main(int argc, char**) { return argc == 3 ? 0 : 1; }\n' >k_test.cc
  "${CXX:-c++}" -o k_test k_test.cc || fail "cannot compile the ELF test"
else
  cp "$(type -P true)" k_test  # an ELF program as well
fi
printf '#!/bin/sh\nexit 0\n' >py_stub && chmod +x py_stub
for test in "./k_test|" "./py_stub|true"; do
  : >k.csv
  TEST_TARGET=//ml:inference_test "$GPUPLAN" run-under --plan one.json --node ws-0 --lock-dir locks --results k.csv \
    "${test%|*}" -k 3 2>k.err || fail "run-under ${test%|*} -k 3: $(cat k.err)"
  [ "$(tail -1 k.csv | awk -F, '{print $12}')" = "${test#*|}" ] ||
    fail "run-under ${test%|*} -k 3: filtered should be '${test#*|}': $(cat k.csv k.err)"
done
# A caller's ONEAPI_DEVICE_SELECTOR that would hide the unit's GPU from SYCL (level_zero:1 counts among
# the unit's own devices, and it has one) is unset for it, with one warning; a backend's is passed on.
ONEAPI_DEVICE_SELECTOR=level_zero:gpu "$GPUPLAN" exec one.json --node ws-0 --lock-dir locks \
  --command 'printf %s "${{ONEAPI_DEVICE_SELECTOR-unset}}" >selector.out' >/dev/null 2>selector.err
[ "$(cat selector.out)" = level_zero:gpu ] && ! grep -q ONEAPI selector.err || fail "ONEAPI_DEVICE_SELECTOR=level_zero:gpu reached the unit as $(cat selector.out)"
ONEAPI_DEVICE_SELECTOR=level_zero:1 "$GPUPLAN" exec one.json --node ws-0 --lock-dir locks \
  --command 'printf %s "${{ONEAPI_DEVICE_SELECTOR-unset}}" >selector.out' >/dev/null 2>selector.err
[ "$(cat selector.out)" = unset ] &&
  [ "$(grep -c 'warning: ONEAPI_DEVICE_SELECTOR=level_zero:1 in exec.s environment names device 1 of level_zero' selector.err)" = 1 ] &&
  grep -q 'it is unset for the 1 unit it would do that to' selector.err ||
  fail "ONEAPI_DEVICE_SELECTOR=level_zero:1 reached a unit of 1 GPU as $(cat selector.out): $(cat selector.err)"
echo "${HEADER%,filtered,gpus_asked}" >eleven.csv
"$GPUPLAN" exec one.json --node ws-0 --lock-dir locks --results eleven.csv \
  --command 'true --gtest_filter=Gemm.Fp16' >/dev/null 2>eleven.err || fail "exec: $(cat eleven.err)"
[ "$(wc -l <eleven.csv)" = 1 ] && grep -q 'they get no results record (eleven.csv has no filtered column' eleven.err ||
  fail "a filtered run was recorded unmarked in an eleven-column file: $(cat eleven.csv eleven.err)"
printf 'x' >>nonl.csv
TEST_TARGET=//ml:inference_test "$GPUPLAN" run-under --plan one.json --node ws-0 --lock-dir locks \
  --results nonl.csv true || fail "run-under with a results file without a final newline failed"
[ "$(tail -1 nonl.csv | cut -d, -f1)" = //ml:inference_test ] || fail "run-under glued its record: $(cat nonl.csv)"
refuses 'nonl.csv:5:' history summarize --strict nonl.csv

# 2. A results file of other columns (an older gpuplan's four): exit 2 naming the file and both
# headers, before any unit runs; the file is left as it was.
printf 'label,shard,seconds,peak_vram_mib\n//a:b,,5,100\n' >old.csv
cp old.csv old.before
refuses -F "old.csv: its header is \"label,shard,seconds,peak_vram_mib\", not \"$HEADER\"" \
  exec one.json --node ws-0 --lock-dir locks --results old.csv --command 'touch ran'
[ ! -e ran ] || fail "a unit ran before the results file was refused"
cmp -s old.csv old.before || fail "the older results file was changed"
TEST_TARGET=//ml:inference_test refuses "its header is" \
  run-under --plan one.json --node ws-0 --lock-dir locks --results old.csv touch ran
[ ! -e ran ] || fail "run-under ran its test before the results file was refused"
# 3. --json and --junit where nothing can be written: exit 2 before any unit runs.
for option in --json --junit; do
  rm -f ran
  refuses '/nonexistent/out' exec one.json --node ws-0 --lock-dir locks "$option" /nonexistent/out --command 'touch ran'
  [ ! -e ran ] || fail "a unit ran before exec $option /nonexistent/out was refused"
done
touch r.csv  # run-under never creates its results file
TEST_TARGET=//ml:inference_test refuses '/nonexistent/out' \
  run-under --plan one.json --node ws-0 --lock-dir locks --results r.csv --junit /nonexistent/out touch ran
[ ! -e ran ] || fail "run-under ran its test before --junit /nonexistent/out was refused"

# 4. The unit fails and takes the --json folder with it: exit 3 still, the lost file named.
mkdir gone
status=0
"$GPUPLAN" exec one.json --node ws-0 --lock-dir locks --json gone/exec.json --junit junit.xml \
  --command 'rm -r gone; exit 7' >out 2>err || status=$?
[ "$status" = 3 ] || fail "a failed unit and an unwritable --json: exit $status, not 3: $(cat err)"
grep -q 'gone/exec.json' err && grep -q 'some units did not pass, and not written: gone/exec.json; exit 3' err ||
  fail "the message does not say both: $(cat err)"
grep -q 'failure' junit.xml || fail "--junit was not written beside the lost --json"
status=0
mkdir gone
"$GPUPLAN" exec one.json --node ws-0 --lock-dir locks --json gone/exec.json --command 'rm -r gone' >out 2>err ||
  status=$?
[ "$status" = 2 ] && tail -1 err | grep -q 'every unit passed, and not written: gone/exec.json; exit 2' ||
  fail "all passed, --json lost: exit $status, the last line not saying so: $(cat err)"

# 5. An exec that refuses to start (exit 2) still writes --junit and --json, atomically: every unit
#    of the node not run, with the refusal as the message. Before, it wrote neither, and a CI job
#    uploading them reported an earlier run's files (or none) as this run's.
rm -f ran
for command in "touch ran" ""; do  # exec's own units; the default bazel test (refused before Bazel)
  echo '<old run, all passed/>' >junit.xml
  echo '{"old": true}' >exec.json
  options=(--json exec.json --command "$command")
  [ -n "$command" ] || options=()  # the default bazel test takes no --json
  status=0
  GPUPLAN_FAKE_NVML_GPUS=1 "$GPUPLAN" exec one.json --node ws-0 --lock-dir locks --junit junit.xml "${options[@]}" \
    >out 2>err || status=$?
  [ "$status" = 2 ] && grep -q 'nothing was run' err && [ ! -e ran ] ||
    fail "exec on a machine without the node's GPU ${command:-(bazel test)}: exit $status: $(cat err)"
  grep -q '<testcase classname="//ml" name="inference_test"' junit.xml &&
    grep -q '<failure message="not run: exec refused to run the node&apos;s units: node ws-0: NVML sees 1 GPU.*nothing was run.*type="no-result"/>' junit.xml &&
    grep -q 'tests="1" failures="1"' junit.xml ||
    fail "--junit after the refusal ${command:-(bazel test)}: $(cat junit.xml)"
  [ -z "$command" ] && continue
  [ "$(jq -c '[.totals.units, .totals.not_run, .units[0].outcome, .units[0].exit_status]' exec.json)" = '[1,1,"not_run",null]' ] &&
    jq -e '.refused | test("NVML sees 1 GPU")' exec.json >/dev/null || fail "--json after the refusal: $(cat exec.json)"
done
# A node the plan has no units on: one failed case saying so, where the units are not known.
echo '<old run, all passed/>' >junit.xml
status=0
"$GPUPLAN" exec one.json --node ws-9 --command true --junit junit.xml --json exec.json >out 2>err || status=$?
[ "$status" = 2 ] && grep -q 'name="gpuplan exec"' junit.xml &&
  grep -q 'failure message="no unit of the node was run: .*no units are planned on node &quot;ws-9&quot;' junit.xml ||
  fail "exec --node ws-9: exit $status, --junit: $(cat junit.xml)"
[ "$(jq -c '[.node, .totals.units, (.refused | test("ws-9"))]' exec.json)" = '["ws-9",0,true]' ] ||
  fail "exec --node ws-9: --json: $(cat exec.json)"
# The default bazel test takes no --json: bad usage, refused before anything else and never
# written. Before, a refusal for another reason (a node with no units) wrote it as that run's
# summary, and so did the refusal of --json itself.
for node in ws-9 ws-0; do
  rm -f exec.json
  status=0
  "$GPUPLAN" exec one.json --node "$node" --lock-dir locks --json exec.json >out 2>err || status=$?
  [ "$status" = 2 ] && grep -q -- '--json: the summary is of units exec runs itself' err && [ ! -e exec.json ] ||
    fail "--json with the default bazel test on $node: exit $status, $(ls): $(cat err)"
done
# An earlier run's file that cannot be written over now (a full disk) is removed, never left as this
# run's. Where no tmpfs can be mounted (not root), a folder this user cannot write: the file stays,
# and exec says it is not this run's.
mkdir full
if [ "$(id -u)" = 0 ] && mount -t tmpfs -o size=64k tmpfs full 2>/dev/null; then
  trap 'umount "$SCRATCH/full"; rm -rf "$SCRATCH"' EXIT
  echo '<old run, all passed/>' >full/junit.xml
  dd if=/dev/zero of=full/fill bs=4k count=64 2>/dev/null || true
  status=0
  GPUPLAN_FAKE_NVML_GPUS=1 "$GPUPLAN" exec one.json --node ws-0 --command true --junit full/junit.xml >out 2>err ||
    status=$?
  [ "$status" = 2 ] && [ ! -e full/junit.xml ] && grep -q 'full/junit.xml was an earlier run.s; removed' err ||
    fail "a --junit that cannot be written over on a full disk: exit $status, $(ls full): $(cat err)"
elif [ "$(id -u)" != 0 ]; then  # root writes in a folder it may not write, and cannot mount here
  echo '<old run, all passed/>' >full/junit.xml
  chmod a-w full
  status=0
  GPUPLAN_FAKE_NVML_GPUS=1 "$GPUPLAN" exec one.json --node ws-0 --command true --junit full/junit.xml >out 2>err ||
    status=$?
  chmod u+w full
  [ "$status" = 2 ] && grep -q 'full/junit.xml is an earlier run.s, and could neither be written nor removed' err ||
    fail "a --junit in a folder that cannot be written: exit $status: $(cat err)"
fi
# A refusal that quotes bytes that are not UTF-8 (a plan's key) is still the refusal, exit 2, in
# UTF-8 reports; before, writing --json failed and exec said only "internal error", exit 1.
printf '{"schema_version": 1, "x\xff": 2}' >bad.json
status=0
"$GPUPLAN" exec bad.json --node ws-0 --command true --junit junit.xml --json exec.json >out 2>err || status=$?
[ "$status" = 2 ] && ! grep -q "internal error" err && iconv -f UTF-8 -t UTF-8 junit.xml >/dev/null &&
  jq -e '.refused | test("bad.json")' exec.json >/dev/null ||
  fail "a refusal quoting bytes that are not UTF-8: exit $status: $(cat err)"
echo "exec outputs: ok"
