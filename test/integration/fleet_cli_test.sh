#!/usr/bin/env bash
# `gpuplan fleet check` and `gpuplan fleet import` as an admin runs them: files, standard
# input, -o, and exit code 2 with file:line:col for bad input (and no output file left).
source test/integration/lib.sh
requires jq
DATA=test/data/nvidia-smi

summary=$("$GPUPLAN" fleet check examples/fleet.yaml)
grep -q '^examples/fleet.yaml: 4 pools, 18 nodes, 70 GPUs' <<< "$summary" || fail "summary line: $summary"
grep -q 'all-to-all (NVSwitch)' <<< "$summary" || fail "no NVSwitch pool in: $summary"
[ "$("$GPUPLAN" fleet check --json examples/fleet.yaml | jq '.totals.gpus')" = 70 ] || fail "--json totals"
"$GPUPLAN" fleet check - < examples/workstation.yaml | grep -q '^<stdin>: 1 pool, 1 node, 4 GPUs' ||
  fail "fleet check from standard input"

printf 'version: 1\npools:\n  - name: p\n    gpu: {model: L4, cont: 1}\n' > "$SCRATCH/bad.yaml"
status=0
"$GPUPLAN" fleet check "$SCRATCH/bad.yaml" 2> "$SCRATCH/err" || status=$?
[ "$status" = 2 ] || fail "bad fleet: exit $status, not 2"
grep -qF "gpuplan: $SCRATCH/bad.yaml:4:22: gpu.cont: unknown key (did you mean 'count'?)" "$SCRATCH/err" ||
  fail "bad fleet message: $(cat "$SCRATCH/err")"

"$GPUPLAN" fleet import --query-gpu - --topo "$DATA/h100-hgx-8x.topo.txt" --name gpu-07 --pool hgx \
  -o "$SCRATCH/node.yaml" < "$DATA/h100-hgx-8x.query.csv"
grep -q 'nodes: \[gpu-07\]' "$SCRATCH/node.yaml" || fail "imported node name: $(cat "$SCRATCH/node.yaml")"
"$GPUPLAN" fleet check "$SCRATCH/node.yaml" | grep -q '^hgx .*all-to-all (NVSwitch)$' || fail "imported H100 topology"

status=0
"$GPUPLAN" fleet import --query-gpu "$DATA/h100-hgx-8x.query.csv" --topo "$DATA/l40s-pcie-4x.topo.txt" \
  -o "$SCRATCH/none.yaml" 2> "$SCRATCH/err" || status=$?
[ "$status" = 2 ] || fail "mismatched import: exit $status, not 2"
grep -qF "l40s-pcie-4x.topo.txt:1:1: shows 4 GPUs" "$SCRATCH/err" || fail "mismatch message: $(cat "$SCRATCH/err")"
[ ! -e "$SCRATCH/none.yaml" ] || fail "a failed import left its output file behind"

status=0
"$GPUPLAN" fleet import --query-gpu - --topo - < /dev/null 2> /dev/null || status=$?
[ "$status" = 2 ] || fail "both inputs on standard input: exit $status, not 2"
echo "fleet cli: ok"
