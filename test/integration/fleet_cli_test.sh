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
refuses -F "gpuplan: $SCRATCH/bad.yaml:4:22: gpu.cont: unknown key (did you mean 'count'?)" fleet check "$SCRATCH/bad.yaml"

# A file that is no fleet (text, one 1 MB line, a binary, JSON) is named with its line and at
# most a short excerpt of it, never quoted whole; plan --fleet leaves no plan behind.
printf 'This is a README, not a fleet file.\nIt goes on for a while.\n' > "$SCRATCH/README"
head -c 1000000 /dev/zero | tr '\0' x > "$SCRATCH/line.txt"
head -c 4096 /bin/sh > "$SCRATCH/binary"
printf '[{"version": 1}, {"pools": []}]\n' > "$SCRATCH/fleet.json"
for file in README line.txt binary fleet.json; do
  refuses "^gpuplan: $SCRATCH/$file:1:[0-9]*: " fleet check "$SCRATCH/$file"
  [ "$(wc -c < "$SCRATCH/refused.err")" -lt 300 ] || fail "fleet check $file: a message of $(wc -c < "$SCRATCH/refused.err") bytes"
  refuses "" plan examples/query.xml --fleet "$SCRATCH/$file" -o "$SCRATCH/plan.json"
  [ "$(wc -c < "$SCRATCH/refused.err")" -lt 300 ] || fail "plan --fleet $file: a message of $(wc -c < "$SCRATCH/refused.err") bytes"
done
"$GPUPLAN" plan examples/query.xml --fleet "$SCRATCH/line.txt" 2> "$SCRATCH/err" > /dev/null || true
grep -qxF "gpuplan: $SCRATCH/line.txt:1:1: fleet: must be a mapping, not '$(head -c 60 "$SCRATCH/line.txt")…'" "$SCRATCH/err" ||
  fail "the 1 MB line: $(head -c 300 "$SCRATCH/err")"

"$GPUPLAN" fleet import --query-gpu - --topo "$DATA/h100-hgx-8x.topo.txt" --name gpu-07 --pool hgx \
  -o "$SCRATCH/node.yaml" < "$DATA/h100-hgx-8x.query.csv" 2> "$SCRATCH/err"
grep -q 'nodes: \[gpu-07\]' "$SCRATCH/node.yaml" || fail "imported node name: $(cat "$SCRATCH/node.yaml")"
# That capture has no mig.mode.current: an H100 in MIG mode would pass for 8 whole GPUs, so say so.
grep -qF "gpuplan: warning: <stdin> has no mig.mode.current column, so the GPUs are taken to be whole GPUs" \
  "$SCRATCH/err" || fail "no MIG warning for a CSV without the column: $(cat "$SCRATCH/err")"
"$GPUPLAN" fleet import --query-gpu "$DATA/h200-1x.query.csv" --topo "$DATA/h200-1x.topo.txt" -o "$SCRATCH/h200.yaml" \
  2> "$SCRATCH/err" || fail "import of the H200 capture failed"
[ ! -s "$SCRATCH/err" ] || fail "the H200 capture, with its MIG column, gave: $(cat "$SCRATCH/err")"
"$GPUPLAN" fleet check "$SCRATCH/node.yaml" | grep -q '^hgx .*all-to-all (NVSwitch)$' || fail "imported H100 topology"

refuses -F "l40s-pcie-4x.topo.txt:1:1: shows 4 GPUs" \
  fleet import --query-gpu "$DATA/h100-hgx-8x.query.csv" --topo "$DATA/l40s-pcie-4x.topo.txt" -o "$SCRATCH/none.yaml"

refuses "" fleet import --query-gpu - --topo - < /dev/null
# A DGX A100's topo -m without NVLink (rapidsai/ucx-py#749): written as pcie, which it was
# before too, but now with a warning and the count of warnings; --strict refuses it and writes nothing.
{
  echo "index, name, memory.total [MiB], compute_cap, driver_version, mig.mode.current"
  for i in 0 1 2 3 4 5 6 7; do echo "$i, NVIDIA A100-SXM4-40GB, 40960 MiB, 8.0, 460.32.03, Disabled"; done
} > "$SCRATCH/dgx.csv"
"$GPUPLAN" fleet import --query-gpu "$SCRATCH/dgx.csv" --topo "$DATA/dgx-a100-no-nvlink.topo.txt" \
  -o "$SCRATCH/dgx.yaml" 2> "$SCRATCH/err" || fail "the DGX A100 import failed: $(cat "$SCRATCH/err")"
