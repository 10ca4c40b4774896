#pragma once
// The ranges gpuplan accepts for counts, indices, durations and times in any input
// (README "Limits"). A value beyond them is bad input (exit 2, file:line), never a
// number that wraps, saturates or turns into null on the way out.
#include <cstdint>

namespace gpuplan {

/// Most shards one test may have. Bazel's own default limit is 50 shards a test; this
/// leaves room for repositories that raise it and keeps a plan's size sane.
inline constexpr int max_shard_count = 10000;

/// Most GPUs on one node: the planner holds a node's GPUs as the bits of one 64-bit mask.
inline constexpr int max_gpus_per_node = 64;

/// Most nodes, GPUs and node labels one fleet may describe, counted together (each node once,
/// plus its GPUs and its labels). A pool's `count` multiplies a few lines of YAML into that many
/// nodes: the largest GPU clusters have about 200,000 GPUs, and a 1.5 KB file had asked for
/// 12 million (3.5 GB and 12 s before the first check).
inline constexpr long max_fleet_size = 500'000;

/// Highest GPU index on one node (as CUDA_VISIBLE_DEVICES counts).
inline constexpr int max_gpu_index = 1023;

/// Longest measured or planned run of one test or shard, in seconds (a year).
inline constexpr double max_duration_s = 366.0 * 24 * 3600;

/// Shortest claim lease (`exec`, `run-under`, `export slurm` `--lease`), in seconds. A holder
/// renews its claims four times a lease; a lease much shorter than this leaves no room for
/// NFS's mtime granularity (a second, two on some servers) and a loaded node's delays, so a
/// live holder's units are taken over and run twice.
inline constexpr double min_lease_s = 10;

/// Latest start or end time in a plan, in seconds from its start: far past any plausible
/// schedule, and below where milliseconds stop fitting an int64.
inline constexpr double max_plan_time_s = 1e15;

/// Timestamps in history: milliseconds since the epoch, 1970-01-01 to 9999-12-31.
inline constexpr std::int64_t max_timestamp_ms = 253402300799999;

/// Most tests one query input may hold (about 600 bytes of memory each: ~3 GB in all).
inline constexpr long max_tests = 5'000'000;

/// Most test counts a plan summary may state.
inline constexpr long max_plan_count = 1'000'000'000;

}  // namespace gpuplan
