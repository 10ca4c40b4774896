#!/usr/bin/env bash
# bazel test --run_under="gpuplan run-under ..." on the example workspace: every sh_test sees
# the GPUs the plan gave it, no two tests hold a GPU at once, tests missing from the plan run
# without GPUs; then hostile labels reach run-under and run as themselves only.
source test/integration/lib.sh
requires bazel jq python3
GPUPLAN=$(realpath "$GPUPLAN")
PLAN=$SOURCE_DIR/test/data/plans/workstation_ml.json
LOG=$SCRATCH/probe.log
RESULTS=$SCRATCH/results.csv
: >"$LOG"

bazel_ws test //ml:all --test_tag_filters=-manual \
  --run_under="$GPUPLAN run-under --plan $PLAN --node ws-0 --lock-dir $SCRATCH/locks --results $RESULTS" \
  --local_test_jobs=4 --nocache_test_results --sandbox_writable_path="$SCRATCH" \
  --test_env=GPU_PROBE_LOG="$LOG" --test_env=GPU_PROBE_SLEEP=1 >"$SCRATCH/bazel.out" 2>&1 ||
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
from datetime import datetime
def span(r):
    start = datetime.fromisoformat(r["start"].replace("Z", "+00:00")).timestamp()
    return start, start + float(r["seconds"])
overlapped = False
for i, a in enumerate(rows):
    for b in rows[i + 1:]:
        (s1, e1), (s2, e2) = span(a), span(b)
        if s1 < e2 and s2 < e1:
            overlapped = True
            shared = set(filter(None, a["gpus"].split(","))) & set(filter(None, b["gpus"].split(",")))
            assert not shared, f"{a['label']} and {b['label']} held GPUs {shared} at the same time"
assert overlapped, "no two tests ran at the same time: --local_test_jobs=4 should run several"
PY

# Hostile labels: run-under finds them in the plan and runs the test command as given.
HOSTILE_PLAN=$SCRATCH/hostile.json
/usr/bin/python3 - "$PLAN" "$HOSTILE_PLAN" "$SCRATCH" <<'PY'
import json, sys
plan = json.load(open(sys.argv[1]))
labels = ["//a:x$(touch %s/pwned)" % sys.argv[3], "//a:x;touch %s/pwned" % sys.argv[3], "//a:it's",
          '//a:"q"', "//a:`touch %s/pwned`" % sys.argv[3]]
template = plan["assignments"][4]
plan["assignments"] = [dict(template, label=l, unit=l, gpus=[i % 4]) for i, l in enumerate(labels)]
json.dump(plan, open(sys.argv[2], "w"))
PY
i=0
while IFS= read -r label; do
  got=$(TEST_TARGET=$label "$GPUPLAN" run-under --plan "$HOSTILE_PLAN" --node ws-0 --lock-dir "$SCRATCH/locks" \
          sh -c 'printf "%s %s" "$TEST_TARGET" "$CUDA_VISIBLE_DEVICES"')
  [ "$got" = "$label $((i % 4))" ] || fail "run-under of '$label' printed '$got'"
  i=$((i + 1))
done < <(jq -r '.assignments[].label' "$HOSTILE_PLAN")
[ "$i" = 5 ] || fail "expected 5 hostile labels, ran $i"
[ ! -e "$SCRATCH/pwned" ] || fail "a label was run as a command"

# A test missing from the plan gets free GPUs by its tags from --query, or a clear refusal.
got=$(TEST_TARGET=//ml:cuda11_compat_test "$GPUPLAN" run-under --plan "$PLAN" --node ws-0 --lock-dir "$SCRATCH/locks" \
        --query examples/query.xml sh -c 'printf %s "$CUDA_VISIBLE_DEVICES"' 2>"$SCRATCH/note")
[ "$got" = 0 ] || fail "an unplanned 1-GPU test got GPUs '$got', not the lowest free one"
grep -q "cuda11_compat_test is not planned on ws-0; running it with free GPUs 0 found by its tags" "$SCRATCH/note" ||
  fail "no note on stderr for an unplanned test: $(cat "$SCRATCH/note")"
status=0
TEST_TARGET=//ml:allreduce_test "$GPUPLAN" run-under --plan "$PLAN" --node ws-0 --lock-dir "$SCRATCH/locks" \
  --query examples/query.xml true 2>"$SCRATCH/note" || status=$?
[ "$status" = 2 ] && grep -q "needs 8 GPUs" "$SCRATCH/note" || fail "an 8-GPU test on a 4-GPU node was not refused"

# A test still running holds its GPUs; killing run-under releases them.
TEST_TARGET=//ml:inference_test "$GPUPLAN" run-under --plan "$PLAN" --node ws-0 --lock-dir "$SCRATCH/locks" sleep 30 &
holder=$!
sleep 0.5
sleeper=$(pgrep -P "$holder")
if timeout 1 env TEST_TARGET=//ml:remote_exec_test "$GPUPLAN" run-under --plan "$PLAN" --node ws-0 \
     --lock-dir "$SCRATCH/locks" true; then
  fail "a second test got GPU 2 while the first held it"
fi
kill -KILL "$holder"
wait "$holder" 2>/dev/null || true
kill "$sleeper"
timeout 5 env TEST_TARGET=//ml:remote_exec_test "$GPUPLAN" run-under --plan "$PLAN" --node ws-0 \
  --lock-dir "$SCRATCH/locks" true || fail "GPU 2 was not released when its holder was killed"
echo PASS
