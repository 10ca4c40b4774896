# gpuplan history summarize/show on the real BEP and bazel-testlogs captures in test/data/history,
# as a user runs them: formats detected, cached results ignored, bad input → file:line, exit 2.
source test/integration/lib.sh
requires jq
DATA=test/data/history

# Summarize a fresh run, a cached rerun, a timeout run and the testlogs of the fresh run.
"$GPUPLAN" history summarize $DATA/bep_run.json $DATA/bep_cached.json $DATA/bep_timeout.json \
  $DATA/bazel-testlogs $DATA/runs.csv -o "$SCRATCH/history.json" 2> "$SCRATCH/summarize.err"
grep -q "7 cached results ignored" "$SCRATCH/summarize.err" || fail "cached results not counted: $(cat "$SCRATCH/summarize.err")"
[ "$(jq -r '.gpuplan_history' "$SCRATCH/history.json")" = 1 ] || fail "not a history file"
[ "$(jq '[.units[] | select(.label == "//ml:train_test")] | length' "$SCRATCH/history.json")" = 4 ] ||
  fail "//ml:train_test should have 4 shards"
[ "$(jq -c '.units[] | select(.label == "//ml:flaky_kernel_test") | .timed_out' "$SCRATCH/history.json")" = "[true,true,true,true]" ] ||
  fail "the timed-out attempts should be lower bounds"
[ "$(jq -c '.units[] | select(.label == "//ml:inference_test") | .peak_vram_mib' "$SCRATCH/history.json")" = "[null,null,9216,8704]" ] ||
  fail "VRAM from the runner's CSV should be kept"

# A test.xml in which every test case was skipped (googletest's GTEST_SKIP from a GPU test that
# found no GPU) is no run: before, a pass of 0 s, and the plan gave the test 1 ms.
"$GPUPLAN" history summarize $DATA/skipped/bazel-testlogs >"$SCRATCH/skipped.json" 2>"$SCRATCH/skipped.err" ||
  fail "a skipped run should be a warning: $(cat "$SCRATCH/skipped.err")"
[ "$(jq '.units | length' "$SCRATCH/skipped.json")" = 0 ] || fail "a skipped run became a sample: $(cat "$SCRATCH/skipped.json")"
grep -q "//gpu:gemm_test: every test case in it was skipped" "$SCRATCH/skipped.err" ||
  fail "the skipped run is not named: $(cat "$SCRATCH/skipped.err")"
grep -q "0 cached results ignored; 1 run that skipped every test case left out" "$SCRATCH/skipped.err" ||
  fail "the totals line does not count the skipped run: $(cat "$SCRATCH/skipped.err")"
refuses "//gpu:gemm_test: every test case in it was skipped" history summarize --strict $DATA/skipped/bazel-testlogs
# A test's XML in bazel-testlogs that cannot be read (a link to nothing, a FIFO; no permission) is
# a warning naming the file and the system's reason, its run left out and the others read, and an
# error under --strict; a FIFO test.log or test.cache_status beside a test.xml is passed over, never
# waited on. Before, a file without permission was exit 2 for the whole folder, and a link to nothing
# or a FIFO was left out without a word (a FIFO test.log hung summarize).
cp -r $DATA/bazel-testlogs "$SCRATCH/noread-testlogs"
U=$SCRATCH/noread-testlogs/ml/flaky_kernel_test
ln -s "$SCRATCH/gone.xml" "$U/test_attempts/attempt_2.xml"
mkfifo "$U/test_attempts/attempt_3.xml" "$SCRATCH/noread-testlogs/ml/pool_test/test.log" \
  "$SCRATCH/noread-testlogs/ml/pool_test/test.cache_status"
timeout 20 "$GPUPLAN" history summarize "$SCRATCH/noread-testlogs" > "$SCRATCH/noread.json" 2> "$SCRATCH/noread.err" ||
  fail "summarize of testlogs with unreadable files: exit $?, $(cat "$SCRATCH/noread.err")"
grep -qxF "gpuplan: warning: $U/test_attempts/attempt_2.xml: //ml:flaky_kernel_test: cannot read: No such file or directory (a symbolic link to nothing): the run is left out; --strict makes this an error" \
  "$SCRATCH/noread.err" && grep -qxF "gpuplan: warning: $U/test_attempts/attempt_3.xml: //ml:flaky_kernel_test: cannot read: it is a FIFO, not a regular file: the run is left out; --strict makes this an error" \
  "$SCRATCH/noread.err" && grep -q "^gpuplan: 11 samples of 10 units from 1 input; .*; 2 warnings, 0 notes$" "$SCRATCH/noread.err" ||
  fail "unreadable test.xml files are not named and counted: $(cat "$SCRATCH/noread.err")"
refuses -F "gpuplan: $U/test_attempts/attempt_2.xml: //ml:flaky_kernel_test: cannot read: No such file or directory (a symbolic link to nothing) (--strict)" \
  history summarize --strict "$SCRATCH/noread-testlogs"
rm "$U/test_attempts/attempt_2.xml" "$U/test_attempts/attempt_3.xml"
cp "$U/test.xml" "$U/test_attempts/attempt_2.xml"
if [ "$(id -u)" != 0 ]; then as_user=(); elif command -v setpriv > /dev/null; then
  chmod -R go+rX "$SCRATCH"
  as_user=(setpriv --reuid=65534 --regid=65534 --clear-groups)  # root reads a file of mode 000
else as_user=(false); fi
chmod 000 "$U/test_attempts/attempt_2.xml"
if "${as_user[@]}" test -r "$U/test.xml" 2> /dev/null; then
  status=0
  "${as_user[@]}" "$GPUPLAN" history summarize "$SCRATCH/noread-testlogs" > /dev/null 2> "$SCRATCH/noread.err" || status=$?
  [ "$status" = 0 ] && grep -qxF "gpuplan: warning: $U/test_attempts/attempt_2.xml: //ml:flaky_kernel_test: cannot read: Permission denied: the run is left out; --strict makes this an error" \
    "$SCRATCH/noread.err" || fail "a test.xml without permission: exit $status, $(cat "$SCRATCH/noread.err")"
else
  echo "history_test: no user who may read the scratch folder but not a file of mode 000: that part is left out" >&2
fi
# googletest does not run DISABLED_ tests (<testcase status="notrun" result="suppressed">): a
# test.xml whose cases are all disabled, or disabled and skipped, is no run either (before, a pass of 0 s).
"$GPUPLAN" history summarize $DATA/disabled/bazel-testlogs >"$SCRATCH/disabled.json" 2>"$SCRATCH/disabled.err" ||
  fail "a disabled run should be a warning: $(cat "$SCRATCH/disabled.err")"
[ "$(jq '.units | length' "$SCRATCH/disabled.json")" = 0 ] || fail "a disabled run became a sample: $(cat "$SCRATCH/disabled.json")"
grep -q "//gpu:gemm_test: every test case in it was disabled (2 of 2" "$SCRATCH/disabled.err" &&
  grep -q "//gpu:conv_test: every test case in it was skipped or disabled (1 skipped and 1 disabled of 2" "$SCRATCH/disabled.err" ||
  fail "the disabled runs are not named: $(cat "$SCRATCH/disabled.err")"
grep -q "0 cached results ignored; 2 runs that skipped every test case left out" "$SCRATCH/disabled.err" ||
  fail "the totals line does not count the disabled runs: $(cat "$SCRATCH/disabled.err")"
refuses "every test case in it was .*disabled" history summarize --strict $DATA/disabled/bazel-testlogs

# Runs filtered to some test cases: a test.xml whose test.log says googletest ran under a filter,
# and a BEP run whose command line had --test_filter. Kept marked (summarize's filtered, show's
# mark), and left out of the estimate; before, the filtered run's time was the whole test's.
"$GPUPLAN" history summarize $DATA/filtered/bazel-testlogs $DATA/bep_filtered.json >"$SCRATCH/filtered.json" ||
  fail "summarize of filtered runs failed"
[ "$(jq -c '[.units[] | select(.label == "//gpu:gemm_test" or .label == "//ml:inference_test") | .filtered]' "$SCRATCH/filtered.json")" = "[[true],[true]]" ] ||
  fail "summarize does not keep the filtered mark: $(cat "$SCRATCH/filtered.json")"
out=$("$GPUPLAN" history show //ml:inference_test --history $DATA/bep_filtered.json)
grep -q "filtered to some test cases (left out)" <<<"$out" && grep -q "estimate: none (every run was filtered" <<<"$out" ||
  fail "history show of a filtered BEP run: $out"
"$GPUPLAN" history show //gpu:gemm_test --history $DATA/filtered/bazel-testlogs | grep -q "filtered to some test cases (left out)" ||
  fail "history show does not mark the run whose test.log says it was filtered"
"$GPUPLAN" history show //py:gemm_test --history $DATA/filtered/bazel-testlogs | grep -q "filtered to some test cases (left out)" ||
  fail "history show does not mark the run whose test.log says pytest deselected some of its tests (-k, -m)"

# A test that wrote a passing test.xml and then crashed or hung at exit (CUDA or NCCL teardown):
# Bazel's test.cache_status beside it says FAILED or TIMEOUT, and so does the history, with a note.
# Before, both were passed runs of the XML's 0.5 s, and the hung test was planned at 0.5 s though
# Bazel had timed it out at 5.1 s.
"$GPUPLAN" history summarize $DATA/exit_status/bazel-testlogs >"$SCRATCH/exit.json" 2>"$SCRATCH/exit.err" ||
  fail "summarize of runs with a test.cache_status failed: $(cat "$SCRATCH/exit.err")"
[ "$(jq -c '[.units[] | [.label, .seconds, .failed, .timed_out]]' "$SCRATCH/exit.json")" = \
  '[["//gpu:crash_at_exit_test",[0.5],[true],null],["//gpu:hang_at_exit_test",[5.126],null,[true]],["//gpu:pass_test",[0.5],null,null]]' ] ||
  fail "test.cache_status's FAILED and TIMEOUT are not the runs' result: $(cat "$SCRATCH/exit.json")"
grep -q "crash_at_exit_test/test.cache_status: Bazel failed the run, whose test.xml says it passed" "$SCRATCH/exit.err" &&
  grep -q "hang_at_exit_test/test.cache_status: Bazel timed the run out after 5.126s" "$SCRATCH/exit.err" ||
  fail "no note of the status test.xml did not tell: $(cat "$SCRATCH/exit.err")"
"$GPUPLAN" history show //gpu:hang_at_exit_test --history $DATA/exit_status/bazel-testlogs 2>/dev/null |
  grep -q "estimate: 5.126s (history-timeout)" || fail "the hung test is not planned for its timeout"
# A TIMEOUT whose run_duration_millis (field 12) is longer than a year, gpuplan's limit for a run,
# is not taken: the test.xml's 0.5 s pass stands, with a note. Before, a 57-year timeout that
# summarize wrote and no reader could read back.
mkdir -p "$SCRATCH/year/bazel-testlogs/gpu/hang_test"
cp $DATA/exit_status/bazel-testlogs/gpu/hang_at_exit_test/test.xml "$SCRATCH/year/bazel-testlogs/gpu/hang_test/"
printf '\x18\x03\x60\xd1\xf8\x81\xd7\xa4\x34' >"$SCRATCH/year/bazel-testlogs/gpu/hang_test/test.cache_status"
"$GPUPLAN" history summarize "$SCRATCH/year/bazel-testlogs" -o "$SCRATCH/year.json" 2>"$SCRATCH/year.err" ||
  fail "summarize of a test.cache_status past a year failed: $(cat "$SCRATCH/year.err")"
[ "$(jq -c '[.units[] | [.label, .seconds, .timed_out]]' "$SCRATCH/year.json")" = '[["//gpu:hang_test",[0.5],null]]' ] ||
  fail "a timeout past a year was taken: $(cat "$SCRATCH/year.json")"
grep -q "hang_test/test.cache_status: Bazel timed the run out after 1796552555601 ms (run_duration_millis), longer than a year" \
  "$SCRATCH/year.err" || fail "no note of the time past a year: $(cat "$SCRATCH/year.err")"
"$GPUPLAN" history summarize "$SCRATCH/year.json" >/dev/null 2>&1 || fail "the summary does not read back"

# A test.xml that is not XML (Bazel 4's own of a test named amp&test, unescaped; a test's own cut
# short by a crash or Bazel's timeout; an empty one): its run is read from the test.cache_status
# beside it, with a note, and --strict takes it. Before, a skipped bad row, and the run was lost.
# An attempt's XML has none beside it: still a bad row, whose warning names the file and why.
"$GPUPLAN" history summarize $DATA/unreadable_xml/bazel-testlogs >"$SCRATCH/unreadable.json" 2>"$SCRATCH/unreadable.err" ||
  fail "summarize of unreadable test.xml files failed: $(cat "$SCRATCH/unreadable.err")"
[ "$(jq -c '[.units[] | [.label, .seconds, .failed, .timed_out]]' "$SCRATCH/unreadable.json")" = \
  '[["//gpu:amp&test",[0.448],null,null],["//gpu:empty_hang_test",[5.018],null,[true]],["//gpu:trunc_crash_test",[0.337],[true],null],["//gpu:trunc_hang_test",[5.02],null,[true]]]' ] ||
  fail "runs of unreadable test.xml files are not read from test.cache_status: $(cat "$SCRATCH/unreadable.json")"
grep -q "gpu/trunc_hang_test/test.xml: //gpu:trunc_hang_test: line 3: not well-formed JUnit XML: unclosed token (the file ends before its root element closes.*its run is read from .*gpu/trunc_hang_test/test.cache_status instead, where Bazel recorded it: TIMEOUT after 5.020s" "$SCRATCH/unreadable.err" ||
  fail "no note of the run read from test.cache_status: $(cat "$SCRATCH/unreadable.err")"
grep -q "attempt_1.xml:3: not well-formed JUnit XML: unclosed token .*Bazel keeps no test.cache_status beside an attempt's XML" "$SCRATCH/unreadable.err" ||
  fail "an attempt's unreadable XML is not named with why: $(cat "$SCRATCH/unreadable.err")"
cp -r $DATA/unreadable_xml/bazel-testlogs "$SCRATCH/unreadable-testlogs"
find "$SCRATCH/unreadable-testlogs" -name test_attempts -prune -exec rm -r {} +
"$GPUPLAN" history summarize --strict "$SCRATCH/unreadable-testlogs" >/dev/null 2>"$SCRATCH/unreadable-strict.err" ||
  fail "--strict refuses runs read from test.cache_status: $(cat "$SCRATCH/unreadable-strict.err")"
# Thirteen such runs: ten notes, then how many more, and the totals line counts them (before, a line
# each, and the totals line counted no warning or note).
for i in $(seq 9); do cp -r "$SCRATCH/unreadable-testlogs/gpu/trunc_hang_test" "$SCRATCH/unreadable-testlogs/gpu/hang${i}_test"; done
"$GPUPLAN" history summarize "$SCRATCH/unreadable-testlogs" >/dev/null 2>"$SCRATCH/notes.err" ||
  fail "summarize of 13 unreadable test.xml files: $(cat "$SCRATCH/notes.err")"
[ "$(grep -c 'where Bazel recorded it' "$SCRATCH/notes.err")" = 10 ] && grep -qx 'gpuplan: note: … and 3 more notes like these' "$SCRATCH/notes.err" ||
  fail "not ten notes and a count of the rest: $(cat "$SCRATCH/notes.err")"
grep -qx 'gpuplan: 13 samples of 13 units from 1 input; 0 cached results ignored; 0 warnings, 13 notes' "$SCRATCH/notes.err" ||
  fail "the totals line does not count the notes: $(tail -1 "$SCRATCH/notes.err")"
"$GPUPLAN" history summarize $DATA/unreadable_xml/bazel-testlogs 2>&1 >/dev/null | tail -1 |
  grep -qx 'gpuplan: 4 samples of 4 units from 1 input; 0 cached results ignored; 3 warnings, 4 notes' ||
  fail "the totals line does not count the bad rows' warnings"
"$GPUPLAN" history show //gpu:trunc_hang_test --history $DATA/unreadable_xml/bazel-testlogs 2>&1 >/dev/null | tail -1 |
  grep -qx 'gpuplan: 3 warnings, 1 note' || fail "history show has no totals line"

# A folder above bazel-testlogs (an artifacts folder, the workspace copied by CI) is read as the
# testlogs below it: the same tests, not "//bazel-testlogs/ml:train_test" (read so before, and
# matching no test, its runs went unused without a word).
mkdir -p "$SCRATCH/ci-artifacts" "$SCRATCH/out-copy/bazel-out/k8-fastbuild"
cp -r $DATA/bazel-testlogs "$SCRATCH/ci-artifacts/"
cp -r $DATA/bazel-testlogs "$SCRATCH/out-copy/bazel-out/k8-fastbuild/testlogs"
"$GPUPLAN" history summarize $DATA/bazel-testlogs 2>/dev/null | jq -c '[.units[].label]' >"$SCRATCH/labels.direct"
for above in "$SCRATCH/ci-artifacts" "$SCRATCH/out-copy"; do
  "$GPUPLAN" history summarize "$above" 2>/dev/null | jq -c '[.units[].label]' >"$SCRATCH/labels.above"
  cmp -s "$SCRATCH/labels.direct" "$SCRATCH/labels.above" ||
    fail "$above is read with other labels than bazel-testlogs itself: $(cat "$SCRATCH/labels.above")"
done

# An artifacts folder with both bazel-testlogs/ and bazel-out/*/testlogs/ copied holds each
# test.xml twice: each run counts once, with a note (before, twice: the window held half as
# many real runs). A test.xml of the same attempt with other bytes is another run and counts.
cp -r "$SCRATCH/out-copy/bazel-out" "$SCRATCH/ci-artifacts/"
"$GPUPLAN" history summarize $DATA/bazel-testlogs 2>/dev/null | jq -c '[.units[].seconds]' >"$SCRATCH/runs.direct"
"$GPUPLAN" history summarize "$SCRATCH/ci-artifacts" 2>"$SCRATCH/both.err" | jq -c '[.units[].seconds]' >"$SCRATCH/runs.both"
cmp -s "$SCRATCH/runs.direct" "$SCRATCH/runs.both" || fail "copies of bazel-testlogs counted twice: $(cat "$SCRATCH/runs.both")"
grep -q "ci-artifacts: 11 test.xml files are the same bytes as another of the same test and attempt" "$SCRATCH/both.err" ||
  fail "no note of the copies: $(cat "$SCRATCH/both.err")"
sed -i 's/time="[0-9.]*"/time="99.5"/' "$SCRATCH/ci-artifacts/bazel-out/k8-fastbuild/testlogs/xla/gemm_test/test.xml"
"$GPUPLAN" history summarize "$SCRATCH/ci-artifacts" 2>/dev/null |
  jq -e '[.units[] | select(.label == "//xla:gemm_test") | .seconds | length] == [2]' >/dev/null ||
  fail "another run of the same attempt was dropped as a copy"

# Runs of --runs_per_test (run_K_of_3/) with the same bytes, as Bazel's own test.xml of a quiet
# test has (no timestamp, whole seconds), are three runs, not copies.
for k in 1 2 3; do
  mkdir -p "$SCRATCH/runs/bazel-testlogs/a/t/run_${k}_of_3"
  cp $DATA/bazel-testlogs/core/unit_test/test.xml "$SCRATCH/runs/bazel-testlogs/a/t/run_${k}_of_3/"
done
"$GPUPLAN" history summarize "$SCRATCH/runs" 2>/dev/null | jq -e '[.units[].seconds | length] == [3]' >/dev/null ||
  fail "identical runs of --runs_per_test were read as copies"

# Inside it, a package may be named testlogs too: //tools/testlogs:x_test, not //:x_test.
mkdir -p "$SCRATCH/ci-nested/bazel-testlogs/tools/testlogs/x_test"
cp $DATA/bazel-testlogs/xla/gemm_test/test.xml "$SCRATCH/ci-nested/bazel-testlogs/tools/testlogs/x_test/"
"$GPUPLAN" history summarize "$SCRATCH/ci-nested" 2>/dev/null | jq -e '[.units[].label] == ["//tools/testlogs:x_test"]' >/dev/null ||
  fail "a package named testlogs inside bazel-testlogs lost its path"

# The README's rolling history works from its first run, when history.json does not exist yet;
# a missing input that is not the output is still an error.
(cd "$SCRATCH" && "$GPUPLAN" history summarize history-rolling.json "$OLDPWD/$DATA/runs.csv" -o history-rolling.json \
  2> rolling.err) || fail "the first run of a rolling history failed: $(cat "$SCRATCH/rolling.err")"
grep -qxF "gpuplan: note: history-rolling.json: does not exist yet: the rolling history starts with this run" \
  "$SCRATCH/rolling.err" || fail "no note: $(cat "$SCRATCH/rolling.err")"
tail -n 1 "$SCRATCH/rolling.err" | grep -q '; 0 warnings, 1 note$' || fail "the note is not counted: $(cat "$SCRATCH/rolling.err")"
printf 'label,seconds\n//a:one_test,4\n' > "$SCRATCH/one-run.csv"
"$GPUPLAN" history summarize "$SCRATCH/one-run.csv" 2>&1 >/dev/null |
  grep -qx 'gpuplan: 1 sample of 1 unit from 1 input; 0 cached results ignored; 0 warnings, 0 notes' ||
  fail "the totals line of one run: $("$GPUPLAN" history summarize "$SCRATCH/one-run.csv" 2>&1 >/dev/null)"
"$GPUPLAN" history summarize "$SCRATCH/absent.json" -o "$SCRATCH/other.json" 2>/dev/null &&
  fail "a missing input that is not the output was read as empty"
# The summary reads back as history and summarizes to the same bytes (a rolling CI history).
"$GPUPLAN" history summarize "$SCRATCH/history.json" -o "$SCRATCH/again.json" 2>/dev/null
cmp -s "$SCRATCH/history.json" "$SCRATCH/again.json" || fail "summarizing a summary changed it"
# --window 1 keeps each unit's newest sample, and the newest with a peak before it where that one has none.
"$GPUPLAN" history summarize "$SCRATCH/history.json" --window 1 2>/dev/null |
  jq -e '[.units[] | (.seconds | length) == 1 or ((.seconds | length) == 2 and .peak_vram_mib[0] != null and .peak_vram_mib[1] == null)] | all' >/dev/null ||
  fail "--window 1 should keep one sample per unit, and one older that measured memory"

# show: the samples, newest last, and the estimate with its source; history from standard input.
out=$("$GPUPLAN" history show //ml:inference_test --history - < $DATA/runs.csv)
grep -q "estimate: 41.250s (history-p90), VRAM 10599 MiB" <<<"$out" || fail "show: $out"
out=$("$GPUPLAN" history show //ml:inference_test --history $DATA/runs.csv --percentile 0)
grep -q "estimate: 39.000s (history-p0)" <<<"$out" || fail "show --percentile: $out"
out=$("$GPUPLAN" history show @//ml:train_test --history "$SCRATCH/history.json")
grep -q "//ml:train_test shard 3 of 4" <<<"$out" || fail "show of a sharded test: $out"
"$GPUPLAN" history show //no:such_test --history $DATA/runs.csv | grep -q "no history" || fail "show without history"
# Peaks only of runs that failed: no VRAM to reserve, and show says why.
printf 'label,seconds,peak_vram_mib,exit_status\n//t:broken,3,500,1\n//t:broken,3,520,FAILED\n' > "$SCRATCH/failed.csv"
out=$("$GPUPLAN" history show //t:broken --history "$SCRATCH/failed.csv")
grep -q "VRAM unknown (every peak is of a run that failed or was cut short)" <<<"$out" || fail "show of failed peaks: $out"
"$GPUPLAN" history show //t:broken --history "$SCRATCH/failed.csv" --json |
  jq -e '.units[0].recent[0].failed == true and (.units[0].estimate | has("peak_vram_mib") | not)' >/dev/null ||
  fail "show --json of failed peaks"
"$GPUPLAN" history summarize "$SCRATCH/failed.csv" 2>/dev/null | jq -e '.units[0].failed == [true, true]' >/dev/null ||
  fail "summarize should keep which runs failed"
# plan says how much of the plan history informed; history of none of its tests is a warning
# (an error under --strict), never a silent plan of size defaults.
"$GPUPLAN" plan examples/query.xml --fleet examples/fleet.yaml --history $DATA/runs.csv -o "$SCRATCH/h.plan.json" 2> "$SCRATCH/h.err"
grep -q "^gpuplan: history: 3 of 21 GPU units planned from their own runs, 13 from their size class's median, 5 from the size default$" \
  "$SCRATCH/h.err" || fail "no history coverage line: $(cat "$SCRATCH/h.err")"
printf 'label,seconds\n//other/repo:x_test,5\n' > "$SCRATCH/other.csv"
"$GPUPLAN" plan examples/query.xml --fleet examples/fleet.yaml --history "$SCRATCH/other.csv" -o "$SCRATCH/o.plan.json" 2> "$SCRATCH/o.err"
grep -q "warning: .*other.csv: no GPU unit has a run in it: every duration is a size default" "$SCRATCH/o.err" ||
  fail "history of other tests: $(cat "$SCRATCH/o.err")"
refuses "" plan --strict examples/query.xml --fleet examples/fleet.yaml --history "$SCRATCH/other.csv" -o "$SCRATCH/s.plan.json"
# A pipe (bash's <(...)) reads like the file; compressed history is refused with what to do.
"$GPUPLAN" history show //ml:inference_test --history <(cat $DATA/runs.csv) | grep -q "estimate: 41.250s (history-p90)" ||
  fail "history through a pipe: $("$GPUPLAN" history show //ml:inference_test --history <(cat $DATA/runs.csv))"
gzip -c $DATA/runs.csv > "$SCRATCH/runs.csv.gz"
refuses "runs.csv.gz: gzip-compressed data: decompress it first" \
  plan examples/query.xml --fleet examples/fleet.yaml --history "$SCRATCH/runs.csv.gz" -o "$SCRATCH/gz.plan.json"
# show --json: the same numbers for scripts.
out=$("$GPUPLAN" history show //ml:inference_test --history $DATA/runs.csv --json)
echo "$out" | jq -e '.label == "//ml:inference_test" and (.units | length) == 1 and .units[0].shard == null
  and .units[0].estimate.seconds == 41.25 and .units[0].estimate.source == "history-p90"
  and .units[0].estimate.peak_vram_mib == 10599 and (.units[0].recent | length) <= .units[0].samples' >/dev/null ||
  fail "show --json: $out"
out=$("$GPUPLAN" history show @//ml:train_test --history "$SCRATCH/history.json" --json)
echo "$out" | jq -e 'any(.units[]; .shard == 3)' >/dev/null || fail "show --json of a sharded test: $out"
"$GPUPLAN" history show //no:such_test --history $DATA/runs.csv --json | jq -e '.units == []' >/dev/null ||
  fail "show --json without history"

# Bad input: a warning that counts the skipped rows, or under --strict exit 2 and no output file.
printf 'label,seconds\n//a:b,1\n//a:b,-3\n//a:b,1,2\n' > "$SCRATCH/bad.csv"
"$GPUPLAN" history summarize "$SCRATCH/bad.csv" -o "$SCRATCH/lenient.json" 2> "$SCRATCH/lenient.err" || fail "lenient run failed"
grep -q "skipped 2 bad history rows (the first: $SCRATCH/bad.csv:3: //a:b: seconds -3 is a negative time)" "$SCRATCH/lenient.err" ||
  fail "warning: $(cat "$SCRATCH/lenient.err")"
refuses "gpuplan: $SCRATCH/bad.csv:3: //a:b: seconds -3 is a negative time" \
  history summarize --strict "$SCRATCH/bad.csv" -o "$SCRATCH/strict.json"
printf '{"id":{"started":{}}}\nnot json\n' > "$SCRATCH/bad.json"
refuses "bad.json:2: not a JSON build event" history show //a:b --strict --history "$SCRATCH/bad.json"

# A JUnit file outside bazel-testlogs cannot say whose it is: an error, not a guess.
cp $DATA/bazel-testlogs/xla/gemm_test/test.xml "$SCRATCH/loose.xml"
refuses "outside bazel-testlogs" history show //xla:gemm_test --history "$SCRATCH/loose.xml"

# explain and plan use it: the measured duration, with its source, instead of the size default.
out=$("$GPUPLAN" explain //ml:inference_test examples/query.xml --history $DATA/runs.csv)
grep -q 'whole test  *41.25s  *from history-p90, VRAM 10599MiB (peak plus 15% headroom)' <<<"$out" || fail "explain --history: $out"
out=$("$GPUPLAN" explain //ml:inference_test examples/query.xml)
grep -q 'whole test  *300s  *from size-default' <<<"$out" || fail "explain without history: $out"
"$GPUPLAN" plan examples/query.xml --fleet examples/fleet.yaml --history $DATA/runs.csv 2>/dev/null |
  jq -e '.assignments[] | select(.label == "//ml:inference_test") | .duration_source == "history-p90"' >/dev/null ||
  fail "plan --history does not use the measured duration"

# A test with no GPU annotation whose runs used a GPU (its tag removed since) is a warning: as a
# CPU test it would run without one. One tagged cpu-only is not.
{ head -1 $DATA/runs.csv | sed 's/$/,gpu_touched/'
  echo '//core:parser_test,,3.0,512,a100-0,"0",2026-11-01T10:00:00Z,0,true'
  echo '//core:config_test,,3.0,512,a100-0,"0",2026-11-01T10:00:00Z,0,true'; } >"$SCRATCH/used.csv"
"$GPUPLAN" plan examples/query.xml --rules examples/rules.yaml --fleet examples/fleet.yaml --history "$SCRATCH/used.csv" \
  -o "$SCRATCH/used.json" 2>"$SCRATCH/used.err" || fail "plan --history with GPU use of CPU tests failed"
grep -q "^gpuplan: warning: //core:parser_test: has no GPU annotation, but its runs used a GPU (GPU used in 1 of 1 measured run, peak 512 MiB): planned as a CPU test, it runs without one" "$SCRATCH/used.err" ||
  fail "no warning for a CPU test whose runs used a GPU: $(cat "$SCRATCH/used.err")"
! grep -q "//core:config_test" "$SCRATCH/used.err" || fail "a cpu-only test was warned about"
"$GPUPLAN" classify examples/query.xml --rules examples/rules.yaml --history "$SCRATCH/used.csv" --cpu-targets "$SCRATCH/cpu.txt" |
  grep -q "warning: //core:parser_test: has no GPU annotation, but its runs used a GPU" ||
  fail "classify --history does not warn of the CPU test whose runs used a GPU"
"$GPUPLAN" explain //core:parser_test examples/query.xml --history "$SCRATCH/used.csv" 2>/dev/null |
  grep -q "warning: has no GPU annotation, but its runs used a GPU" || fail "explain --history of that test"
# Under --strict it is an error, and no plan is written (before, a warning and exit 0).
refuses "^  //core:parser_test: has no GPU annotation, but its runs used a GPU" \
  plan examples/query.xml --rules examples/rules.yaml --fleet examples/fleet.yaml --history "$SCRATCH/used.csv" \
  --strict -o "$SCRATCH/used-strict.json"

# A CSV with BEP's 1-based shard numbers: shard 4 of a 4-shard test is named, not dropped
# silently while the others are each read one shard off.
{ echo label,shard,seconds
  for shard in 1 2 3 4; do echo "//ml:train_test,$shard,2$((shard + 4))0"; done; } >"$SCRATCH/one-based.csv"
"$GPUPLAN" plan examples/query.xml --rules examples/rules.yaml --fleet examples/fleet.yaml \
  --history "$SCRATCH/one-based.csv" -o "$SCRATCH/one-based.json" 2>"$SCRATCH/one-based.err" ||
  fail "plan with 1-based shards failed"
grep -q "^gpuplan: warning: //ml:train_test: has runs of shards 1 to 4 in the history, none of shard 0, and 4 shards" \
  "$SCRATCH/one-based.err" || fail "no warning for a shard the test has not: $(cat "$SCRATCH/one-based.err")"
# 0-based runs of a time the test had 8 shards (it has 4 now) are no 1-based numbering: planned as
# resharded, 8 shards of 100 s split over 4 (before, called 1-based, an error under --strict).
{ echo label,shard,seconds
  for shard in 0 1 2 3 4 5 6 7; do echo "//ml:train_test,$shard,100"; done; } >"$SCRATCH/eight.csv"
"$GPUPLAN" plan examples/query.xml --rules examples/rules.yaml --fleet examples/fleet.yaml \
  --history "$SCRATCH/eight.csv" -o "$SCRATCH/eight.json" 2>"$SCRATCH/eight.err" || fail "plan with 8 old shards failed"
! grep -q "none of shard 0" "$SCRATCH/eight.err" && grep -q "its runs were measured with another shard count" "$SCRATCH/eight.err" ||
  fail "8 old shards: $(cat "$SCRATCH/eight.err")"
jq -e '[.assignments[] | select(.label == "//ml:train_test") | .duration_s] == [200, 200, 200, 200]' \
  "$SCRATCH/eight.json" >/dev/null || fail "8 old shards of 100 s are not 4 of 200 s"
# gpuplan's own results records hold no shard count: runs of shards 0 to 1 of a test with 4 shards
# now may be of a time it had 2 (each run half the test), which the plan cannot tell; said.
{ echo label,shard,seconds
  for shard in 0 1; do echo "//ml:train_test,$shard,300"; done; } >"$SCRATCH/two-of-four.csv"
"$GPUPLAN" plan examples/query.xml --rules examples/rules.yaml --fleet examples/fleet.yaml \
  --history "$SCRATCH/two-of-four.csv" -o "$SCRATCH/two-of-four.json" 2>"$SCRATCH/two-of-four.err" ||
  fail "plan with runs of 2 of 4 shards failed"
grep -q "^gpuplan: warning: //ml:train_test: has runs of shards 0 to 1 only, 4 shards now, and no shard count in the history" \
  "$SCRATCH/two-of-four.err" || fail "runs of fewer shards than the test has were read silently: $(cat "$SCRATCH/two-of-four.err")"
# A test unsharded now whose history (no shard count in it) has runs of shards 0 and 2 only, the
# result of shard 1 cached: planned at their sum scaled up to 3 shards, a guess said as resharding
# is, and an error under --strict. Before, both without a word.
{ echo label,shard,seconds
  for shard in 0 2; do echo "//ml:allreduce_test,$shard,100"; done; } >"$SCRATCH/cached-shard.csv"
"$GPUPLAN" plan examples/query.xml --rules examples/rules.yaml --fleet examples/fleet.yaml \
  --history "$SCRATCH/cached-shard.csv" -o "$SCRATCH/cached-shard.json" 2>"$SCRATCH/cached-shard.err" ||
  fail "plan with a cached shard failed: $(cat "$SCRATCH/cached-shard.err")"
jq -e '[.assignments[] | select(.label == "//ml:allreduce_test") | [.duration_s, .duration_source]] == [[300, "history-p90-resharded"]]' \
  "$SCRATCH/cached-shard.json" >/dev/null || fail "a cached shard: $(jq -c '.assignments[] | select(.label == "//ml:allreduce_test")' "$SCRATCH/cached-shard.json")"
grep -q "^gpuplan: warning: //ml:allreduce_test: its runs were measured in shards, and it is unsharded now: it is planned at the sum of its shards' times, a shard with no run (its result cached, or never run) at their average" \
  "$SCRATCH/cached-shard.err" || fail "a cached shard's guess is silent: $(cat "$SCRATCH/cached-shard.err")"
refuses "//ml:allreduce_test: its runs were measured in shards.*(--strict)" \
  plan --strict examples/query.xml --rules examples/rules.yaml --fleet examples/fleet.yaml \
  --history "$SCRATCH/cached-shard.csv" -o "$SCRATCH/cached-strict.json"
# A test sharded now (4 shards) whose history has runs of the whole test only, from before it was
# sharded: each shard is planned at a quarter of it, a guess said as resharding is, an error under
# --strict. Before, both without a word. Planned whole (--shards=whole), its runs' time is no guess.
{ echo label,shard,seconds
  echo "//ml:train_test,,800"; } >"$SCRATCH/whole-runs.csv"
"$GPUPLAN" plan examples/query.xml --rules examples/rules.yaml --fleet examples/fleet.yaml \
  --history "$SCRATCH/whole-runs.csv" -o "$SCRATCH/whole-runs.json" 2>"$SCRATCH/whole-runs.err" ||
  fail "plan with whole-test runs of a sharded test failed: $(cat "$SCRATCH/whole-runs.err")"
jq -e '[.assignments[] | select(.label == "//ml:train_test") | [.duration_s, .duration_source]] | unique == [[200, "history-p90-whole-resharded"]]' \
  "$SCRATCH/whole-runs.json" >/dev/null || fail "whole-test runs: $(jq -c '[.assignments[] | select(.label == "//ml:train_test") | [.duration_s, .duration_source]]' "$SCRATCH/whole-runs.json")"
[ "$(grep -c "^gpuplan: warning: //ml:train_test: its runs were of the whole test, and it has 4 shards now: a shard with no run of its own is planned at an even share of the whole test's time" \
  "$SCRATCH/whole-runs.err")" = 1 ] || fail "whole-test runs split over shards, not said once: $(cat "$SCRATCH/whole-runs.err")"
refuses "//ml:train_test: its runs were of the whole test.*(--strict)" \
  plan --strict examples/query.xml --rules examples/rules.yaml --fleet examples/fleet.yaml \
  --history "$SCRATCH/whole-runs.csv" -o "$SCRATCH/whole-strict.json"
"$GPUPLAN" plan --shards=whole examples/query.xml --rules examples/rules.yaml --fleet examples/fleet.yaml \
  --history "$SCRATCH/whole-runs.csv" -o "$SCRATCH/whole-whole.json" 2>"$SCRATCH/whole-whole.err" ||
  fail "--shards=whole with whole-test runs failed: $(cat "$SCRATCH/whole-whole.err")"
jq -e '[.assignments[] | select(.label == "//ml:train_test") | .duration_s] == [800]' "$SCRATCH/whole-whole.json" >/dev/null &&
  ! grep -q "its runs were of the whole test" "$SCRATCH/whole-whole.err" ||
  fail "--shards=whole with whole-test runs: $(cat "$SCRATCH/whole-whole.err")"
# A directory is read as bazel-testlogs: one of BEP and results files gave no run, silently.
mkdir -p "$SCRATCH/artifacts"
cp $DATA/bep_run.json $DATA/runs.csv "$SCRATCH/artifacts/"
"$GPUPLAN" history summarize "$SCRATCH/artifacts" -o "$SCRATCH/artifacts.json" 2>"$SCRATCH/artifacts.err" ||
  fail "summarize of a directory without test.xml failed"
grep -q "warning: $SCRATCH/artifacts: no test.xml below it (a directory is read as bazel-testlogs), and no runs read from it; it holds bep_run.json, runs.csv" \
  "$SCRATCH/artifacts.err" || fail "a directory without test.xml was read as empty without a word: $(cat "$SCRATCH/artifacts.err")"
# Two versions of one module (multiple_version_override) are one name to the history, which
# keys runs by the apparent name: both are estimated from the runs of both, which is said.
cat >"$SCRATCH/two-versions.xml" <<'XML'
<?xml version="1.1" encoding="UTF-8" standalone="no"?>
<query version="2">
  <rule class="cc_test" location="x/BUILD:1:1" name="@@foo~1.0//t:x_test"><list name="tags"><string value="gpu"/></list></rule>
  <rule class="cc_test" location="x/BUILD:1:1" name="@@foo~2.0//t:x_test"><list name="tags"><string value="gpu"/></list></rule>
</query>
XML
printf 'label,seconds\n@foo//t:x_test,300\n' >"$SCRATCH/two-versions.csv"
"$GPUPLAN" plan "$SCRATCH/two-versions.xml" --fleet examples/fleet.yaml --history "$SCRATCH/two-versions.csv" \
  -o "$SCRATCH/two-versions.json" 2>"$SCRATCH/two-versions.err" || fail "plan of two versions failed"
grep -q "^gpuplan: warning: @foo//t:x_test: names 2 tests (@@foo~1.0//t:x_test, @@foo~2.0//t:x_test), and the history keys runs by that name" \
  "$SCRATCH/two-versions.err" || fail "two versions' shared history was not named: $(cat "$SCRATCH/two-versions.err")"
refuses "" plan "$SCRATCH/two-versions.xml" --fleet examples/fleet.yaml --history "$SCRATCH/two-versions.csv" \
  --strict -o "$SCRATCH/two-versions-strict.json"
# --percentile 0.9, a quantile as numpy writes one, is refused as the rules file's 0.9 is: it
# was the 0.9th percentile, nearly each unit's fastest run.
printf 'label,seconds\n//a:t,5\n' >"$SCRATCH/one.csv"
refuses "not a quantile; write 90 for the 90th" history show //a:t --history "$SCRATCH/one.csv" --percentile 0.9
# bazel-testlogs keeps a test's shard_N_of_4 folders after its shard_count became 2. The plan
# reads the folders of its count now and names the others in a note; history show, which has no
# query, warns that it cannot tell them apart (before, the folders' name order chose the stale
# ones, and the note said today's runs were the old ones).
stale_shard_testlogs "$SCRATCH/stale-testlogs/bazel-testlogs"
sharded_gpu_test shard_test 2 "$SCRATCH/shard2.xml"
h100_fleet "$SCRATCH/fleet1.yaml"
"$GPUPLAN" plan "$SCRATCH/shard2.xml" --fleet "$SCRATCH/fleet1.yaml" --history "$SCRATCH/stale-testlogs/bazel-testlogs" \
  -o "$SCRATCH/stale-plan.json" 2>"$SCRATCH/stale.err" || fail "plan with stale shard folders: $(cat "$SCRATCH/stale.err")"
[ "$(jq -c '[.assignments[] | [.duration_s, .duration_source]] | unique' "$SCRATCH/stale-plan.json")" = '[[150,"history-p90"]]' ] ||
  fail "stale shard_N_of_4 folders won: $(jq -c '[.assignments[] | .duration_s]' "$SCRATCH/stale-plan.json")"
jq -e '.diagnostics[] | select(.severity == "note" and (.message | contains("shard_N_of_4 left out")))' \
  "$SCRATCH/stale-plan.json" >/dev/null || fail "no note naming the stale folders: $(jq -c .diagnostics "$SCRATCH/stale-plan.json")"
"$GPUPLAN" history show //ml:shard_test --history "$SCRATCH/stale-testlogs/bazel-testlogs" >/dev/null 2>"$SCRATCH/show.err"
grep -q "warning: //ml:shard_test: .*shard_N_of_2 and shard_N_of_4 folders.*nothing in them says which are newer" "$SCRATCH/show.err" ||
  fail "history show reads stale shard folders without a word: $(cat "$SCRATCH/show.err")"
refuses "" history show //ml:shard_test --history "$SCRATCH/stale-testlogs/bazel-testlogs" --strict

# The testlogs of two configurations of one test (bazel-out/k8-fastbuild and bazel-out/k8-opt):
# a warning naming the test and both, as BEP gives (before, merged without a word).
for config in k8-fastbuild:300 k8-opt:30; do
  dir="$SCRATCH/two-configs/bazel-out/${config%%:*}/testlogs/ml/train_test"; mkdir -p "$dir"
  printf '<testsuites><testsuite name="t" tests="1"><testcase name="t" time="%s"/></testsuite></testsuites>\n' "${config#*:}" >"$dir/test.xml"
done
"$GPUPLAN" history show //ml:train_test --history "$SCRATCH/two-configs" >/dev/null 2>"$SCRATCH/configs.err"
grep -q "warning: //ml:train_test: .*2 configurations (k8-fastbuild, k8-opt)" "$SCRATCH/configs.err" ||
  fail "two configurations merged without a word: $(cat "$SCRATCH/configs.err")"
# A re-run build: shard 2 of 4 ran (100 s), the others' results were cached. Each cached shard
# is planned at its measured sibling's time with a warning (before, the size median split four
# ways: 25 s), and plan's history line counts the cached results it skipped.
sharded_gpu_test shard_test 4 "$SCRATCH/shard4.xml"
{ for n in 1 3 4; do
    printf '{"id":{"testResult":{"label":"//ml:shard_test","run":1,"shard":%s,"attempt":1}},"testResult":{"status":"PASSED","cachedLocally":true,"testAttemptDuration":"90s"}}\n' "$n"
  done
  printf '{"id":{"testResult":{"label":"//ml:shard_test","run":1,"shard":2,"attempt":1}},"testResult":{"status":"PASSED","testAttemptDuration":"100s"}}\n'
  printf '{"id":{"testSummary":{"label":"//ml:shard_test"}},"testSummary":{"shardCount":4,"totalRunCount":4}}\n'
} >"$SCRATCH/rerun.json"
"$GPUPLAN" plan "$SCRATCH/shard4.xml" --fleet "$SCRATCH/fleet1.yaml" --history "$SCRATCH/rerun.json" \
  -o "$SCRATCH/rerun-plan.json" 2>"$SCRATCH/rerun.err" || fail "plan of a re-run build: $(cat "$SCRATCH/rerun.err")"
[ "$(jq -c '[.assignments[] | .duration_s] | unique' "$SCRATCH/rerun-plan.json")" = '[100]' ] ||
  fail "cached shards planned apart from their measured sibling: $(jq -c '[.assignments[] | .duration_s]' "$SCRATCH/rerun-plan.json")"
grep -q "warning: //ml:shard_test: shards 0, 2, 3 of its 4 have no run in the history" "$SCRATCH/rerun.err" ||
  fail "no warning naming the shards planned from their siblings: $(cat "$SCRATCH/rerun.err")"
grep -q "^gpuplan: history: 1 of 4 GPU units planned from their own runs, 3 from their test's other shards' runs, 0 from their size class's median, 0 from the size default; 3 cached results skipped" \
  "$SCRATCH/rerun.err" || fail "the history line: $(cat "$SCRATCH/rerun.err")"
# Memory the history measured keeps a test off GPUs too small for it (a 24 GB L4 beside an 80 GB
# H100). A results record peaked at 30,000 MiB, then 20 newer runs measured no memory: the memory
# comes from the newest runs that measured it, not the newest runs (before, it was unknown).
cat >"$SCRATCH/l4-h100.yaml" <<'YAML'
version: 1
pools:
  - {name: l4, nodes: [l4-0], gpu: {model: L4, count: 1}, cuda: "12.4", driver: "550.54.15"}
  - {name: h100, nodes: [h100-0], gpu: {model: H100-SXM-80GB, count: 1}, cuda: "12.4", driver: "550.54.15"}
YAML
for shards in 0 3; do
  cat >"$SCRATCH/big$shards.xml" <<XML
<?xml version="1.1" encoding="UTF-8" standalone="no"?>
<query version="2">
  <rule class="py_test" location="/ws/m/BUILD:1:1" name="//m:big">
    <string name="name" value="big"/>
    <list name="tags"><string value="gpu"/></list>
    <string name="size" value="small"/>
    <int name="shard_count" value="$shards"/>
  </rule>
</query>
XML
done
printf 'label,shard,seconds,peak_vram_mib,start,exit_status,shard_count\n//m:big,,100,30000,2024-05-01T10:00:00Z,0,1\n' >"$SCRATCH/big.csv"
{ echo 'label,seconds,exit_status'; for _ in $(seq 20); do echo '//m:big,100,PASSED'; done; } >"$SCRATCH/later.csv"
"$GPUPLAN" plan "$SCRATCH/big0.xml" --fleet "$SCRATCH/l4-h100.yaml" --policy pack --history "$SCRATCH/big.csv" \
  --history "$SCRATCH/later.csv" -o "$SCRATCH/big.plan.json" 2>/dev/null || fail "plan with peak-less newer runs"
[ "$(jq -c '.assignments[0] | [.node, .vram_mib]' "$SCRATCH/big.plan.json")" = '["h100-0",34500]' ] ||
  fail "newer runs without a peak pushed the measured one out: $(jq -c '.assignments[0]' "$SCRATCH/big.plan.json")"
"$GPUPLAN" history summarize "$SCRATCH/big.csv" "$SCRATCH/later.csv" -o "$SCRATCH/big-summary.json" 2>/dev/null
[ "$(jq -c '.units[0].peak_vram_mib | map(select(. != null))' "$SCRATCH/big-summary.json")" = '[30000]' ] ||
  fail "a rolling history dropped the measured peak: $(cat "$SCRATCH/big-summary.json")"
# Shard 0 of 3 peaked at 30,000 MiB. Planned whole, the test uses at least that (before, it went
# to the L4 with its memory unknown, and the warnings named shard 0 as the one without runs and
# every duration a size default); per shard, shards 1 and 2 are given their sibling's peak as
# the least memory their GPU has, not as a reservation.
sed 's/name="big"/name="sh"/; s/\/\/m:big/\/\/m:sh/' "$SCRATCH/big3.xml" >"$SCRATCH/sh3.xml"
printf 'label,shard,seconds,peak_vram_mib,start,exit_status,shard_count\n//m:sh,0,100,30000,2024-05-01T10:00:00Z,0,3\n' >"$SCRATCH/sh.csv"
"$GPUPLAN" plan "$SCRATCH/sh3.xml" --fleet "$SCRATCH/l4-h100.yaml" --policy pack --history "$SCRATCH/sh.csv" \
  --shards whole -o "$SCRATCH/sh-whole.json" 2>"$SCRATCH/sh-whole.err" || fail "plan --shards=whole: $(cat "$SCRATCH/sh-whole.err")"
[ "$(jq -c '.assignments[0] | [.node, .vram_mib, .requirements.gpu_mem_mib]' "$SCRATCH/sh-whole.json")" = '["h100-0",null,30000]' ] ||
  fail "--shards=whole left out the measured shard's peak: $(jq -c '.assignments[0]' "$SCRATCH/sh-whole.json")"
grep -q "warning: //m:sh: shards 1, 2 of its 3 have no run in the history .*at least the most memory they used (30000MiB)" \
  "$SCRATCH/sh-whole.err" || fail "--shards=whole: the shards without runs: $(cat "$SCRATCH/sh-whole.err")"
grep -q "no GPU unit has a run" "$SCRATCH/sh-whole.err" && fail "--shards=whole: shard 0's runs not counted: $(cat "$SCRATCH/sh-whole.err")"
grep -q "^gpuplan: history: 1 of 1 GPU unit planned from their own runs" "$SCRATCH/sh-whole.err" ||
  fail "--shards=whole: the history line: $(cat "$SCRATCH/sh-whole.err")"
"$GPUPLAN" plan "$SCRATCH/sh3.xml" --fleet "$SCRATCH/l4-h100.yaml" --policy pack --history "$SCRATCH/sh.csv" \
  -o "$SCRATCH/sh-shards.json" 2>"$SCRATCH/sh-shards.err" || fail "plan per shard: $(cat "$SCRATCH/sh-shards.err")"
[ "$(jq -c '[.assignments[] | [.node, .vram_mib]] | unique' "$SCRATCH/sh-shards.json")" = '[["h100-0",null],["h100-0",34500]]' ] ||
  fail "a shard never measured went to a GPU smaller than its sibling's peak: $(jq -c '[.assignments[] | [.unit, .node, .vram_mib]]' "$SCRATCH/sh-shards.json")"
grep -q "warning: //m:sh: shards 1, 2 of its 3 have no run in the history .*placed only on GPUs with at least the most memory they used (30000MiB), which each may not need" \
  "$SCRATCH/sh-shards.err" || fail "per shard: the warning says nothing of memory: $(cat "$SCRATCH/sh-shards.err")"
# history show gives the estimate a plan would use: a measured 0 s (Bazel 4's test.xml, whole
# seconds) as the plan's 1 ms, where it said 0.000s; a test that only timed out as a lower bound
# that the plan's size default may exceed (before, "estimate: 1.081s" alone, planned at 60 s).
"$GPUPLAN" plan examples/query.xml --fleet examples/fleet.yaml --history $DATA/bazel-testlogs \
  -o "$SCRATCH/zero.json" 2>/dev/null
[ "$(jq '[.assignments[] | select(.label == "//ml:pool_test") | .duration_s]' -c "$SCRATCH/zero.json")" = '[0.001]' ] ||
  fail "the 0 s run is not planned at 1 ms: $(jq -c '.assignments[] | select(.label == "//ml:pool_test")' "$SCRATCH/zero.json")"
out=$("$GPUPLAN" history show //ml:pool_test --history $DATA/bazel-testlogs 2>/dev/null)
grep -q "estimate: 0.001s (history-p90)" <<<"$out" || fail "show of a 0 s run: $out"
[ "$("$GPUPLAN" history show //ml:pool_test --history $DATA/bazel-testlogs --json 2>/dev/null | jq -c '.units[0].estimate')" = \
  '{"seconds":0.001,"source":"history-p90"}' ] || fail "show --json of a 0 s run"
out=$("$GPUPLAN" history show //ml:flaky_kernel_test --history $DATA/bep_timeout.json 2>/dev/null)
grep -q "estimate: 1.081s (history-timeout), a lower bound: its runs only timed out, and a plan takes the test's size default or its size's median where longer" <<<"$out" ||
  fail "show of a test that only timed out: $out"
[ "$("$GPUPLAN" history show //ml:flaky_kernel_test --history $DATA/bep_timeout.json --json 2>/dev/null | jq -c '.units[0].estimate')" = \
  '{"seconds":1.081,"source":"history-timeout","lower_bound":true}' ] || fail "show --json of a test that only timed out"
echo "history: ok"
