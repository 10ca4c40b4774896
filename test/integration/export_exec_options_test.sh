#!/usr/bin/env bash
# The exec options a team gives its jobs through an export reach each job's gpuplan exec, run as
# the job runs it: --missing-gpus=warn (every export) runs the units on a machine where NVML counts
# fewer GPUs than the plan uses, inside the default bazel test too, and --lock-dir (the CI exports)
# is where that exec and its run-under take their locks. Before, no export took either: exec's
# own message ("--missing-gpus=warn runs the units anyway") named an option no job could be given.
source test/integration/lib.sh
requires bazel jq python3
GPUPLAN=$(realpath "$GPUPLAN")
PLAN=$SOURCE_DIR/test/data/plans/workstation_ml.json  # ws-0's 10 units, on GPUs 0-3
export GPUPLAN_FAKE_NVML_GPUS=3                       # NVML's stand-in counts 3 GPUs here
LOCKS=$SCRATCH/shared-locks                           # a lock directory the runner's users share
install -d -m 0700 "$LOCKS"
mkdir -p "$SCRATCH/job"  # a fresh checkout: no gpuplan-results/ (the job makes it)

# ran_anyway OUT WHAT: the job's exec warned of GPU 3 and ran every unit.
ran_anyway() {
  grep -q 'warning: node ws-0: NVML sees 3 GPUs' "$1" && grep -q "$2" "$1" ||
    { cat "$1"; fail "the exported job's exec did not warn and run the units on a machine with 3 GPUs"; }
}

# GitHub Actions: the matrix entry's command, run as the job's shell runs it.
"$GPUPLAN" export github-matrix "$PLAN" --gpuplan "$GPUPLAN" --plan-path "$PLAN" --command true \
  --missing-gpus=warn --lock-dir "$LOCKS" >"$SCRATCH/matrix.json"
command=$(jq -r '.include[0].command' "$SCRATCH/matrix.json")
(cd "$SCRATCH/job" && bash -c "$command") >"$SCRATCH/github.out" 2>&1 ||
  { cat "$SCRATCH/github.out"; fail "the matrix job's exec --missing-gpus=warn failed: $command"; }
ran_anyway "$SCRATCH/github.out" '^10 units: 10 passed$'
[ "$(grep -c ',ws-0,' "$SCRATCH/job/gpuplan-results/ws-0.csv")" = 10 ] || fail "the matrix job left no results for the merge"
ls "$LOCKS"/gpu-3.lock >/dev/null 2>&1 || fail "the matrix job's exec took no lock in --lock-dir: $command"
# Without it the job stops, as exec does (the option is what changes it).
"$GPUPLAN" export github-matrix "$PLAN" --gpuplan "$GPUPLAN" --plan-path "$PLAN" --command true >"$SCRATCH/plain.json"
status=0
(cd "$SCRATCH/job" && bash -c "$(jq -r '.include[0].command' "$SCRATCH/plain.json")") >/dev/null 2>&1 || status=$?
[ "$status" = 2 ] || fail "without --missing-gpus the job's exec did not refuse GPU 3 (exit $status)"

# Slurm: the job script, run by bash as sbatch would (its #SBATCH lines are comments).
"$GPUPLAN" export slurm "$PLAN" -o "$SCRATCH/slurm" --gpuplan "$GPUPLAN" --command true --missing-gpus=warn \
  >/dev/null 2>&1 || fail "export slurm --missing-gpus=warn failed"
(cd "$SCRATCH/job" && bash "$SCRATCH/slurm/ws-0.sbatch") >"$SCRATCH/slurm.out" 2>&1 ||
  { cat "$SCRATCH/slurm.out"; fail "the Slurm job's exec --missing-gpus=warn failed"; }
ran_anyway "$SCRATCH/slurm.out" '^10 units: 10 passed$'

# Kubernetes, GitLab, Buildkite: the option is in the job's exec, before the bazel test's options.
"$GPUPLAN" export kubernetes "$PLAN" -o "$SCRATCH/k8s" --image x --missing-gpus=warn -- --config=cuda >/dev/null 2>&1 ||
  fail "export kubernetes --missing-gpus=warn failed"