grep -q 'topology: pcie' "$SCRATCH/dgx.yaml" || fail "DGX A100 topology: $(cat "$SCRATCH/dgx.yaml")"
grep -qF "gpuplan: warning: $DATA/dgx-a100-no-nvlink.topo.txt: no two of the 8 GPUs are NVLinked" "$SCRATCH/err" ||
  fail "no warning for SXM GPUs without NVLink: $(cat "$SCRATCH/err")"
[ "$(tail -n 1 "$SCRATCH/err")" = "gpuplan: 1 warning (errors under --strict)" ] ||
  fail "no count of warnings: $(cat "$SCRATCH/err")"
refuses -F "gpuplan: --strict: $DATA/dgx-a100-no-nvlink.topo.txt: no two of the 8 GPUs are NVLinked" \
  fleet import --strict --query-gpu "$SCRATCH/dgx.csv" --topo "$DATA/dgx-a100-no-nvlink.topo.txt" -o "$SCRATCH/strict.yaml"
grep -qF "; nothing was written" "$SCRATCH/refused.err" || fail "--strict message: $(cat "$SCRATCH/refused.err")"
"$GPUPLAN" fleet import --strict --query-gpu "$DATA/h200-1x.query.csv" --topo "$DATA/h200-1x.topo.txt" \
  > /dev/null 2> "$SCRATCH/err" || fail "--strict refused the H200 capture: $(cat "$SCRATCH/err")"
# A fleet's warning is one of plan's and compare's warnings: counted in the totals line (it said
# 0 warnings beside it), and under --strict named once, with its own file, line and column.
printf 'version: 1\npools:\n  - name: a\n    count: 1\n    gpu: {model: L4, count: 2}\n    cuda: 12.40\n' > "$SCRATCH/cuda40.yaml"
printf '<?xml version="1.1" encoding="UTF-8" standalone="no"?>\n<query version="2">\n<rule class="py_test" location="/w/a/BUILD:1:1" name="//a:t">\n<list name="tags"><string value="gpu"/></list>\n</rule>\n</query>\n' > "$SCRATCH/one-gpu.xml"
cuda40_warning="gpuplan: warning: $SCRATCH/cuda40.yaml:6:11: cuda: 12.40 is read as written"
for command in plan compare; do
  "$GPUPLAN" $command "$SCRATCH/one-gpu.xml" --fleet "$SCRATCH/cuda40.yaml" -o "$SCRATCH/cuda40.out" 2> "$SCRATCH/err" ||
    fail "$command on a fleet with a warning: $(cat "$SCRATCH/err")"
  grep -qF "$cuda40_warning" "$SCRATCH/err" || fail "$command: no fleet warning: $(cat "$SCRATCH/err")"
  [ "$(tail -n 1 "$SCRATCH/err")" = "gpuplan: 1 warning, 0 notes; gpuplan explain LABEL for one test" ] ||
    fail "$command: the fleet warning is not counted: $(cat "$SCRATCH/err")"
  rm -f "$SCRATCH/cuda40.out"
  refuses -F "gpuplan: $SCRATCH/cuda40.yaml: 1 error (--strict):" \
    $command --strict "$SCRATCH/one-gpu.xml" --fleet "$SCRATCH/cuda40.yaml" -o "$SCRATCH/cuda40.out"
  grep -qxF "  $SCRATCH/cuda40.yaml:6:11: cuda: 12.40 is read as written, CUDA 12.40, a minor version no CUDA has had; YAML 1.1 readers (PyYAML, Ansible) read it as the number 12.4: write \"12.4\" if that was meant" \
    "$SCRATCH/refused.err" || fail "$command --strict: $(cat "$SCRATCH/refused.err")"
