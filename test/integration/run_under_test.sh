#!/usr/bin/env bash
# bazel test --run_under="gpuplan run-under ..." on the example workspace: every sh_test sees
# the GPUs the plan gave it, no two tests hold a GPU at once, tests missing from the plan fail
# (or, with --unplanned=warn, run without GPUs); then hostile labels reach run-under and run as
# themselves only; a test never runs without its GPUs; an exclusive test runs alone.
source test/integration/lib.sh
requires bazel jq python3
GPUPLAN=$(realpath "$GPUPLAN")
PLAN=$SOURCE_DIR/test/data/plans/workstation_ml.json
LOG=$SCRATCH/probe.log
RESULTS=$SCRATCH/results.csv
: >"$LOG"
install -d -m 0700 "$SCRATCH/locks"  # run-under never creates its lock directory (below)
: >"$RESULTS"                         # nor its results file

bazel_ws test //ml:all --test_tag_filters=-manual \
  --run_under="$GPUPLAN run-under --plan $PLAN --node ws-0 --lock-dir $SCRATCH/locks --results $RESULTS --unplanned=warn" \
  --local_test_jobs=4 --nocache_test_results --sandbox_writable_path="$SCRATCH" \
  --test_env=GPU_PROBE_LOG="$LOG" --test_env=GPU_PROBE_SLEEP=1 \
  --build_event_json_file="$SCRATCH/bep.json" --build_event_binary_file="$SCRATCH/bep.bin" >"$SCRATCH/bazel.out" 2>&1 ||
  { cat "$SCRATCH/bazel.out"; fail "bazel test with run-under failed"; }

# What each test saw, against what the plan says (tests missing from it: no GPUs).
/usr/bin/python3 - "$PLAN" "$LOG" "$RESULTS" <<'PY' || fail "tests did not see their planned GPUs"
import csv, json, sys
plan, log, results = sys.argv[1:]
planned = {(a["label"], "" if a["shard_index"] is None else str(a["shard_index"])): ",".join(map(str, a["gpus"]))
           for a in json.load(open(plan))["assignments"]}
for label in ["//ml:cuda11_compat_test", "//ml:video_decode_test", "//ml:allreduce_test"]:
    planned[(label, "")] = ""
seen = {}
for line in open(log):
    fields = dict(f.split("=", 1) for f in line.split())
    seen[(fields["target"], fields["shard"].split("/")[0])] = fields["gpus"]
assert seen == planned, f"saw {seen}\nplanned {planned}"
rows = list(csv.DictReader(open(results)))
assert len(rows) == len(planned) and all(r["exit_status"] == "0" and r["node"] == "ws-0" for r in rows), rows
# What each asked for: the GPUs the plan gave it; not known for a test missing from the plan.
for r in rows:
    gpus = planned[(r["label"], r["shard"])]
    assert r["gpus_asked"] == (str(len(gpus.split(","))) if gpus else ""), r
from datetime import datetime
def span(r):
    start = datetime.fromisoformat(r["start"].replace("Z", "+00:00")).timestamp()
    return start, start + float(r["seconds"])
overlapped = False
for i, a in enumerate(rows):
    for b in rows[i + 1:]:
        (s1, e1), (s2, e2) = span(a), span(b)
        # start is written in whole milliseconds: spans of a GPU handed on may touch by 1 ms.
        if s1 < e2 - 0.002 and s2 < e1 - 0.002:
            overlapped = True
            shared = set(filter(None, a["gpus"].split(","))) & set(filter(None, b["gpus"].split(",")))
            assert not shared, f"{a['label']} and {b['label']} held GPUs {shared} at the same time"
assert overlapped, "no two tests ran at the same time: --local_test_jobs=4 should run several"
PY

# A --test_filter run is part of the test: its record is marked filtered (its 5 ms taught history
# the test's time), and a plan leaves it out, below.
: >"$SCRATCH/filtered.csv"
bazel_ws test //ml:inference_test --test_filter=OnlyOne.Case \
  --run_under="$GPUPLAN run-under --plan $PLAN --node ws-0 --lock-dir $SCRATCH/locks --results $SCRATCH/filtered.csv" \
  --nocache_test_results --sandbox_writable_path="$SCRATCH" --test_output=all >"$SCRATCH/filtered.out" 2>&1 ||
  { cat "$SCRATCH/filtered.out"; fail "bazel test --test_filter with run-under failed"; }
grep -q '^//ml:inference_test,.*,true,1$' "$SCRATCH/filtered.csv" &&
  grep -q "ran under --test_filter=OnlyOne.Case: its results record is marked filtered" "$SCRATCH/filtered.out" ||
  fail "a --test_filter run was recorded as the test's: $(cat "$SCRATCH/filtered.csv")"

# Nor a bazel coverage run (also --run_under's; Bazel sets COVERAGE_DIR): instrumented and collecting
# coverage, the test is slower than under bazel test, and history took that for its time.
: >"$SCRATCH/coverage.csv"
bazel_ws coverage //ml:inference_test \
  --run_under="$GPUPLAN run-under --plan $PLAN --node ws-0 --lock-dir $SCRATCH/locks --results $SCRATCH/coverage.csv" \
  --nocache_test_results --sandbox_writable_path="$SCRATCH" --test_output=all >"$SCRATCH/coverage.out" 2>&1 ||
  { cat "$SCRATCH/coverage.out"; fail "bazel coverage with run-under failed"; }
grep -q "target=//ml:inference_test shard=/ gpus=2$" "$SCRATCH/coverage.out" ||
  fail "under bazel coverage the test did not run on its planned GPU: $(cat "$SCRATCH/coverage.out")"
! grep -q '^//ml:inference_test' "$SCRATCH/coverage.csv" &&
  grep -q "ran under bazel coverage (COVERAGE_DIR), instrumented and slower than under bazel test: no results record" \
    "$SCRATCH/coverage.out" || fail "a bazel coverage run was recorded as the test's: $(cat "$SCRATCH/coverage.csv")"

# The run's Build Event Protocol as history: the JSON file, also through a pipe (bash's <(...),
# which cannot be rewound); the binary file is refused with what to give instead, never read as
# an empty CSV.
"$GPUPLAN" history show //ml:inference_test --history "$SCRATCH/bep.json" | grep -q "^//ml:inference_test: 1 sample" ||
  fail "history from the run's BEP: $("$GPUPLAN" history show //ml:inference_test --history "$SCRATCH/bep.json")"
"$GPUPLAN" history show //ml:inference_test --history <(cat "$SCRATCH/bep.json") | grep -q "^//ml:inference_test: 1 sample" ||
  fail "history from the run's BEP through a pipe read nothing"
refuses "bep.bin: binary data .*give the file of --build_event_json_file instead" \
  history show //ml:inference_test --history "$SCRATCH/bep.bin"

# The three GPU tests missing from the plan ran under --unplanned=warn with no GPU visible: their
# records' gpus are empty. A plan from those records leaves those runs out of the tests' durations
# (a GPU test given none mostly skips its GPU work), naming each, and counts them in its totals
# line; before, each was planned at the time of its run without a GPU. --strict refuses them.
for label in //ml:cuda11_compat_test //ml:video_decode_test //ml:allreduce_test; do
  grep -q "^$label,,[0-9.]*,,ws-0,," "$RESULTS" || fail "$label's record gives it GPUs: $(grep "^$label," "$RESULTS")"
done
# The tests just run, less one whose unread tag is an error of its own under --strict.
bazel_ws query 'tests(//ml:all) except //ml:team_macro_test' --output=xml >"$SCRATCH/ml.query.xml" 2>"$SCRATCH/query.err" ||
  fail "bazel query: $(cat "$SCRATCH/query.err")"
"$GPUPLAN" plan "$SCRATCH/ml.query.xml" --fleet "$SOURCE_DIR/examples/fleet.yaml" \
  --history "$RESULTS" -o "$SCRATCH/from_results.json" 2>"$SCRATCH/from_results.err" || true
