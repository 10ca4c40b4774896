#!/usr/bin/env bash
# Non-ASCII target names through real Bazel's query. Its XML encodes them twice
# (test/data/bazel/README.md); gpuplan reads them from it as label_kind prints them and as Bazel
# takes them back: before, the XML's //na:ÑÐµÑÑ_test was no target to `bazel test` or
# `bazel query` ("no such target"), and --attrs joined no label_kind test with its tags.
# (Bazel 4 itself cannot run such a test: its test-setup.sh fails on the name, sandboxed or not.)
# A scratch workspace of its own, query only; under 30 s.
source test/integration/lib.sh
requires bazel jq
WS=$SCRATCH/ws
mkdir -p "$WS/na"
touch "$WS/WORKSPACE" "$WS/na/t.sh"
cat >"$WS/na/BUILD" <<'BUILD'
sh_test(name = "тест_test", srcs = ["t.sh"], tags = ["gpu:2"])
sh_test(name = "café_test", srcs = ["t.sh"], tags = ["gpu"])
sh_test(name = "plain_test", srcs = ["t.sh"], tags = ["gpu"])
BUILD
query() { (cd "$WS" && bazel --output_user_root="$BAZEL_ROOT" --max_idle_secs=60 query "$@" 2>>"$SCRATCH/bazel.log"); }
CLEANUP+=("$(cd "$WS" && bazel --output_user_root="$BAZEL_ROOT" --max_idle_secs=60 info output_base 2>/dev/null)")
trap 'status=$?; (cd "$WS" && bazel --output_user_root="$BAZEL_ROOT" shutdown 2>/dev/null); (exit $status); on_exit' EXIT

query 'tests(//na:all)' --output=xml >"$SCRATCH/q.xml" || fail "bazel query --output=xml: $(cat "$SCRATCH/bazel.log")"
query 'tests(//na:all)' --output=label_kind >"$SCRATCH/q.label_kind" || fail "bazel query --output=label_kind"
grep -q 'name="//na:Ñ' "$SCRATCH/q.xml" || fail "Bazel's XML no longer encodes names twice: $(grep '<rule' "$SCRATCH/q.xml")"
labels() { "$GPUPLAN" targets --json "$1" | jq -r '[.tests[].label] | sort | join(" ")'; }
[ "$(labels "$SCRATCH/q.xml")" = "//na:café_test //na:plain_test //na:тест_test" ] ||
  fail "labels read from the XML: $(labels "$SCRATCH/q.xml")"
[ "$(labels "$SCRATCH/q.xml")" = "$(labels "$SCRATCH/q.label_kind")" ] || fail "XML and label_kind read apart"

# Each label read from the XML is a target to Bazel (quoted: Bazel 4's query lexer takes no
# non-ASCII word, its target patterns do).
"$GPUPLAN" targets --json "$SCRATCH/q.xml" | jq -r '.tests[].label' >"$SCRATCH/labels"
while IFS= read -r label; do
  [ "$(query "\"$label\"" --output=label)" = "$label" ] || fail "bazel query $label: $(tail -1 "$SCRATCH/bazel.log")"
done <"$SCRATCH/labels"

# label_kind's tests take their tags from the XML: тест_test is planned on 2 GPUs, no test lacks --attrs.
"$GPUPLAN" classify --json "$SCRATCH/q.label_kind" --attrs "$SCRATCH/q.xml" --strict >"$SCRATCH/c.json" 2>"$SCRATCH/c.err" ||
  fail "classify --attrs: $(cat "$SCRATCH/c.err")"
[ "$(jq -r '.gpu_tests[] | select(.label == "//na:тест_test") | .requirements.gpus' "$SCRATCH/c.json")" = 2 ] ||
  fail "//na:тест_test lost its tags: $(cat "$SCRATCH/c.json")"
echo ok
