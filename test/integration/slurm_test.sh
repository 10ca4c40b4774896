#!/usr/bin/env bash
# gpuplan export slurm on a real Slurm cluster: starts a private one (two virtual nodes with
# fake GPUs), submits the exported jobs, waits, and checks from what the units saw that each
# ran on its planned node with its planned GPUs, and that no two overlapped on a GPU.
# Hostile labels and an output directory with quotes in its name ride along.
source test/integration/lib.sh
GPUPLAN=$(realpath "$GPUPLAN")
export PATH=$PATH:/usr/sbin:/sbin
requires python3 sbatch squeue slurmctld slurmd munged

export SLT_DIR=$SCRATCH/slurm
export SLT_NODES="ws-0:h100:4: ws-1:a100:2:"
export SLT_PARTITIONS="short:30"  # a 30-minute time limit
export SLT_CTLD_PORT=$((23000 + ($$ % 400) * 8))  # a private port range, 3 ports used
export SLURM_CONF=$SLT_DIR/etc/slurm.conf
START=$SOURCE_DIR/test/integration/slurm/start-local-slurm.sh
trap 'bash "$START" stop >/dev/null 2>&1 || true; rm -rf "$SCRATCH"' EXIT
bash "$START" 2>"$SCRATCH/start.log" || { cat "$SCRATCH/start.log"; fail "the local Slurm cluster did not start"; }

# The plan: ws-0's units from the fixture, and three hostile labels on ws-1.
PLAN=$SCRATCH/plan.json
/usr/bin/python3 - "$SOURCE_DIR/test/data/plans/workstation_ml.json" "$PLAN" "$SCRATCH" <<'PY'
import json, sys
plan = json.load(open(sys.argv[1]))
d = sys.argv[3]
template = dict(plan["assignments"][4], node="ws-1")
template["requirements"] = dict(template["requirements"], gpus=1)  # as each is placed
hostile = [f"//a:x$(touch {d}/pwned)", f"//a:x;touch {d}/pwned'\"", f"//a:`touch {d}/pwned`"]
plan["assignments"] += [dict(template, label=l, unit=l, gpus=[g], start_s=s, end_s=s + 60)
                        for l, g, s in zip(hostile, [0, 1, 0], [0, 0, 60])]
json.dump(plan, open(sys.argv[2], "w"))
PY

OUT="$SCRATCH/jobs 'x\$(touch $SCRATCH/pwned)"
LOG=$SCRATCH/units.log
RESULTS=$SCRATCH/results.csv
"$GPUPLAN" export slurm "$PLAN" -o "$OUT" --partition debug --gpuplan "$GPUPLAN" --results "$RESULTS" \
  --sbatch-line=--comment=gpuplan-test \
  --command "printf '%s|%s|%s|%s\\n' {unit} \"\$SLURMD_NODENAME\" \"\$CUDA_VISIBLE_DEVICES\" \"\$SLURM_JOB_GPUS\" >> '$LOG'; sleep 0.5" \
  >/dev/null || fail "export slurm failed"
[ -f "$OUT/ws-0.sbatch" ] && [ -f "$OUT/ws-1.sbatch" ] && [ -x "$OUT/submit.sh" ] || fail "scripts missing in $OUT"
# The copy of the plan comes with its index, which a launch then uses as it is (not made anew).
index=$(stat -c %i "$OUT/plan.json.index") || fail "export slurm wrote no plan.json.index"
install -d -m 0700 "$SCRATCH/locks"
got=$(TEST_TARGET=//ml:pool_test "$GPUPLAN" run-under --plan "$OUT/plan.json" --node ws-0 \
        --lock-dir "$SCRATCH/locks" sh -c 'printf %s "$CUDA_VISIBLE_DEVICES"')
[ "$got" = 3 ] || fail "a launch on the exported plan gave GPUs '$got', not 3"
[ "$(stat -c %i "$OUT/plan.json.index")" = "$index" ] || fail "the exported index was not used: a launch made another"

