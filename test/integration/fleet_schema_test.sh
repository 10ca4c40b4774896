#!/usr/bin/env bash
# schemas/fleet.schema.json and the fleet loader agree: every example fleet and every fleet
# `gpuplan fleet import` writes from the captured nvidia-smi outputs passes both; the bad
# fleets below fail both. Debian's python3 has jsonschema and yaml.
source test/integration/lib.sh
requires python3

# validate FILE...: exit 0 when every file is valid against the schema, else print why and exit 1.
validate() {
  /usr/bin/python3 - "$@" <<'PY'
import json, sys
import jsonschema, yaml
validator = jsonschema.Draft202012Validator(json.load(open("schemas/fleet.schema.json")))
invalid = 0
for path in sys.argv[1:]:
    for error in validator.iter_errors(yaml.safe_load(open(path))):
        print(f"{path}: /{'/'.join(map(str, error.absolute_path))}: {error.message}", file=sys.stderr)
        invalid = 1
sys.exit(invalid)
PY
}

fleets=()
for example in examples/*.yaml; do
  grep -q '^pools:' "$example" && fleets+=("$example")
done
[ "${#fleets[@]}" -ge 2 ] || fail "expected examples/fleet.yaml and examples/workstation.yaml, found: ${fleets[*]}"

imports=0
for query in test/data/nvidia-smi/*.query.csv; do
  topo=${query%.query.csv}.topo.txt
  [ -f "$topo" ] || continue
  out=$SCRATCH/$(basename "${query%.query.csv}").yaml
  "$GPUPLAN" fleet import --query-gpu "$query" --topo "$topo" -o "$out" || fail "import of $query failed"
  fleets+=("$out")
  imports=$((imports + 1))
done
[ "$imports" -ge 5 ] || fail "expected at least 5 captured machines, imported $imports"

for fleet in "${fleets[@]}"; do
  "$GPUPLAN" fleet check "$fleet" > /dev/null || fail "gpuplan rejects $fleet"
done
validate "${fleets[@]}" || fail "the schema rejects a fleet gpuplan accepts"

# Bad fleets: the schema and the loader both say no.
head='version: 1
pools:
  - name: p'
bad() {
  printf '%s\n%s\n' "$head" "$1" > "$SCRATCH/bad.yaml"
  if validate "$SCRATCH/bad.yaml" 2> /dev/null; then fail "the schema accepts: $1"; fi
  if "$GPUPLAN" fleet check "$SCRATCH/bad.yaml" > /dev/null 2>&1; then fail "gpuplan accepts: $1"; fi
  status=0
  "$GPUPLAN" fleet check "$SCRATCH/bad.yaml" > /dev/null 2>&1 || status=$?
  [ "$status" = 2 ] || fail "exit $status, not 2, for: $1"
}
bad '    gpu: {model: L4, cont: 1}
    cuda: "12.4"'
bad '    gpu: {model: L4, count: 0}
    cuda: "12.4"'
bad '    count: 2
    nodes: [a, b]
    gpu: {model: L4, count: 1}
    cuda: "12.4"'
bad '    gpu: {model: L4, count: 2}
    cuda: "12.4"
    topology: nvlink'
bad '    gpu: {model: L4, count: 1, vram: 24}
    cuda: "12.4"'
bad '    gpu: {model: L4, count: 1}'
echo "fleet schema: ${#fleets[@]} fleets valid, bad fleets rejected"
