#!/usr/bin/env bash
# gpuplan exec: a node's units run in parallel on their planned GPUs; failures and timeouts
# do not stop the others; SIGTERM stops the running units; hostile labels stay words;
# the default command really runs `bazel test` with the unit's GPUs and shard.
source test/integration/lib.sh
requires bazel jq python3 xmllint
GPUPLAN=$(realpath "$GPUPLAN")
PLAN=$SOURCE_DIR/test/data/plans/workstation_ml.json
PROBE=$WORKSPACE/tools/gpu_probe.sh
export GPU_PROBE_LOG=$SCRATCH/probe.log

# 1. Every unit runs once with its planned GPUs and shard; several at once, never two on a GPU.
"$GPUPLAN" exec "$PLAN" --node ws-0 --results "$SCRATCH/results.csv" --lock-dir "$SCRATCH/locks" \
  --command "GPU_PROBE_SLEEP=0.5 TEST_TARGET={label} bash $PROBE" >"$SCRATCH/exec.out" ||
  { cat "$SCRATCH/exec.out"; fail "exec of the plan failed"; }
grep -q '^10 units: 10 passed$' "$SCRATCH/exec.out" || fail "the final table does not say 10 passed"
[ "$(grep -c '\] start ' "$SCRATCH/exec.out")" = 10 ] || fail "expected a progress line per start"
/usr/bin/python3 - "$PLAN" "$GPU_PROBE_LOG" "$SCRATCH/results.csv" <<'PY' || fail "exec did not run the plan as planned"
import csv, json, sys
from datetime import datetime
plan, log, results = sys.argv[1:]
planned = sorted(f"target={a['label']} shard={'' if a['shard_index'] is None else a['shard_index']}/"
                 f"{a['shard_count'] if a['shard_index'] is not None else ''} gpus={','.join(map(str, a['gpus']))}"
                 for a in json.load(open(plan))["assignments"])
seen = sorted(line.strip() for line in open(log))
assert seen == planned, f"saw {seen}\nplanned {planned}"
rows = list(csv.DictReader(open(results)))
# Each shard's record says its test's shard count, so history knows when the test is resharded.
counts = {(r["label"], r["shard"]): r["shard_count"] for r in rows}
assert counts[("//ml:train_test", "1")] == "4" and counts[("//ml:pool_test", "")] == "", counts
def span(r):
    start = datetime.fromisoformat(r["start"].replace("Z", "+00:00")).timestamp()
    return start, start + float(r["seconds"])
together = 0
for i, a in enumerate(rows):
    for b in rows[i + 1:]:
        (s1, e1), (s2, e2) = span(a), span(b)
        if s1 < e2 - 0.05 and s2 < e1 - 0.05:
            together += 1
            assert not set(a["gpus"].split(",")) & set(b["gpus"].split(",")), (a, b)
assert together >= 4, f"only {together} pairs of units ran at the same time"
PY

# 1b. A shard run by a command also gets googletest's names for its shard, which Bazel's
#     test-setup.sh derives from TEST_SHARD_INDEX and TEST_TOTAL_SHARDS: a gtest binary reads no
#     other, and run directly it would run every case in every shard. Every unit gets
#     CUDA_DEVICE_ORDER=PCI_BUS_ID: CUDA's own order (fastest first) need not be nvidia-smi's.
"$GPUPLAN" exec "$PLAN" --node ws-0 \
  --command "echo {unit} \$GTEST_SHARD_INDEX/\$GTEST_TOTAL_SHARDS \$CUDA_DEVICE_ORDER >>$SCRATCH/gtest.log" \
  >/dev/null || fail "exec of the plan with an echo command failed"
grep -qx '//ml:train_test#shard-1-of-4 1/4 PCI_BUS_ID' "$SCRATCH/gtest.log" && grep -qx '//ml:pool_test / PCI_BUS_ID' "$SCRATCH/gtest.log" ||
  fail "googletest's shard variables and CUDA's device order: $(cat "$SCRATCH/gtest.log")"
# 1c. The GPU and shard variables of whoever started exec never reach a unit: an unsharded gtest
#     given the caller's shard 1 of 3 ran a third of its cases and passed, and HIP reads
#     HIP_VISIBLE_DEVICES before CUDA_VISIBLE_DEVICES, so a caller's 7 put an AMD test on GPU 7.
TEST_SHARD_INDEX=1 TEST_TOTAL_SHARDS=3 GTEST_SHARD_INDEX=1 GTEST_TOTAL_SHARDS=3 HIP_VISIBLE_DEVICES=7 \
  GPU_DEVICE_ORDINAL=7 ZE_AFFINITY_MASK=7 "$GPUPLAN" exec "$PLAN" --node ws-0 \
  --command "echo {unit} \$TEST_SHARD_INDEX/\$GTEST_TOTAL_SHARDS hip=\$HIP_VISIBLE_DEVICES ocl=\$GPU_DEVICE_ORDINAL >>$SCRATCH/caller.log" \
  >/dev/null || fail "exec under a caller's shard and GPU variables failed"
grep -qx '//ml:pool_test / hip=3 ocl=3' "$SCRATCH/caller.log" && grep -qx '//ml:train_test#shard-1-of-4 1/4 hip=2,3 ocl=2,3' "$SCRATCH/caller.log" ||
  fail "the caller's shard or GPU variables reached a unit: $(cat "$SCRATCH/caller.log")"

# 2. With --lock-dir, a unit waits while a `bazel test --run_under` test holds its GPU.
jq '.assignments |= [.[5]]' "$PLAN" >"$SCRATCH/inference.json"
# Once the holder's test runs (it holds GPU 2 then): after a fixed 0.3 s, a loaded machine's exec
# could take GPU 2 first.
TEST_TARGET=//ml:inference_test "$GPUPLAN" run-under --plan "$PLAN" --node ws-0 --lock-dir "$SCRATCH/locks" \
  sh -c "touch $SCRATCH/holding; sleep 1.5; date +%s.%N >$SCRATCH/released" &
holder=$!
for _ in $(seq 600); do [ -e "$SCRATCH/holding" ] && break; sleep 0.1; done
[ -e "$SCRATCH/holding" ] || fail "run-under's test did not start"
"$GPUPLAN" exec "$SCRATCH/inference.json" --node ws-0 --lock-dir "$SCRATCH/locks" \
  --command "date +%s.%N >$SCRATCH/started" >/dev/null || fail "exec with --lock-dir failed"
wait "$holder"
/usr/bin/python3 -c "import sys; sys.exit(float(open('$SCRATCH/started').read()) < float(open('$SCRATCH/released').read()))" ||
  fail "exec ran a unit on GPU 2 while run-under held it"

