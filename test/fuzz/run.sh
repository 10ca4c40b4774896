#!/usr/bin/env bash
# Runs one fuzz target for SECONDS, seeded from test/data/ and examples/.
#   test/fuzz/run.sh BUILD/test/fuzz/fuzz_NAME SECONDS [CORPUS_ROOT] [libFuzzer flags...]
# The corpus it grows is kept in CORPUS_ROOT/NAME (default: next to the binary), so a
# longer run continues where the last stopped. Crash inputs go to CORPUS_ROOT/NAME.crashes/.
# Exit 0 when the time ran out with no finding. Run from the repository root.
set -euo pipefail
binary=$1 seconds=$2
root=${3:-$(dirname "$binary")/corpus}
shift $(($# < 3 ? $# : 3))
name=$(basename "$binary")
name=${name#fuzz_}
corpus=$root/$name
# The suite's runs (GPUPLAN_FUZZ_FRESH=1) start from the seeds alone, as CI's clean clone does.
[ "${GPUPLAN_FUZZ_FRESH:-}" = 1 ] && rm -rf "$corpus" "$corpus.seeds"
mkdir -p "$corpus" "$corpus.seeds" "$corpus.crashes"

seed() { for f in "$@"; do [ -f "$f" ] && cp -f "$f" "$corpus.seeds/$(echo "$f" | tr / _)"; done; return 0; }
shopt -s nullglob globstar
case $name in
  ingest_*) seed test/data/bazel/*.* test/data/annotate/* examples/query.xml ;;
  fleet) seed examples/*.yaml test/data/plans/fleet.yaml test/data/**/*fleet*.yaml ;;
  rules) seed examples/rules.yaml test/data/**/*rules*.yaml ;;
  history_bep) seed test/data/history/*.json ;;
  history_junit)
    seed test/data/history/bazel-testlogs/**/*.xml
    # A test.xml with the test.cache_status beside it, split by a line "----" (history_fuzz.cpp).
    for status in test/data/history/**/test.cache_status; do
      xml=$(dirname "$status")/test.xml
      [ -f "$xml" ] && { cat "$xml"; printf '\n----\n'; cat "$status"; } >"$corpus.seeds/$(echo "$status" | tr '/&' '__').pair"
    done ;;
  history_table) seed test/data/history/*.csv test/data/history/*.json ;;
  plan) seed test/data/plans/*.json ;;
  bazelrc) seed test/data/bazelrc/* ;;
  nvidia_smi)
    for query in test/data/nvidia-smi/*.query.csv; do
      topo=${query%.query.csv}.topo.txt
      { cat "$query"; echo ----; [ -f "$topo" ] && cat "$topo"; } >"$corpus.seeds/$(basename "$query").pair"
    done ;;
esac

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}:allocator_may_return_null=1
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
exec "$binary" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
  -print_final_stats=1 -artifact_prefix="$corpus.crashes/" "$@" "$corpus" "$corpus.seeds"
