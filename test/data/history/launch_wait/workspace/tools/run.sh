#!/usr/bin/env bash
echo "target=${TEST_TARGET:-?} shard=${TEST_SHARD_INDEX:-}/${TEST_TOTAL_SHARDS:-} gpus=${CUDA_VISIBLE_DEVICES:-<unset>} argv=$*"
[ -n "${ADOPT_LOG:-}" ] && echo "target=${TEST_TARGET:-?} shard=${TEST_SHARD_INDEX:-}/${TEST_TOTAL_SHARDS:-} gpus=${CUDA_VISIBLE_DEVICES:-<unset>} argv=$*" >> "$ADOPT_LOG"
[ -n "${TEST_SHARD_STATUS_FILE:-}" ] && touch "$TEST_SHARD_STATUS_FILE"
sleep "${ADOPT_SLEEP:-0}"
exit 0
