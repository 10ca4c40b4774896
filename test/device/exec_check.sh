#!/usr/bin/env bash
# Real-GPU check of the whole path a user runs (issue 13 items 4 and 6): nvidia-smi -> `fleet
# import` -> `plan` -> `exec` (and `run-under` for the CPU bucket and an unschedulable test), for
# a machine with an NVIDIA driver, python3, PyTorch and JAX.
# Usage: test/device/exec_check.sh /path/to/gpuplan   (writes into $OUT/; PASS/FAIL lines in
# $OUT/exec-summary.txt)
# Each unit is a Python program that says what CUDA shows it (torch's device count and names,
# JAX's devices) and holds GPU memory for 2 s; exec's results must say where it ran and its peak.
set -uo pipefail
GPUPLAN=${1:?usage: exec_check.sh /path/to/gpuplan}
OUT=${OUT:-$(mktemp -d)}
mkdir -p "$OUT"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
log() { echo "$*" | tee -a "$OUT/exec-summary.txt"; }
check() { if eval "$2"; then log "PASS $1"; else log "FAIL $1"; fi; }

nvidia-smi --query-gpu=index,name,uuid,memory.total,compute_cap,driver_version,mig.mode.current \
  --format=csv > "$work/query.csv"
nvidia-smi topo -m > "$work/topo.txt"
"$GPUPLAN" fleet import --query-gpu "$work/query.csv" --topo "$work/topo.txt" --name dev \
  > "$work/fleet.yaml" 2> "$OUT/import.err" || log "FAIL fleet import: $(cat "$OUT/import.err")"
count=$(nvidia-smi --query-gpu=count --format=csv,noheader | head -1)

rule() {  # rule NAME TAG... : a py_test with these tags
  local name=$1 tags=""
  shift
  for t in "$@"; do tags+="<string value=\"$t\"/>"; done
  echo "<rule class=\"py_test\" location=\"/w/check/BUILD:1:1\" name=\"//check:$name\"><list name=\"tags\">$tags</list><string name=\"size\" value=\"small\"/></rule>"
}
{
  echo '<?xml version="1.1" encoding="UTF-8" standalone="no"?><query version="2">'
  rule torch_a gpu
  rule torch_b requires-gpu-nvidia
  rule jax gpu
  rule jax_noprealloc gpu
  rule cpu
  rule too_many "gpu:$((count + 1))"
  echo '</query>'
} > "$work/query.xml"
"$GPUPLAN" plan --fleet "$work/fleet.yaml" "$work/query.xml" -o "$work/plan.json" 2> "$OUT/plan.err"
cp "$work/plan.json" "$OUT/plan.json"

cat > "$work/unit.py" <<'PY'
# unit.py LABEL: what CUDA shows this process, then 1 GiB held on the GPU for 2 s
import json, os, sys, time
label = sys.argv[1]
seen = {"label": label, "CUDA_VISIBLE_DEVICES": os.environ.get("CUDA_VISIBLE_DEVICES"),
        "CUDA_DEVICE_ORDER": os.environ.get("CUDA_DEVICE_ORDER")}
if "jax" in label:
    if label.endswith("noprealloc"):
        os.environ["XLA_PYTHON_CLIENT_PREALLOCATE"] = "false"
    import jax, jax.numpy as jnp
    seen["devices"] = [str(d) for d in jax.devices()]
    x = jnp.ones((256, 1024, 1024), dtype=jnp.float32).block_until_ready()  # 1 GiB
    seen["maps"] = sorted({l.split()[-1] for l in open("/proc/self/maps") if "jax" in l or "xla" in l})[:6]
else:
    import torch
    seen["devices"] = [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())]
    if seen["devices"]:
        x = torch.empty(2**30, dtype=torch.uint8, device="cuda")
        torch.cuda.synchronize()
print(json.dumps(seen), flush=True)
with open(os.environ["SEEN"], "a") as f:
    f.write(json.dumps(seen) + "\n")
time.sleep(2)
PY
export SEEN="$OUT/seen.jsonl"
: > "$SEEN"
touch "$OUT/results.csv"
install -d -m 0700 "/tmp/gpuplan-locks-$(id -u)"  # as the README says, for run-under outside exec
start=$(date +%s)
"$GPUPLAN" exec "$work/plan.json" --node dev --results "$OUT/results.csv" --json "$OUT/exec.json" \
  --command "python3 $work/unit.py {label}" > "$OUT/exec.out" 2>&1
