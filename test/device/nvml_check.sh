#!/usr/bin/env bash
# Real-GPU check of the NVML sampler (issue 13 item 6), for a machine with an NVIDIA driver,
# python3 and PyTorch. Usage: test/device/nvml_check.sh /path/to/gpuplan   (writes into $OUT/)
# A PyTorch program holds a known 3 GiB (torch.empty on cuda:0) for ~4 s under
# `gpuplan run-under --results`; meanwhile nvidia-smi is sampled. The wrapper's recorded
# peak_vram_mib must be within 10% of nvidia-smi's largest used_memory for that process and at
# least 3072 MiB, and gpu_touched true; a CPU-only program must be recorded as not touching a GPU,
# and one that sets CUDA_VISIBLE_DEVICES=0 itself must be named as using a GPU it was not given.
set -uo pipefail
GPUPLAN=${1:?usage: nvml_check.sh /path/to/gpuplan}
OUT=${OUT:-$(mktemp -d)}
mkdir -p "$OUT"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
log() { echo "$*" | tee -a "$OUT/summary.txt"; }

{ nvidia-smi; python3 -c 'import torch; print("torch", torch.__version__, torch.cuda.is_available())'; } \
  > "$OUT/environment.txt" 2>&1
node=$(hostname)
cat > "$work/plan.json" <<JSON
{"schema_version": 1, "generator": {"name": "gpuplan", "version": "0.1.0"}, "policy": "exact",
 "summary": {"tests": 2, "cpu_tests": 1, "gpu_tests": 1, "skipped_tests": 0, "gpu_units": 1,
             "scheduled_units": 1, "unschedulable_units": 0, "makespan_s": 10, "lower_bound_s": 10,
             "gpu_utilization": 1},
 "cpu_tests": [{"label": "//check:cpu", "reason": "no GPU annotation"}], "skipped_tests": [],
 "assignments": [{"unit": "//check:alloc", "label": "//check:alloc", "shard_index": null,
   "shard_count": 1, "node": "$node", "gpus": [0], "start_s": 0, "end_s": 10, "duration_s": 10,
   "duration_source": "size-default", "vram_mib": null,
   "requirements": {"gpus": 1, "gpu_mem_mib": null, "cuda": null, "gpu_models": null,
                    "compute_capability": null, "nvlink": false, "exclusive": false},
   "env": {"CUDA_VISIBLE_DEVICES": "0"}}],
 "unschedulable": [], "diagnostics": []}