done
# Every other command that reads a fleet says its warnings too (they read it without a word), and
# those with a totals line count them.
"$GPUPLAN" plan "$SCRATCH/one-gpu.xml" --fleet "$SCRATCH/cuda40.yaml" -o "$SCRATCH/cuda40.plan.json" 2>/dev/null ||
  fail "plan on cuda40.yaml"
printf 'label,seconds\n//a:t,12\n' > "$SCRATCH/a-t.csv"
printf '<?xml version="1.1" encoding="UTF-8" standalone="no"?>\n<query version="2">\n<rule class="py_test" location="/w/a/BUILD:1:1" name="//a:t">\n<list name="tags"><string value="gpu"/></list>\n<rule-input name="@pypi//torch:pkg"/>\n</rule>\n</query>\n' > "$SCRATCH/one-gpu.deps.xml"
P=$SCRATCH/cuda40.plan.json F=$SCRATCH/cuda40.yaml
while IFS= read -r args; do
  rm -rf "$SCRATCH/cuda40.dir"
  eval "\"\$GPUPLAN\" $args" > /dev/null 2> "$SCRATCH/err" || fail "$args: $(cat "$SCRATCH/err")"
  grep -qF "$cuda40_warning" "$SCRATCH/err" || fail "$args: no fleet warning: $(cat "$SCRATCH/err")"
done <<ARGS
verify "\$P" --fleet "\$F"
simulate "\$P" --fleet "\$F" --runs 1
export slurm "\$P" -o "\$SCRATCH/cuda40.dir" --fleet "\$F"
export kubernetes "\$P" -o "\$SCRATCH/cuda40.dir" --image ci:1 --fleet "\$F"
history suggest --plan "\$P" --fleet "\$F" --history "\$SCRATCH/a-t.csv"
audit "\$SCRATCH/one-gpu.deps.xml" --fleet "\$F"
ARGS
"$GPUPLAN" verify "$P" --fleet "$F" "$SCRATCH/one-gpu.xml" 2>&1 >/dev/null | tail -n 1 | grep -q "^gpuplan: 1 warning, 0 notes" ||
  fail "verify's totals line does not count the fleet's warning"
"$GPUPLAN" history suggest --plan "$P" --fleet "$F" --history "$SCRATCH/a-t.csv" 2>&1 >/dev/null | tail -n 1 |
  grep -q "; 1 warning, 0 notes$" || fail "suggest's totals line does not count the fleet's warning"
"$GPUPLAN" audit "$SCRATCH/one-gpu.deps.xml" --fleet "$F" 2>&1 >/dev/null | tail -n 1 | grep -q "; 1 warning, 0 notes$" ||
  fail "audit's totals line does not count the fleet's warning"
refuses -F "gpuplan: $SCRATCH/cuda40.yaml: 1 error (--strict):" simulate "$P" --fleet "$F" --runs 1 --strict
# fleet check, the command a CI step runs to check the fleet file, counts them and refuses them under
# --strict (before, it said them and exited 0, and had no --strict).
"$GPUPLAN" fleet check "$F" > /dev/null 2> "$SCRATCH/err" || fail "fleet check on cuda40.yaml: $(cat "$SCRATCH/err")"
grep -qF "$cuda40_warning" "$SCRATCH/err" && [ "$(tail -n 1 "$SCRATCH/err")" = "gpuplan: 1 warning (errors under --strict)" ] ||
  fail "fleet check's warnings: $(cat "$SCRATCH/err")"
refuses -F "gpuplan: $SCRATCH/cuda40.yaml: 1 error (--strict):" fleet check --strict "$F"
"$GPUPLAN" fleet check --strict examples/fleet.yaml > /dev/null || fail "fleet check --strict refused the example fleet"
# --help says so, as the man page does (simulate's named only bad history rows, plan's annotations).
for command in plan verify simulate "history suggest"; do
  "$GPUPLAN" $command --help | grep -q -- "--strict .*a fleet warning" || fail "$command --help: --strict does not name fleet warnings"
done
echo "fleet cli: ok"
