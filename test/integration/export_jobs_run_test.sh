#!/usr/bin/env bash
# Each export's jobs, run as their launcher runs them, in a fresh directory that holds only what the
# launcher puts there: the GitLab child pipeline's and the Buildkite pipeline's jobs and merge job
# (their script or command lines, artifacts passed on as the CI passes them), a Kubernetes Job's
# container (its ConfigMap mounted as the kubelet mounts one), a Slurm job script (SLURM_* set as
# sbatch sets them). Every job must run its node's units, leave its results where the merge job
# looks, and the merge job merge them. The jobs' own test had once made gpuplan-results/ itself,
# and hid that every CI job stopped at its start in a fresh checkout (exec makes no directory).
source test/integration/lib.sh
requires bazel python3
GPUPLAN=$(realpath "$GPUPLAN")
EXAMPLE=$SOURCE_DIR/test/data/plans/example.plan.json  # 16 units on 4 nodes of up to 8 GPUs
WS=$SOURCE_DIR/test/data/plans/workstation_ml.json     # ws-0's 10 units, the example workspace's
mkdir -p "$SCRATCH/bin" "$SCRATCH/bazel-bin"
ln -s "$GPUPLAN" "$SCRATCH/bin/gpuplan"  # the runner's gpuplan, on PATH as the exports' default
export PATH=$SCRATCH/bin:$PATH

# Buildkite's agent, for the steps' `artifact download PATTERN DEST`: the files of the build's
# artifact store ($BK_STORE) that match, at their paths under DEST; none is an error, as for the agent.
cat >"$SCRATCH/bin/buildkite-agent" <<'SH'
#!/usr/bin/env bash
set -euo pipefail
[ "$1 $2" = "artifact download" ] || { echo "fake buildkite-agent: $*" >&2; exit 1; }
found=0 dest=$(realpath "$4")
cd "$BK_STORE"
IFS=$'\n'
for f in $3; do [ -f "$f" ] || continue; mkdir -p "$dest/$(dirname "$f")"; cp "$f" "$dest/$f"; found=1; done
[ "$found" = 1 ] || { echo "fake buildkite-agent: no artifacts match $3" >&2; exit 1; }
SH
chmod +x "$SCRATCH/bin/buildkite-agent"

# The default command's bazel test: Debian's Bazel on the example workspace, offline.
bazel_wrapper "$SCRATCH/bazel-bin" --test_env=GPU_PROBE_LOG="$SCRATCH/probe.log" --sandbox_writable_path="$SCRATCH"

# ci_run.py KIND PIPELINE STORE ROOT: each job in ROOT/JOB, made empty, holding the artifacts the CI
# gives it from STORE (at first the parent's: the plan), its lines run by one bash -e, its own
# artifacts put in STORE. Prints "JOB STATUS" per job; exits 1 where one failed.
cat >"$SCRATCH/ci_run.py" <<'PY'
import glob, os, re, shutil, subprocess, sys, yaml

kind, pipeline, store, root = sys.argv[1:5]
doc = yaml.safe_load(open(pipeline))
failed = False
parent = [os.path.relpath(os.path.join(d, f), store) for d, _, fs in os.walk(store) for f in fs]

def run(name, script, env, artifacts, files):
    global failed
    job_dir = os.path.join(root, name)
    os.makedirs(job_dir)
    for rel in files:
        os.makedirs(os.path.dirname(os.path.join(job_dir, rel)) or job_dir, exist_ok=True)
        shutil.copy(os.path.join(store, rel), os.path.join(job_dir, rel))
    with open(os.path.join(root, name + ".out"), "w") as out:
        status = subprocess.call(["bash", "-e", "-o", "pipefail", "-c", script], cwd=job_dir,
                                 env=dict(os.environ, **env), stdout=out, stderr=subprocess.STDOUT)
    kept = []
    for pattern in artifacts:
        for path in glob.glob(os.path.join(job_dir, pattern)):
            rel = os.path.relpath(path, job_dir)
            os.makedirs(os.path.dirname(os.path.join(store, rel)), exist_ok=True)
            shutil.copy(path, os.path.join(store, rel))
            kept.append(rel)
    print(name, status)
    failed = failed or status != 0
    return kept

if kind == "gitlab":
    variables = {k: str(v) for k, v in (doc.pop("variables", None) or {}).items()}
    default = doc.pop("default", None) or {}
    stages = doc.pop("stages")
    earlier = []  # the earlier stages' artifacts, which a job without needs: gets
    for stage in stages:
        kept = []
        for name, job in doc.items():
            if name.startswith(".") or job.get("stage") != stage:
                continue
            files = list(earlier)
            if "needs" in job:  # only the parent's plan job, whose artifact is the plan
                assert [n["job"] for n in job["needs"]] == ["gpuplan-plan"], job["needs"]
                files = parent
            env = dict(variables, **{k: str(v) for k, v in (job.get("variables") or {}).items()})
            lines = (job.get("before_script") or default.get("before_script") or []) + job["script"]
            kept += run(name, "\n".join(lines), env, (job.get("artifacts") or {}).get("paths") or [], files)
        earlier += kept
