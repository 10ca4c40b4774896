#!/usr/bin/env bash
# Prints what a GPU test is given by Bazel and the launcher, and appends it to
# $GPU_PROBE_LOG when that is set (the integration tests read it back). With
# $GPU_PROBE_FAIL_ONCE set, the first run fails and leaves that file: a flaky test.
line="target=${TEST_TARGET:-?} shard=${TEST_SHARD_INDEX:-}/${TEST_TOTAL_SHARDS:-} gpus=${CUDA_VISIBLE_DEVICES:-}"
echo "$line"
if [ -n "${GPU_PROBE_LOG:-}" ]; then echo "$line" >> "$GPU_PROBE_LOG"; fi
sleep "${GPU_PROBE_SLEEP:-0}"
if [ -n "${GPU_PROBE_FAIL_ONCE:-}" ] && [ ! -e "$GPU_PROBE_FAIL_ONCE" ]; then
  : > "$GPU_PROBE_FAIL_ONCE"
  exit 1
fi
