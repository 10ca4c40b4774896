# The exports as a user wires them in: Kubernetes Jobs checked against the official schemas
# (kubernetes-models: types and every field name), a GitHub workflow that uses the matrix
# checked by action-validator, a GitLab child pipeline against GitLab's CI schema, a Buildkite
# pipeline against its documented step format. Validators are npm packages pinned in
# test/integration/npm/, installed once into the build directory.
source test/integration/lib.sh
source test/integration/npm_tools.sh
requires node npm jq xmllint
npm_tools
M=$NPM_TOOLS/node_modules
PLAN=test/data/plans/example.plan.json
FLEET=test/data/plans/fleet.yaml
nodes=$(jq '[.assignments[].node] | unique | length' "$PLAN")

# Kubernetes: a Job and a ConfigMap per node, valid, pinned, asking for the whole node's GPUs.
"$GPUPLAN" export kubernetes "$PLAN" -o "$SCRATCH/k8s" --image registry.example.com/ci/gpuplan:1 \
  --fleet "$FLEET" --namespace ci --service-account runner --priority-class batch-high \
  --toleration nvidia.com/gpu:NoSchedule --toleration dedicated=gpu:NoExecute --label team=ml \
  --results-claim gpuplan-results --command 'bazel test {label}' > "$SCRATCH/k8s.out" 2> "$SCRATCH/k8s.err"
# Every node's Job mounts the claim at once: a ReadWriteOnce one leaves all but one waiting.
grep -q "mount the PersistentVolumeClaim gpuplan-results at once, so it must be ReadWriteMany" "$SCRATCH/k8s.err" ||
  fail "no word that the results claim must be ReadWriteMany: $(cat "$SCRATCH/k8s.err")"