grep -q "//ml:video_decode_test: 1 of its last 1 run in the history was given no GPU" "$SCRATCH/from_results.err" ||
  fail "runs given no GPU are not named: $(cat "$SCRATCH/from_results.err")"
grep -q "; 3 runs of GPU tests given no GPU left out" "$SCRATCH/from_results.err" ||
  fail "the totals line does not count the runs given no GPU: $(cat "$SCRATCH/from_results.err")"
jq -e '[.assignments[], .unschedulable[] | select(.label == "//ml:video_decode_test") | .duration_source]
       | length > 0 and all(startswith("history") | not)' "$SCRATCH/from_results.json" >/dev/null ||
  fail "a run given no GPU is //ml:video_decode_test's duration: $(jq -c '[.assignments[], .unschedulable[] | select(.label == "//ml:video_decode_test")]' "$SCRATCH/from_results.json")"
jq -e '[.assignments[] | select(.label == "//ml:inference_test") | .duration_source] == ["history-p90"]' \
  "$SCRATCH/from_results.json" >/dev/null || fail "a run on its planned GPU is no longer the test's duration"
refuses "//ml:video_decode_test: 1 of its last 1 run in the history was given no GPU" \
  plan "$SCRATCH/ml.query.xml" --fleet "$SOURCE_DIR/examples/fleet.yaml" --history "$RESULTS" --strict

# The --test_filter run's record beside the whole runs: a plan leaves it out of the test's
# duration, naming it, and counts it; before, its time was the test's. --strict refuses it.
"$GPUPLAN" plan "$SCRATCH/ml.query.xml" --fleet "$SOURCE_DIR/examples/fleet.yaml" \
  --history "$SCRATCH/filtered.csv" -o "$SCRATCH/from_filtered.json" 2>"$SCRATCH/from_filtered.err" || true
grep -q "//ml:inference_test: 1 of its last 1 run in the history was filtered to some of its test cases" "$SCRATCH/from_filtered.err" &&
  grep -q "; 1 run filtered to some test cases left out" "$SCRATCH/from_filtered.err" ||
  fail "a filtered run is not named: $(cat "$SCRATCH/from_filtered.err")"
jq -e '[.assignments[] | select(.label == "//ml:inference_test") | .duration_source] | all(startswith("history") | not)' \
  "$SCRATCH/from_filtered.json" >/dev/null || fail "a filtered run is //ml:inference_test's duration"
refuses "//ml:inference_test: 1 of its last 1 run in the history was filtered" \
  plan "$SCRATCH/ml.query.xml" --fleet "$SOURCE_DIR/examples/fleet.yaml" --history "$SCRATCH/filtered.csv" --strict
"$GPUPLAN" history show //ml:inference_test --history "$SCRATCH/filtered.csv" | grep -q "filtered to some test cases (left out)" ||
  fail "history show does not mark the filtered run"

