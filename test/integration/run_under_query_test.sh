#!/usr/bin/env bash
# run-under --query FILE with a streamed_jsonproto query reads the test's own line alone, with the
# full read's answer: a launch is not refused for a line damaged elsewhere (a query cut short), and
# a query that cannot be read so (another format, standard input) is read whole as before.
source test/integration/lib.sh
GPUPLAN=$(realpath "$GPUPLAN")
PLAN=$SOURCE_DIR/test/data/plans/workstation_ml.json
install -d -m 0700 "$SCRATCH/locks"
QUERY=test/data/bazel/tests.streamed_jsonproto  # the example workspace's tests, as examples/query.xml
{ cat "$QUERY"; printf '%s' '{"type":"RULE","rule":{"name":"//ml:cut'; } >"$SCRATCH/cut.json"

launch() {  # TEST_TARGET QUERY: the GPUs the unplanned test is given
  TEST_TARGET=$1 "$GPUPLAN" run-under --plan "$PLAN" --node ws-0 --lock-dir "$SCRATCH/locks" --query "$2" \
    sh -c 'printf %s "$CUDA_VISIBLE_DEVICES"' 2>"$SCRATCH/note"
}
for query in "$QUERY" "$SCRATCH/cut.json"; do
  got=$(launch //ml:cuda11_compat_test "$query") || fail "an unplanned 1-GPU test, $query: $(cat "$SCRATCH/note")"
  [ "$got" = 0 ] || fail "an unplanned 1-GPU test got GPUs '$got' from $query, not the lowest free one"
done
# The full read, as before: it refuses the query cut short.
launch //ml:no_such_test "$SCRATCH/cut.json" >/dev/null && fail "a test in no line ran"
grep -q "cut.json:24" "$SCRATCH/note" || fail "the full read did not refuse the cut query: $(cat "$SCRATCH/note")"
got=$(launch //ml:cuda11_compat_test - <"$QUERY") || fail "a query on standard input: $(cat "$SCRATCH/note")"
[ "$got" = 0 ] || fail "an unplanned 1-GPU test got GPUs '$got' from standard input"
echo PASS
