#!/usr/bin/env bash
# The --run_under exec's default command would replace, as gpuplan reads the rc files, against
# the one real Bazel applies: the canonical command line of `bazel test --nobuild` in its build
# events. Before, the host's :linux lines came after every rc line, wherever the
# --enable_platform_specific_config that enables them stood, and a config's
# --noenable_platform_specific_config (TensorFlow's android) never turned them off: a wrapper Bazel
# never ran was named, and the one it ran was not. An empty workspace of its own (Bazel's own
# server, ended at the end); about 30 s.
source test/integration/lib.sh
requires bazel python3
GPUPLAN=$(realpath "$GPUPLAN")
PLAN=$SOURCE_DIR/test/data/plans/workstation_ml.json
mkdir -p "$SCRATCH/ws" "$SCRATCH/home"
touch "$SCRATCH/ws/WORKSPACE"
export HOME=$SCRATCH/home  # no developer's ~/.bazelrc
bazel_here() { (cd "$SCRATCH/ws" && bazel --output_user_root="$BAZEL_ROOT" --max_idle_secs=60 "$@"); }

# agree RC_TEXT EXPECTED [ARGS...]: Bazel and gpuplan both give --run_under=EXPECTED ("none": none).
agree() {
  local rc=$1 expected=$2; shift 2
  printf '%b' "$rc" >"$SCRATCH/ws/.bazelrc"
  rm -f "$SCRATCH/bep.json"
  bazel_here test --nobuild --build_event_json_file="$SCRATCH/bep.json" "$@" >"$SCRATCH/bazel.out" 2>&1 || true
  [ -s "$SCRATCH/bep.json" ] || fail "bazel test --nobuild with '$rc' $*: $(cat "$SCRATCH/bazel.out")"
  local bazel
  bazel=$(/usr/bin/python3 - "$SCRATCH/bep.json" <<'PY'
import json, sys
found = "none"
for line in open(sys.argv[1]):
    s = json.loads(line).get("structuredCommandLine", {})
    if s.get("commandLineLabel") != "canonical":
        continue
    for section in s["sections"]:
        if section["sectionLabel"] == "command options":
            for o in section.get("optionList", {}).get("option", []):
                if o["optionName"] == "run_under":
                    found = o["optionValue"]
print(found)
PY
)
  local gpuplan
  gpuplan=$(cd "$SCRATCH/ws" && "$GPUPLAN" exec "$PLAN" --node ws-0 --dry-run -- "$@" 2>&1 >/dev/null |
    sed -n 's/.* gives bazel test --run_under=\([^ ,]*\), and exec.*/\1/p')
  [ "$bazel" = "$expected" ] || fail "Bazel applies --run_under=$bazel with '$rc' $*, not $expected"
  [ "${gpuplan:-none}" = "$expected" ] || fail "gpuplan names --run_under=${gpuplan:-none} with '$rc' $*; Bazel applies $bazel"
}

# TensorFlow's .bazelrc: enabled for every build, turned off by its cross-compiling configs.
tf='build --enable_platform_specific_config\nbuild:android --noenable_platform_specific_config\ntest:linux --run_under=/bin/linux_wrap\n'
agree "$tf" /bin/linux_wrap
agree "$tf" none --config=android
# Enabled by an early line, the host's lines come before a later test line; on the command line
# (or by a config named there), after every rc line.
early='common --enable_platform_specific_config\ntest:linux --run_under=/bin/linux_wrap\ntest --run_under=/bin/plain_wrap\nbuild:ci --enable_platform_specific_config\n'
agree "$early" /bin/plain_wrap
agree "$early" /bin/linux_wrap --config=ci
# A config chain, TensorFlow's release_gpu_linux's way, beside a try-import of a missing file.
agree 'try-import %workspace%/absent.bazelrc\ntest --config=gpu\ntest:gpu --config=gpu_base  # the CI one\nbuild:gpu_base --run_under=/bin/gpu_wrap\n' /bin/gpu_wrap
bazel_here shutdown >/dev/null 2>&1  # on a failure, it ends itself after a minute idle