status=$?
log "exec exit $status in $(($(date +%s) - start)) s"
check "exec ran the node's 4 GPU units and passed" '[ "$status" = 0 ] && [ "$(grep -c "^//check" "$OUT/results.csv")" = 4 ]'
seen() { python3 -c 'import json,sys; [print(len(s["devices"]), s["CUDA_VISIBLE_DEVICES"], s["CUDA_DEVICE_ORDER"]) for s in map(json.loads, open(sys.argv[1])) if s["label"] == sys.argv[2]]' "$SEEN" "$1"; }
for unit in torch_a torch_b jax jax_noprealloc; do
  check "//check:$unit saw one GPU, its planned one in PCI order: $(seen "//check:$unit")" \
    '[[ "$(seen "//check:$unit")" =~ ^1\ [0-9]+\ PCI_BUS_ID$ ]]'
done
TEST_TARGET=//check:cpu "$GPUPLAN" run-under --plan "$work/plan.json" --node dev --results "$OUT/results.csv" \
  python3 "$work/unit.py" //check:cpu > "$OUT/cpu.out" 2>&1
check "the CPU test ran under run-under and saw no GPU: $(seen //check:cpu)" '[ "$(seen //check:cpu)" = "0  PCI_BUS_ID" ]'
status=0
TEST_TARGET=//check:too_many "$GPUPLAN" run-under --plan "$work/plan.json" --node dev \
  touch "$work/ran" > "$OUT/too_many.out" 2>&1 || status=$?
check "the unschedulable $((count + 1))-GPU test was refused (exit $status): $(head -1 "$OUT/too_many.out")" \
  '[ "$status" = 2 ] && [ ! -e "$work/ran" ] && grep -q "could not schedule" "$OUT/too_many.out"'
cat "$OUT/results.csv" >> "$OUT/exec-summary.txt"
peak() { awk -F, -v l="$1" '$1 == l {print ($4 == "" ? "-" : $4), $9}' "$OUT/results.csv" | tail -1; }
for unit in torch_a torch_b jax_noprealloc; do
  read -r mib touched < <(peak "//check:$unit")
  check "//check:$unit recorded ${mib} MiB, touched ${touched} (holds 1024 MiB)" \
    '[ "$touched" = true ] && [ "${mib:-0}" -ge 1024 ] && [ "$mib" -lt 3072 ]'
done
read -r mib touched < <(peak //check:jax)
log "INFO //check:jax with JAX's default preallocation recorded ${mib} MiB (touched ${touched})"
# Each record says whether its peak is memory taken up front: JAX's default pool (JAX's runtime
# is in the process's maps, no XLA_PYTHON_CLIENT_PREALLOCATE=false), never PyTorch's 1.5 GiB.
# A plan from these records reserves the measured peaks, but not JAX's pool, naming it.
up_front() { awk -F, -v l="$1" '$1 == l {print $10}' "$OUT/results.csv" | tail -1; }
check "peak_up_front: //check:jax $(up_front //check:jax), //check:torch_a $(up_front //check:torch_a), //check:jax_noprealloc $(up_front //check:jax_noprealloc)" \
  '[ "$(up_front //check:jax)" = true ] && [ "$(up_front //check:torch_a)" = false ] && [ "$(up_front //check:jax_noprealloc)" = false ]'
"$GPUPLAN" plan --fleet "$work/fleet.yaml" "$work/query.xml" --history "$OUT/results.csv" -o "$OUT/replan.json" \
  2> "$OUT/replan.err"
vram() { jq -r --arg l "$1" '.assignments[] | select(.label == $l) | .vram_mib' "$OUT/replan.json"; }
check "replanned: //check:jax reserves $(vram //check:jax), //check:torch_a $(vram //check:torch_a) MiB" \
  '[ "$(vram //check:jax)" = null ] && [ "$(vram //check:torch_a)" != null ] && grep -q "//check:jax: its runs. peak GPU memory, $mib MiB, is 74% or more" "$OUT/replan.err"'
read -r mib touched < <(peak //check:cpu)
check "the CPU test recorded touched ${touched}" '[ "$touched" = false ]'
log "nvidia-smi: $(nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | head -1)"
