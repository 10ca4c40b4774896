#!/usr/bin/env bash
# Real-GPU check of `gpuplan fleet import` (issue 12): captures what nvidia-smi says on this
# machine into $OUT and imports it. Usage: test/device/fleet_import.sh path/to/gpuplan
# Writes $OUT/query.csv, topo.txt, smi.txt, smi-q.xml, smi-L.txt, fleet.yaml or import.err,
# check.txt and result.txt (ok / refused-mig / failed, with the reason).
set -uo pipefail
GPUPLAN=${1:?usage: fleet_import.sh GPUPLAN}
OUT=${OUT:?OUT must name the folder to write to}
columns=index,name,uuid,memory.total,compute_cap,driver_version,mig.mode.current
nvidia-smi > "$OUT/smi.txt" 2>&1
nvidia-smi -q -x > "$OUT/smi-q.xml" 2>&1
nvidia-smi -L > "$OUT/smi-L.txt" 2>&1
nvidia-smi --query-gpu=$columns --format=csv > "$OUT/query.csv" 2> "$OUT/query.err"
nvidia-smi topo -m > "$OUT/topo.txt" 2>&1
status=0
"$GPUPLAN" fleet import --query-gpu "$OUT/query.csv" --topo "$OUT/topo.txt" --name device-0 \
  > "$OUT/fleet.yaml" 2> "$OUT/import.err" || status=$?
if [ "$status" = 0 ]; then
  "$GPUPLAN" fleet check "$OUT/fleet.yaml" > "$OUT/check.txt" 2>&1 || status=$?
  echo "ok (import and check exit $status)" > "$OUT/result.txt"
elif grep -q 'MIG enabled' "$OUT/import.err"; then
  echo "refused-mig: $(cat "$OUT/import.err")" > "$OUT/result.txt"
else
  echo "failed (exit $status): $(cat "$OUT/import.err")" > "$OUT/result.txt"
fi
cat "$OUT/result.txt"
