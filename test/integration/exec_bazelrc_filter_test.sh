#!/usr/bin/env bash
# exec's default bazel test under a test filter a .bazelrc gives (here ~/.bazelrc, which Bazel
# reads after the workspace's): exec's command line does not show it, Bazel's build events do
# (optionsParsed's cmdLine), and --junit marks each case that ran only some test cases, as
# `exec --command` does and as run-under marks its records. Before, --junit showed such a run as
# the test's whole pass. pytest's -k in a --test_arg filters the sh_test (a script may run pytest),
# not the cc_test, whose -k would be its own option (its targetConfigured kind says cc_test).
# Real Bazel on examples/workspace; under a minute once Bazel's cache is warm.
source test/integration/lib.sh
requires bazel python3
GPUPLAN=$(realpath "$GPUPLAN")
printf '%s\n' "//ml:inference_test n0 0 0" "//core:parser_test n0 1 0" | one_gpu_plan
mkdir -p "$SCRATCH/bin" "$SCRATCH/home"
cat >"$SCRATCH/bin/bazel" <<SH
#!/usr/bin/env bash
PATH=$(printf '%q' "$PATH")  # the real bazel's, not this wrapper's
cd "$SOURCE_DIR" && source test/integration/lib.sh
export HOME=$(printf '%q' "$SCRATCH/home")  # whose .bazelrc holds the team's filter
command=\$1; shift
bazel_ws "\$command" --sandbox_writable_path="$SCRATCH" "\$@"
SH
chmod +x "$SCRATCH/bin/bazel"

# run_exec NAME RC_LINE: exec of node n0 with RC_LINE in ~/.bazelrc; $SCRATCH/NAME.xml is its
# --junit, $SCRATCH/NAME.csv its results records.
run_exec() {
  printf '%s\n' "$2" >"$SCRATCH/home/.bazelrc"
  PATH=$SCRATCH/bin:$PATH "$GPUPLAN" exec "$SCRATCH/plan.json" --node n0 --lock-dir "$SCRATCH/locks" \
    --results "$SCRATCH/$1.csv" --junit "$SCRATCH/$1.xml" >"$SCRATCH/$1.out" 2>&1 ||
    { cat "$SCRATCH/$1.out"; fail "exec's default bazel test with '$2' in ~/.bazelrc failed"; }
}
# filtered_cases NAME: the labels --junit marks filtered, and those run-under's records do.
filtered_cases() {
  /usr/bin/python3 - "$SCRATCH/$1.xml" "$SCRATCH/$1.csv" <<'PY'
import csv, sys
import xml.etree.ElementTree as ET
junit, records = sys.argv[1:]
cases = ET.parse(junit).getroot().iter("testcase")
marked = lambda case, name: any(p.get("name") == name and p.get("value") == "true" for p in case.iter("property"))
label = lambda case: next(p.get("value") for p in case.iter("property") if p.get("name") == "label")
print("junit:", " ".join(sorted(label(c) for c in cases if marked(c, "filtered"))))
print("records:", " ".join(sorted(r["label"] for r in csv.DictReader(open(records)) if r["filtered"] == "true")))
PY
}

run_exec test_filter "test --test_filter=OneCase"
got=$(filtered_cases test_filter)
[ "$got" = $'junit: //core:parser_test //ml:inference_test\nrecords: //core:parser_test //ml:inference_test' ] ||
  fail "a .bazelrc's --test_filter: $got $(cat "$SCRATCH/test_filter.xml")"

run_exec pytest_k "test --test_arg=-k --test_arg=fp16"
got=$(filtered_cases pytest_k)
[ "$got" = $'junit: //ml:inference_test\nrecords: //ml:inference_test' ] ||
  fail "a .bazelrc's --test_arg=-k: $got $(cat "$SCRATCH/pytest_k.xml")"
