#!/usr/bin/env bash
# gpuplan audit on captured graphs, without Bazel: examples/deps.xml (README "Classification
# from the dependency graph" says how it was made) and test/data/bazel's odd.query.xml, whose
# target names use the punctuation Bazel allows.
source test/integration/lib.sh
requires jq

# Markdown tables: a `|` in a cell is escaped, or GitHub splits the cell there (even between
# backticks): in a tag change (gpu-model:L4|L40S), a label and a path.
"$GPUPLAN" audit examples/deps.xml --rules examples/rules.yaml --format markdown >"$SCRATCH/audit.md" 2>/dev/null ||
  fail "audit --format markdown failed"
grep -qF '| `//ml:video_decode_test` | remove tags gpu, gpu-model:L4\|L40S |' "$SCRATCH/audit.md" ||
  fail "the tag change's | is not escaped: $(grep video "$SCRATCH/audit.md")"
printf "gpu_deps: ['//odd:t.sh']\n" >"$SCRATCH/odd.rules.yaml"
"$GPUPLAN" audit test/data/bazel/odd.query.xml --rules "$SCRATCH/odd.rules.yaml" --format markdown \
  >"$SCRATCH/odd.md" 2>/dev/null || fail "audit of odd names failed"
grep -qF "| \`//odd:a!%-@^_#&'()*+,;<=>?[]{\|}~\` | \`//odd:a!%-@^_#&'()*+,;<=>?[]{\|}~ → //odd:t.sh\` |" \
  "$SCRATCH/odd.md" || fail "a label's | is not escaped: $(cat "$SCRATCH/odd.md")"
# Every table row has as many cells as its header: no | left unescaped.
awk -F'|' '{ gsub(/\\\|/, "") } /^\|/ { if (!cells) cells = NF; else if (NF != cells) { print; bad = 1 } }
           !/^\|/ { cells = 0 } END { exit bad }' "$SCRATCH/audit.md" "$SCRATCH/odd.md" ||
  fail "a table row with a stray |"

echo "audit report: ok"
