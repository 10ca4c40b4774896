# Sourced by every test/integration/*_test.sh: strict mode, a scratch folder, fail(),
# and bazel_ws to run Debian's Bazel on examples/workspace offline.
# CTest runs these from the source root with GPUPLAN set to the binary under test.
set -euo pipefail
: "${GPUPLAN:?GPUPLAN must name the gpuplan binary (CTest sets it)}"
SOURCE_DIR=$(pwd)
WORKSPACE=$SOURCE_DIR/examples/workspace
STUBS=$SOURCE_DIR/examples/bazel-stubs
SCRATCH=$(mktemp -d "${TMPDIR:-/tmp}/gpuplan-it.XXXXXX")
CLEANUP=()  # more paths a test makes outside $SCRATCH, removed with it

# A command that fails outside an `|| fail` ends the test through `set -e` without a word: under a
# full ctest run, run_under_test once failed so, with no output at all, nothing to tell where. The
# ERR trap (inherited by functions, `set -E`) notes each failing command; the EXIT trap says the last
# one when the test ends failed without fail() having said why.
set -E
LAST_FAILED=
SAID=
trap 'LAST_FAILED="line $LINENO: $BASH_COMMAND (exit $?)"' ERR
on_exit() {
  local status=$?
  if [ "$status" != 0 ] && [ "$status" != 77 ] && [ -z "$SAID" ]; then
    echo "FAIL: the test ended with exit $status; the last command that failed: ${LAST_FAILED:-none}" >&2
  fi
  rm -rf "$SCRATCH" "${CLEANUP[@]}"
}
trap on_exit EXIT

fail() { SAID=1; echo "FAIL: $*" >&2; exit 1; }

# This machine has no GPU, and exec and run-under refuse to hand out GPUs that NVML does not
# count here (or any GPU, where there is no driver at all). The tests' nodes have up to 8 GPUs:
# NVML's stand-in (test/nvml) says so, with no process on any (GPUPLAN_FAKE_NVML_GPUS,
# GPUPLAN_FAKE_NVML_PROCESSES change that).
FAKE_NVML=${GPUPLAN_BUILD_DIR:-$(dirname "$GPUPLAN")}/libfake_nvml.so
export GPUPLAN_NVML_LIBRARY=${GPUPLAN_NVML_LIBRARY:-$FAKE_NVML}

# NVML's stand-in adds a byte to this file each time it counts the GPUs, which exec's and
# run-under's sampler do first in each sample. In a unit's shell, "$(sampled_after)" ... "$(sampled)"
# waits (up to 60 s) until a whole sample was taken between the two: a unit that wrote
# GPUPLAN_FAKE_NVML_PROCESSES and slept a fixed time could end before a loaded machine's sampler saw it.
export GPUPLAN_FAKE_NVML_COUNTS=$SCRATCH/nvml.counts
: >"$GPUPLAN_FAKE_NVML_COUNTS"
sampled_after() { echo "n=\$(stat -c %s '$GPUPLAN_FAKE_NVML_COUNTS')"; }
sampled() {
  echo "for i in \$(seq 1200); do [ \$(stat -c %s '$GPUPLAN_FAKE_NVML_COUNTS') -ge \$((n + 2)) ] && break; sleep 0.05; done"
}

# requires TOOL...: a developer's machine without one of the tools skips the test (CTest's
# skip code, 77) and says which; under CI (CI set), where scripts/setup installed them all,
# a missing tool fails it.
requires() {
  local tool
  for tool in "$@"; do
    command -v "$tool" >/dev/null && continue
    [ -n "${CI:-}" ] && fail "$tool is missing (scripts/setup installs it)"
    echo "SKIP: $tool is missing; scripts/setup installs it" >&2
    exit 77
  done
}

# One Bazel server per user, shared by all tests (they queue on its lock), gone after a minute idle.
BAZEL_ROOT=${GPUPLAN_BAZEL_ROOT:-/tmp/gpuplan-bazel-$(id -u)}