# 2b. With NVML (here the stand-in library), a node whose GPU units ran a second or more without
#     any of them on a GPU gets a warning: that is how a build without CUDA passes its GPU tests.
#     A unit that was on its GPU (the stand-in lists its shell on GPU 2) gets none.
NVML=(env GPUPLAN_NVML_LIBRARY="${GPUPLAN_BUILD_DIR:-$(dirname "$GPUPLAN")}/libfake_nvml.so" GPUPLAN_FAKE_NVML_PROCESSES="$SCRATCH/nvml.procs")
: >"$SCRATCH/nvml.procs"
"${NVML[@]}" "$GPUPLAN" exec "$SCRATCH/inference.json" --node ws-0 --command 'sleep 1.3' >/dev/null 2>"$SCRATCH/nvml.err" ||
  fail "exec with the NVML stand-in failed: $(cat "$SCRATCH/nvml.err")"
grep -q "warning: none of the 1 GPU units NVML measured for a second or more touched a GPU" "$SCRATCH/nvml.err" ||
  fail "no warning for GPU units that touched no GPU: $(cat "$SCRATCH/nvml.err")"
"${NVML[@]}" "$GPUPLAN" exec "$SCRATCH/inference.json" --node ws-0 \
  --command "$(sampled_after); echo \"2 \$\$ 512\" >$SCRATCH/nvml.procs; $(sampled); sleep 1.3" >/dev/null 2>"$SCRATCH/nvml.err" ||
  fail "exec with the NVML stand-in failed: $(cat "$SCRATCH/nvml.err")"
[ ! -s "$SCRATCH/nvml.err" ] || fail "a unit on its GPU was warned about: $(cat "$SCRATCH/nvml.err")"
# 2c. A peak of 74% or more of its GPU (the stand-in's GPUs have 80 GiB) held by a process with
#     JAX's or TensorFlow's GPU runtime loaded is memory the framework took up front (JAX takes
#     75%, TensorFlow nearly all): the record says peak_up_front, plan reserves none of it and
#     warns (--strict: exit 2), history suggest and show say so. Before, the test was planned on
#     GPUs of at least that much memory. Here the unit is a `sleep` run from a folder named
#     jaxlib, which its /proc/PID/maps shows as JAX's would be.
mkdir -p "$SCRATCH/site/jaxlib"
cp "$(command -v sleep)" "$SCRATCH/site/jaxlib/sleep"
# (Each runs until a sample saw it: a fixed 0.6 s could end before a loaded machine's sampler looked.)
jax_like="$SCRATCH/site/jaxlib/sleep 30 & $(sampled_after); echo \"2 \$! 61500\" >$SCRATCH/nvml.procs; $(sampled); kill \$!; wait; true"
"${NVML[@]}" "$GPUPLAN" exec "$SCRATCH/inference.json" --node ws-0 --results "$SCRATCH/up-front.csv" \
  --command "$jax_like" >/dev/null 2>&1 || fail "exec of a 61500 MiB unit failed"
tail -1 "$SCRATCH/up-front.csv" | grep -q '^//ml:inference_test,,[0-9.]*,61500,ws-0,2,.*,0,true,true,,,1$' ||
  fail "the record does not say the peak was taken up front: $(cat "$SCRATCH/up-front.csv")"
# Not so for the same peak without JAX (PyTorch near its GPU's memory: near capacity, a need),
# nor for JAX with XLA_PYTHON_CLIENT_PREALLOCATE=false in its environment (as pack sets it).
"${NVML[@]}" "$GPUPLAN" exec "$SCRATCH/inference.json" --node ws-0 --results "$SCRATCH/need.csv" \
  --command "sleep 30 & $(sampled_after); echo \"2 \$! 61500\" >$SCRATCH/nvml.procs; $(sampled); kill \$!; wait; true" \
  >/dev/null 2>&1 || fail "exec failed"
XLA_PYTHON_CLIENT_PREALLOCATE=false "${NVML[@]}" "$GPUPLAN" exec "$SCRATCH/inference.json" --node ws-0 \
  --results "$SCRATCH/need.csv" --command "$jax_like" >/dev/null 2>&1 || fail "exec failed"
[ "$(grep -c ',61500,ws-0,2,.*,0,true,false,,,1$' "$SCRATCH/need.csv")" = 2 ] ||
  fail "a peak that is a need was taken for memory taken up front: $(cat "$SCRATCH/need.csv")"
sed 's|^//ml:inference_test,|//xla:triton_test,|' "$SCRATCH/up-front.csv" >"$SCRATCH/triton.csv"  # it declares no gpu-mem
"$GPUPLAN" plan "$SOURCE_DIR/examples/query.xml" --fleet "$SOURCE_DIR/examples/fleet.yaml" --history "$SCRATCH/triton.csv" \
  -o "$SCRATCH/up-front.json" 2>"$SCRATCH/up-front.err" || fail "plan with the history failed: $(cat "$SCRATCH/up-front.err")"
grep -q "//xla:triton_test: its runs' peak GPU memory, 61500 MiB, is 74% or more of the GPU it ran on: memory its framework took up front" \
  "$SCRATCH/up-front.err" || fail "plan does not warn of memory taken up front: $(cat "$SCRATCH/up-front.err")"