[ "$(ls "$SCRATCH/k8s" | wc -l)" -eq "$nodes" ] || fail "not one manifest file per node"
node test/integration/validate_k8s.mjs "$M" "$SCRATCH"/k8s/*.yaml > "$SCRATCH/k8s.check" ||
  fail "manifests fail the Kubernetes schemas: $(cat "$SCRATCH/k8s.check")"
[ "$(grep -c '^ok batch/v1/Job' "$SCRATCH/k8s.check")" -eq "$nodes" ] || fail "not $nodes valid Jobs"
node -e '
  const Y = require(process.argv[1] + "/yaml");
  const docs = Y.parseAllDocuments(require("fs").readFileSync(process.argv[2], "utf8")).map(d => d.toJS());
  console.log(JSON.stringify(docs));' "$M" "$SCRATCH/k8s/gpuplan-h100-0.yaml" > "$SCRATCH/h100-0.json"
j() { jq -r "$1" "$SCRATCH/h100-0.json"; }
[ "$(j '.[1].spec.template.spec.nodeSelector["kubernetes.io/hostname"]')" = h100-0 ] || fail "Job not pinned to its node"
[ "$(j '.[1].spec.template.spec.containers[0].resources.limits["nvidia.com/gpu"]')" = 8 ] ||
  fail "the Job does not ask for all 8 GPUs of h100-0"
end=$(jq '[.assignments[] | select(.node == "h100-0") | .end_s] | max' "$PLAN")
[ "$(j '.[1].spec.activeDeadlineSeconds')" = "$(jq -n "($end * 1.5 | ceil) + 300")" ] || fail "deadline is not end × 1.5 + 300"
[ "$(j '.[1].spec.template.spec.containers[0].command | join(" ")')" = \
  "gpuplan exec /etc/gpuplan/plan.json --node h100-0 --command bazel test {label} --results /var/lib/gpuplan/results/h100-0.csv" ] ||
  fail "the Job does not run gpuplan exec for its node: $(j '.[1].spec.template.spec.containers[0].command')"
# /dev/shm: the runtime's 64 MiB failed NCCL and DataLoader workers; a memory-backed emptyDir there.
[ "$(j '.[1].spec.template.spec as $p | $p.containers[0].volumeMounts[] | select(.mountPath == "/dev/shm") | .name as $n |
      $p.volumes[] | select(.name == $n) | .emptyDir.medium')" = Memory ] ||
  fail "the Job's /dev/shm is not a memory-backed emptyDir"
# The ConfigMap's plan is a plan gpuplan reads, holding exactly the node's units.
j '.[0].data["plan.json"]' > "$SCRATCH/slice.json"
"$GPUPLAN" exec "$SCRATCH/slice.json" --node h100-0 --command "bazel test {label}" --dry-run > "$SCRATCH/slice.dry"
"$GPUPLAN" exec "$PLAN" --node h100-0 --command "bazel test {label}" --dry-run > "$SCRATCH/full.dry"
cmp -s "$SCRATCH/slice.dry" "$SCRATCH/full.dry" || fail "exec on the ConfigMap's plan differs from the whole plan"
# Bad options: exit 2, nothing written.
refuses '--label' export kubernetes "$PLAN" -o "$SCRATCH/bad" --image x --label 'not a label=1'

# GitHub Actions: the workflow from the README, and one with the exported matrix inline.
"$GPUPLAN" export github-matrix "$PLAN" --fleet "$FLEET" > "$SCRATCH/matrix.json"
# The team's bazel test options after -- reach every job's exec (its default command takes them).
"$GPUPLAN" export github-matrix "$PLAN" -- --config=cuda |
  jq -e '[.include[].command | endswith(" -- --config=cuda")] | all' >/dev/null ||
  fail "the options after -- are not in every job's exec"
[ "$(wc -l < "$SCRATCH/matrix.json")" -eq 1 ] || fail "the matrix is not one line (for \$GITHUB_OUTPUT)"
[ "$(jq '.include | length' "$SCRATCH/matrix.json")" -eq "$nodes" ] || fail "not one matrix entry per node"
[ "$(jq '[.include[].unit_count] | add' "$SCRATCH/matrix.json")" -eq "$(jq '.assignments | length' "$PLAN")" ] ||
  fail "the matrix entries do not add up to the plan's units"
mkdir -p "$SCRATCH/wf"
cp examples/ci/github-workflow.yml "$SCRATCH/wf/readme.yml"
jq --slurpfile m "$SCRATCH/matrix.json" -n '{name: "gpu", on: ["push"], jobs: {gpu: {
  name: "gpu tests on ${{ matrix.node }}", strategy: {"fail-fast": false, matrix: $m[0]}, "runs-on": "${{ matrix.runs-on }}",
  "timeout-minutes": "${{ matrix.timeout-minutes }}", steps: [{run: "${{ matrix.command }}"}]}}}' \
  > "$SCRATCH/wf/inline.yml"
for wf in readme inline; do
  node "$M/@action-validator/cli/cli.mjs" "$SCRATCH/wf/$wf.yml" > "$SCRATCH/$wf.check" ||
    fail "action-validator rejects the $wf workflow: $(head -40 "$SCRATCH/$wf.check")"
done

# GitLab and Buildkite.
"$GPUPLAN" export gitlab "$PLAN" --fleet "$FLEET" --tag gpu -o "$SCRATCH/gitlab.yml"
node test/integration/validate_ci.mjs "$M" gitlab "$SCRATCH/gitlab.yml" > "$SCRATCH/gitlab.check" ||
  fail "GitLab's schema rejects the child pipeline: $(cat "$SCRATCH/gitlab.check")"
node test/integration/validate_ci.mjs "$M" gitlab examples/ci/gitlab-ci.yml > "$SCRATCH/gitlab-readme.check" ||
  fail "GitLab's schema rejects the README's parent pipeline: $(cat "$SCRATCH/gitlab-readme.check")"
"$GPUPLAN" export buildkite "$PLAN" --tag queue=gpu -o "$SCRATCH/buildkite.yml"
node test/integration/validate_ci.mjs "$M" buildkite "$SCRATCH/buildkite.yml" > "$SCRATCH/bk.check" ||
  fail "the Buildkite pipeline does not follow the documented format: $(cat "$SCRATCH/bk.check")"
# A validator that accepts anything proves nothing: each must reject a broken file.
sed 's/^  stage: gpu-test/  stagez: gpu-test/' "$SCRATCH/gitlab.yml" > "$SCRATCH/gitlab-bad.yml"
! node test/integration/validate_ci.mjs "$M" gitlab "$SCRATCH/gitlab-bad.yml" > /dev/null || fail "GitLab check accepts junk"
sed 's/timeout_in_minutes/timeout_minutes/' "$SCRATCH/buildkite.yml" > "$SCRATCH/bk-bad.yml"
! node test/integration/validate_ci.mjs "$M" buildkite "$SCRATCH/bk-bad.yml" > /dev/null || fail "Buildkite check accepts junk"
sed 's/"runs-on"/"runs_on"/' "$SCRATCH/wf/inline.yml" > "$SCRATCH/wf/bad.yml"
! node "$M/@action-validator/cli/cli.mjs" "$SCRATCH/wf/bad.yml" > /dev/null 2>&1 || fail "action-validator accepts junk"
sed 's/restartPolicy/restartPolicyy/' "$SCRATCH/k8s/gpuplan-h100-0.yaml" > "$SCRATCH/k8s-bad.yaml"
! node test/integration/validate_k8s.mjs "$M" "$SCRATCH/k8s-bad.yaml" > /dev/null || fail "the Kubernetes check accepts junk"
# exec --junit: one testcase per unit that ran, failures counted, well-formed XML.
units=$(jq '[.assignments[] | select(.node == "l4-0")] | length' "$PLAN")
"$GPUPLAN" exec "$PLAN" --node l4-0 --command 'case {label} in *inference*) exit 1;; esac' \
  --junit "$SCRATCH/junit.xml" > /dev/null 2>&1 || true
xmllint --noout "$SCRATCH/junit.xml" || fail "exec's JUnit is not well-formed XML"
[ "$(grep -c '<testcase ' "$SCRATCH/junit.xml")" -eq "$units" ] || fail "JUnit does not have $units testcases"
[ "$(grep -c '<failure ' "$SCRATCH/junit.xml")" -eq \
  "$(jq '[.assignments[] | select(.node == "l4-0" and (.label | test("inference")))] | length' "$PLAN")" ] ||
  fail "JUnit does not count the failed units"
# exec --json: every unit with its node, GPUs, start, duration and outcome, and the totals.
"$GPUPLAN" exec "$PLAN" --node l4-0 --command 'case {label} in *inference*) exit 1;; esac' \
  --json "$SCRATCH/exec.json" > /dev/null 2>&1 || true
failed=$(jq '[.assignments[] | select(.node == "l4-0" and (.label | test("inference")))] | length' "$PLAN")
jq -e --argjson units "$units" --argjson failed "$failed" '.node == "l4-0" and (.units | length) == $units
  and .totals.units == $units and .totals.failed == $failed and .totals.passed == $units - $failed
  and all(.units[]; .duration_s >= 0 and .start_s >= 0 and (.gpus | length) > 0 and .node == "l4-0")
  and ([.units[] | select(.outcome == "failed") | .exit_status] | all(. == 1))' "$SCRATCH/exec.json" \
  > /dev/null || fail "exec --json does not report what ran: $(cat "$SCRATCH/exec.json")"

# Slurm's submit.sh stops with a non-zero exit when an sbatch fails: a failure inside printf's
# arguments did not stop `set -e`, so the node's units never ran and the script exited 0.
"$GPUPLAN" export slurm "$PLAN" -o "$SCRATCH/slurm" > /dev/null
mkdir -p "$SCRATCH/fakebin"
printf '#!/bin/sh\ncase "$2" in h100-0*) exit 1;; esac\necho 42\n' > "$SCRATCH/fakebin/sbatch"
# A stand-in sinfo: prints $FAKE_SINFO (nothing: submit.sh says it checked no time limit) and logs
# its options.
printf '#!/bin/sh\necho "$*" >> "${FAKE_LOG:-/dev/null}"\nprintf "%%b" "${FAKE_SINFO:-}"\n' > "$SCRATCH/fakebin/sinfo"
chmod +x "$SCRATCH/fakebin/sbatch" "$SCRATCH/fakebin/sinfo"
status=0
PATH="$SCRATCH/fakebin:$PATH" sh "$SCRATCH/slurm/submit.sh" > "$SCRATCH/submitted" 2> "$SCRATCH/submit.err" || status=$?
[ "$status" = 1 ] && grep -q 'sbatch h100-0.sbatch failed' "$SCRATCH/submit.err" ||
  fail "submit.sh with a failing sbatch: exit $status, $(cat "$SCRATCH/submitted" "$SCRATCH/submit.err")"
grep -q '^a100-0 42$' "$SCRATCH/submitted" || fail "submit.sh did not print the job it submitted first"

# submit.sh reads the partition's time limit before it submits anything (a job asking for more
# pends for ever, PartitionTimeLimit, and submit.sh exited 0): a job over the limit whose planned
# time and startup fit is submitted with --time at the limit, said; one that does not fit stops
# every submission (exit 1, naming it).
# The jobs ask for ((planned end + a flaky unit's reruns) × 1.5 + 300 s): a100-0 58 min, h100-0 47,
# h100-1 43, l4-0 20; their planned end and startup alone: h100-0 33 min, a100-0 and h100-1 30, l4-0 15.
"$GPUPLAN" export slurm "$PLAN" -o "$SCRATCH/slurm-short" --partition short > /dev/null
printf '#!/bin/sh\necho "$*" >> "$FAKE_LOG"\necho 42\n' > "$SCRATCH/fakebin/sbatch"
submit_with() {  # submit_with SINFO_OUTPUT DIR: runs DIR/submit.sh, its exit status in $status
  : > "$SCRATCH/fake.log"
  status=0
  FAKE_SINFO=$1 FAKE_LOG=$SCRATCH/fake.log PATH="$SCRATCH/fakebin:$PATH" sh "$2/submit.sh" \
    > "$SCRATCH/submitted" 2> "$SCRATCH/submit.err" || status=$?
}
submit_with '40:00\n' "$SCRATCH/slurm-short"  # MM:SS
[ "$status" = 0 ] && [ "$(grep -c '^--parsable --time=40 ' "$SCRATCH/fake.log")" = 3 ] &&
  grep -q '^--parsable l4-0.sbatch$' "$SCRATCH/fake.log" && grep -q '^-h -p short -o %l$' "$SCRATCH/fake.log" &&
  grep -q "^submit.sh: h100-0's job asks for --time=0-00:47:00, over the time limit 0-00:40:00 of partition short: it is submitted with --time=0-00:40:00, which holds its planned 0-00:28:00 and --startup 0-00:05:00" \
    "$SCRATCH/submit.err" || fail "submit.sh under a 40-minute limit: exit $status, $(cat "$SCRATCH/fake.log" "$SCRATCH/submit.err")"
submit_with '0:32:00\n' "$SCRATCH/slurm-short"  # H:MM:SS: h100-0 needs 33 minutes
[ "$status" = 1 ] && ! grep -q parsable "$SCRATCH/fake.log" && [ ! -s "$SCRATCH/submitted" ] &&
  grep -q "^submit.sh: node h100-0's units are planned to take 0-00:28:00, which with --startup 0-00:05:00 is over the time limit 0-00:32:00 of partition short: Slurm would leave its job pending for ever (PartitionTimeLimit). Plan for more nodes" \
    "$SCRATCH/submit.err" && grep -q '^submit.sh: nothing was submitted$' "$SCRATCH/submit.err" &&
  [ "$(grep -c "planned to take" "$SCRATCH/submit.err")" = 1 ] ||
  fail "submit.sh under a 32-minute limit: exit $status, $(cat "$SCRATCH/fake.log" "$SCRATCH/submit.err")"
for limit in '1-00:00:00' '0-01' 'infinite' 'UNLIMITED' '58:00'; do  # D-HH:MM:SS, D-HH, none, a fit
  submit_with "$limit\n" "$SCRATCH/slurm-short"
  [ "$status" = 0 ] && [ "$(grep -c '^--parsable [a-z0-9-]*.sbatch$' "$SCRATCH/fake.log")" = 4 ] && [ ! -s "$SCRATCH/submit.err" ] ||
    fail "submit.sh under the limit $limit: exit $status, $(cat "$SCRATCH/fake.log" "$SCRATCH/submit.err")"
done
# Without --partition, the default partition's limit: the one sinfo marks with '*'.
submit_with 'long 1-00:00:00\ndebug* 40:00\n' "$SCRATCH/slurm"
[ "$status" = 0 ] && [ "$(grep -c '^--parsable --time=40 ' "$SCRATCH/fake.log")" = 3 ] &&
  grep -q "^-h -o %P %l$" "$SCRATCH/fake.log" && grep -q "time limit 0-00:40:00 of partition debug:" "$SCRATCH/submit.err" ||
  fail "submit.sh under the default partition's limit: exit $status, $(cat "$SCRATCH/fake.log" "$SCRATCH/submit.err")"
# sinfo that says nothing, or none at all: submitted as before, with one line saying so.
submit_with '' "$SCRATCH/slurm-short"
[ "$status" = 0 ] && [ "$(grep -c 'parsable' "$SCRATCH/fake.log")" = 4 ] &&
  [ "$(cat "$SCRATCH/submit.err")" = "submit.sh: sinfo gave no time limit for partition short: the jobs' --time was not checked against it" ] ||
  fail "submit.sh with a silent sinfo: exit $status, $(cat "$SCRATCH/submit.err")"
mkdir -p "$SCRATCH/nosinfo"
ln -s "$SCRATCH/fakebin/sbatch" "$(command -v dirname)" "$(command -v awk)" "$SCRATCH/nosinfo/"
: > "$SCRATCH/fake.log"
status=0
FAKE_LOG=$SCRATCH/fake.log PATH="$SCRATCH/nosinfo" /bin/sh "$SCRATCH/slurm-short/submit.sh" > /dev/null 2> "$SCRATCH/submit.err" ||
  status=$?
[ "$status" = 0 ] && [ "$(grep -c 'parsable' "$SCRATCH/fake.log")" = 4 ] &&
  [ "$(cat "$SCRATCH/submit.err")" = "submit.sh: sinfo is not available: the jobs' --time was not checked against the partition's time limit" ] ||
  fail "submit.sh without sinfo: exit $status, $(cat "$SCRATCH/submit.err")"

# --version names the commit the binary was built from (a CI log then says what ran).
"$GPUPLAN" --version | grep -qE '^gpuplan [0-9.]+ \(commit ([0-9a-f]{12}(-dirty)?|unknown)\)$' ||
  fail "--version does not name the commit: $("$GPUPLAN" --version)"
# An export into the folder of an earlier one: kubectl apply -f DIR would run the earlier plan's
# Jobs for nodes this plan does not use, so those (and only gpuplan's) are removed, and said.
cp "$SCRATCH/k8s/gpuplan-h100-0.yaml" "$SCRATCH/k8s/gpuplan-gone-0.yaml"
echo "apiVersion: v1" > "$SCRATCH/k8s/team.yaml"
"$GPUPLAN" export kubernetes "$PLAN" -o "$SCRATCH/k8s" --image x > "$SCRATCH/k8s-again.out" ||
  fail "export kubernetes into an earlier export's folder failed"
[ ! -e "$SCRATCH/k8s/gpuplan-gone-0.yaml" ] && [ -e "$SCRATCH/k8s/team.yaml" ] &&
  grep -q "removed 1 manifest(s) an earlier export wrote for nodes this plan does not use: gpuplan-gone-0.yaml" \
    "$SCRATCH/k8s-again.out" || fail "an earlier export's manifest was kept, or another file removed: $(ls "$SCRATCH/k8s")"

# Slurm too: an earlier export's job script for a node this plan does not use is removed (a loop
# over *.sbatch would run it), a file gpuplan did not write is not; before, both stayed.
sed 's/h100-0/gone-0/g' "$SCRATCH/slurm/h100-0.sbatch" > "$SCRATCH/slurm/gone-0.sbatch"
printf '#!/bin/bash\n# the team'"'"'s own job\n' > "$SCRATCH/slurm/team.sbatch"
"$GPUPLAN" export slurm "$PLAN" -o "$SCRATCH/slurm" > "$SCRATCH/slurm-again.out" ||
  fail "export slurm into an earlier export's folder failed"
[ ! -e "$SCRATCH/slurm/gone-0.sbatch" ] && [ -e "$SCRATCH/slurm/team.sbatch" ] &&
  grep -q "removed 1 job script(s) an earlier export wrote for nodes this plan does not use: gone-0.sbatch" \
    "$SCRATCH/slurm-again.out" || fail "an earlier export's job script was kept, or another file removed: $(ls "$SCRATCH/slurm")"

# The files of an export appear together or not at all. What a folder holds: names, kinds, modes
# and contents.
snapshot() { (cd "$1" && find . -printf '%p %y %m\n' | sort && find . -type f -exec md5sum {} + | sort); }
# A directory where a later file goes: refused (exit 2) before any file is replaced, nothing new
# appears and an earlier export (with its manifest of a node this plan does not use) stays as it
# was. Before, the manifests before it were replaced and the old one removed.
"$GPUPLAN" export kubernetes "$PLAN" -o "$SCRATCH/whole-k8s" --image x > /dev/null
cp "$SCRATCH/whole-k8s/gpuplan-h100-0.yaml" "$SCRATCH/whole-k8s/gpuplan-gone-0.yaml"
last=$(ls "$SCRATCH/whole-k8s" | grep -v gone | tail -1)
rm "$SCRATCH/whole-k8s/$last" && mkdir "$SCRATCH/whole-k8s/$last"
snapshot "$SCRATCH/whole-k8s" > "$SCRATCH/whole-k8s.before"
status=0
"$GPUPLAN" export kubernetes "$PLAN" -o "$SCRATCH/whole-k8s" --image y > "$SCRATCH/whole.out" 2> "$SCRATCH/whole.err" ||
  status=$?
[ "$status" = 2 ] && grep -q "$last: cannot write: is a directory" "$SCRATCH/whole.err" ||
  fail "export kubernetes with a directory where a manifest goes: exit $status, $(cat "$SCRATCH/whole.err")"
snapshot "$SCRATCH/whole-k8s" | diff "$SCRATCH/whole-k8s.before" - > "$SCRATCH/whole.diff" ||
  fail "a failed export kubernetes changed the folder: $(cat "$SCRATCH/whole.diff")"
# The same for Slurm, into a folder that held nothing else: nothing appears beside the directory.
last=$(jq -r '[.assignments[].node] | unique | last' "$PLAN").sbatch
mkdir -p "$SCRATCH/whole-slurm/$last"
status=0
"$GPUPLAN" export slurm "$PLAN" -o "$SCRATCH/whole-slurm" > /dev/null 2> "$SCRATCH/whole.err" || status=$?
[ "$status" = 2 ] && grep -q "$last: cannot write: is a directory" "$SCRATCH/whole.err" &&
  [ "$(ls -A "$SCRATCH/whole-slurm")" = "$last" ] ||
  fail "export slurm with a directory where a script goes: exit $status, $(ls -A "$SCRATCH/whole-slurm") $(cat "$SCRATCH/whole.err")"
# A disk that fills up midway (a small tmpfs; mounting needs root): exit 2, no file and no new
# folder left; an earlier export there stays intact. Before, some scripts, plan.json and its index
# were left, and no submit.sh; or some of the manifests.
mkdir "$SCRATCH/tiny"
if mount -t tmpfs -o size=32k tmpfs "$SCRATCH/tiny" 2> /dev/null; then
  trap 'umount "$SCRATCH/tiny" 2> /dev/null || true; rm -rf "$SCRATCH"' EXIT
  umount "$SCRATCH/tiny"
  for kind in "slurm 32k" "kubernetes 16k --image x"; do
    set -- $kind
    mount -t tmpfs -o size=$2 tmpfs "$SCRATCH/tiny"
    status=0
    "$GPUPLAN" export $1 "$PLAN" -o "$SCRATCH/tiny/out" "${@:3}" > /dev/null 2> "$SCRATCH/tiny.err" || status=$?
    [ "$status" = 2 ] && grep -q "No space left on device" "$SCRATCH/tiny.err" && [ -z "$(ls -A "$SCRATCH/tiny")" ] ||
      fail "export $1 onto a full disk: exit $status, left $(ls -AR "$SCRATCH/tiny"), $(cat "$SCRATCH/tiny.err")"
    umount "$SCRATCH/tiny"
  done
  mount -t tmpfs -o size=32k tmpfs "$SCRATCH/tiny"
  jq '.assignments |= map(select(.node == "l4-0"))' "$PLAN" > "$SCRATCH/small-plan.json"
  "$GPUPLAN" export slurm "$SCRATCH/small-plan.json" -o "$SCRATCH/tiny/out" > /dev/null 2>&1 ||
    fail "export slurm of one node onto the small disk failed"
  snapshot "$SCRATCH/tiny/out" > "$SCRATCH/tiny.before"
  "$GPUPLAN" export slurm "$PLAN" -o "$SCRATCH/tiny/out" > /dev/null 2> "$SCRATCH/tiny.err" &&
    fail "export slurm onto a full disk over an earlier export exited 0"
  snapshot "$SCRATCH/tiny/out" | diff "$SCRATCH/tiny.before" - > "$SCRATCH/tiny.diff" ||
    fail "a failed export slurm changed an earlier export: $(cat "$SCRATCH/tiny.diff")"
  umount "$SCRATCH/tiny"
else
  echo "exports_test: no tmpfs could be mounted (not root?): the full-disk part is left out" >&2
fi
# A value that is not UTF-8 cannot go into YAML or JSON: refused naming the option, not turned
# into U+FFFD (another command than the one given) nor an internal error.
for kind in github-matrix buildkite gitlab; do
  refuses '--command: byte 0xff at offset 4 is not UTF-8' export $kind "$PLAN" --command $'run \xff {label}'
done
# The plan's unschedulable unit is in no job: each export says so on stderr (before, not a word,
# and the launcher's green run read as every GPU test passing).
for kind in "slurm -o $SCRATCH/unsched-slurm" "kubernetes --image x -o $SCRATCH/unsched-k8s" github-matrix buildkite gitlab; do
  "$GPUPLAN" export $kind "$PLAN" --fleet "$FLEET" > /dev/null 2> "$SCRATCH/unsched.err" || fail "export $kind failed"
  grep -q "^gpuplan: warning: 1 GPU unit of $PLAN is unschedulable and in no job: //ml:cuda11_compat_test; it does not run" \
    "$SCRATCH/unsched.err" || fail "export $kind says nothing of the unschedulable unit: $(cat "$SCRATCH/unsched.err")"
done
# Each export ends with one totals line on stderr counting the warnings and notes above it: here the
# fleet's two on 'cuda: 12.40' (no CUDA has it; newer than the driver) and the unschedulable unit's
# (before, "wrote N job script(s)" or nothing, and the reader had to count the lines above). Standard
# output keeps only what it had: the matrix JSON, the pipeline, the "wrote" line.
sed 's/cuda: "12.4"/cuda: 12.40/' "$FLEET" > "$SCRATCH/cuda40.yaml"
for kind in "slurm -o $SCRATCH/totals-slurm" "kubernetes --image x -o $SCRATCH/totals-k8s" github-matrix buildkite gitlab; do
  "$GPUPLAN" export $kind "$PLAN" --fleet "$SCRATCH/cuda40.yaml" > "$SCRATCH/totals.out" 2> "$SCRATCH/totals.err" ||
    fail "export $kind with a fleet that warns failed: $(cat "$SCRATCH/totals.err")"
  notes=0
  [ "$kind" = buildkite ] && notes=1  # how agents get the node tag
  [ "$(grep -c '^gpuplan: warning: ' "$SCRATCH/totals.err")" = 3 ] && [ "$(grep -c '^gpuplan: note: ' "$SCRATCH/totals.err")" = $notes ] &&
    [ "$(tail -n 1 "$SCRATCH/totals.err")" = "gpuplan: 3 warnings, $notes note$([ $notes = 1 ] || echo s)" ] ||
    fail "export $kind: no totals line counting its 3 warnings and $notes notes: $(cat "$SCRATCH/totals.err")"
  case $kind in
    github-matrix) jq -e .include "$SCRATCH/totals.out" > /dev/null || fail "export github-matrix: stdout is no matrix";;
    buildkite | gitlab) ! grep -q '^gpuplan: ' "$SCRATCH/totals.out" || fail "export $kind: gpuplan's lines in the pipeline";;
    *) [ "$(wc -l < "$SCRATCH/totals.out")" = 1 ] && grep -q '^wrote ' "$SCRATCH/totals.out" || fail "export $kind: stdout: $(cat "$SCRATCH/totals.out")";;
  esac
done
# Under --strict the fleet's guesses refuse every export: exit 2, each named at its file:line:col,
# nothing written (before, no export had --strict, so CI could not refuse a fleet read as a guess).
for kind in "slurm -o $SCRATCH/strict-slurm" "kubernetes --image x -o $SCRATCH/strict-k8s" "github-matrix -o $SCRATCH/strict.json" "buildkite -o $SCRATCH/strict.yml" "gitlab -o $SCRATCH/strict.yml"; do
  status=0
  "$GPUPLAN" export $kind "$PLAN" --fleet "$SCRATCH/cuda40.yaml" --strict > /dev/null 2> "$SCRATCH/strict.err" || status=$?
  [ $status = 2 ] && grep -q "^gpuplan: $SCRATCH/cuda40.yaml: 2 errors (--strict):" "$SCRATCH/strict.err" &&
    grep -q "^  $SCRATCH/cuda40.yaml:[0-9]*:[0-9]*: .*12.40" "$SCRATCH/strict.err" ||
    fail "export $kind --strict with a fleet that warns: exit $status, $(cat "$SCRATCH/strict.err")"
  [ ! -e "$SCRATCH/strict-slurm" ] && [ ! -e "$SCRATCH/strict-k8s" ] && [ ! -e "$SCRATCH/strict.json" ] &&
    [ ! -e "$SCRATCH/strict.yml" ] || fail "export $kind --strict refused, but wrote its output"
done
"$GPUPLAN" export github-matrix "$PLAN" --fleet "$FLEET" --strict > /dev/null 2>&1 ||
  fail "export github-matrix --strict refused a fleet with nothing to guess"
jq '.unschedulable = []' "$PLAN" > "$SCRATCH/all-scheduled.json"
[ "$("$GPUPLAN" export github-matrix "$SCRATCH/all-scheduled.json" 2>&1 > /dev/null)" = "gpuplan: 0 warnings, 0 notes" ] ||
  fail "export github-matrix of a plan it has nothing to say of: not the totals line alone"

# A hand-edited plan that every job's exec would refuse at run time (a unit twice, GPUs [0, 0],
# no label) is refused when exporting: exit 2, nothing written (before, written, and red later).
for edit in '.assignments += [.assignments[0]]' '.assignments[0].gpus = [0, 0]' '.assignments[0].label = ""'; do
  jq "$edit" "$PLAN" > "$SCRATCH/edited.json"
  for kind in "slurm" "kubernetes --image x"; do
    refuses "; not run (.gpuplan verify. checks" export $kind "$SCRATCH/edited.json" -o "$SCRATCH/edited-out"
  done
done

# A plan without GPU units (all CPU tests): the GitLab and Buildkite merge steps ran history
# summarize on no file and failed the pipeline; GitHub refuses an empty matrix, which the
# example workflow's gpu job is skipped for.
jq '.assignments = []' "$PLAN" > "$SCRATCH/no-gpu.json"
"$GPUPLAN" export github-matrix "$SCRATCH/no-gpu.json" > "$SCRATCH/no-gpu-matrix.json" 2>/dev/null
guard=$(node -e 'const Y = require(process.argv[1] + "/yaml");
  console.log(Y.parse(require("fs").readFileSync(process.argv[2], "utf8")).jobs.gpu.if)' "$M" examples/ci/github-workflow.yml)
[ "$guard" = '${{ fromJSON(needs.plan.outputs.matrix).include[0] != null }}' ] ||
  fail "the example workflow's gpu job does not skip an empty matrix: if: $guard"
# GitHub names a matrix job by every matrix value (runner labels, the command) and cuts the name
# at about 100 characters: the example names it by the node.
job_name=$(node -e 'const Y = require(process.argv[1] + "/yaml");
  console.log(Y.parse(require("fs").readFileSync(process.argv[2], "utf8")).jobs.gpu.name)' "$M" examples/ci/github-workflow.yml)
[[ "$job_name" == *'${{ matrix.node }}'* ]] || fail "the example workflow's gpu job is not named by its node: name: $job_name"
[ "$(jq '.include[0] != null' "$SCRATCH/no-gpu-matrix.json")" = false ] &&
  [ "$(jq '.include[0] != null' "$SCRATCH/matrix.json")" = true ] || fail "the guard does not tell an empty matrix"
for kind in gitlab buildkite; do
  "$GPUPLAN" export $kind "$SCRATCH/no-gpu.json" --gpuplan "$GPUPLAN" -o "$SCRATCH/no-gpu-$kind.yml" 2>/dev/null ||
    fail "export $kind of a plan without GPU units failed"
  node test/integration/validate_ci.mjs "$M" $kind "$SCRATCH/no-gpu-$kind.yml" > /dev/null ||
    fail "the $kind pipeline of a plan without GPU units is not valid"
  node -e 'const Y = require(process.argv[1] + "/yaml");
    const p = Y.parse(require("fs").readFileSync(process.argv[2], "utf8"));
    const merge = p.steps ? p.steps.find(s => s.key == "gpuplan-merge").command : p["gpuplan-merge"].script;
    console.log(merge.join("\n").replaceAll("$$", "$"))' "$M" "$SCRATCH/no-gpu-$kind.yml" > "$SCRATCH/merge-$kind.sh"
  rm -rf "$SCRATCH/merge" && mkdir -p "$SCRATCH/merge"
  (cd "$SCRATCH/merge" && sh "$SCRATCH/merge-$kind.sh") > "$SCRATCH/merge.out" 2>&1 ||
    fail "the $kind merge step of a plan without GPU units fails: $(cat "$SCRATCH/merge.out")"
  # With results it still merges them.
  mkdir -p "$SCRATCH/merge/gpuplan-results"
  "$GPUPLAN" exec "$PLAN" --node l4-0 --command true --results "$SCRATCH/merge/gpuplan-results/l4-0.csv" > /dev/null 2>&1
  (cd "$SCRATCH/merge" && sh "$SCRATCH/merge-$kind.sh") > "$SCRATCH/merge.out" 2>&1 &&
    [ -s "$SCRATCH/merge/gpuplan-results/history.json" ] ||
    fail "the $kind merge step does not merge the results: $(cat "$SCRATCH/merge.out")"
done

# Kubernetes, a plan without GPU units: no manifest and nothing to apply, said on stderr (before,
# "run them with kubectl apply -f", which fails on a folder without manifests); the README's
# apply step skips such a folder, and applies (server-side) and waits for one with manifests.
status=0
"$GPUPLAN" export kubernetes "$SCRATCH/no-gpu.json" -o "$SCRATCH/no-gpu-k8s" --image x \
  > "$SCRATCH/no-gpu-k8s.out" 2> "$SCRATCH/no-gpu-k8s.err" || status=$?
[ "$status" = 0 ] && [ -d "$SCRATCH/no-gpu-k8s" ] && [ -z "$(ls -A "$SCRATCH/no-gpu-k8s")" ] &&
  [ ! -s "$SCRATCH/no-gpu-k8s.out" ] &&
  grep -q "^gpuplan: note: $SCRATCH/no-gpu.json has no GPU units on any node: no Job was written to $SCRATCH/no-gpu-k8s, and there is nothing to apply" \
    "$SCRATCH/no-gpu-k8s.err" ||
  fail "export kubernetes of a plan without GPU units: exit $status, $(cat "$SCRATCH/no-gpu-k8s.out" "$SCRATCH/no-gpu-k8s.err")"
grep -q '^wrote 4 Job(s) with their ConfigMaps to .*; run them with kubectl apply --server-side -f ' "$SCRATCH/k8s.out" ||
  fail "export kubernetes does not say to apply server-side: $(cat "$SCRATCH/k8s.out")"
awk '/^```sh$/ { block = ""; inside = 1; next } /^```$/ { if (inside && block ~ /kubectl wait/) print block; inside = 0 }
     inside { block = block $0 "\n" }' README.md > "$SCRATCH/readme-apply.sh"
grep -q 'kubectl apply --server-side -f k8s/' "$SCRATCH/readme-apply.sh" || fail "no README apply step found: $(cat "$SCRATCH/readme-apply.sh")"
mkdir -p "$SCRATCH/readme-bin"
ln -sf "$GPUPLAN" "$SCRATCH/readme-bin/gpuplan"
printf '#!/bin/sh\necho "kubectl $*" >> "$KUBECTL_LOG"\n' > "$SCRATCH/readme-bin/kubectl"
chmod +x "$SCRATCH/readme-bin/kubectl"
for plan in "$SCRATCH/no-gpu.json" "$PLAN"; do
  rm -rf "$SCRATCH/readme-run" && mkdir -p "$SCRATCH/readme-run"
  cp "$plan" "$SCRATCH/readme-run/plan.json" && cp "$FLEET" "$SCRATCH/readme-run/fleet.yaml"
  status=0
  (cd "$SCRATCH/readme-run" && PATH="$SCRATCH/readme-bin:$PATH" KUBECTL_LOG="$SCRATCH/readme-run/kubectl.log" \
    IMAGE=x CI_PIPELINE_ID=7 sh -e "$SCRATCH/readme-apply.sh") > /dev/null 2>&1 || status=$?
  if [ "$plan" = "$PLAN" ]; then
    [ "$status" = 0 ] && [ "$(head -1 "$SCRATCH/readme-run/kubectl.log")" = "kubectl apply --server-side -f k8s/" ] &&
      grep -q '^kubectl wait ' "$SCRATCH/readme-run/kubectl.log" ||
      fail "the README's apply step with manifests: exit $status, $(cat "$SCRATCH/readme-run/kubectl.log")"
  else
    [ "$status" = 0 ] && [ ! -e "$SCRATCH/readme-run/kubectl.log" ] ||
      fail "the README's apply step without manifests: exit $status, ran $(cat "$SCRATCH/readme-run/kubectl.log")"
  fi
done

# A node's ConfigMap that a plain (client-side) kubectl apply refuses (its last-applied-configuration
# annotation over 262,144 bytes) is named with its size; the 1 MiB check let it through.
jq '(.assignments | map(select(.shard_count == 1))[0]) as $a | .assignments = [range(0; 900) as $i | $a
    | .node = "h100-0" | .label = "//tensorflow/python/kernel_tests/linalg:matrix_solve_op_test_gpu_\($i)"
    | .unit = .label | .start_s = $i | .end_s = $i + 1]' \
  "$PLAN" > "$SCRATCH/big-slice.json"
"$GPUPLAN" export kubernetes "$SCRATCH/big-slice.json" -o "$SCRATCH/big-k8s" --image x > /dev/null 2> "$SCRATCH/big.err" ||
  fail "export kubernetes of a large slice failed: $(cat "$SCRATCH/big.err")"
grep -q "^gpuplan: warning: the ConfigMap of node h100-0 ([0-9]* bytes) would take more than the 262144 bytes .*: apply with kubectl apply --server-side -f $SCRATCH/big-k8s\$" \
  "$SCRATCH/big.err" || fail "export kubernetes does not warn of a ConfigMap too large for client-side apply: $(cat "$SCRATCH/big.err")"

# GitLab: a child pipeline of more jobs than GitLab.com's Free plan takes (ci_pipeline_size 500)
# gets a warning naming the setting; Buildkite: the export says how agents get the node tag.
jq '(.assignments | map(select(.shard_count == 1))[0]) as $a
    | .assignments = [range(0; 500) as $i | $a | .node = "n-\($i)" | .label = "//t:t\($i)" | .unit = .label]' \
  "$PLAN" > "$SCRATCH/500-nodes.json"
"$GPUPLAN" export gitlab "$SCRATCH/500-nodes.json" > /dev/null 2> "$SCRATCH/gitlab-size.err" || fail "export gitlab of 500 nodes failed"
grep -q "^gpuplan: warning: $SCRATCH/500-nodes.json: the child pipeline has 501 jobs (one per node and the merge job), and GitLab fails a pipeline of more jobs than its instance's ci_pipeline_size (size_limit_exceeded): 500 on GitLab.com's Free plan" \
  "$SCRATCH/gitlab-size.err" || fail "export gitlab of 501 jobs does not warn: $(cat "$SCRATCH/gitlab-size.err")"
jq '.assignments |= .[:499]' "$SCRATCH/500-nodes.json" > "$SCRATCH/499-nodes.json"
"$GPUPLAN" export gitlab "$SCRATCH/499-nodes.json" > /dev/null 2> "$SCRATCH/gitlab-size.err"
! grep -q ci_pipeline_size "$SCRATCH/gitlab-size.err" || fail "export gitlab of 500 jobs warns"
! grep -q max_yaml_size_bytes "$SCRATCH/gitlab-size.err" || fail "export gitlab of 499 nodes warns of its size"
# A child pipeline whose parsed YAML GitLab counts over its default max_yaml_size_bytes (2 MB): the
# trigger job failed with no pipeline, after the export exited 0. A warning, the limit being the instance's.
jq '(.assignments | map(select(.shard_count == 1))[0]) as $a
    | .assignments = [range(0; 2000) as $i | $a | .node = "n-\($i)" | .label = "//t:t\($i)" | .unit = .label]' \
  "$PLAN" > "$SCRATCH/2000-nodes.json"
status=0
"$GPUPLAN" export gitlab "$SCRATCH/2000-nodes.json" -o "$SCRATCH/2000.yml" 2> "$SCRATCH/gitlab-size.err" || status=$?
[ "$status" = 0 ] && [ "$(wc -c < "$SCRATCH/2000.yml")" -lt 2097152 ] &&
  grep -q "^gpuplan: warning: $SCRATCH/2000-nodes.json: GitLab counts the child pipeline (2000 nodes) as at least [0-9]* bytes of parsed YAML .* max_yaml_size_bytes, 2097152 bytes (2 MB) by default" \
    "$SCRATCH/gitlab-size.err" || fail "export gitlab of 2000 nodes: exit $status, no size warning: $(cat "$SCRATCH/gitlab-size.err")"
"$GPUPLAN" export buildkite "$PLAN" > /dev/null 2> "$SCRATCH/bk.err"
grep -q "^gpuplan: note: each step asks for an agent tagged hostname=NODE: start the agents with buildkite-agent start --tags-from-host" \
  "$SCRATCH/bk.err" || fail "export buildkite does not say how agents get the node tag: $(cat "$SCRATCH/bk.err")"
# A node name Buildkite takes as a key (a dotted host name, 92 characters) stays; others get keys
# it takes: the pipeline validates against buildkite/pipeline-schema's key rule either way.
jq '.assignments |= map(.node |= ({"h100-0": "gpu-0.dc.example.com", "h100-1": ("g" * 92), "a100-0": ("g" * 99), "l4-0": "GPU_Box@1"}[.] // .))' \
  "$PLAN" > "$SCRATCH/bk-names.json"
"$GPUPLAN" export buildkite "$SCRATCH/bk-names.json" -o "$SCRATCH/bk-names.yml" 2> /dev/null || fail "export buildkite of odd node names failed"
node test/integration/validate_ci.mjs "$M" buildkite "$SCRATCH/bk-names.yml" > "$SCRATCH/bk-names.check" ||
  fail "Buildkite's key rule rejects the pipeline: $(cat "$SCRATCH/bk-names.check")"
grep -q '^    key: gpuplan-gpu-0.dc.example.com$' "$SCRATCH/bk-names.yml" || fail "a dotted node name's key was changed"
sed "s/key: gpuplan-gpu-0.dc.example.com/key: gpuplan-$(printf 'g%.0s' $(seq 100))/" "$SCRATCH/bk-names.yml" > "$SCRATCH/bk-long.yml"
! node test/integration/validate_ci.mjs "$M" buildkite "$SCRATCH/bk-long.yml" > /dev/null || fail "the Buildkite check accepts a 108-character key"

# Without --fleet a Job asks for the GPUs its units use: a gpu-exclusive unit's Job may share the
# node with other pods. The export names such units (before, only the general warning).
"$GPUPLAN" export kubernetes "$PLAN" -o "$SCRATCH/k8s-nofleet" --image x > /dev/null 2> "$SCRATCH/nofleet.err"
grep -q "^gpuplan: warning: $PLAN: 1 unit must have its node to itself (gpu-exclusive or whole-node), but without --fleet its Job asks only for the GPUs the plan uses there.*: //ml:allreduce_test on a100-0; give --fleet" \
  "$SCRATCH/nofleet.err" || fail "export kubernetes without --fleet does not name the exclusive unit: $(cat "$SCRATCH/nofleet.err")"
"$GPUPLAN" export kubernetes "$PLAN" -o "$SCRATCH/k8s-fleet" --image x --fleet "$FLEET" > /dev/null 2> "$SCRATCH/fleet.err"
! grep -q "must have its node" "$SCRATCH/fleet.err" || fail "export kubernetes --fleet warns of exclusive units"

# A fleet whose a100-0 has 2 GPUs, where the plan runs units on its GPUs 2 and 3: every job's
# exec --fleet refuses it, so each export given that fleet does (before: written, exit 0).
sed -e 's/count: 4/count: 2/' -e 's/\[\[0, 1\], \[2, 3\]\]/[[0, 1]]/' "$FLEET" > "$SCRATCH/small-fleet.yaml"
for kind in "slurm -o $SCRATCH/small-out" "kubernetes --image x -o $SCRATCH/small-out" github-matrix buildkite gitlab; do
  refuses "^gpuplan: $PLAN:56:5: assignments\[0\]: node a100-0 has no GPU 2 in the fleet $SCRATCH/small-fleet.yaml, which the plan runs units on (//ml:allreduce_test here)" \
    export $kind "$PLAN" --fleet "$SCRATCH/small-fleet.yaml"
done

# A test whose shards the plan splits over nodes: the default bazel test of each node's job runs
# every shard, and run-under refuses those planned elsewhere, so the test fails on each node (the
# others run). Each export and exec say so when they write or start (before, not a word).
jq '(.assignments[] | select(.label == "//ml:train_test" and .shard_index >= 2) | .node) |= "h100-1"' \
  "$PLAN" > "$SCRATCH/split.json"
for kind in "slurm" "kubernetes --image x" "github-matrix"; do
  rm -rf "$SCRATCH/split-out"
  "$GPUPLAN" export $kind "$SCRATCH/split.json" -o "$SCRATCH/split-out" 2> "$SCRATCH/split.err" ||
    fail "export $kind of split shards failed: $(cat "$SCRATCH/split.err")"
  grep -q "warning: .*: the plan puts the shards of //ml:train_test (shards 0, 1 on h100-0; 2, 3 on h100-1) on several nodes" \
    "$SCRATCH/split.err" || fail "export $kind of split shards does not say so: $(cat "$SCRATCH/split.err")"
done
"$GPUPLAN" exec "$SCRATCH/split.json" --node h100-1 --dry-run > /dev/null 2> "$SCRATCH/split.err" ||
  fail "exec --dry-run of split shards failed"
grep -q "Give --command" "$SCRATCH/split.err" || fail "exec of split shards does not say so"
"$GPUPLAN" export github-matrix "$SCRATCH/split.json" --command 'bazel test {label}' > /dev/null 2> "$SCRATCH/split.err"
! grep -q "several nodes" "$SCRATCH/split.err" || fail "export with --command warns of split shards"
echo "PASS: kubernetes, github-matrix, gitlab and buildkite exports validate"