# bazel_ws COMMAND ARGS...: Bazel in the example workspace. cquery and test need the
# three stub repositories (no network); query does not. A test's run-under finds NVML's
# stand-in as a GPU machine's finds the driver's library (Bazel passes tests no variable it is
# not told to).
# Writes DIR/bazel, a `bazel` for exec to find first on PATH: the real one through bazel_ws (the
# example workspace, offline, wherever exec runs), with ARGS before the options it is given.
bazel_wrapper() {
  local dir=$1; shift
  mkdir -p "$dir"
  {
    echo '#!/usr/bin/env bash'
    printf 'PATH=%q  # the real bazel'"'"'s, not this wrapper'"'"'s\n' "$PATH"
    printf 'cd %q && source test/integration/lib.sh\n' "$SOURCE_DIR"
    echo 'command=$1; shift'
    printf 'bazel_ws "$command"'
    printf ' %q' "$@"
    echo ' "$@"'
  } >"$dir/bazel"
  chmod +x "$dir/bazel"
}

bazel_ws() {
  local command=$1; shift
  local overrides=()
  if [ "$command" != query ]; then
    overrides=(--override_repository=remote_coverage_tools="$STUBS/remote_coverage_tools"
               --override_repository=rules_cc="$STUBS/rules_cc"
               --override_repository=rules_java="$STUBS/rules_java")
  fi
  case $command in test | coverage) overrides+=(--test_env=GPUPLAN_NVML_LIBRARY) ;; esac
  (cd "$WORKSPACE" && bazel --output_user_root="$BAZEL_ROOT" --max_idle_secs=60 \
     "$command" "${overrides[@]}" "$@")
}

# l4_fleet NODE...: $SCRATCH/fleet.yaml, one pool of the named nodes, two L4s each on PCIe.
l4_fleet() {
  local nodes
  nodes=$(printf '%s, ' "$@")
  cat >"$SCRATCH/fleet.yaml" <<YAML
version: 1
pools:
  - name: small
    nodes: [${nodes%, }]
    gpu: {model: L4, count: 2, vram: 23034MiB, compute_capability: "8.9"}
    cuda: "12.2"
    topology: pcie
YAML
}

# one_gpu_plan < LINES: $SCRATCH/plan.json of one-GPU units, each planned for 1 s, from lines
# "LABEL NODE GPU SLOT" (starting at SLOT seconds), on test/data/plans/workstation_ml.json's shape.
one_gpu_plan() {
  /usr/bin/python3 -c '
import json, sys
plan = json.load(open(sys.argv[1]))
template = plan["assignments"][5]
plan["assignments"] = []
for line in sys.stdin:
    label, node, gpu, slot = line.split()
    gpu, slot = int(gpu), int(slot)
    plan["assignments"].append(dict(template, unit=label, label=label, node=node, gpus=[gpu], start_s=slot,
                                    end_s=slot + 1, duration_s=1, env={"CUDA_VISIBLE_DEVICES": str(gpu)}))
units = len(plan["assignments"])
plan["summary"].update(makespan_s=max(a["end_s"] for a in plan["assignments"]), scheduled_units=units,
                       gpu_units=units, unschedulable_units=0)
json.dump(plan, open(sys.argv[2], "w"), indent=1)
' "$SOURCE_DIR/test/data/plans/workstation_ml.json" "$SCRATCH/plan.json"
}

# classify_warns_of INPUT WORDS LABEL...: classify --json INPUT into $SCRATCH/classify.json and
# classify.err, and fail unless the tests warned of with WORDS (what a warning says after the
# test's label, e.g. "exec_properties is a select()") are exactly the LABELs, and the totals line
# counts those warnings and no others.
classify_warns_of() {
  local input=$1 words=$2; shift 2
  "$GPUPLAN" classify --json "$input" >"$SCRATCH/classify.json" 2>"$SCRATCH/classify.err" ||
    fail "$input: classify failed: $(cat "$SCRATCH/classify.err")"
  local line warned=() expected=()
  while IFS= read -r line; do
    if [[ $line == *": $words"* ]]; then warned+=("${line%%": $words"*}"); fi
  done <"$SCRATCH/classify.err"
  for line in "$@"; do expected+=("gpuplan: warning: $line"); done
  [ "$(printf '%s\n' "${warned[@]}" | sort)" = "$(printf '%s\n' "${expected[@]}" | sort)" ] ||
    fail "$input: warned of ${warned[*]:-nothing}, expected ${expected[*]}; stderr: $(cat "$SCRATCH/classify.err")"
  tail -n 1 "$SCRATCH/classify.err" | grep -q "^gpuplan: $# warning" ||
    fail "$input: the totals line should count the $# warnings: $(tail -n 1 "$SCRATCH/classify.err")"
}