[ "$(jq '.assignments[] | select(.label == "//xla:triton_test") | .vram_mib' "$SCRATCH/up-front.json")" = null ] ||
  fail "memory taken up front was reserved"
refuses "" plan "$SOURCE_DIR/examples/query.xml" --fleet "$SOURCE_DIR/examples/fleet.yaml" --history "$SCRATCH/triton.csv" \
  --strict -o "$SCRATCH/strict.json"
"$GPUPLAN" history suggest --plan "$SCRATCH/up-front.json" --history "$SCRATCH/triton.csv" >"$SCRATCH/suggest.out" ||
  fail "history suggest failed"
grep -A2 "^GPU tests whose peak is memory their framework took up front (JAX, TensorFlow): what they need is unknown (1)" \
  "$SCRATCH/suggest.out" | grep -q "measured: peak 61500 MiB in 1 run, 74% or more of its GPU's memory" ||
  fail "history suggest does not name the test: $(cat "$SCRATCH/suggest.out")"
"$GPUPLAN" history show //xla:triton_test --history "$SCRATCH/triton.csv" | grep -q "peak 61500 MiB (taken up front)" ||
  fail "history show does not mark the peak taken up front"
# A unit that picks its GPU itself (here its shell shows up on GPU 0; the plan gave it GPU 2) ran
# beside the units planned there: exec says which GPU, and which it was given.
"${NVML[@]}" "$GPUPLAN" exec "$SCRATCH/inference.json" --node ws-0 \
  --command "$(sampled_after); printf '2 %s 512\n0 %s 256\n' \$\$ \$\$ >$SCRATCH/nvml.procs; $(sampled)" >/dev/null 2>"$SCRATCH/nvml.err" ||
  fail "exec with the NVML stand-in failed: $(cat "$SCRATCH/nvml.err")"
grep -q "^gpuplan exec: warning: //ml:inference_test used GPU 0, which the plan did not give it (it was given GPU 2): it picks its GPU itself" \
  "$SCRATCH/nvml.err" || fail "no warning for a unit on a GPU it was not given: $(cat "$SCRATCH/nvml.err")"
# Under the default bazel test, run-under sees it and exec repeats it where the CI log shows it
# (a test's own log is seldom read). The stand-in for bazel runs the one test as Bazel would:
# its --run_under command, then the test.
mkdir -p "$SCRATCH/stub-picks"
cat >"$SCRATCH/stub-picks/bazel" <<STUB
#!/bin/bash
for arg; do case \$arg in --run_under=*) run_under=\${arg#--run_under=};; esac; done
TEST_TARGET=//ml:inference_test \$run_under sh -c "printf '0 %s 256\\n' \\\$\\\$ >$SCRATCH/nvml.procs; sleep 0.5"
STUB
chmod +x "$SCRATCH/stub-picks/bazel"
PATH=$SCRATCH/stub-picks:$PATH "${NVML[@]}" "$GPUPLAN" exec "$SCRATCH/inference.json" --node ws-0 \
  --lock-dir "$SCRATCH/picks-locks" >/dev/null 2>"$SCRATCH/picks.err" || fail "exec of the stub bazel failed: $(cat "$SCRATCH/picks.err")"
[ "$(grep -c "^gpuplan exec: warning: //ml:inference_test used GPU 0, which the plan did not give it (it was given GPU 2)" "$SCRATCH/picks.err")" = 1 ] ||
  fail "exec's bazel test does not repeat run-under's warning once: $(cat "$SCRATCH/picks.err")"

# A node of 1,700 long labels: bazel test reads them from a file in the lock directory, named by
# their hash, which exec removes when bazel test ends (each run left one behind before).
/usr/bin/python3 - "$PLAN" "$SCRATCH/many.json" <<'PY'
import json, sys
plan = json.load(open(sys.argv[1]))
template = plan["assignments"][5]
plan["assignments"] = []
for i in range(1700):
    label = f"//xla/service/gpu/tests:kernel_tiling_test_variant_{i:04}_long_suffix"
    plan["assignments"].append(dict(template, unit=label, label=label, node="ws-0", gpus=[0], start_s=i,
                                    end_s=i + 1, duration_s=1, env={"CUDA_VISIBLE_DEVICES": "0"}))
plan["unschedulable"] = []
plan["summary"].update(makespan_s=1700, scheduled_units=1700, gpu_units=1700, unschedulable_units=0)
json.dump(plan, open(sys.argv[2], "w"), indent=1)
PY
mkdir -p "$SCRATCH/stub-file"
cat >"$SCRATCH/stub-file/bazel" <<STUB
#!/bin/bash
for arg; do case \$arg in --target_pattern_file=*) f=\${arg#*=}; [ "\$(wc -l <"\$f")" = 1700 ] && echo "\$f" >$SCRATCH/targets-seen;; esac; done
STUB
chmod +x "$SCRATCH/stub-file/bazel"
PATH=$SCRATCH/stub-file:$PATH "$GPUPLAN" exec "$SCRATCH/many.json" --node ws-0 --lock-dir "$SCRATCH/file-locks" \
  >/dev/null 2>"$SCRATCH/file.err" || fail "exec of 1,700 labels failed: $(cat "$SCRATCH/file.err")"
targets=$(cat "$SCRATCH/targets-seen" 2>/dev/null) || fail "bazel test was not given the 1,700 labels in a file"
[[ $targets == "$SCRATCH/file-locks/targets-"* ]] && [ ! -e "$targets" ] ||
  fail "the target pattern file $targets was left behind: $(ls "$SCRATCH/file-locks")"

# 2c. A GPU the plan gives out that this machine lacks: exec refuses before any unit runs (exit 2),
#     for a unit given it would find no GPU, and a test that skips its GPU paths would pass. Here
#     NVML's stand-in counts 3 GPUs where the plan uses 4 (one fell off the bus); then no NVML on a
#     machine without a GPU device file (this one). --missing-gpus=warn runs the units anyway.
refused() {  # refused PLAN MESSAGE VARIABLE=VALUE...: exec of PLAN under them refuses, saying MESSAGE, runs nothing
  local plan=$1 message=$2 status=0; shift 2
  env "$@" "$GPUPLAN" exec "$plan" --node ws-0 --command "touch $SCRATCH/ran" >"$SCRATCH/missing.out" 2>&1 || status=$?
  [ "$status" = 2 ] && [ ! -e "$SCRATCH/ran" ] || fail "exec ran (exit $status) where GPUs are missing: $(cat "$SCRATCH/missing.out")"
  grep -qF "gpuplan: node ws-0: $message" "$SCRATCH/missing.out" && grep -q 'nothing was run' "$SCRATCH/missing.out" ||
    fail "exec's refusal does not say what is missing: $(cat "$SCRATCH/missing.out")"
}
refused "$PLAN" "NVML sees 3 GPUs (0-2) on this machine, and the plan gives units GPU 3" GPUPLAN_FAKE_NVML_GPUS=3
if ls /dev/nvidia[0-9]* /dev/kfd /dev/dri/renderD* >/dev/null 2>&1; then
  echo "this machine has a GPU device file: exec without NVML on a machine without GPUs is not tried" >&2
else
  refused "$PLAN" "this machine shows no GPU: NVML (libnvidia-ml.so.1) cannot be loaded" \
    GPUPLAN_NVML_LIBRARY=/nonexistent/libnvidia-ml.so.1
fi
# Nor GPUs outside a launcher's allocation: a Slurm job given GPUs 5 and 6 of a node NVML sees
# whole (before, its CUDA_VISIBLE_DEVICES was replaced by the plan's 0-3, other jobs' GPUs).
refused "$PLAN" "this process was started with CUDA_VISIBLE_DEVICES=5,6 (a launcher's allocation), which does not hold GPU 0" \
  CUDA_VISIBLE_DEVICES=5,6
env CUDA_VISIBLE_DEVICES=0,1,2,3 "$GPUPLAN" exec "$PLAN" --node ws-0 --command true >"$SCRATCH/missing.out" 2>&1 ||
  fail "exec in an allocation of the node's GPUs: $(cat "$SCRATCH/missing.out")"
# Nor GPUs or a driver that lack what a unit needs, where NVML says so: compute capability 8.0
# where //ml:pool_test needs 9.0 (the test would skip its Hopper paths and pass), CUDA 12.2
# where //ml:inference_test needs 12.4 (JAX would fall back to the CPU).
jq '(.assignments[] | select(.unit == "//ml:pool_test") | .requirements.compute_capability) = ">=9.0"
    | (.assignments[] | select(.unit == "//ml:inference_test") | .requirements.cuda) = ">=12.4"' "$PLAN" >"$SCRATCH/needs.json"
refused "$SCRATCH/needs.json" "//ml:pool_test needs compute capability ≥ 9.0, and GPU 3 of this machine (NVIDIA A100-SXM4-80GB) has 8.0 (NVML)" \
  GPUPLAN_FAKE_NVML_CC=8.0 GPUPLAN_FAKE_NVML_NAME="NVIDIA A100-SXM4-80GB"
refused "$SCRATCH/needs.json" "//ml:inference_test needs CUDA ≥ 12.4, and this machine's driver supports CUDA 12.2 (NVML)" \
  GPUPLAN_FAKE_NVML_CC=9.0 GPUPLAN_FAKE_NVML_CUDA=12.2
# Nor GPUs clearly smaller than a unit needs: 60 GiB on 24 GiB GPUs (before, it ran and passed: a
# test that sizes its work to the memory it finds); a whole-GiB need a little over NVML's total
# (gpu-mem:80GiB on an 80 GB GPU, 81,559 MiB) runs.
jq '(.assignments[] | select(.unit == "//ml:pool_test") | .requirements.gpu_mem_mib) = 61440' "$PLAN" >"$SCRATCH/mem.json"
refused "$SCRATCH/mem.json" "//ml:pool_test needs 60GiB (61440 MiB) per GPU, and GPU 3 of this machine has 24576 MiB (NVML)" \
  GPUPLAN_FAKE_NVML_MEM_GIB=24
jq '(.assignments[] | select(.unit == "//ml:pool_test") | .requirements.gpu_mem_mib) = 81920' "$PLAN" >"$SCRATCH/mem.json"
GPUPLAN_FAKE_NVML_MEM_GIB=79 "$GPUPLAN" exec "$SCRATCH/mem.json" --node ws-0 --command true >"$SCRATCH/missing.out" 2>&1 ||
  fail "exec of gpu-mem:80GiB on GPUs of 79 GiB (NVML): $(cat "$SCRATCH/missing.out")"
# Nor GPUs in MIG mode, where CUDA shows a process one slice of one GPU whatever it is given.
refused "$PLAN" "//ml:train_test#shard-1-of-4 is given GPU 2, which is in MIG mode on this machine (NVML)" \
  GPUPLAN_FAKE_NVML_MIG=2
GPUPLAN_FAKE_NVML_CC=9.0 GPUPLAN_FAKE_NVML_CUDA=12.4 "$GPUPLAN" exec "$SCRATCH/needs.json" --node ws-0 --command true \
  >"$SCRATCH/missing.out" 2>&1 || fail "exec on a machine with what every unit needs: $(cat "$SCRATCH/missing.out")"
mkdir -p "$SCRATCH/stub-bazel"  # the default command checks before Bazel starts
printf '#!/bin/sh\ntouch %q\n' "$SCRATCH/ran" >"$SCRATCH/stub-bazel/bazel" && chmod +x "$SCRATCH/stub-bazel/bazel"
status=0
PATH=$SCRATCH/stub-bazel:$PATH GPUPLAN_FAKE_NVML_GPUS=3 "$GPUPLAN" exec "$PLAN" --node ws-0 >"$SCRATCH/missing.out" 2>&1 || status=$?
[ "$status" = 2 ] && [ ! -e "$SCRATCH/ran" ] && grep -q 'NVML sees 3 GPUs' "$SCRATCH/missing.out" ||
  fail "exec's bazel test ran (exit $status) where GPUs are missing: $(cat "$SCRATCH/missing.out")"
GPUPLAN_FAKE_NVML_GPUS=3 "$GPUPLAN" exec "$PLAN" --node ws-0 --missing-gpus=warn --command true \
  --results "$SCRATCH/missing.csv" >"$SCRATCH/missing.out" 2>&1 ||
  fail "exec --missing-gpus=warn failed: $(cat "$SCRATCH/missing.out")"
grep -q '^10 units: 10 passed$' "$SCRATCH/missing.out" && grep -q 'warning: node ws-0: NVML sees 3 GPUs' "$SCRATCH/missing.out" &&
  grep -qF 'their results records give them only those of their GPUs this machine has' "$SCRATCH/missing.out" ||
  fail "exec --missing-gpus=warn: $(cat "$SCRATCH/missing.out")"
# CUDA leaves GPU 3 out: the records give units only the GPUs here (before, the plan's), so the
# units on GPU 3 alone were given none, which history leaves out of a GPU test's duration.
/usr/bin/python3 - "$SCRATCH/missing.csv" <<'PY' || fail "exec --missing-gpus=warn records GPUs this machine lacks: $(cat "$SCRATCH/missing.csv")"
import csv, sys
gpus = {(r["label"], r["shard"]): r["gpus"] for r in csv.DictReader(open(sys.argv[1]))}
assert gpus[("//ml:pool_test", "")] == "", gpus
assert gpus[("//ml:train_test", "1")] == "2", gpus
assert gpus[("//ml:team_macro_test", "")] == "0,1,2", gpus
assert gpus[("//ml:inference_test", "")] == "2", gpus
PY

# 3. A failing and a timed-out unit do not stop the others; exit code 3. The timed-out unit's
# record says "timeout", so that the next plan takes its 2 s as a lower bound, not as its time.
status=0
"$GPUPLAN" exec "$PLAN" --node ws-0 --timeout 2 --results "$SCRATCH/fail.csv" \
  --command 'case {label} in //ml:pool_test) exit 7;; //ml:inference_test) sleep 30;; esac' >"$SCRATCH/fail.out" ||
  status=$?
[ "$status" = 3 ] || { cat "$SCRATCH/fail.out"; fail "exec with failures exited $status, not 3"; }
grep -q '^10 units: 1 failed, 8 passed, 1 timed out$' "$SCRATCH/fail.out" || { cat "$SCRATCH/fail.out"; fail "wrong table"; }
grep -qE '^//ml:pool_test +3 .*failed \(exit 7\)$' "$SCRATCH/fail.out" || fail "the failure is not in the table"
grep -qE '^//ml:inference_test,,2\.[0-9]+,,ws-0,[0-9,"]+,[^,]+,timeout,false,,,,[0-9]+$' "$SCRATCH/fail.csv" ||
  fail "the timed-out unit's record: $(cat "$SCRATCH/fail.csv")"
grep -qE '^//ml:pool_test,,[0-9.]+,,ws-0,[0-9,"]+,[^,]+,7,false,,,,[0-9]+$' "$SCRATCH/fail.csv" || fail "the failed unit's record"
"$GPUPLAN" history show //ml:inference_test --history "$SCRATCH/fail.csv" | grep -q "(history-timeout)" ||
  fail "history took the timed-out run's time as a sample: $("$GPUPLAN" history show //ml:inference_test --history "$SCRATCH/fail.csv")"

# 4. SIGTERM stops the running units (their whole process groups) and exits 143.
: >"$SCRATCH/pids"
"$GPUPLAN" exec "$PLAN" --node ws-0 --command "sh -c 'echo \$\$ >> $SCRATCH/pids; sleep 60' & wait" \
  >"$SCRATCH/stop.out" &
exec_pid=$!
for _ in $(seq 600); do [ "$(wc -l <"$SCRATCH/pids")" = 2 ] && break; sleep 0.1; done
[ "$(wc -l <"$SCRATCH/pids")" = 2 ] || fail "the first two units did not start"
kill -TERM "$exec_pid"
status=0
timeout 10 tail --pid="$exec_pid" -f /dev/null || fail "exec did not stop within 10 s of SIGTERM"
wait "$exec_pid" || status=$?
[ "$status" = 143 ] || fail "exec stopped by SIGTERM exited $status, not 143"
gone() {  # a process that has ended (or is a zombie waiting for init) within 20 s (a loaded machine)
  for _ in $(seq 200); do
    { [ ! -e "/proc/$1" ] || [ "$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null)" = Z ]; } && return 0
    sleep 0.1
  done
  return 1
}
while read -r pid; do gone "$pid" || fail "unit process $pid outlived exec"; done <"$SCRATCH/pids"
grep -q '^10 units: 8 not run, 2 stopped$' "$SCRATCH/stop.out" || { cat "$SCRATCH/stop.out"; fail "wrong table"; }

# A daemon a --command unit leaves running (setsid: out of its process group) ends with the
# unit, before its GPUs go to the next unit, and exec's log says so.
"$GPUPLAN" exec "$SCRATCH/inference.json" --node ws-0 --command \
  "setsid bash -c 'echo \$\$ >$SCRATCH/exec-daemon.pid; exec sleep 30' </dev/null >/dev/null 2>&1 & until [ -s $SCRATCH/exec-daemon.pid ]; do sleep 0.05; done" \
  >/dev/null 2>"$SCRATCH/exec-daemon.err" || fail "exec of a unit that leaves a daemon failed"
grep -q "gpuplan exec: the unit left processes running; they were killed before its GPUs were released" \
  "$SCRATCH/exec-daemon.err" || fail "exec said nothing of the daemon its unit left: $(cat "$SCRATCH/exec-daemon.err")"
gone "$(cat "$SCRATCH/exec-daemon.pid")" || fail "the daemon a unit left still runs after exec ended"

# 5. Hostile labels reach the command as one word each, and run nothing.
/usr/bin/python3 - "$PLAN" "$SCRATCH/hostile.json" "$SCRATCH" <<'PY'
import json, sys
plan = json.load(open(sys.argv[1]))
d = sys.argv[3]
labels = [f"//a:x$(touch {d}/pwned)", f"//a:x;touch {d}/pwned", "//a:it's", '//a:"q"', f"//a:`touch {d}/pwned`"]
template = plan["assignments"][4]
one_gpu = dict(template["requirements"], gpus=1)  # as each is placed
plan["assignments"] = [dict(template, label=l, unit=l, gpus=[i], requirements=one_gpu) for i, l in enumerate(labels)]
json.dump(plan, open(sys.argv[2], "w"))
PY
"$GPUPLAN" exec "$SCRATCH/hostile.json" --node ws-0 --command "printf '%s\n' {label} {unit} >> $SCRATCH/labels" \
  >/dev/null || fail "exec of hostile labels failed"
diff <(jq -r '.assignments[] | .label, .unit' "$SCRATCH/hostile.json" | sort) <(sort "$SCRATCH/labels") ||
  fail "hostile labels were not passed as themselves"
[ ! -e "$SCRATCH/pwned" ] || fail "a label was run as a command"

# 7. An exclusive unit, and under whole-node a multi-GPU unit, runs alone on its node although
#    its planned GPUs are free earlier (real processes; the planned times are only estimates).
jq '(.assignments[] | select(.unit == "//ml:pool_test") | .requirements.exclusive) = true' "$PLAN" \
  >"$SCRATCH/exclusive.json"
jq '.policy = "whole-node"' "$PLAN" >"$SCRATCH/whole-node.json"
for plan in exclusive whole-node; do
  "$GPUPLAN" exec "$SCRATCH/$plan.json" --node ws-0 --results "$SCRATCH/$plan.csv" \
    --command 'sleep 0.3' >"$SCRATCH/$plan.out" || { cat "$SCRATCH/$plan.out"; fail "exec of the $plan plan failed"; }
  /usr/bin/python3 - "$SCRATCH/$plan.csv" "$plan" <<'PY' || fail "a unit ran beside one that holds the node ($plan)"
import csv, sys
from datetime import datetime
rows = list(csv.DictReader(open(sys.argv[1])))
def span(r):
    start = datetime.fromisoformat(r["start"].replace("Z", "+00:00")).timestamp()
    return start, start + float(r["seconds"])
def alone(r):
    return r["label"] == "//ml:pool_test" if sys.argv[2] == "exclusive" else len(r["gpus"].split(",")) > 1
holders = [r for r in rows if alone(r)]
assert holders and len(rows) == 10, rows
for h in holders:
    for r in rows:
        if r is not h:
            (s1, e1), (s2, e2) = span(h), span(r)
            assert not (s1 < e2 - 0.02 and s2 < e1 - 0.02), (h, r)
PY
done

# 5b. With --fleet (no --claims), a unit that holds the node holds its GPUs the plan leaves idle
#     too, so a run-under on this machine cannot take GPU 6 beside it; a fleet without the node is
#     bad input, not silently ignored.
jq '.assignments |= [.[9] | .requirements.exclusive = true]' "$PLAN" >"$SCRATCH/exclusive.json"
cat >"$SCRATCH/ws8.yaml" <<'YAML'
version: 1
pools:
  - name: ws
    nodes: [ws-0]
    gpu: {model: L4, count: 8}
    cuda: "12.4"
YAML
# The unit runs until told to end: one of a fixed 2 s could end before GPU 6 was tried (a loaded machine).
"$GPUPLAN" exec "$SCRATCH/exclusive.json" --node ws-0 --fleet "$SCRATCH/ws8.yaml" --lock-dir "$SCRATCH/locks8" \
  --command "touch $SCRATCH/ws8.started; until [ -e $SCRATCH/ws8.end ] || [ ! -d $SCRATCH ]; do sleep 0.1; done" >"$SCRATCH/ws8.out" 2>&1 &
holder=$!
for _ in $(seq 600); do [ -e "$SCRATCH/ws8.started" ] && break; sleep 0.1; done
[ -e "$SCRATCH/ws8.started" ] || fail "the exclusive unit did not start: $(cat "$SCRATCH/ws8.out")"
flock -n "$SCRATCH/locks8/gpu-6.lock" true && { touch "$SCRATCH/ws8.end"; fail "GPU 6 was free beside an exclusive unit under --fleet"; }
touch "$SCRATCH/ws8.end"
wait "$holder" || fail "exec --fleet: $(cat "$SCRATCH/ws8.out")"
sed 's/ws-0/ws-9/' "$SCRATCH/ws8.yaml" >"$SCRATCH/ws9.yaml"
refuses 'the fleet has no node "ws-0"' exec "$SCRATCH/exclusive.json" --node ws-0 --fleet "$SCRATCH/ws9.yaml" --command true

# 6. The default command: one real `bazel test` of the node's labels with one fixed --run_under
#    (the node read from a file), each test on its planned GPUs; a second run of the same plan
#    is fully cached and Bazel keeps its analysis cache.
# A .bazelrc of CPU CI (test --test_tag_filters=-gpu,...) comes before exec's own options.
bazel_wrapper "$SCRATCH/bin" --test_tag_filters=-gpu,-gpu:2,-gpu:8,-resources:gpu:2 --test_size_filters=small \
  --test_lang_filters=-sh,-py --test_env=GPU_PROBE_LOG="$SCRATCH/bazel-probe.log" --sandbox_writable_path="$SCRATCH"
: >"$SCRATCH/bazel-probe.log"
# The first run starts the Bazel server under exec's unit, whose supervisor ends what a unit
# leaves running, but not a Bazel server: the second run finds the same one.
bazel_ws shutdown 2>/dev/null
# A results file keeps every run: an earlier run's failure of a planned test is not this run's.
old_failure=$(/usr/bin/python3 -c 'import json, sys; print(next(a["label"] for a in json.load(open(sys.argv[1]))["assignments"] if a["node"] == "ws-0"))' "$PLAN")
printf 'label,shard,seconds,peak_vram_mib,node,gpus,start,exit_status,gpu_touched\n%s,,3.0,,ws-0,0,2026-01-01T00:00:00.000Z,1,\n' \
  "$old_failure" >"$SCRATCH/bazel-results.csv"
for run in 1 2; do
  PATH=$SCRATCH/bin:$PATH "$GPUPLAN" exec "$PLAN" --node ws-0 --lock-dir "$SCRATCH/bazel-locks" \
    --results "$SCRATCH/bazel-results.csv" --junit "$SCRATCH/bazel-junit.xml" \
    >"$SCRATCH/bazel$run.out" 2>&1 || { cat "$SCRATCH/bazel$run.out"; fail "exec's default bazel test failed (run $run)"; }
  bazel_ws info server_pid >"$SCRATCH/server$run.pid" 2>/dev/null
  cp "$SCRATCH/bazel-junit.xml" "$SCRATCH/bazel-junit$run.xml"
done
[ "$(cat "$SCRATCH/server1.pid")" = "$(cat "$SCRATCH/server2.pid")" ] && ! grep -q "left processes running" "$SCRATCH/bazel1.out" ||
  fail "exec's unit killed the Bazel server it started (pid $(cat "$SCRATCH/server1.pid"), then $(cat "$SCRATCH/server2.pid"))"
# run-under wrote a record for each unit the first run ran (the second ran none: all cached).
[ "$(grep -c '^//' "$SCRATCH/bazel-results.csv")" = 11 ] || fail "records: $(cat "$SCRATCH/bazel-results.csv")"
# The JUnit is each unit as Bazel said it ended in this run: all passed (the record of an
# earlier failure is not this run's), and the second time all from Bazel's cache.
for run in 1 2; do
  xmllint --noout "$SCRATCH/bazel-junit$run.xml" || fail "--junit (run $run) is not well-formed XML"
  grep -q '<testsuites name="gpuplan" tests="10" failures="0"' "$SCRATCH/bazel-junit$run.xml" ||
    fail "--junit (run $run): $(cat "$SCRATCH/bazel-junit$run.xml")"
done
[ "$(grep -c 'name="cached" value="true"' "$SCRATCH/bazel-junit1.xml")" = 0 ] &&
  [ "$(grep -c 'name="cached" value="true"' "$SCRATCH/bazel-junit2.xml")" = 10 ] ||
  fail "--junit does not say which results Bazel took from its cache: $(cat "$SCRATCH/bazel-junit2.xml")"
ls "$SCRATCH"/bazel-locks/build-events-* 2>/dev/null && fail "exec left its build events file behind"
grep -q '^bazel test of 10 units: passed$' "$SCRATCH/bazel1.out" || fail "no last line for the bazel test: $(cat "$SCRATCH/bazel1.out")"
# An option Bazel refuses is bad usage (exit 2), not a test that failed (Bazel 4 exits 2 for it).
status=0
PATH=$SCRATCH/bin:$PATH "$GPUPLAN" exec "$PLAN" --node ws-0 --lock-dir "$SCRATCH/bazel-locks" -- --no_such_option=1 \
  >"$SCRATCH/badopt.out" 2>&1 || status=$?
[ "$status" = 2 ] && grep -q "bazel test refused its options" "$SCRATCH/badopt.out" ||
  fail "an option bazel test refuses: exit $status $(cat "$SCRATCH/badopt.out")"
# Run outside any workspace (a Kubernetes Job's container in its image's working directory), the
# real Bazel refuses to test: exec's last line says where it ran and that no workspace is there
# (before, only "check the options after --", which had none).
mkdir -p "$SCRATCH/nowhere" "$SCRATCH/here-bin"
printf '#!/bin/sh\nexec %q --output_user_root=%q --max_idle_secs=60 "$@"\n' "$(command -v bazel)" "$BAZEL_ROOT" \
  >"$SCRATCH/here-bin/bazel" && chmod +x "$SCRATCH/here-bin/bazel"
status=0
(cd "$SCRATCH/nowhere" && PATH=$SCRATCH/here-bin:$PATH "$GPUPLAN" exec "$PLAN" --node ws-0 --lock-dir "$SCRATCH/bazel-locks") \
  >"$SCRATCH/nowhere.out" 2>&1 || status=$?
[ "$status" = 2 ] && grep -q "only supported from within a workspace" "$SCRATCH/nowhere.out" &&
  grep -q "that exec runs in the Bazel workspace: $SCRATCH/nowhere has no MODULE.bazel" "$SCRATCH/nowhere.out" ||
  fail "exec outside a workspace: exit $status $(cat "$SCRATCH/nowhere.out")"
# A .bazelrc's --run_under (in a --config the team gives) would be replaced by exec's: said, with its line.
mkdir -p "$SCRATCH/rcws/pkg" && touch "$SCRATCH/rcws/MODULE.bazel"
printf 'build --jobs=4\ntest:asan --run_under=//tools:asan_wrapper\n' >"$SCRATCH/rcws/.bazelrc"
(cd "$SCRATCH/rcws/pkg" && "$GPUPLAN" exec "$PLAN" --node ws-0 --dry-run -- --config=asan) >/dev/null 2>"$SCRATCH/rc.err" ||
  fail "exec --dry-run with a .bazelrc: $(cat "$SCRATCH/rc.err")"
grep -q "warning: $SCRATCH/rcws/.bazelrc:2: --config=asan gives bazel test --run_under=//tools:asan_wrapper" "$SCRATCH/rc.err" ||
  fail "a .bazelrc's --run_under that exec's replaces was not named: $(cat "$SCRATCH/rc.err")"
# What Bazel refuses in a .bazelrc is named with its line, before Bazel's own error, which names none
# (Bazel 4.2.3: "While parsing option --run_under=: Empty command"), and exec's exit 2 that follows.
printf 'test:asan --run_under=\n' >>"$SCRATCH/rcws/.bazelrc"
(cd "$SCRATCH/rcws/pkg" && "$GPUPLAN" exec "$PLAN" --node ws-0 --dry-run -- --config=asan) >/dev/null 2>"$SCRATCH/rc.err" ||
  fail "exec --dry-run with an empty --run_under in a .bazelrc: $(cat "$SCRATCH/rc.err")"
grep -q "warning: $SCRATCH/rcws/.bazelrc:3: --run_under=, which Bazel refuses ('While parsing option --run_under=: Empty command') even where a later one replaces it: Bazel refuses this" "$SCRATCH/rc.err" ||
  fail "an empty --run_under in a .bazelrc, which Bazel refuses, was not named: $(cat "$SCRATCH/rc.err")"
# Bazel 4.2.3 ends on an rc file's import it cannot read with exit 37 ('Unexpected error reading
# .blazerc file'), before any test: bad input, as an option it refuses, not failed tests (exit 3).
printf 'import %%workspace%%/absent.bazelrc\n' >"$SCRATCH/rcws/.bazelrc"
mkdir -p "$SCRATCH/rc-bazel"
printf '#!/bin/sh\necho "FATAL: Unexpected error reading .blazerc file" >&2\nexit 37\n' >"$SCRATCH/rc-bazel/bazel"
chmod +x "$SCRATCH/rc-bazel/bazel"
status=0
(cd "$SCRATCH/rcws/pkg" && PATH=$SCRATCH/rc-bazel:$PATH "$GPUPLAN" exec "$PLAN" --node ws-0 --lock-dir "$SCRATCH/bazel-locks") \
  >"$SCRATCH/rc37.out" 2>&1 || status=$?
[ "$status" = 2 ] && grep -q "rcws/.bazelrc:1: imports $SCRATCH/rcws/absent.bazelrc, which cannot be read" "$SCRATCH/rc37.out" &&
  grep -q "bazel test refused its options (exit 37" "$SCRATCH/rc37.out" ||
  fail "a .bazelrc import Bazel cannot read: exit $status $(cat "$SCRATCH/rc37.out")"
# A team's events file an earlier build left, where this bazel test stopped before writing one:
# not this run's results (before, its passes were this run's).
mkdir -p "$SCRATCH/stopped-bazel"
printf '#!/bin/sh\necho "ERROR: stopped" >&2\nexit 2\n' >"$SCRATCH/stopped-bazel/bazel" && chmod +x "$SCRATCH/stopped-bazel/bazel"
printf '{"id":{"testResult":{"label":"%s","run":1,"shard":1,"attempt":1}},"testResult":{"status":"PASSED"}}\n' \
  "$old_failure" >"$SCRATCH/stale-events.json"
status=0
PATH=$SCRATCH/stopped-bazel:$PATH "$GPUPLAN" exec "$PLAN" --node ws-0 --lock-dir "$SCRATCH/bazel-locks" \
  --junit "$SCRATCH/stale.xml" -- --build_event_json_file="$SCRATCH/stale-events.json" >"$SCRATCH/stale.out" 2>&1 || status=$?
[ "$status" = 2 ] && grep -q "were not written in this run" "$SCRATCH/stale.out" &&
  grep -q 'tests="10" failures="10"' "$SCRATCH/stale.xml" ||
  fail "an earlier build's events were read as this run's: exit $status $(cat "$SCRATCH/stale.out" "$SCRATCH/stale.xml")"
# What the default command cannot do is refused before Bazel starts, not silently skipped.
refuses "--json" exec "$PLAN" --node ws-0 --json "$SCRATCH/x.json"
/usr/bin/python3 - "$PLAN" "$SCRATCH/bazel-probe.log" <<'PY' || fail "bazel test's tests did not see their planned GPUs"
import json, sys
plan, log = sys.argv[1:]
planned = sorted(f"target={a['label']} shard={'' if a['shard_index'] is None else a['shard_index']}/"
                 f"{a['shard_count'] if a['shard_index'] is not None else ''} gpus={','.join(map(str, a['gpus']))}"
                 for a in json.load(open(plan))["assignments"])
seen = sorted(line.strip() for line in open(log))
assert seen == planned, f"saw {seen}\nplanned {planned}"
PY
! grep -q "discarding analysis cache" "$SCRATCH/bazel2.out" || { cat "$SCRATCH/bazel2.out"; fail "the second run discarded Bazel's analysis cache"; }
[ "$(grep -c 'PASSED in\|(cached) PASSED' "$SCRATCH/bazel2.out")" = 7 ] &&
  [ "$(grep -c '(cached) PASSED' "$SCRATCH/bazel2.out")" = 7 ] ||
  { cat "$SCRATCH/bazel2.out"; fail "the second run of the same plan was not fully cached"; }
# Options after -- reach that one bazel test, after what a .bazelrc says and before gpuplan's own
# (a team's --config=cuda): here a --test_env that sends every test's probe line to a file of its own.
PATH=$SCRATCH/bin:$PATH "$GPUPLAN" exec "$PLAN" --node ws-0 --lock-dir "$SCRATCH/bazel-locks" \
  -- --test_env=GPU_PROBE_LOG="$SCRATCH/args-probe.log" >"$SCRATCH/bazel3.out" 2>&1 ||
  { cat "$SCRATCH/bazel3.out"; fail "exec -- --test_env=... failed"; }
[ "$(wc -l <"$SCRATCH/args-probe.log")" = 10 ] || fail "the options after -- did not reach the tests"
# With NVML (the stand-in again, handed to the tests through --test_env), the records run-under
# wrote for tests that touched no GPU make exec warn, as it does for units it runs itself.
PATH=$SCRATCH/bin:$PATH "$GPUPLAN" exec "$PLAN" --node ws-0 --lock-dir "$SCRATCH/bazel-locks" \
  --results "$SCRATCH/nvml-results.csv" -- --test_env=GPU_PROBE_SLEEP=1.1 --test_env="${NVML[1]}" \
  --test_env="${NVML[2]}" >"$SCRATCH/bazel4.out" 2>&1 || { cat "$SCRATCH/bazel4.out"; fail "exec with NVML in the tests failed"; }
grep -q "warning: none of the 10 GPU units NVML measured for a second or more touched a GPU" "$SCRATCH/bazel4.out" ||
  { cat "$SCRATCH/bazel4.out" "$SCRATCH/nvml-results.csv"; fail "no warning for tests that touched no GPU under bazel test"; }
# --missing-gpus=warn reaches the run-under of that bazel test: NVML's stand-in counts 3 GPUs where
# the plan uses 4, and the tests given GPU 3 run too (before, exec warned that it ran the units
# anyway, and run-under refused each test on GPU 3: exit 3).
GPUPLAN_FAKE_NVML_GPUS=3 PATH=$SCRATCH/bin:$PATH "$GPUPLAN" exec "$PLAN" --node ws-0 --lock-dir "$SCRATCH/bazel-locks" \
  --missing-gpus=warn -- --test_env="${NVML[1]}" --test_env=GPUPLAN_FAKE_NVML_GPUS >"$SCRATCH/bazel5.out" 2>&1 ||
  { cat "$SCRATCH/bazel5.out"; fail "exec --missing-gpus=warn: its bazel test refused the tests on GPU 3"; }
grep -q 'warning: node ws-0: NVML sees 3 GPUs' "$SCRATCH/bazel5.out" && grep -q '^bazel test of 10 units: passed$' "$SCRATCH/bazel5.out" ||
  { cat "$SCRATCH/bazel5.out"; fail "exec --missing-gpus=warn with bazel test: no warning, or not every test passed"; }
refuses "only bazel test options may follow --" exec "$PLAN" --node ws-0 -- //other:test
refuses -F "Options for the default bazel test go after --: gpuplan exec ... -- --config=cuda" exec "$PLAN" --node ws-0 --config=cuda
"$GPUPLAN" exec "$PLAN" --node ws-0 --lock-dir /locks --dry-run | grep -qF -- \
  "--run_under='$GPUPLAN run-under --plan $PLAN --node-file /locks/node --lock-dir /locks' --sandbox_writable_path=/locks --local_test_jobs=4 --test_tag_filters= --test_size_filters= --test_timeout_filters= --test_lang_filters= -- //ml:flaky_kernel_test //ml:inference_test" ||
  fail "--dry-run does not show the one bazel test command"
# --timeout is each test's, as Bazel's --test_timeout (it killed the whole bazel test); a team's
# --run_under after -- is refused (Bazel kept gpuplan's and dropped it without a word). exec's
# GPUPLAN_NVML_LIBRARY (lib.sh's) is passed on to the tests first, so that the team's options win.
"$GPUPLAN" exec "$PLAN" --node ws-0 --lock-dir /locks --timeout 90 --dry-run -- --config=cuda | grep -qF -- \
  "bazel test --test_env=GPUPLAN_NVML_LIBRARY --test_timeout=90 --config=cuda --run_under=" ||
  fail "--timeout is not the tests' --test_timeout"
refuses "the default bazel test's --run_under is gpuplan run-under" exec "$PLAN" --node ws-0 -- --run_under=/bin/valgrind
# A container is handed no GPU list unless the template says so: with --gpus all it would see them all.
"$GPUPLAN" exec "$PLAN" --node ws-0 --dry-run --command 'docker run --rm --gpus all ci:1 {label}' \
  >/dev/null 2>"$SCRATCH/docker.err" || fail "exec --dry-run with a docker template failed"
grep -q "warning: --command starts a container (docker run) but hands it none of the unit's GPUs" \
  "$SCRATCH/docker.err" || fail "no warning for a container without the unit's GPUs: $(cat "$SCRATCH/docker.err")"
"$GPUPLAN" exec "$PLAN" --node ws-0 --dry-run --command "docker run --rm --gpus '\"device={gpus}\"' ci:1 {label}" \
  >/dev/null 2>"$SCRATCH/docker.err" && [ ! -s "$SCRATCH/docker.err" ] ||
  fail "a container given {gpus} was warned about: $(cat "$SCRATCH/docker.err")"

# 8. Under pack, units sharing a GPU run with TF_FORCE_GPU_ALLOW_GROWTH=true and
#    XLA_PYTHON_CLIENT_PREALLOCATE=false (else TensorFlow or JAX takes most of the GPU's memory at
#    start and its neighbour finds none), through exec and run-under alike; no other unit does.
"$GPUPLAN" plan "$SOURCE_DIR/examples/query.xml" --fleet "$SOURCE_DIR/examples/fleet.yaml" \
  --rules "$SOURCE_DIR/examples/rules.yaml" --policy pack -o "$SCRATCH/pack.json" 2>/dev/null ||
  fail "the pack plan of the examples failed"
"$GPUPLAN" exec "$SCRATCH/pack.json" --node a100-80-2 --lock-dir "$SCRATCH/locks" \
  --command "echo {unit} x\$XLA_PYTHON_CLIENT_PREALLOCATE x\$TF_FORCE_GPU_ALLOW_GROWTH >>$SCRATCH/pack.log" \
  >/dev/null || fail "exec of the pack plan failed"
printf '%s\n' "//jax:docker_runtime_test x x" "//ml:flaky_kernel_test xfalse xtrue" "//ml:inference_test xfalse xtrue" \
  "//ml:remote_exec_test x x" "//tf:conv_test x x" >"$SCRATCH/pack.expected"
sort "$SCRATCH/pack.log" | diff "$SCRATCH/pack.expected" - || fail "exec: the pack plan's environments differ (above)"
for unit in //ml:inference_test //tf:conv_test; do
  TEST_TARGET=$unit "$GPUPLAN" run-under --plan "$SCRATCH/pack.json" --node a100-80-2 --lock-dir "$SCRATCH/locks" \
    sh -c 'echo "$TEST_TARGET x$XLA_PYTHON_CLIENT_PREALLOCATE x$TF_FORCE_GPU_ALLOW_GROWTH"' >>"$SCRATCH/pack-under.log" ||
    fail "run-under of $unit in the pack plan failed"
done
printf '%s\n' "//ml:inference_test xfalse xtrue" "//tf:conv_test x x" | diff - "$SCRATCH/pack-under.log" ||
  fail "run-under: the pack plan's environments differ (above)"
# A container does not inherit them: a template that starts one without passing them gets a warning.
"$GPUPLAN" exec "$SCRATCH/pack.json" --node a100-80-2 --dry-run \
  --command "docker run --rm --gpus '\"device={gpus}\"' ci:1 {label}" >/dev/null 2>"$SCRATCH/docker.err" ||
  fail "exec --dry-run of the pack plan with a docker template failed"
grep -q "warning: units of this pack plan share GPUs, and --command starts a container (docker run)" \
  "$SCRATCH/docker.err" || fail "no warning for a container without the sharing variables: $(cat "$SCRATCH/docker.err")"
# A plan whose shared unit lacks them (hand-edited, or from before) is one verify refuses.
jq '(.assignments[] | select(.unit == "//ml:inference_test") | .env) |= del(.XLA_PYTHON_CLIENT_PREALLOCATE)' \
  "$SCRATCH/pack.json" >"$SCRATCH/pack-old.json"
status=0
"$GPUPLAN" verify "$SCRATCH/pack-old.json" --fleet "$SOURCE_DIR/examples/fleet.yaml" >"$SCRATCH/verify.out" 2>&1 || status=$?
[ "$status" = 4 ] && grep -q 'XLA_PYTHON_CLIENT_PREALLOCATE' "$SCRATCH/verify.out" ||
  fail "verify of a shared unit without XLA_PYTHON_CLIENT_PREALLOCATE: exit $status $(cat "$SCRATCH/verify.out")"
echo PASS