# With the fleet (exec --fleet may hand out any of the node's GPUs), a job asks for all of them:
# ws-1's plan uses GPUs 0 and 1 of its 4.
printf 'version: 1\npools:\n  - {name: ws, nodes: [ws-0, ws-1], gpu: {model: H100-SXM-80GB, count: 4}, cuda: "12.4", topology: pcie}\n' \
  > "$SCRATCH/ws4.yaml"
"$GPUPLAN" export slurm "$PLAN" -o "$SCRATCH/fleet-jobs" --fleet "$SCRATCH/ws4.yaml" >/dev/null ||
  fail "export slurm --fleet failed"
grep -qx '#SBATCH --gres=gpu:4' "$SCRATCH/fleet-jobs/ws-1.sbatch" && grep -qx '#SBATCH --gres=gpu:2' "$OUT/ws-1.sbatch" ||
  fail "with --fleet the ws-1 job should ask for its 4 GPUs: $(grep gres "$SCRATCH/fleet-jobs/ws-1.sbatch")"
# A fleet without the plan's nodes is bad input, named, and leaves no output directory behind.
status=0
"$GPUPLAN" export slurm "$PLAN" -o "$SCRATCH/no-jobs" --fleet "$SOURCE_DIR/examples/fleet.yaml" \
  >/dev/null 2>"$SCRATCH/fleet.err" || status=$?
[ "$status" = 2 ] && grep -q 'fleet.yaml: the plan has units on node "ws-0", which this fleet does not have' \
  "$SCRATCH/fleet.err" && [ ! -e "$SCRATCH/no-jobs" ] ||
  fail "export slurm with another fleet: exit $status, $(cat "$SCRATCH/fleet.err"), output left: $(ls "$SCRATCH/no-jobs" 2>&1)"

submit() {  # submit DIR [ARGS...]: runs DIR/submit.sh, waits for its jobs to end
  local dir=$1; shift
  "$dir/submit.sh" "$@" >"$SCRATCH/jobs" 2>"$SCRATCH/submit.err" || fail "submit.sh failed: $(cat "$SCRATCH/submit.err")"
  [ "$(cut -d' ' -f1 "$SCRATCH/jobs" | tr '\n' ' ')" = "ws-0 ws-1 " ] || fail "submit.sh printed $(cat "$SCRATCH/jobs")"
  local jobs
  jobs=$(cut -d' ' -f2 "$SCRATCH/jobs" | cut -d';' -f1 | paste -sd,)
  for _ in $(seq 600); do
    [ -z "$(squeue -h -j "$jobs" 2>/dev/null)" ] && break
    sleep 0.1
  done
  [ -z "$(squeue -h -j "$jobs" 2>/dev/null)" ] || fail "the jobs did not finish within 60 s"
}
submit "$OUT"