# refuses [-F] WORDS ARGS...: gpuplan ARGS must refuse as bad input or usage is refused (exit 2,
# and --strict so refuses a warning): say WORDS on standard error (a grep pattern; with -F, text
# as it is; "" checks no words), print nothing on standard output and write no file where
# -o/--output, --cpu-targets or --gpu-targets names one. Standard error stays in
# $SCRATCH/refused.err for a test's further checks.
refuses() {
  local grep_options=(-q)
  if [ "$1" = -F ]; then grep_options+=(-F); shift; fi
  local words=$1; shift
  local outputs=() arg previous='' status=0
  for arg in "$@"; do
    case $previous in -o | --output | --cpu-targets | --gpu-targets) outputs+=("$arg") ;; esac
    case $arg in --output=* | --cpu-targets=* | --gpu-targets=*) outputs+=("${arg#*=}") ;; esac
    previous=$arg
  done
  for arg in "${outputs[@]}"; do
    [ ! -e "$arg" ] || fail "gpuplan $*: $arg is there before it runs, so it cannot show that nothing was written"
  done
  "$GPUPLAN" "$@" >"$SCRATCH/refused.out" 2>"$SCRATCH/refused.err" || status=$?
  [ "$status" = 2 ] || fail "gpuplan $*: exit $status, not 2; stderr: $(cat "$SCRATCH/refused.err")"
  [ -z "$words" ] || grep "${grep_options[@]}" -e "$words" "$SCRATCH/refused.err" ||
    fail "gpuplan $*: exit 2, but stderr does not say \"$words\": $(cat "$SCRATCH/refused.err")"
  [ ! -s "$SCRATCH/refused.out" ] || fail "gpuplan $*: exit 2, but it printed: $(head -c 2000 "$SCRATCH/refused.out")"
  for arg in "${outputs[@]}"; do
    [ ! -e "$arg" ] || fail "gpuplan $*: exit 2, but it wrote $arg"
  done
}

# strict_plan_refuses INPUT LABEL WORDS: plan --strict of INPUT on examples/fleet.yaml exits 2,
# writes no plan, and has among its errors one of LABEL that says WORDS.
strict_plan_refuses() {
  local input=$1 label=$2 words=$3
  refuses "" plan --strict "$input" --fleet examples/fleet.yaml -o "$SCRATCH/plan.json"
  awk -v error="  $label: $words" 'index($0, error) == 1 { found = 1 } END { exit !found }' "$SCRATCH/refused.err" ||
    fail "$input: --strict should make $label's warning an error: $(cat "$SCRATCH/refused.err")"
}

# stale_shard_testlogs DIR: a bazel-testlogs folder DIR as Bazel leaves it after //ml:shard_test's
# shard_count went from 4 to 2: today's shard_N_of_2 folders (150 s each) beside the stale
# shard_N_of_4 ones (50 s each), with nothing in them to say which are newer.
stale_shard_testlogs() {
  local stale=$1/ml/shard_test n
  for n in 1 2; do
    mkdir -p "$stale/shard_${n}_of_2"
    printf '<testsuites><testsuite name="s" tests="1"><testcase name="s" time="150"/></testsuite></testsuites>\n' >"$stale/shard_${n}_of_2/test.xml"
  done
  for n in 1 2 3 4; do
    mkdir -p "$stale/shard_${n}_of_4"
    printf '<testsuites><testsuite name="s" tests="1"><testcase name="s" time="50"/></testsuite></testsuites>\n' >"$stale/shard_${n}_of_4/test.xml"
  done
}

# h100_fleet FILE: a fleet of one node of 8 H100s, CUDA 12.4, in FILE.
h100_fleet() {
  cat >"$1" <<'YAML'
version: 1
pools:
  - name: h100
    count: 1
    gpu: {model: H100-SXM-80GB, count: 8}
    cuda: "12.4"
YAML
}

# sharded_gpu_test NAME SHARDS FILE: a query.xml in FILE of one py_test, //ml:NAME, tagged gpu,
# size medium, with shard_count SHARDS.
sharded_gpu_test() {
  cat >"$3" <<XML
<?xml version="1.1" encoding="UTF-8" standalone="no"?>
<query version="2">
  <rule class="py_test" location="/w/ml/BUILD:2:8" name="//ml:$1">
    <string name="name" value="$1"/>
    <list name="tags"><string value="gpu"/></list>
    <int name="shard_count" value="$2"/>
    <string name="size" value="medium"/>
  </rule>
</query>
XML
}