# fails_in_bazel PACKAGE/TARGET LOCK_DIR WHY [RUN_UNDER_OPTIONS [BAZEL_OPTION...]]: bazel test of
# //PACKAGE:TARGET under run-under fails (exit 3), and the test's log says WHY.
fails_in_bazel() {
  local target=$1 locks=$2 why=$3 options=${4:-} status=0
  shift $(($# < 4 ? $# : 4))
  bazel_ws test "//${target/\//:}" --run_under="$GPUPLAN run-under --plan $PLAN --node ws-0 --lock-dir $locks $options" \
    --nocache_test_results "$@" >"$SCRATCH/refused.out" 2>&1 || status=$?
  [ "$status" = 3 ] || { cat "$SCRATCH/refused.out"; fail "bazel test of //${target/\//:} exited $status, not 3"; }
  local log
  # Through bazel_ws, as every other Bazel command here; a failure is said (with 2>/dev/null and no
  # `|| fail`, a failed bazel info ended the test through set -e without a word).
  log=$(bazel_ws info bazel-testlogs 2>"$SCRATCH/info.err") || fail "bazel info bazel-testlogs: $(cat "$SCRATCH/info.err")"
  log=$log/$target/test.log
  # Read again for up to 10 s: once, on a machine loaded by other builds, the grep missed a line
  # that the log held a moment later, when fail printed it.
  local tries=0
  until grep -q "$why" "$log"; do
    [ $((tries += 1)) -le 20 ] || fail "the failed test's log does not say why: $(cat "$log")"
    sleep 0.5
  done
}

# Without --unplanned=warn, a test missing from the plan fails in Bazel, saying why.
fails_in_bazel ml/cuda11_compat_test "$SCRATCH/locks" \
  "refusing to run //ml:cuda11_compat_test on node ws-0: it is not in the plan"

# A lock directory this test cannot see (as in a sandbox whose /tmp is the test's own: Bazel 7's
# hermetic /tmp) is not made there, where the test would lock GPUs of its own: the test fails, saying so.
fails_in_bazel ml/inference_test "$SCRATCH/no-locks" \
  "no-locks: the GPU lock directory does not exist in this test's view of the file system"
[ ! -e "$SCRATCH/no-locks" ] || fail "run-under made a lock directory of its own"

# Nor a results file in a directory the sandbox makes the test's own (here by --sandbox_tmpfs_path,
# as Bazel 7 does /tmp): the record would vanish with the sandbox and the test pass.
mkdir "$SCRATCH/private"
fails_in_bazel ml/inference_test "$SCRATCH/locks" \
  "results.csv: the results file does not exist in this test's view of the file system" \
  "--results $SCRATCH/private/results.csv" --sandbox_tmpfs_path="$SCRATCH/private" --sandbox_writable_path="$SCRATCH/locks"
[ ! -e "$SCRATCH/private/results.csv" ] || fail "a results file appeared outside the sandbox"
# Nor a JUnit file there, the report of the run it rewrites after each test.
fails_in_bazel ml/inference_test "$SCRATCH/locks" \
  "junit.xml: the JUnit file does not exist in this test's view of the file system" \
  "--results $RESULTS --junit $SCRATCH/private/junit.xml" --sandbox_tmpfs_path="$SCRATCH/private" \
  --sandbox_writable_path="$SCRATCH"

# A lock directory the sandbox leaves read-only (no --sandbox_writable_path for it; Bazel 4's
# sandbox keeps /tmp writable, so one elsewhere): the log names the option that makes it writable.
READ_ONLY=$(mktemp -d /var/tmp/gpuplan-ro.XXXXXX)
CLEANUP+=("$READ_ONLY")  # lib.sh's EXIT trap, which says where a silent failure was, removes it
fails_in_bazel ml/inference_test "$READ_ONLY" \
  "cannot open the GPU lock: Read-only file system (inside bazel test's sandbox only the paths --sandbox_writable_path names"

# Bazel's timeout running out while the test waits for its GPU (another holds its lock): the test never
# ran, and its log says so, and that the TIMEOUT is the wait's (before, run-under died without a word).
install -d -m 0700 "$SCRATCH/held"
/usr/bin/python3 -c 'import fcntl, sys, time; f = open(sys.argv[1], "w"); fcntl.flock(f, fcntl.LOCK_EX); time.sleep(120)' \
  "$SCRATCH/held/gpu-2.lock" &
holder=$!
until [ -e "$SCRATCH/held/gpu-2.lock" ] && ! flock -n "$SCRATCH/held/gpu-2.lock" true; do sleep 0.1; done
fails_in_bazel ml/inference_test "$SCRATCH/held" \
  "did not run: it was stopped (signal 15) while it waited for GPUs 2 (their locks in $SCRATCH/held were held.*Bazel's test timeout ran out in that wait" \
  "" --test_timeout=3 --sandbox_writable_path="$SCRATCH"
kill "$holder"

# Under --claims, Bazel's retry of a flaky test runs it again (the test fails once, then passes:
# FLAKY), and each of --runs_per_test=3 runs runs (three probe lines), rather than each repeating
# the first run's outcome unrun.
install -d -m 0700 "$SCRATCH/claims"
under_claims="$GPUPLAN run-under --plan $PLAN --node ws-0 --lock-dir $SCRATCH/locks --claims $SCRATCH/claims"
bazel_ws test //ml:inference_test --flaky_test_attempts=2 --nocache_test_results --sandbox_writable_path="$SCRATCH" \
  --run_under="$under_claims" --test_env=GPU_PROBE_FAIL_ONCE="$SCRATCH/failed-once" >"$SCRATCH/flaky.out" 2>&1 ||
  { cat "$SCRATCH/flaky.out"; fail "a flaky test's retry under --claims did not run"; }
grep -q "FLAKY, failed in 1 out of 2" "$SCRATCH/flaky.out" || fail "not reported flaky: $(cat "$SCRATCH/flaky.out")"
bazel_ws test //ml:inference_test --runs_per_test=3 --nocache_test_results --sandbox_writable_path="$SCRATCH" \
  --run_under="$under_claims" --test_env=GPU_PROBE_LOG="$SCRATCH/runs.log" >"$SCRATCH/runs.out" 2>&1 ||
  { cat "$SCRATCH/runs.out"; fail "--runs_per_test=3 under --claims failed"; }
[ "$(wc -l <"$SCRATCH/runs.log")" = 3 ] || fail "--runs_per_test=3 ran the test $(wc -l <"$SCRATCH/runs.log") times"

# Hostile labels: run-under finds them in the plan and runs the test command as given.
HOSTILE_PLAN=$SCRATCH/hostile.json
/usr/bin/python3 - "$PLAN" "$HOSTILE_PLAN" "$SCRATCH" <<'PY'
import json, sys
plan = json.load(open(sys.argv[1]))
labels = ["//a:x$(touch %s/pwned)" % sys.argv[3], "//a:x;touch %s/pwned" % sys.argv[3], "//a:it's",
          '//a:"q"', "//a:`touch %s/pwned`" % sys.argv[3]]
template = plan["assignments"][4]
one_gpu = dict(template["requirements"], gpus=1)  # as each is placed
plan["assignments"] = [dict(template, label=l, unit=l, gpus=[i % 4], requirements=one_gpu) for i, l in enumerate(labels)]
json.dump(plan, open(sys.argv[2], "w"))
PY
i=0
while IFS= read -r label; do
  got=$(TEST_TARGET=$label "$GPUPLAN" run-under --plan "$HOSTILE_PLAN" --node ws-0 --lock-dir "$SCRATCH/locks" \
          sh -c 'printf "%s %s %s %s" "$TEST_TARGET" "$CUDA_VISIBLE_DEVICES" "$CUDA_DEVICE_ORDER" "$ZE_AFFINITY_MASK"')
  # CUDA_DEVICE_ORDER: CUDA numbers the GPUs as nvidia-smi and the plan do, not fastest first.
  # ZE_AFFINITY_MASK: Intel's Level Zero ignores CUDA_VISIBLE_DEVICES and reads its own list.
  [ "$got" = "$label $((i % 4)) PCI_BUS_ID $((i % 4))" ] || fail "run-under of '$label' printed '$got'"
  i=$((i + 1))
done < <(jq -r '.assignments[].label' "$HOSTILE_PLAN")
[ "$i" = 5 ] || fail "expected 5 hostile labels, ran $i"
[ ! -e "$SCRATCH/pwned" ] || fail "a label was run as a command"

# --junit: five launches at once (as Bazel starts them), three of them failing, each appending its
# record and rewriting the JUnit under the results file's lock: the JUnit ends with all five.
: >"$SCRATCH/junit-results.csv"
: >"$SCRATCH/junit.xml"  # run-under never creates it either
pids=()
while IFS= read -r label; do
  TEST_TARGET=$label "$GPUPLAN" run-under --plan "$HOSTILE_PLAN" --node ws-0 --lock-dir "$SCRATCH/locks" \
    --results "$SCRATCH/junit-results.csv" --junit "$SCRATCH/junit.xml" \
    sh -c 'sleep 0.2; case "$TEST_TARGET" in *pwned*) exit 1;; esac' >/dev/null 2>>"$SCRATCH/junit.err" &
  pids+=($!)
done < <(jq -r '.assignments[].label' "$HOSTILE_PLAN")
for pid in "${pids[@]}"; do wait "$pid" || true; done
xmllint --noout "$SCRATCH/junit.xml" || fail "run-under's JUnit is not well-formed XML"
[ "$(grep -c '<testcase ' "$SCRATCH/junit.xml")" -eq 5 ] || fail "run-under's JUnit lacks records: $(cat "$SCRATCH/junit.xml" "$SCRATCH/junit.err")"
[ "$(grep -c '<failure ' "$SCRATCH/junit.xml")" -eq 3 ] || fail "run-under's JUnit does not count 3 failures"
grep -qF 'value="//a:&quot;q&quot;"' "$SCRATCH/junit.xml" || fail "run-under's JUnit lacks the label //a:\"q\""

# A process the test leaves running ends with the test, before its GPUs are handed on: a daemon
# that closed the lock descriptors it inherited ran on while the next test got its GPUs.
TEST_TARGET=//ml:inference_test "$GPUPLAN" run-under --plan "$PLAN" --node ws-0 --lock-dir "$SCRATCH/locks" \
  bash -c "setsid bash -c 'exec 3>&- 4>&- 5>&- 6>&- 7>&- 8>&- 9>&-; echo \$\$ >$SCRATCH/daemon.pid; exec sleep 30' </dev/null >/dev/null 2>&1 &
           until [ -s $SCRATCH/daemon.pid ]; do sleep 0.05; done" 2>"$SCRATCH/daemon.err" ||
  fail "run-under of a test that leaves a daemon failed"
grep -q "the test left processes running; they were killed before its GPUs were released" "$SCRATCH/daemon.err" ||
  fail "run-under killed the test's daemon without a word: $(cat "$SCRATCH/daemon.err")"
daemon=$(cat "$SCRATCH/daemon.pid")
sleep 0.2
state=$(ps -o stat= -p "$daemon" 2>/dev/null || true)
[ -z "$state" ] || [ "${state#Z}" != "$state" ] || fail "the daemon the test left ($daemon, $state) still runs after run-under ended"

# A test missing from the plan gets free GPUs by its tags from --query, or a clear refusal.
got=$(TEST_TARGET=//ml:cuda11_compat_test "$GPUPLAN" run-under --plan "$PLAN" --node ws-0 --lock-dir "$SCRATCH/locks" \
        --query examples/query.xml sh -c 'printf %s "$CUDA_VISIBLE_DEVICES"' 2>"$SCRATCH/note") ||
  fail "an unplanned 1-GPU test: $(cat "$SCRATCH/note")"
[ "$got" = 0 ] || fail "an unplanned 1-GPU test got GPUs '$got', not the lowest free one"
grep -q "cuda11_compat_test is not planned on ws-0; running it with free GPUs 0 found by its tags" "$SCRATCH/note" ||
  fail "no note on stderr for an unplanned test: $(cat "$SCRATCH/note")"
TEST_TARGET=//ml:allreduce_test refuses "needs 8 GPUs" \
  run-under --plan "$PLAN" --node ws-0 --lock-dir "$SCRATCH/locks" --query examples/query.xml true
# An unplanned gpu-exclusive test runs alone on the node, as a planned one does: it waits for the
# test that holds GPU 2 (it took free GPU 3 and ran beside it before).
cat >"$SCRATCH/excl.xml" <<'XML'
<?xml version="1.1" encoding="UTF-8" standalone="no"?>
<query version="2"><rule class="sh_test" name="//new:excl_test"><list name="tags"><string value="gpu"/><string value="gpu-exclusive"/></list></rule></query>
XML
# Once the holder's test runs (it holds GPU 2 then): after a fixed 0.3 s, a loaded machine's
# exclusive test could start first.
TEST_TARGET=//ml:inference_test "$GPUPLAN" run-under --plan "$PLAN" --node ws-0 --lock-dir "$SCRATCH/locks" \
  sh -c "touch $SCRATCH/holding; sleep 1.5; date +%s.%N >$SCRATCH/held_until" &
holder=$!
for _ in $(seq 600); do [ -e "$SCRATCH/holding" ] && break; sleep 0.1; done
[ -e "$SCRATCH/holding" ] || fail "the holder's test did not start"
TEST_TARGET=//new:excl_test "$GPUPLAN" run-under --plan "$PLAN" --node ws-0 --lock-dir "$SCRATCH/locks" \
  --query "$SCRATCH/excl.xml" sh -c "date +%s.%N >$SCRATCH/excl_started" 2>"$SCRATCH/note" ||
  fail "the unplanned exclusive test failed: $(cat "$SCRATCH/note")"
wait "$holder"
/usr/bin/python3 -c "import sys; sys.exit(float(open('$SCRATCH/excl_started').read()) < float(open('$SCRATCH/held_until').read()))" ||
  fail "an unplanned gpu-exclusive test ran beside another test"
grep -q "excl_test is not planned on ws-0; running it with GPUs 0 found by its tags, alone on the node" "$SCRATCH/note" ||
  fail "the note of an unplanned exclusive test: $(cat "$SCRATCH/note")"
# With Bazel's exclusive and no GPU count (Ray's tests), it is given every GPU of the node.
sed 's/gpu-exclusive/exclusive/' "$SCRATCH/excl.xml" >"$SCRATCH/bazel-excl.xml"
TEST_TARGET=//new:excl_test "$GPUPLAN" run-under --plan "$PLAN" --node ws-0 --lock-dir "$SCRATCH/locks" \
  --query "$SCRATCH/bazel-excl.xml" sh -c 'echo "$CUDA_VISIBLE_DEVICES" >'"$SCRATCH/excl_visible" 2>"$SCRATCH/note" ||
  fail "the unplanned Bazel-exclusive test failed: $(cat "$SCRATCH/note")"
[ "$(cat "$SCRATCH/excl_visible")" = 0,1,2,3 ] && grep -q "running it with GPUs 0,1,2,3 found by its tags" "$SCRATCH/note" ||
  fail "an unplanned Bazel-exclusive test did not see every GPU: $(cat "$SCRATCH/excl_visible") $(cat "$SCRATCH/note")"

# A test that picks its GPU itself (NVML's stand-in lists its shell on GPU 0; the plan gave it
# GPU 2): run-under measures it with --results and says so in the test's log.
printf "" >"$SCRATCH/nvml.procs"; : >"$SCRATCH/picks.csv"
TEST_TARGET=//ml:inference_test GPUPLAN_FAKE_NVML_PROCESSES="$SCRATCH/nvml.procs" "$GPUPLAN" run-under \
  --plan "$PLAN" --node ws-0 --lock-dir "$SCRATCH/locks" --results "$SCRATCH/picks.csv" \
  sh -c "$(sampled_after); printf '0 %s 256\n' \$\$ >$SCRATCH/nvml.procs; $(sampled)" 2>"$SCRATCH/picks.err" ||
  fail "run-under of a test that picks its GPU failed: $(cat "$SCRATCH/picks.err")"
grep -q "^gpuplan run-under: warning: //ml:inference_test used GPU 0, which the plan did not give it (it was given GPU 2)" \
  "$SCRATCH/picks.err" || fail "no warning for a test on a GPU it was not given: $(cat "$SCRATCH/picks.err")"

# A test still running holds its GPUs; killing run-under ends the test and every process it
# started (here a child that would run on), and only then releases them.
: >"$SCRATCH/stopped.csv"
TEST_TARGET=//ml:inference_test "$GPUPLAN" run-under --plan "$PLAN" --node ws-0 --lock-dir "$SCRATCH/locks" \
  sh -c 'sleep 30 & wait' &
holder=$!
descendants() { local child; for child in $(pgrep -P "$1"); do echo "$child"; descendants "$child"; done; }
# Until the test's child (sleep) runs: under CI's load (ASan, two tests at once) run-under can
# take longer than the half second this once waited.
for _ in $(seq 600); do
  tree=$(descendants "$holder")
  for pid in $tree; do [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = sleep ] && break 2; done
  sleep 0.1
done
[ "$(echo "$tree" | wc -l)" -ge 2 ] || fail "the test and its child did not start"
if timeout 1 env TEST_TARGET=//ml:remote_exec_test "$GPUPLAN" run-under --plan "$PLAN" --node ws-0 \
     --lock-dir "$SCRATCH/locks" true; then
  fail "a second test got GPU 2 while the first held it"
fi
kill -KILL "$holder"
wait "$holder" 2>/dev/null || true
running() { [ -e "/proc/$1" ] && [ "$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null)" != Z ]; }
for pid in $tree; do  # up to 20 s, as below
  for _ in $(seq 200); do running "$pid" || break; sleep 0.1; done
  ! running "$pid" || { kill -KILL "$pid"; fail "a process of the test outlived its killed run-under"; }
done
timeout 30 env TEST_TARGET=//ml:remote_exec_test "$GPUPLAN" run-under --plan "$PLAN" --node ws-0 \
  --lock-dir "$SCRATCH/locks" true || fail "GPU 2 was not released when its holder was killed"
# Bazel ends a test that outlives its timeout's SIGTERM with SIGKILL to the whole process group
# of its --run_under. A daemon the test started in a session of its own (setsid) left that group:
# before, the supervisor was in the group too, died with it, and the daemon ran on (on GPU 2,
# holding its lock, so the next test waited; or, had it closed the lock, beside the next test).
rm -f "$SCRATCH/daemon.pid"
setsid env TEST_TARGET=//ml:inference_test "$GPUPLAN" run-under --plan "$PLAN" --node ws-0 \
  --lock-dir "$SCRATCH/locks" sh -c "setsid sleep 30 & echo \$! >'$SCRATCH/daemon.pid'; sleep 30" &
group=$!
for _ in $(seq 600); do [ -s "$SCRATCH/daemon.pid" ] && break; sleep 0.1; done
daemon=$(cat "$SCRATCH/daemon.pid")
running "$daemon" || fail "the test's daemon did not start"
kill -KILL -- "-$group"
wait "$group" 2>/dev/null || true
# Up to 20 s: under CI's load (two tests at once on two cores) the supervisor once took over 5 s.
for _ in $(seq 200); do running "$daemon" || break; sleep 0.1; done
! running "$daemon" || { kill -KILL "$daemon" 2>/dev/null; fail "a daemon outlived a SIGKILL to its run-under's process group"; }
timeout 30 env TEST_TARGET=//ml:remote_exec_test "$GPUPLAN" run-under --plan "$PLAN" --node ws-0 \
  --lock-dir "$SCRATCH/locks" true || fail "GPU 2 was not released after a SIGKILL to the test's process group"
# A stop (Ctrl-C, a killed CI job) sends SIGTERM: the record says "stopped"; at Bazel's test
# timeout (TEST_TIMEOUT, which Bazel sets) it says "timeout", as Bazel does (it said "stopped").
# History takes either time as a lower bound (history-timeout), not as how long the test takes.
# terminated ARGS...: run-under's exit status when SIGTERM reaches it while the test ARGS runs.
terminated() {
  TEST_TARGET=//ml:inference_test "$GPUPLAN" run-under --plan "$PLAN" --node ws-0 --lock-dir "$SCRATCH/locks" "$@" &
  local holder=$! status=0
  for _ in $(seq 600); do [ -n "$(descendants "$holder")" ] && break; sleep 0.1; done
  kill -TERM "$holder"
  wait "$holder" 2>/dev/null || status=$?
  echo "$status"
}
: >"$SCRATCH/stopped.csv"
status=$(terminated --results "$SCRATCH/stopped.csv" sh -c 'sleep 30 & wait')
[ "$status" = 143 ] || fail "run-under stopped by SIGTERM exited $status, not 143"
grep -qE '^//ml:inference_test,,[0-9.]+,,ws-0,2,[^,]+,stopped,false,,,,1$' "$SCRATCH/stopped.csv" ||
  fail "a test stopped by SIGTERM: $(cat "$SCRATCH/stopped.csv")"
: >"$SCRATCH/timeout.csv"
status=$(TEST_TIMEOUT=3 terminated --results "$SCRATCH/timeout.csv" sh -c 'sleep 30 & wait')
grep -qE '^//ml:inference_test,,[0-9.]+,,ws-0,2,[^,]+,timeout,false,,,,1$' "$SCRATCH/timeout.csv" ||
  fail "a test stopped at Bazel's timeout: $(cat "$SCRATCH/timeout.csv")"
# A test that traps SIGTERM and exits 0 was still cut short: no exit 0, which would read as passed.
status=$(terminated sh -c 'trap "exit 0" TERM; sleep 30 & wait')
[ "$status" = 143 ] || fail "a test that trapped SIGTERM and exited 0: run-under exited $status, not 143"
"$GPUPLAN" history show //ml:inference_test --history "$SCRATCH/stopped.csv" | grep -q "(history-timeout)" ||
  fail "history took a stopped run's time as the test's"
# Never a GPU test without its GPUs: each way to end up with none is refused, exit 2, naming
# the plan and the node; --unplanned=warn runs it with none visible and says so.
refused() {  # refused WHAT PATTERN -- ENV... : run-under with ENV must refuse, printing PATTERN
  local what=$1 pattern=$2; shift 3
  local status=0
  env "$@" true 2>"$SCRATCH/refusal" || status=$?
  [ "$status" = 2 ] || fail "$what: exit $status, not 2"
  grep -qF -- "$pattern" "$SCRATCH/refusal" || fail "$what: message was $(cat "$SCRATCH/refusal")"
  grep -qF -- "(plan " "$SCRATCH/refusal" || fail "$what: the message does not name the plan"
}
jq '(.assignments[] | select(.unit == "//ml:train_test#shard-1-of-4") | .node) = "ws-1"
    | .unschedulable = [.assignments[5] | del(.node, .gpus, .start_s, .end_s, .env)
                        | .unit = "//big:t" | .label = "//big:t" | .reason = "needs 16 GPUs; the largest node has 8"]
    | .cpu_tests = [{"label": "//ml:cpu_test", "reason": "no GPU annotation"}]' "$PLAN" >"$SCRATCH/moved.json"
RU=("$GPUPLAN" run-under --plan "$SCRATCH/moved.json" --lock-dir "$SCRATCH/locks")
refused "unknown node" 'on node nowhere: node "nowhere" has no units in the plan (its nodes: ws-0, ws-1)' -- \
  TEST_TARGET=//ml:inference_test "${RU[@]}" --node nowhere
# Nor with GPUs this machine lacks: NVML's stand-in counts 3 where the plan gives GPU 3 (one fell
# off the bus), or, where there is no NVML, no GPU device file at all (this machine).
refused "a GPU the machine lacks" 'refusing to run //ml:pool_test on node ws-0: NVML sees 3 GPUs (0-2) on this machine, and the plan gives units GPU 3' -- \
  GPUPLAN_FAKE_NVML_GPUS=3 TEST_TARGET=//ml:pool_test "${RU[@]}" --node ws-0
if ! ls /dev/nvidia[0-9]* /dev/kfd /dev/dri/renderD* >/dev/null 2>&1; then
  refused "no GPU at all" 'refusing to run //ml:pool_test on node ws-0: this machine shows no GPU' -- \
    GPUPLAN_NVML_LIBRARY=/nonexistent/libnvidia-ml.so.1 TEST_TARGET=//ml:pool_test "${RU[@]}" --node ws-0
fi
: >"$SCRATCH/warned.csv"
GPUPLAN_FAKE_NVML_GPUS=3 TEST_TARGET=//ml:pool_test "${RU[@]}" --node ws-0 --missing-gpus=warn --results "$SCRATCH/warned.csv" \
  sh -c 'echo "ran on $CUDA_VISIBLE_DEVICES"' >"$SCRATCH/warned.out" 2>&1 || fail "--missing-gpus=warn: $(cat "$SCRATCH/warned.out")"
grep -q '^ran on 3$' "$SCRATCH/warned.out" && grep -q 'warning: //ml:pool_test on node ws-0: NVML sees 3 GPUs' "$SCRATCH/warned.out" &&
  grep -qF 'its results record gives it no GPU (planned GPU 3: none is here)' "$SCRATCH/warned.out" ||
  fail "--missing-gpus=warn: $(cat "$SCRATCH/warned.out")"
# CUDA left GPU 3 out: the test ran with none, and its record says so (empty gpus; before, "3"), so
# a plan from it leaves the run out of the test's duration, with a warning, as any run given no GPU.
grep -q '^//ml:pool_test,,[0-9.]*,[0-9]*,ws-0,,' "$SCRATCH/warned.csv" ||
  fail "a --missing-gpus=warn run on a GPU the machine lacks records it: $(cat "$SCRATCH/warned.csv")"
"$GPUPLAN" plan "$SCRATCH/ml.query.xml" --fleet "$SOURCE_DIR/examples/fleet.yaml" \
  --history "$SCRATCH/warned.csv" -o "$SCRATCH/from_warned.json" 2>"$SCRATCH/from_warned.err" || true
grep -q "//ml:pool_test: 1 of its last 1 run in the history was given no GPU" "$SCRATCH/from_warned.err" ||
  fail "a --missing-gpus=warn run given no GPU is not named: $(cat "$SCRATCH/from_warned.err")"
jq -e '[.assignments[], .unschedulable[] | select(.label == "//ml:pool_test") | .duration_source]
       | length > 0 and all(startswith("history") | not)' "$SCRATCH/from_warned.json" >/dev/null ||
  fail "a --missing-gpus=warn run given no GPU is //ml:pool_test's duration: $(cat "$SCRATCH/from_warned.err")"
GPUPLAN_FAKE_NVML_GPUS=4 TEST_TARGET=//ml:pool_test "${RU[@]}" --node ws-0 true || fail "GPU 3 of 4 was refused"
# A 2-GPU test on a machine with 1 of its planned GPUs: its record lists GPU 0 only, and a plan
# leaves the run out of the test's duration (it needs 2: its 2-way work was skipped), naming it
# and counting it; before, the 1-GPU run's time was the test's. --strict refuses it.
: >"$SCRATCH/fewer.csv"
GPUPLAN_FAKE_NVML_GPUS=1 TEST_TARGET=//ml:resources_test "${RU[@]}" --node ws-0 --missing-gpus=warn --results "$SCRATCH/fewer.csv" \
  sh -c 'echo "ran on $CUDA_VISIBLE_DEVICES"' >"$SCRATCH/fewer.out" 2>&1 || fail "--missing-gpus=warn: $(cat "$SCRATCH/fewer.out")"
grep -q '^//ml:resources_test,,[0-9.]*,[0-9]*,ws-0,0,.*,2$' "$SCRATCH/fewer.csv" ||
  fail "a --missing-gpus=warn run on 1 of its 2 GPUs does not record that one, and the 2 it asked for: $(cat "$SCRATCH/fewer.csv")"
"$GPUPLAN" plan "$SCRATCH/ml.query.xml" --fleet "$SOURCE_DIR/examples/fleet.yaml" \
  --history "$SCRATCH/fewer.csv" -o "$SCRATCH/from_fewer.json" 2>"$SCRATCH/from_fewer.err" || true
grep -q "//ml:resources_test: 1 of its last 1 run in the history was given fewer GPUs than the 2 it needs (as few as 1" "$SCRATCH/from_fewer.err" &&
  grep -q "; 1 run of GPU tests given fewer GPUs than they need left out" "$SCRATCH/from_fewer.err" ||
  fail "a run given fewer GPUs than the test needs is not named: $(cat "$SCRATCH/from_fewer.err")"
jq -e '[.assignments[], .unschedulable[] | select(.label == "//ml:resources_test") | .duration_source]
       | length > 0 and all(startswith("history") | not)' "$SCRATCH/from_fewer.json" >/dev/null ||
  fail "a run given 1 of its 2 GPUs is //ml:resources_test's duration"
refuses "//ml:resources_test: 1 of its last 1 run in the history was given fewer GPUs" \
  plan "$SCRATCH/ml.query.xml" --fleet "$SOURCE_DIR/examples/fleet.yaml" --history "$SCRATCH/fewer.csv" --strict
# A googletest filter among the test's arguments (a --test_arg) marks the record too.
: >"$SCRATCH/gtest_filtered.csv"
GPUPLAN_FAKE_NVML_GPUS=4 TEST_TARGET=//ml:pool_test "${RU[@]}" --node ws-0 --results "$SCRATCH/gtest_filtered.csv" \
  sh -c true test --gtest_filter=Gemm.Fp16 2>"$SCRATCH/gtest_filtered.err" || fail "run-under: $(cat "$SCRATCH/gtest_filtered.err")"
grep -q '^//ml:pool_test,.*,true,1$' "$SCRATCH/gtest_filtered.csv" ||
  fail "a --gtest_filter run is not marked filtered: $(cat "$SCRATCH/gtest_filtered.csv")"
# Under bazel test, a CUDA_VISIBLE_DEVICES can only have come by --test_env: the refusal says so.
refused "a --test_env CUDA_VISIBLE_DEVICES" 'CUDA_VISIBLE_DEVICES and ROCR_VISIBLE_DEVICES reach a test only through --test_env' -- \
  CUDA_VISIBLE_DEVICES=7 TEST_TARGET=//ml:inference_test "${RU[@]}" --node ws-0
# Nor on GPUs that lack what it needs: compute capability 8.0 where it needs 9.0.
jq '(.assignments[] | select(.unit == "//ml:pool_test") | .requirements.compute_capability) = ">=9.0"' \
  "$SCRATCH/moved.json" >"$SCRATCH/needs.json"
refused "compute capability" 'refusing to run //ml:pool_test on node ws-0: it needs compute capability ≥ 9.0, and GPU 3 of this machine has 8.0 (NVML)' -- \
  GPUPLAN_FAKE_NVML_CC=8.0 TEST_TARGET=//ml:pool_test "$GPUPLAN" run-under --plan "$SCRATCH/needs.json" --lock-dir "$SCRATCH/locks" --node ws-0
GPUPLAN_FAKE_NVML_CC=9.0 TEST_TARGET=//ml:pool_test "$GPUPLAN" run-under --plan "$SCRATCH/needs.json" \
  --lock-dir "$SCRATCH/locks" --node ws-0 true || fail "compute capability 9.0 was refused where 9.0 is needed"
# Nor on GPUs clearly smaller than it needs: 60 GiB on GPUs of 24 (before, it ran, and passed).
jq '(.assignments[] | select(.unit == "//ml:pool_test") | .requirements.gpu_mem_mib) = 61440' \
  "$SCRATCH/moved.json" >"$SCRATCH/mem.json"
refused "memory" 'refusing to run //ml:pool_test on node ws-0: it needs 60GiB (61440 MiB) per GPU, and GPU 3 of this machine has 24576 MiB (NVML)' -- \
  GPUPLAN_FAKE_NVML_MEM_GIB=24 TEST_TARGET=//ml:pool_test "$GPUPLAN" run-under --plan "$SCRATCH/mem.json" --lock-dir "$SCRATCH/locks" --node ws-0
GPUPLAN_FAKE_NVML_MEM_GIB=58 TEST_TARGET=//ml:pool_test "$GPUPLAN" run-under --plan "$SCRATCH/mem.json" \
  --lock-dir "$SCRATCH/locks" --node ws-0 true || fail "58 GiB GPUs (NVML) were refused where gpu-mem:60GiB is needed"
# --node-file as editors and Windows checkouts leave it: CR and spaces around the name are not
# part of it; a name that is not in the plan is printed with its control characters visible.
printf ' ws-0 \r\n' >"$SCRATCH/node-crlf"
got=$(TEST_TARGET=//ml:inference_test "${RU[@]}" --node-file "$SCRATCH/node-crlf" sh -c 'printf %s "$CUDA_VISIBLE_DEVICES"') ||
  fail "a --node-file with CRLF and spaces was refused"
[ "$got" = 2 ] || fail "a --node-file with CRLF and spaces: GPUs '$got'"
refused "a name with a control character" 'node "ws\x1b0" has no units in the plan' -- \
  TEST_TARGET=//ml:inference_test "${RU[@]}" --node "$(printf 'ws\0330')"
# A mistyped option starts the command, and the node is the host name: the refusal says so.
refused "the host name" "the node is this machine's host name, as neither --node nor --node-file came before the command" -- \
  TEST_TARGET=//ml:inference_test "${RU[@]}" --nodes ws-0 true
refused "shard on another node" "//ml:train_test on node ws-0: it is planned on node ws-1, not on ws-0" -- \
  TEST_TARGET=//ml:train_test TEST_SHARD_INDEX=1 "${RU[@]}" --node ws-0
refused "unschedulable" "the plan could not schedule it: needs 16 GPUs" -- TEST_TARGET=//big:t "${RU[@]}" --node ws-0
refused "skipped" "the plan skipped it: tagged manual" -- TEST_TARGET=//ml:benchmark_test "${RU[@]}" --node ws-0
refused "missing" "it is not in the plan" -- TEST_TARGET=//ml:nowhere_test "${RU[@]}" --node ws-0
got=$(TEST_TARGET=//ml:train_test TEST_SHARD_INDEX=0 "${RU[@]}" --node ws-0 sh -c 'printf %s "$CUDA_VISIBLE_DEVICES"')
[ "$got" = 0,1 ] || fail "shard 0, still planned on ws-0, got GPUs '$got'"
# The test's shard_count changed after the plan was made. More shards than planned: a shard the
# plan has runs on its GPUs, warned, and one it does not have is refused. Fewer: refused, as the
# planned shards past Bazel's count would never run (before, shard 0 of 2 ran as shard 0 of 4,
# and half the test's cases never ran while Bazel said PASSED); so is the test run unsharded.
got=$(TEST_TARGET=//ml:train_test TEST_SHARD_INDEX=0 TEST_TOTAL_SHARDS=8 "${RU[@]}" --node ws-0 \
        sh -c 'printf %s "$CUDA_VISIBLE_DEVICES"' 2>"$SCRATCH/warning") ||
  fail "shard 0 of 8, planned as shard 0 of 4: $(cat "$SCRATCH/warning")"
[ "$got" = 0,1 ] || fail "shard 0 of 8, planned as shard 0 of 4, got GPUs '$got'"
grep -qF "warning: the plan has //ml:train_test in 4 shards, and Bazel runs it in 8 shards (TEST_TOTAL_SHARDS)" \
  "$SCRATCH/warning" || fail "no warning for a changed shard count: $(cat "$SCRATCH/warning")"
refused "a shard the plan does not have" "the plan has //ml:train_test in 4 shards, and Bazel runs it in 8 shards" -- \
  TEST_TARGET=//ml:train_test TEST_SHARD_INDEX=5 TEST_TOTAL_SHARDS=8 "${RU[@]}" --node ws-0
refused "fewer shards than planned" "the plan has //ml:train_test in 4 shards, and Bazel runs it in 2 shards" -- \
  TEST_TARGET=//ml:train_test TEST_SHARD_INDEX=0 TEST_TOTAL_SHARDS=2 "${RU[@]}" --node ws-0
refused "a sharded test run whole" "Bazel runs it unsharded (no TEST_TOTAL_SHARDS): its shard_count changed after the plan was made, or bazel test runs with --test_sharding_strategy=disabled" -- \
  TEST_TARGET=//ml:train_test "${RU[@]}" --node ws-0
got=$(CUDA_VISIBLE_DEVICES=0,1,2,3 TEST_TARGET=//ml:cpu_test "${RU[@]}" --node anywhere \
        sh -c 'printf %s "${CUDA_VISIBLE_DEVICES-unset}"')
[ "$got" = "" ] || fail "a test of the CPU bucket saw GPUs '$got'"
# Nor on an AMD node: ROCm's HIP reads HIP_VISIBLE_DEVICES, else CUDA_VISIBLE_DEVICES, and takes an
# empty list for every GPU (before, such a test saw them all); -1 ends a list before any GPU.
# Nor on an Intel node, whose Level Zero shows every GPU without a ZE_AFFINITY_MASK and none for
# one that names only an index past its devices.
got=$(TEST_TARGET=//ml:cpu_test "${RU[@]}" --node anywhere \
        sh -c 'printf %s "${HIP_VISIBLE_DEVICES-unset} ${GPU_DEVICE_ORDINAL-unset} ${ZE_AFFINITY_MASK-unset}"')
[ "$got" = "-1 -1 2147483647" ] || fail "a test of the CPU bucket was shown GPUs: HIP_VISIBLE_DEVICES GPU_DEVICE_ORDINAL ZE_AFFINITY_MASK '$got'"
# An empty ROCR_VISIBLE_DEVICES, taken as unset, reaches the test unset: ROCr filters by one that is
# set, even empty, and a GPU test on an AMD node saw no GPU (and passed where it skips without one).
got=$(ROCR_VISIBLE_DEVICES= TEST_TARGET=//ml:inference_test "${RU[@]}" --node ws-0 \
        sh -c 'printf %s "${ROCR_VISIBLE_DEVICES-unset} $CUDA_VISIBLE_DEVICES"')
[ "$got" = "unset 2" ] || fail "an empty ROCR_VISIBLE_DEVICES reached the test as '$got'"
# A caller's ONEAPI_DEVICE_SELECTOR that numbers devices counts among the test's own (its
# ZE_AFFINITY_MASK): level_zero:1 shows a test of 1 GPU none, and it is not passed on, with a warning
# naming the test; one that names a backend only is passed on as it is.
got=$(ONEAPI_DEVICE_SELECTOR=level_zero:1 TEST_TARGET=//ml:inference_test "${RU[@]}" --node ws-0 \
        sh -c 'printf %s "${ONEAPI_DEVICE_SELECTOR-unset} $ZE_AFFINITY_MASK"' 2>"$SCRATCH/selector.err")
[ "$got" = "unset 2" ] && grep -q 'warning: //ml:inference_test: ONEAPI_DEVICE_SELECTOR=level_zero:1 names device 1 of level_zero' "$SCRATCH/selector.err" ||
  fail "ONEAPI_DEVICE_SELECTOR=level_zero:1 reached a test of 1 GPU as '$got': $(cat "$SCRATCH/selector.err")"
got=$(ONEAPI_DEVICE_SELECTOR=level_zero:gpu TEST_TARGET=//ml:inference_test "${RU[@]}" --node ws-0 \
        sh -c 'printf %s "${ONEAPI_DEVICE_SELECTOR-unset}"')
[ "$got" = "level_zero:gpu" ] || fail "ONEAPI_DEVICE_SELECTOR=level_zero:gpu reached the test as '$got'"
# Bazel's shards of a test the plan has as one unit keep Bazel's shard: a sharded CPU test's
# second shard (before: TEST_TOTAL_SHARDS=1 beside index 1, which googletest fails), and each
# shard of a --shards=whole unit on the unit's GPUs (before: each ran every case of the test).
shard_env='printf "%s %s/%s %s/%s" "$CUDA_VISIBLE_DEVICES" "$TEST_SHARD_INDEX" "$TEST_TOTAL_SHARDS" "$GTEST_SHARD_INDEX" "$GTEST_TOTAL_SHARDS"'
got=$(TEST_TARGET=//ml:cpu_test TEST_SHARD_INDEX=1 TEST_TOTAL_SHARDS=3 "${RU[@]}" --node anywhere sh -c "$shard_env")
[ "$got" = " 1/3 1/3" ] || fail "shard 1 of 3 of a CPU test got '$got'"
"$GPUPLAN" plan "$SOURCE_DIR/examples/query.xml" --fleet "$SOURCE_DIR/examples/workstation.yaml" --shards whole \
  -o "$SCRATCH/whole.json" 2>/dev/null || [ $? = 3 ] || fail "the --shards=whole plan was not written"
whole_gpus=$(jq -r '.assignments[] | select(.unit == "//ml:train_test") | .gpus | join(",")' "$SCRATCH/whole.json")
whole_node=$(jq -r '.assignments[] | select(.unit == "//ml:train_test") | .node' "$SCRATCH/whole.json")
for shard in 0 3; do
  got=$(TEST_TARGET=//ml:train_test TEST_SHARD_INDEX=$shard TEST_TOTAL_SHARDS=4 "$GPUPLAN" run-under \
          --plan "$SCRATCH/whole.json" --lock-dir "$SCRATCH/locks" --node "$whole_node" sh -c "$shard_env")
  [ "$got" = "$whole_gpus $shard/4 $shard/4" ] || fail "shard $shard of a --shards=whole unit got '$got'"
done
got=$(TEST_TARGET=//ml:train_test "$GPUPLAN" run-under --plan "$SCRATCH/whole.json" --lock-dir "$SCRATCH/locks" \
        --node "$whole_node" sh -c "$shard_env") || fail "a --shards=whole unit run unsharded was refused"
[ "$got" = "$whole_gpus / /" ] || fail "a --shards=whole unit run unsharded got '$got'"
# A test planned unsharded that Bazel now shards: each shard runs on its GPUs, with a warning.
got=$(TEST_TARGET=//ml:inference_test TEST_SHARD_INDEX=1 TEST_TOTAL_SHARDS=2 "${RU[@]}" --node ws-0 \
        sh -c "$shard_env" 2>"$SCRATCH/warning") || fail "shard 1 of 2 of a test planned unsharded was refused"
[ "$got" = "2 1/2 1/2" ] || fail "shard 1 of 2 of a test planned unsharded got '$got'"
grep -qF "warning: the plan has //ml:inference_test unsharded, and Bazel runs it in 2 shards" "$SCRATCH/warning" ||
  fail "no warning for a test sharded since the plan: $(cat "$SCRATCH/warning")"
# Under --claims each shard is a claim of its own: the second is not taken for the first's retry.
install -d -m 0700 "$SCRATCH/whole-claims"
for shard in 0 1; do
  got=$(GPUPLAN_NVML_LIBRARY="$GPUPLAN_BUILD_DIR/libfake_nvml.so" TEST_TARGET=//ml:train_test TEST_SHARD_INDEX=$shard \
          TEST_TOTAL_SHARDS=4 "$GPUPLAN" run-under --plan "$SCRATCH/whole.json" --lock-dir "$SCRATCH/locks" \
          --claims "$SCRATCH/whole-claims" --fleet "$SOURCE_DIR/examples/workstation.yaml" --node "$whole_node" \
          sh -c "$shard_env")
  [ "$got" = "$whole_gpus $shard/4 $shard/4" ] || fail "under --claims, shard $shard of a --shards=whole unit got '$got'"
done
ls "$SCRATCH/whole-claims" | grep -c '\.done$' | grep -qx 2 || fail "two shards under --claims left $(ls "$SCRATCH/whole-claims")"
got=$(TEST_TARGET=//ml:train_test TEST_SHARD_INDEX=1 "${RU[@]}" --node ws-0 --unplanned=warn \
        sh -c 'printf %s "$CUDA_VISIBLE_DEVICES"' 2>"$SCRATCH/warning") ||
  fail "--unplanned=warn: $(cat "$SCRATCH/warning")"
[ "$got" = "" ] || fail "--unplanned=warn gave GPUs '$got'"
got=$(TEST_TARGET=//ml:train_test TEST_SHARD_INDEX=1 HIP_VISIBLE_DEVICES=3 "${RU[@]}" --node ws-0 --unplanned=warn \
        sh -c 'printf %s "$HIP_VISIBLE_DEVICES"' 2>/dev/null)
[ "$got" = "-1" ] || fail "--unplanned=warn left ROCm's GPUs visible: HIP_VISIBLE_DEVICES '$got'"
grep -q "warning: //ml:train_test on node ws-0: it is planned on node ws-1" "$SCRATCH/warning" ||
  fail "--unplanned=warn did not warn: $(cat "$SCRATCH/warning")"

# An exclusive test holds every GPU of the node: a test on another GPU waits for it.
jq '(.assignments[] | select(.unit == "//ml:inference_test") | .requirements.exclusive) = true' "$PLAN" \
  >"$SCRATCH/exclusive.json"
TEST_TARGET=//ml:inference_test "$GPUPLAN" run-under --plan "$SCRATCH/exclusive.json" --node ws-0 \
  --lock-dir "$SCRATCH/locks" sh -c "touch $SCRATCH/exclusive-started; sleep 1.5; date +%s.%N >$SCRATCH/exclusive-end" &
holder=$!
for _ in $(seq 600); do [ -e "$SCRATCH/exclusive-started" ] && break; sleep 0.1; done
TEST_TARGET=//ml:pool_test "$GPUPLAN" run-under --plan "$SCRATCH/exclusive.json" --node ws-0 \
  --lock-dir "$SCRATCH/locks" sh -c "date +%s.%N >$SCRATCH/pool-start" || fail "pool_test failed"
wait "$holder"
/usr/bin/python3 -c "import sys; sys.exit(float(open('$SCRATCH/pool-start').read()) < float(open('$SCRATCH/exclusive-end').read()))" ||
  fail "a test on GPU 3 ran beside the exclusive test on GPU 2"

# A plan with no index (written to standard output, or copied without it): the first launch
# reads it whole and writes PLAN.index; the next one goes through the index; both hand out the
# same GPUs. A plan cut short is refused with its line and column, and gets no index.
cp "$PLAN" "$SCRATCH/bare.json"
for launch in first second; do
  got=$(TEST_TARGET=//ml:pool_test "$GPUPLAN" run-under --plan "$SCRATCH/bare.json" --node ws-0 \
          --lock-dir "$SCRATCH/locks" sh -c 'printf %s "$CUDA_VISIBLE_DEVICES"')
  [ "$got" = 3 ] || fail "the $launch launch of a plan without an index gave GPUs '$got', not 3"
  [ -s "$SCRATCH/bare.json.index" ] || fail "the $launch launch left no index next to the plan"
done
head -c 300 "$PLAN" >"$SCRATCH/cut.json"
TEST_TARGET=//ml:pool_test refuses "cut.json:[0-9]*:[0-9]*: not valid JSON" \
  run-under --plan "$SCRATCH/cut.json" --node ws-0 --lock-dir "$SCRATCH/locks" true
[ ! -e "$SCRATCH/cut.json.index" ] || fail "a plan cut short got an index"

# A plan whose folder takes no index (a read-only share; here PLAN.index is a folder) made every
# launch read the whole plan: 2 s and 92 MiB a test at 150k units. The first launch leaves the
# index in the lock directory, and the next one goes through it (the file is not made again).
mkdir -p "$SCRATCH/share/plan.json.index"
cp "$PLAN" "$SCRATCH/share/plan.json"
install -d -m 0700 "$SCRATCH/spare-locks"
for launch in first second; do
  got=$(TEST_TARGET=//ml:pool_test "$GPUPLAN" run-under --plan "$SCRATCH/share/plan.json" --node ws-0 \
          --lock-dir "$SCRATCH/spare-locks" sh -c 'printf %s "$CUDA_VISIBLE_DEVICES"')
  [ "$got" = 3 ] || fail "the $launch launch of a plan on a read-only share gave GPUs '$got', not 3"
  spare=$(ls "$SCRATCH"/spare-locks/plan-*.index 2>/dev/null) || fail "the $launch launch left no index in the lock directory"
  inode=$(stat -c %i "$spare")
  [ "$launch" = first ] && first_inode=$inode
done
[ "$inode" = "$first_inode" ] || fail "the second launch did not go through the lock directory's index"
# exec's default bazel test leaves it there before the first launch.
rm "$SCRATCH"/spare-locks/plan-*.index
mkdir -p "$SCRATCH/fakebin" && printf '#!/bin/sh\nexit 0\n' >"$SCRATCH/fakebin/bazel" && chmod +x "$SCRATCH/fakebin/bazel"
PATH="$SCRATCH/fakebin:$PATH" "$GPUPLAN" exec "$SCRATCH/share/plan.json" --node ws-0 --lock-dir "$SCRATCH/spare-locks" \
  --missing-gpus=warn >/dev/null 2>&1 || fail "exec with a stand-in bazel failed"
ls "$SCRATCH"/spare-locks/plan-*.index >/dev/null 2>&1 || fail "exec left no index for its launches"

# The default lock directory is this user's; one every user may write to is refused.
mkdir -p "$SCRATCH/open" && chmod 777 "$SCRATCH/open"
TEST_TARGET=//ml:pool_test refuses "writable by every user" run-under --plan "$PLAN" --node ws-0 --lock-dir "$SCRATCH/open" true
# The test command after --, as run-under's help writes it (refused before: "The following
# arguments were not expected"); a -- inside the command stays the command's.
got=$(TEST_TARGET='//a:it'"'"'s' "$GPUPLAN" run-under --plan "$HOSTILE_PLAN" --node ws-0 --lock-dir "$SCRATCH/locks" \
        -- sh -c 'printf "%s|" "$@"' sh a -- b) || fail "run-under -- COMMAND failed"
[ "$got" = "a|--|b|" ] || fail "run-under -- COMMAND ran '$got'"
# A GPU whose lock another process keeps (a test's daemon, another job's run-under) made the
# launch wait without a word until the CI job's timeout: it now says, after a minute (here 0.3
# s), which GPU it waits for and who holds it, and takes the GPU once it is let go.
# Once flock holds the lock: after a fixed 0.3 s, a loaded machine's run-under could take GPU 2
# first, wait for nothing and say nothing. Held 2 s from then, past the 0.3 s the launch waits.
flock "$SCRATCH/locks/gpu-2.lock" sh -c "touch '$SCRATCH/flocked'; sleep 2" &
holder=$!
for _ in $(seq 600); do [ -e "$SCRATCH/flocked" ] && break; sleep 0.1; done
[ -e "$SCRATCH/flocked" ] || fail "flock did not take GPU 2's lock"
GPUPLAN_LOCK_WAIT_SAY_AFTER_MS=300 TEST_TARGET=//ml:inference_test "$GPUPLAN" run-under --plan "$PLAN" --node ws-0 \
  --lock-dir "$SCRATCH/locks" true 2> "$SCRATCH/waited.err" || fail "run-under after a held lock: $(cat "$SCRATCH/waited.err")"
grep -q "^gpuplan: waiting for GPU 2 ($SCRATCH/locks/gpu-2.lock); it is held by pid $holder (flock " "$SCRATCH/waited.err" ||
  fail "no word of the held lock: $(cat "$SCRATCH/waited.err")"
wait "$holder"
echo PASS