else:
    def upload(text):  # pipeline upload: $$ is a $; any other $ would be the uploading job's variable
        assert "$" not in text.replace("$$", ""), text
        return text.replace("$$", "$")
    for step in doc["steps"]:
        if "wait" in step:
            continue
        lines = step["command"] if isinstance(step["command"], list) else [step["command"]]
        env = {k: upload(str(v)) for k, v in (step.get("env") or {}).items()}
        run(step["key"], "\n".join(upload(l) for l in lines), env, step.get("artifact_paths") or [], [])
sys.exit(1 if failed else 0)
PY

# merged STORE NODE=UNITS...: each node's results have its units, and the merge job's history all.
merged() {
  local store=$1 total=0 spec; shift
  for spec in "$@"; do
    [ "$(grep -c ",${spec%=*}," "$store/gpuplan-results/${spec%=*}.csv")" = "${spec#*=}" ] ||
      fail "the job of ${spec%=*} left not ${spec#*=} results in $store/gpuplan-results"
    total=$((total + ${spec#*=}))
  done
  /usr/bin/python3 -c 'import json, sys; h = json.load(open(sys.argv[1])); assert sum(len(u["seconds"]) for u in h["units"]) == int(sys.argv[2]), h' \
    "$store/gpuplan-results/history.json" "$total" || fail "the merge job's history.json lacks results: $store"
}

# ci KIND NAME PLAN PLAN-PATH EXPORT-OPTIONS...: export the pipeline and run it, the plan uploaded at PLAN-PATH.
ci() {
  local kind=$1 name=$2 plan=$3 plan_path=$4; shift 4
  local dir=$SCRATCH/$name
  mkdir -p "$dir/store/$(dirname "$plan_path")" "$dir/jobs"
  cp "$plan" "$dir/store/$plan_path"
  "$GPUPLAN" export "$kind" "$plan" --plan-path "$plan_path" "$@" >"$dir/pipeline.yml" 2>"$dir/export.err" ||
    { cat "$dir/export.err"; fail "export $kind $*"; }
  BK_STORE=$dir/store /usr/bin/python3 "$SCRATCH/ci_run.py" "$kind" "$dir/pipeline.yml" "$dir/store" "$dir/jobs" \
    >"$dir/jobs.txt" || { cat "$dir/jobs.txt" "$dir"/jobs/*.out; fail "a job of export $kind $* failed"; }
}

# --command with what each CI could take for its own: a $ (Buildkite's upload replaces $VAR), a
# quote, % (GitLab's tags take %VAR%), and a plan path with a space and a $.
# shellcheck disable=SC2016  # the $ are for the jobs' shells
command='test -n "$HOME" && echo "{unit} on {gpus}: $((6 * 7)) 100% \$" >/dev/null'
for kind in gitlab buildkite; do
  # shellcheck disable=SC2016
  ci $kind $kind-command "$EXAMPLE" 'my plans/plan$1.json' --command "$command"
  merged "$SCRATCH/$kind-command/store" a100-0=5 h100-0=4 h100-1=3 l4-0=4
  # The default command: one bazel test of the node's labels, run-under giving each its GPUs.
  PATH=$SCRATCH/bazel-bin:$PATH ci $kind $kind-bazel "$WS" plan.json
  grep -q '^bazel test of 10 units: passed$' "$SCRATCH/$kind-bazel/jobs/gpuplan-ws-0.out" ||
    { cat "$SCRATCH/$kind-bazel/jobs/gpuplan-ws-0.out"; fail "the $kind job's bazel test did not pass"; }
  merged "$SCRATCH/$kind-bazel/store" ws-0=10
done

# pod_run.py MANIFEST ROOT: the Job's container on this machine: each volume at its mountPath under
# ROOT (a ConfigMap's files through the kubelet's ..data links, read-only), absolute paths under a
# mount in command, args and env moved under ROOT, the env set, command + args run in ROOT/workdir.
cat >"$SCRATCH/pod_run.py" <<'PY'
import os, shlex, subprocess, sys, yaml

manifest, root = sys.argv[1:3]
docs = [d for d in yaml.safe_load_all(open(manifest)) if d]
maps = {d["metadata"]["name"]: d for d in docs if d["kind"] == "ConfigMap"}
pod = next(d for d in docs if d["kind"] == "Job")["spec"]["template"]["spec"]
container = pod["containers"][0]
volumes = {v["name"]: v for v in pod.get("volumes") or []}
mounts = container.get("volumeMounts") or []

def moved(value):
    for m in mounts:
        if value == m["mountPath"] or value.startswith(m["mountPath"].rstrip("/") + "/"):
            return root + value
    return value

for m in mounts:
    path, volume = root + m["mountPath"], volumes[m["name"]]
    os.makedirs(path, exist_ok=True)
    if "configMap" in volume:
        stamp = os.path.join(path, "..2026_01_01_00_00_00.000000000")
        os.makedirs(stamp)
        for name, text in maps[volume["configMap"]["name"]]["data"].items():
            with open(os.path.join(stamp, name), "w") as f:
                f.write(text)
            os.chmod(os.path.join(stamp, name), 0o444)
            os.symlink(os.path.join("..data", name), os.path.join(path, name))
        os.symlink(os.path.basename(stamp), os.path.join(path, "..data"))
        os.chmod(stamp, 0o555)
        if m.get("readOnly"):
            os.chmod(path, 0o555)
    else:
        assert "emptyDir" in volume or "persistentVolumeClaim" in volume, volume
env = {e["name"]: moved(str(e["value"])) for e in container.get("env") or []}
argv = [moved(a) for a in (container.get("command") or []) + (container.get("args") or [])]
workdir = root + container["workingDir"] if "workingDir" in container else os.path.join(root, "workdir")
os.makedirs(workdir, exist_ok=True)
sys.exit(subprocess.call(["bash", "-c", shlex.join(argv)], cwd=workdir, env=dict(os.environ, **env)))
PY
# pod NAME MANIFEST: run it; the mounts made read-only are made writable again for the cleanup.
pod() {
  local status=0
  /usr/bin/python3 "$SCRATCH/pod_run.py" "$2" "$SCRATCH/$1" >"$SCRATCH/$1.out" 2>&1 || status=$?
  chmod -R u+w "$SCRATCH/$1"
  [ "$status" = 0 ] || { cat "$SCRATCH/$1.out"; fail "the Job's container of $2 failed (exit $status)"; }
}
"$GPUPLAN" export kubernetes "$EXAMPLE" -o "$SCRATCH/k8s" --image x --command "$command" \
  --results-claim results >/dev/null 2>&1 || fail "export kubernetes --command"
pod pod-command "$SCRATCH/k8s/gpuplan-h100-1.yaml"
[ "$(grep -c ',h100-1,' "$SCRATCH/pod-command/var/lib/gpuplan/results/h100-1.csv")" = 3 ] ||
  { cat "$SCRATCH/pod-command.out"; fail "the Job left not 3 results on its results claim"; }
"$GPUPLAN" export kubernetes "$WS" -o "$SCRATCH/k8s-bazel" --image x >/dev/null 2>&1 || fail "export kubernetes"
PATH=$SCRATCH/bazel-bin:$PATH pod pod-bazel "$SCRATCH/k8s-bazel/gpuplan-ws-0.yaml"
grep -q '^bazel test of 10 units: passed$' "$SCRATCH/pod-bazel.out" ||
  { cat "$SCRATCH/pod-bazel.out"; fail "the Job's bazel test did not pass"; }

# Slurm: the job script run by bash where sbatch runs it (the submit directory, submit.sh's), with
# the variables sbatch sets, CUDA_VISIBLE_DEVICES the GPUs of --gres=gpu:4 among them.
"$GPUPLAN" export slurm "$WS" -o "$SCRATCH/slurm" >/dev/null 2>&1 || fail "export slurm"
(cd "$SCRATCH/slurm" && PATH=$SCRATCH/bazel-bin:$PATH SLURM_JOB_ID=4242 SLURM_JOBID=4242 SLURM_JOB_NAME=gpuplan-ws-0 \
  SLURMD_NODENAME=ws-0 SLURM_JOB_NODELIST=ws-0 SLURM_NODELIST=ws-0 SLURM_JOB_NUM_NODES=1 SLURM_NTASKS=1 \
  SLURM_SUBMIT_DIR="$SCRATCH/slurm" SLURM_JOB_GPUS=0,1,2,3 SLURM_GPUS_ON_NODE=4 CUDA_VISIBLE_DEVICES=0,1,2,3 \
  GPU_DEVICE_ORDINAL=0,1,2,3 bash ws-0.sbatch) >"$SCRATCH/slurm.out" 2>&1 ||
  { cat "$SCRATCH/slurm.out"; fail "the Slurm job script failed"; }
grep -q '^bazel test of 10 units: passed$' "$SCRATCH/slurm.out" ||
  { cat "$SCRATCH/slurm.out"; fail "the Slurm job's bazel test did not pass"; }
bazel_ws shutdown 2>/dev/null || true