/usr/bin/python3 - "$PLAN" "$LOG" "$RESULTS" <<'PY' || { tail -n +1 "$OUT"/*.out; fail "the jobs did not run the plan"; }
import csv, json, sys
from datetime import datetime
plan, log, results = sys.argv[1:]
planned = {a["unit"]: a for a in json.load(open(plan))["assignments"]}
seen = {}
for line in open(log):
    unit, node, visible, job_gpus = line.rstrip("\n").rsplit("|", 3)
    assert unit not in seen, f"{unit} ran twice"
    seen[unit] = (node, visible, job_gpus)
assert set(seen) == set(planned), f"ran {sorted(seen)}, planned {sorted(planned)}"
for unit, (node, visible, job_gpus) in seen.items():
    a = planned[unit]
    gpus = ",".join(map(str, a["gpus"]))
    assert node == a["node"], f"{unit} ran on {node}, planned on {a['node']}"
    assert visible == gpus, f"{unit} saw GPUs {visible}, planned {gpus}"
    assert set(a["gpus"]) <= set(map(int, job_gpus.split(","))), f"{unit}: job holds GPUs {job_gpus} only"
rows = list(csv.DictReader(open(results)))
assert len(rows) == len(planned) and all(r["exit_status"] == "0" for r in rows), rows
def span(r):
    start = datetime.fromisoformat(r["start"].replace("Z", "+00:00")).timestamp()
    return start, start + float(r["seconds"])
for i, a in enumerate(rows):
    for b in rows[i + 1:]:
        (s1, e1), (s2, e2) = span(a), span(b)
        shared = set(a["gpus"].split(",")) & set(b["gpus"].split(","))
        # start and seconds are each written in whole milliseconds: spans may touch by 1 ms.
        slack = 0.002
        assert not (a["node"] == b["node"] and shared and s1 < e2 - slack and s2 < e1 - slack), \
            f"{a} and {b} overlapped on a GPU"
PY
[ ! -e "$SCRATCH/pwned" ] || fail "a label or path was run as a command"

# Dynamic execution: the jobs of one submission share a claims directory of their own, so the
# same scripts submitted again run every unit again (in the directory an earlier submission
# left, they ran nothing and passed).
# The claims path is hostile too: submit.sh names it in a message.
CLAIMS="$SCRATCH/claims 'x\$(touch $SCRATCH/pwned)\"\`touch $SCRATCH/pwned\`"
"$GPUPLAN" export slurm "$PLAN" -o "$SCRATCH/claims-jobs" --partition debug --gpuplan "$GPUPLAN" \
  --claims "$CLAIMS" --command "echo {unit} >> '$SCRATCH/claims.log'" >/dev/null || fail "export slurm --claims failed"
submit "$SCRATCH/claims-jobs"
submit "$SCRATCH/claims-jobs" ci-run-2
[ "$(ls "$CLAIMS" | wc -l)" = 2 ] && [ -e "$CLAIMS/ci-run-2/plan.stamp" ] && [ ! -e "$SCRATCH/pwned" ] ||
  fail "two submissions did not get two claims directories: $(ls "$CLAIMS")"
/usr/bin/python3 - "$PLAN" "$SCRATCH/claims.log" <<'PY' || { tail -n +1 "$SCRATCH"/claims-jobs/*.out; fail "a submission did not run every unit once"; }
import collections, json, sys
planned = {a["unit"] for a in json.load(open(sys.argv[1]))["assignments"]}
ran = collections.Counter(line.rstrip("\n") for line in open(sys.argv[2]))
assert set(ran) == planned and set(ran.values()) == {2}, ran
PY

# A partition's time limit: submit.sh reads it with sinfo before it submits anything. Before, a job
# asking for more pended for ever (PartitionTimeLimit) and submit.sh exited 0. ws-0 planned to end
# at 20 minutes asks for 35 (× 1.5 + 5): over the short partition's 30, but its 25 fit, so it is
# submitted with --time=30 and runs; planned for 30 minutes (35 with the startup) nothing is submitted.
for end in 1200 1800; do
  /usr/bin/python3 - "$PLAN" "$SCRATCH/long-$end.json" "$end" <<'PY'
import json, sys
plan = json.load(open(sys.argv[1]))
ws0 = [a for a in plan["assignments"] if a["node"] == "ws-0"]
scale = float(sys.argv[3]) / max(a["end_s"] for a in ws0)  # ws-0 ends at the time given
for a in ws0:
    a["start_s"], a["end_s"] = a["start_s"] * scale, a["end_s"] * scale
json.dump(plan, open(sys.argv[2], "w"))
PY
  "$GPUPLAN" export slurm "$SCRATCH/long-$end.json" -o "$SCRATCH/short-$end" --partition short --gpuplan "$GPUPLAN" \
    --command true > /dev/null || fail "export slurm --partition short failed"
done
submit "$SCRATCH/short-1200"
grep -q "^submit.sh: ws-0's job asks for --time=0-00:35:00, over the time limit 0-00:30:00 of partition short: it is submitted with --time=0-00:30:00" \
  "$SCRATCH/submit.err" || fail "submit.sh did not say it gave ws-0's job the partition's limit: $(cat "$SCRATCH/submit.err")"
job=$(awk '$1 == "ws-0" { print $2 }' "$SCRATCH/jobs")
scontrol show job "$job" | grep -q 'TimeLimit=00:30:00' || fail "ws-0's job: $(scontrol show job "$job")"
before=$(squeue -h | wc -l)
status=0
"$SCRATCH/short-1800/submit.sh" > "$SCRATCH/jobs" 2> "$SCRATCH/short.err" || status=$?
[ "$status" = 1 ] && [ ! -s "$SCRATCH/jobs" ] && [ "$(squeue -h | wc -l)" = "$before" ] &&
  grep -q "^submit.sh: node ws-0's units are planned to take 0-00:30:00, which with --startup 0-00:05:00 is over the time limit 0-00:30:00 of partition short" \
    "$SCRATCH/short.err" || fail "submit.sh over the partition's limit: exit $status, $(cat "$SCRATCH/jobs" "$SCRATCH/short.err")"

# A drained node: submit.sh reads each node's state with sinfo first. Before, its job pended for
# ever (ReqNodeNotAvail) and submit.sh exited 0, so a CI step waiting for the jobs hung. Without
# --claims nothing is submitted (exit 1, naming the node); with --claims and --fleet its job is not
# submitted, and ws-0's job runs its units. No job is requeued after its node fails (it ran its
# units again, or waited for the node).
grep -qx '#SBATCH --no-requeue' "$OUT/ws-0.sbatch" || fail "the job scripts would be requeued: $(cat "$OUT/ws-0.sbatch")"
"$GPUPLAN" export slurm "$PLAN" -o "$SCRATCH/drain-jobs" --partition debug --gpuplan "$GPUPLAN" \
  --claims "$SCRATCH/drain-claims" --fleet "$SCRATCH/ws4.yaml" --command "echo {unit} >> '$SCRATCH/drain.log'" \
  >/dev/null || fail "export slurm --claims --fleet failed"
scontrol update nodename=ws-1 state=drain reason=gpuplan-test || fail "cannot drain ws-1"
before=$(squeue -h | wc -l)
status=0
"$OUT/submit.sh" >"$SCRATCH/jobs" 2>"$SCRATCH/drain.err" || status=$?
[ "$status" = 1 ] && [ ! -s "$SCRATCH/jobs" ] && [ "$(squeue -h | wc -l)" = "$before" ] &&
  grep -q "^submit.sh: node ws-1 is drain.* (sinfo): its job would pend until the node is back" "$SCRATCH/drain.err" ||
  fail "submit.sh with ws-1 drained: exit $status, $(cat "$SCRATCH/jobs" "$SCRATCH/drain.err")"
"$SCRATCH/drain-jobs/submit.sh" >"$SCRATCH/jobs" 2>"$SCRATCH/drain.err" || fail "submit.sh --claims: $(cat "$SCRATCH/drain.err")"
[ "$(cut -d' ' -f1 "$SCRATCH/jobs")" = ws-0 ] &&
  grep -q "^submit.sh: warning: node ws-1 is drain.* (sinfo): its job is not submitted" "$SCRATCH/drain.err" ||
  fail "submit.sh --claims with ws-1 drained: $(cat "$SCRATCH/jobs" "$SCRATCH/drain.err")"
job=$(cut -d' ' -f2 "$SCRATCH/jobs" | cut -d';' -f1)
for _ in $(seq 600); do [ -z "$(squeue -h -j "$job" 2>/dev/null)" ] && break; sleep 0.1; done
[ -z "$(squeue -h -j "$job" 2>/dev/null)" ] || fail "ws-0's job did not finish within 60 s"
scontrol update nodename=ws-1 state=resume
/usr/bin/python3 - "$PLAN" "$SCRATCH/drain.log" <<'PY' || { tail -n +1 "$SCRATCH"/drain-jobs/*.out; fail "ws-0 did not run the drained node's units"; }
import collections, json, sys
planned = {a["unit"] for a in json.load(open(sys.argv[1]))["assignments"]}
ran = collections.Counter(line.rstrip("\n") for line in open(sys.argv[2]))
assert set(ran) == planned and set(ran.values()) == {1}, ran
PY
echo PASS