JSON
cat > "$work/alloc.py" <<'PY'
import os, time, torch
x = torch.empty(3 * 1024**3, dtype=torch.uint8, device="cuda")
torch.cuda.synchronize()
print("pid", os.getpid(), "allocated", x.numel() // 2**20, "MiB", flush=True)
time.sleep(4)
PY

# nvidia-smi, every 0.2 s, while the program runs: per process and, for a driver that lists no
# process (a VM that hides our PIDs from it), the whole GPU's memory in use.
baseline=$(nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits -i 0)
( while :; do nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader,nounits; sleep 0.2; done ) \
  > "$OUT/nvidia-smi.csv" 2>&1 &
smi=$!
( while :; do nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits -i 0; sleep 0.2; done ) \
  > "$OUT/nvidia-smi-gpu.csv" 2>&1 &
smi_gpu=$!
touch "$OUT/results.csv"  # run-under never creates its results file, nor its lock directory
install -d -m 0700 "/tmp/gpuplan-locks-$(id -u)"
TEST_TARGET=//check:alloc "$GPUPLAN" run-under --plan "$work/plan.json" --node "$node" \
  --results "$OUT/results.csv" python3 "$work/alloc.py" > "$OUT/alloc.out" 2>&1
status=$?
kill "$smi" "$smi_gpu" 2> /dev/null
TEST_TARGET=//check:cpu "$GPUPLAN" run-under --plan "$work/plan.json" --node "$node" \
  --results "$OUT/results.csv" python3 -c 'import time; time.sleep(1)' >> "$OUT/alloc.out" 2>&1
log "run-under exit: $status"
pid=$(awk '/^pid/ {print $2}' "$OUT/alloc.out")
smi_peak=$(awk -F', *' -v pid="$pid" '$1 == pid && $2 + 0 > m {m = $2 + 0} END {print m + 0}' "$OUT/nvidia-smi.csv")
gpu_peak=$(awk -v base="$baseline" '$1 - base > m {m = $1 - base} END {print m + 0}' "$OUT/nvidia-smi-gpu.csv")
log "nvidia-smi: per-process peak ${smi_peak} MiB; the GPU's memory in use rose by ${gpu_peak} MiB (from ${baseline})"
if [ "${smi_peak}" = 0 ]; then smi_peak=$gpu_peak; log "no per-process rows: comparing with the GPU's rise"; fi
cat "$OUT/results.csv" >> "$OUT/summary.txt"
read -r ours touched cpu_touched < <(python3 - "$OUT/results.csv" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
gpu = [r for r in rows if r["label"] == "//check:alloc"][-1]
cpu = [r for r in rows if r["label"] == "//check:cpu"][-1]
print(gpu.get("peak_vram_mib") or 0, gpu.get("gpu_touched", ""), cpu.get("gpu_touched", ""))
PY
)
log "torch pid $pid; nvidia-smi peak ${smi_peak} MiB; gpuplan peak_vram_mib ${ours} MiB; gpu_touched ${touched}; the CPU program: gpu_touched ${cpu_touched}"
python3 - "$ours" "$smi_peak" <<'PY' | tee -a "$OUT/summary.txt"
import sys
ours, smi = float(sys.argv[1]), float(sys.argv[2])
ok = ours >= 3072 and smi > 0 and abs(ours - smi) <= 0.1 * smi
print("PASS" if ok else "FAIL", f"gpuplan {ours:.0f} MiB vs nvidia-smi {smi:.0f} MiB")
PY

# A CPU test (given no GPU) that picks GPU 0 itself: run-under must say it used a GPU it was not given.
TEST_TARGET=//check:cpu "$GPUPLAN" run-under --plan "$work/plan.json" --node "$node" --results "$OUT/results.csv" \
  python3 -c 'import os; os.environ["CUDA_VISIBLE_DEVICES"] = "0"; import time, torch
x = torch.empty(2**28, dtype=torch.uint8, device="cuda"); torch.cuda.synchronize(); time.sleep(2)' \
  > "$OUT/picks.out" 2>&1
if grep -q "//check:cpu used GPU 0, which the plan did not give it (it was given none)" "$OUT/picks.out"; then
  log "PASS a CPU test that picks GPU 0 itself is named"
else
  log "FAIL a CPU test that picks GPU 0 itself: $(cat "$OUT/picks.out")"
fi

# refused WHAT PLAN PATTERN: run-under of PLAN's unit must refuse (exit 2, nothing run), saying PATTERN.
refused() {
  local status=0
  TEST_TARGET=//check:alloc "$GPUPLAN" run-under --plan "$2" --node "$node" touch "$work/ran" > "$OUT/refused.out" 2>&1 ||
    status=$?
  if [ "$status" = 2 ] && [ ! -e "$work/ran" ] && grep -q "$3" "$OUT/refused.out"; then
    log "PASS $1 refused: $(grep -o 'on node [^(]*' "$OUT/refused.out" | head -1)"
  else
    log "FAIL $1: exit $status, $(cat "$OUT/refused.out")"
  fi
}
# A GPU this machine does not have (the index one past nvidia-smi's count).
count=$(nvidia-smi --query-gpu=count --format=csv,noheader | head -1)
sed "s/\"gpus\": \[0\]/\"gpus\": [$count]/; s/\"CUDA_VISIBLE_DEVICES\": \"0\"/\"CUDA_VISIBLE_DEVICES\": \"$count\"/" \
  "$work/plan.json" > "$work/missing.json"
refused "GPU $count of a $count-GPU machine" "$work/missing.json" "NVML sees $count GPU"
# What NVML says of the GPU's compute capability and the driver's CUDA version: a unit that needs
# more than either is refused, naming what this machine has (compare with the line below).
for need in '.requirements.compute_capability = ">=99.0"' '.requirements.cuda = ">=99.0"'; do
  jq "(.assignments[0] | $need) as \$a | .assignments = [\$a]" "$work/plan.json" > "$work/needs.json"
  refused "$need" "$work/needs.json" "(NVML)"
done
log "nvidia-smi: $(nvidia-smi --query-gpu=name,compute_cap --format=csv,noheader | head -1); $(nvidia-smi | grep -o 'CUDA Version: [0-9.]*')"