/usr/bin/python3 - "$SCRATCH/k8s/gpuplan-ws-0.yaml" <<'PY' || fail "the Job's exec has no --missing-gpus=warn before --"
import sys, yaml
job = list(yaml.safe_load_all(open(sys.argv[1])))[1]
command = job["spec"]["template"]["spec"]["containers"][0]["command"]
assert command[1] == "exec" and command[-3:] == ["--missing-gpus=warn", "--", "--config=cuda"], command
PY
for kind in gitlab buildkite; do
  "$GPUPLAN" export $kind "$PLAN" --missing-gpus=warn --lock-dir /var/lock/gpuplan >"$SCRATCH/$kind.yml" 2>/dev/null ||
    fail "export $kind --missing-gpus=warn --lock-dir failed"
  grep -qF -- '--node ws-0 --results gpuplan-results/ws-0.csv --lock-dir /var/lock/gpuplan --missing-gpus=warn' \
    "$SCRATCH/$kind.yml" || fail "export $kind: the job's exec lacks --lock-dir or --missing-gpus=warn: $(cat "$SCRATCH/$kind.yml")"
done
# A relative lock directory is each job's checkout's own, shared with nobody.
refuses "an absolute path" export github-matrix "$PLAN" --lock-dir locks

# The default command: the matrix job's one real bazel test, whose run-under gets the option (and
# the lock directory) from exec; NVML's stand-in reaches the tests through --test_env.
bazel_wrapper "$SCRATCH/bin" --test_env=GPU_PROBE_LOG="$SCRATCH/probe.log" --sandbox_writable_path="$SCRATCH"
"$GPUPLAN" export github-matrix "$PLAN" --gpuplan "$GPUPLAN" --plan-path "$PLAN" --missing-gpus=warn \
  --lock-dir "$LOCKS" -- --test_env=GPUPLAN_FAKE_NVML_GPUS >"$SCRATCH/bazel-matrix.json"
command=$(jq -r '.include[0].command' "$SCRATCH/bazel-matrix.json")
(cd "$SCRATCH/job" && PATH=$SCRATCH/bin:$PATH bash -c "$command") >"$SCRATCH/bazel.out" 2>&1 ||
  { cat "$SCRATCH/bazel.out"; fail "the matrix job's bazel test refused the tests on GPU 3: $command"; }
ran_anyway "$SCRATCH/bazel.out" '^bazel test of 10 units: passed$'
[ "$(cat "$LOCKS/node")" = ws-0 ] || fail "the bazel test's run-under did not use --lock-dir $LOCKS"

# exec's GPUPLAN_NVML_LIBRARY reaches the run-under of its bazel test, whose environment is Bazel's:
# here a bazel that adds no --test_env of its own (bazel_ws does), as a team's has none. Before,
# run-under loaded no NVML there and left every record's gpu_touched and peak_vram_mib empty.
mkdir -p "$SCRATCH/plain-bin"
cat >"$SCRATCH/plain-bin/bazel" <<SH
#!/usr/bin/env bash
PATH=$(printf '%q' "$PATH")
command=\$1; shift
cd "$WORKSPACE" && exec bazel --output_user_root="$BAZEL_ROOT" --max_idle_secs=60 "\$command" \
  --override_repository=remote_coverage_tools="$STUBS/remote_coverage_tools" \
  --override_repository=rules_cc="$STUBS/rules_cc" --override_repository=rules_java="$STUBS/rules_java" \
  --test_env=GPU_PROBE_LOG="$SCRATCH/probe.log" --sandbox_writable_path="$SCRATCH" "\$@"
SH
chmod +x "$SCRATCH/plain-bin/bazel"
"$GPUPLAN" exec "$PLAN" --node ws-0 --dry-run | grep -q -- ' --test_env=GPUPLAN_NVML_LIBRARY --run_under=' ||
  fail "exec's bazel test does not pass GPUPLAN_NVML_LIBRARY on to its tests"
env -u GPUPLAN_NVML_LIBRARY "$GPUPLAN" exec "$PLAN" --node ws-0 --dry-run | grep -q GPUPLAN_NVML_LIBRARY &&
  fail "exec's bazel test names GPUPLAN_NVML_LIBRARY where exec has none"
(cd "$SCRATCH/job" && env -u GPUPLAN_FAKE_NVML_GPUS PATH="$SCRATCH/plain-bin:$PATH" "$GPUPLAN" exec "$PLAN" --node ws-0 \
  --lock-dir "$LOCKS" --results "$SCRATCH/nvml.csv" -- --test_env=GPU_PROBE_SLEEP=1.1) >"$SCRATCH/nvml.out" 2>&1 ||
  { cat "$SCRATCH/nvml.out"; fail "exec's bazel test with GPUPLAN_NVML_LIBRARY failed"; }
/usr/bin/python3 - "$SCRATCH/nvml.csv" <<'PY' || { cat "$SCRATCH/nvml.out"; fail "run-under in exec's bazel test loaded no NVML"; }
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert len(rows) == 10 and all(r["gpu_touched"] for r in rows), rows
PY
bazel_ws shutdown 2>/dev/null || true
