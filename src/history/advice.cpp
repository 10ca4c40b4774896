// `history suggest`: what measured GPU use says about a test's GPU annotations. A GPU test
// that never touched a GPU, one whose peak comes within the headroom of its GPU's memory,
// one whose declared gpu-mem is far above what it uses, one whose peak is memory its framework
// took up front; each with the edit to make.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <tuple>

#include "gpuplan/history.hpp"

namespace gpuplan {

namespace {

constexpr std::int64_t mib_per_gib = 1024;

/// Rounded up to whole GiB (what a person writes).
std::int64_t whole_gib(std::int64_t mib) { return (mib + mib_per_gib - 1) / mib_per_gib * mib_per_gib; }

std::string size_text(std::int64_t mib) {
  return mib % mib_per_gib == 0 ? fmt::format("{}GiB", mib / mib_per_gib) : fmt::format("{}MiB", mib);
}

/// "replace tag gpu-mem:40GiB with gpu-mem:6GiB" or "add tag gpu-mem:6GiB"; of a test whose
/// plan holds a measured floor in place of what it declares, "set gpu-mem:6GiB (...)".
std::string gpu_mem_change(const AdvisedTest& test, std::int64_t mib) {
  std::string wanted = "gpu-mem:" + size_text(mib);
  if (!test.gpu_mem_mib && test.gpu_mem_floor_mib)
    return fmt::format(
        "set {} in place of its gpu-mem tag, if it has one (the plan holds the {} MiB its runs were "
        "seen to use, not the tag; --query names it)",
        wanted, *test.gpu_mem_floor_mib);
  if (!test.gpu_mem_mib) return "add tag " + wanted;
  if (test.gpu_mem_source.starts_with("tag "))
    return fmt::format("replace {} with {}", test.gpu_mem_source, wanted);
  return fmt::format("replace gpu-mem:{}{} with {}", size_text(*test.gpu_mem_mib),
                     test.gpu_mem_source.empty() ? "" : " (" + test.gpu_mem_source + ")", wanted);
}

/// What the recent runs of a test (all its shards) measured.
struct Measured {
  long touch_runs = 0;  ///< runs that say whether they touched a GPU
  /// The same by shard (nullopt: runs of the whole test, which cover every shard).
  std::map<std::optional<int>, long> touch_runs_of;
  bool touched = false;
  long vram_runs = 0;        ///< runs with a peak VRAM
  bool passed_peak = false;  ///< one of them passed: the peak is of a whole run
  std::optional<std::int64_t> peak;
  std::string peak_node;   ///< the node of the run that measured `peak` (empty: the run names none)
  long up_front_runs = 0;  ///< runs whose peak is memory taken up front (not in `peak`)
  std::optional<std::int64_t> up_front_peak;
  std::optional<std::int64_t> gpu_vram;  ///< the smallest GPU memory of the nodes it ran on
  std::string node;
  std::string unlisted_node;  ///< a node it ran on that the fleet does not list
};

Measured measure(const History& history, const AdvisedTest& test, const AdviceOptions& options) {
  Measured m;
  // Every node a run or the plan names is checked against the fleet (before, only those of runs
  // with a peak: a test whose runs on a node the fleet lacks were judged on another path, or
  // whose peaks were memory taken up front, was judged without a word). Only peaks set the GPU
  // memory they are held against.
  auto note_node = [&](std::string_view node, bool peak = true) {
    auto found = options.node_vram_mib.find(node);
    if (found == options.node_vram_mib.end()) {
      if (m.unlisted_node.empty()) m.unlisted_node = node;
      return;
    }
    if (!peak || (m.gpu_vram && *m.gpu_vram <= found->second)) return;
    m.gpu_vram = found->second;
    m.node = node;
  };
  for (auto it = history.samples.lower_bound(SampleKey{test.label, std::nullopt});
       it != history.samples.end() && it->first.label == test.label; ++it) {
    for (const auto& sample : recent_samples(it->second, options.last)) {
      if (!sample.node.empty() && !options.node_vram_mib.empty()) note_node(sample.node, false);
      if (auto touched = sample.gpu_use()) {
        ++m.touch_runs;
        ++m.touch_runs_of[it->first.shard];
        m.touched = m.touched || *touched;
      }
      if (sample.peak_up_front) {
        ++m.up_front_runs;
        m.up_front_peak = std::max(m.up_front_peak.value_or(0), *sample.peak_vram_mib);
      } else if (sample.peak_vram_mib) {
        ++m.vram_runs;
        if (!m.peak || *sample.peak_vram_mib > *m.peak) m.peak_node = sample.node;
        m.peak = std::max(m.peak.value_or(0), *sample.peak_vram_mib);
        m.passed_peak = m.passed_peak || sample.ran_through();
        if (!sample.node.empty()) note_node(sample.node);
      }
    }
  }
  if (!test.planned_node.empty() && !options.node_vram_mib.empty()) note_node(test.planned_node, !m.gpu_vram);
  return m;
}

/// How many measured runs show the whole test: of a sharded test, the fewest of any shard (runs
/// of the whole test count for each), since the shard never measured may be the one that uses
/// the GPU. Before, one run of four shards counted as four runs, and two shards measured of four
/// made a test GPU-free.
/// Runs of shards are held against the count the history says they were of, where it says one
/// (`shard_count` in results records, BEP's shardCount, the testlogs' folders), else the test's count
/// now: runs of shards 0 to 3 of an 8-shard era leave half the test unmeasured, whatever its count now
/// (before, with 4 shards now, they read as the whole test's, and so did runs of shards 0 and 1 of 4
/// for a test unsharded now).
long whole_test_runs(const Measured& m, const History& history, const std::string& label, int shard_count) {
  if (auto then = history.shard_counts.find(label); then != history.shard_counts.end())
    shard_count = then->second;
  auto runs_of = [&](std::optional<int> shard) {
    auto found = m.touch_runs_of.find(shard);
    return found == m.touch_runs_of.end() ? 0L : found->second;
  };
  if (shard_count <= 1) {  // unsharded now; runs in shards, from before, count once a run
    long most = 0;
    for (const auto& [shard, runs] : m.touch_runs_of)
      if (shard) most = std::max(most, runs);
    return runs_of(std::nullopt) + most;
  }
  long fewest = -1;
  for (int shard = 0; shard < shard_count; ++shard) {
    long runs = runs_of(shard) + runs_of(std::nullopt);
    fewest = fewest < 0 ? runs : std::min(fewest, runs);
  }
  return fewest;
}

}  // namespace

std::optional<long> untouched_runs(const History& history, const std::string& label, int shard_count,
                                   int last) {
  AdvisedTest test;
  test.label = label;
  AdviceOptions options;
  options.last = last;
  Measured m = measure(history, test, options);
  if (m.touched || m.touch_runs == 0) return std::nullopt;
  return whole_test_runs(m, history, label, shard_count);
}

std::optional<GpuUse> measured_gpu_use(const History& history, std::string_view label, int window) {
  GpuUse use;
  for (auto it = history.samples.lower_bound(SampleKey{std::string(label), std::nullopt});
       it != history.samples.end() && it->first.label == label; ++it) {
    for (const auto& sample : recent_samples(it->second, window)) {
      auto touched = sample.gpu_use();
      if (!touched) continue;
      ++use.runs;
      if (*touched) ++use.touched;
      use.peak_vram_mib = std::max(use.peak_vram_mib, sample.peak_vram_mib.value_or(0));
    }
  }
  if (use.runs == 0) return std::nullopt;
  return use;
}

std::map<std::string, GpuUse> measured_gpu_use(const History& history, int window) {
  std::map<std::string, GpuUse> measured;
  for (auto it = history.samples.begin(); it != history.samples.end();) {
    const std::string& label = it->first.label;
    if (auto use = measured_gpu_use(history, label, window))
      measured.emplace_hint(measured.end(), label, *use);
    while (it != history.samples.end() && it->first.label == label) ++it;  // its other shards
  }
  return measured;
}

std::string to_string(const GpuUse& use) {
  return fmt::format("GPU used in {} of {} measured run{}, peak {} MiB", use.touched, use.runs,
                     use.runs == 1 ? "" : "s", use.peak_vram_mib);
}

std::string_view to_string(AdviceKind kind) {
  switch (kind) {
    case AdviceKind::never_touched_gpu: return "never-touched-gpu";
    case AdviceKind::near_capacity: return "near-capacity";
    case AdviceKind::gpu_mem_too_high: return "gpu-mem-too-high";
    case AdviceKind::memory_up_front: return "memory-up-front";
  }
  return "";
}

HistoryAdvice advise(const History& history, const std::vector<AdvisedTest>& tests,
                     const AdviceOptions& options) {
  HistoryAdvice result;
  for (const auto& test : tests) {
    ++result.tests;
    Measured m = measure(history, test, options);
    if (m.touch_runs == 0 && m.vram_runs == 0 && m.up_front_runs == 0) continue;
    ++result.measured;
    if (!m.unlisted_node.empty() && options.largest_gpu_mib > 0)
      result.unjudged.push_back(
          {Severity::warning, test.label, "history suggest",
           fmt::format(
               "it ran on {}, which the fleet does not list{}", m.unlisted_node,
               m.peak && !m.gpu_vram
                   ? fmt::format(": its peak of {} MiB is held against no GPU's memory", *m.peak)
                   : std::string(": what its runs there measured is judged without that node's GPUs"))});
    Advice base;
    base.label = test.label;
    base.peak_vram_mib = m.peak;
    base.declared_mib = test.gpu_mem_mib;
    if (!m.touched) {
      const long runs = whole_test_runs(m, history, test.label, test.shard_count);
      if (runs < options.min_runs) continue;
      Advice a = base;
      a.kind = AdviceKind::never_touched_gpu;
      a.runs = runs;
      a.change = test.cpu_change;
      result.advice.push_back(std::move(a));
      continue;
    }
    if (!m.peak && m.up_front_peak && !test.gpu_mem_mib) {
      Advice a = base;
      a.kind = AdviceKind::memory_up_front;
      a.runs = m.up_front_runs;
      a.peak_vram_mib = m.up_front_peak;
      a.change = fmt::format(
          "measure it with XLA_PYTHON_CLIENT_PREALLOCATE=false (JAX) or TF_FORCE_GPU_ALLOW_GROWTH=true "
          "(TensorFlow) in its env, or {} gpu-mem:SIZE of what it needs",
          test.gpu_mem_floor_mib ? "set its" : "add tag");  // a floor: it may have a gpu-mem tag
      result.advice.push_back(std::move(a));
      continue;
    }
    if (!m.peak || *m.peak <= 0) continue;
    const std::int64_t exact_need = with_headroom(*m.peak, options.vram_headroom);
    const std::int64_t need = whole_gib(exact_need);
    if (!m.gpu_vram && options.largest_gpu_mib > 0 && m.unlisted_node.empty())
      result.unjudged.push_back(
          {Severity::warning, test.label, "history suggest",
           fmt::format(
               "its peak of {} MiB is held against no GPU's memory: no record or plan says which node "
               "it ran on",
               *m.peak)});
    const bool near_capacity = m.gpu_vram && static_cast<double>(*m.peak) > static_cast<double>(*m.gpu_vram) *
                                                                                (1 - options.vram_headroom);
    // What a GPU with room is: the peak plus headroom, else the fleet's largest GPU (none when the
    // test ran on it). A declared gpu-mem of that much or more asks for it already, and keeps the
    // test off the GPU it came near filling: those runs are older than the tag (before, the advice
    // was "replace gpu-mem:24GiB with gpu-mem:24GiB", or lowered a 32GiB tag to 24 as if asking for
    // more room).
    const std::optional<std::int64_t> room = need <= options.largest_gpu_mib ? std::optional(need)
                                             : m.gpu_vram && options.largest_gpu_mib > *m.gpu_vram
                                                 ? std::optional(options.largest_gpu_mib)
                                                 : std::nullopt;
    const bool asked_already = room && test.gpu_mem_mib && *test.gpu_mem_mib >= *room;
    if (near_capacity && !asked_already) {
      Advice a = base;
      a.kind = AdviceKind::near_capacity;
      a.runs = m.vram_runs;
      a.gpu_vram_mib = m.gpu_vram;
      a.node = m.node;
      // The peak may come from a larger GPU than the one it is held against: say where.
      a.peak_node = m.peak_node;
      if (auto found = options.node_vram_mib.find(m.peak_node); found != options.node_vram_mib.end())
        a.peak_gpu_vram_mib = found->second;
      if (need <= options.largest_gpu_mib) {
        a.suggested_mib = need;
        a.change = gpu_mem_change(test, need);
      } else if (options.largest_gpu_mib > *m.gpu_vram) {  // a larger GPU, if without all the headroom
        a.suggested_mib = options.largest_gpu_mib;
        a.change = gpu_mem_change(test, options.largest_gpu_mib) + " (the fleet's largest GPU";
        a.change += exact_need > options.largest_gpu_mib
                        ? fmt::format("; the peak plus headroom, {} MiB, fits none)", exact_need)
                        : ")";
      } else {
        a.change = fmt::format(
            "none: no GPU of the fleet has more than {} MiB, and the peak plus headroom is {} MiB; "
            "lower the test's GPU memory",
            *m.gpu_vram, exact_need);
      }
      result.advice.push_back(std::move(a));
    } else if (test.gpu_mem_mib && m.passed_peak &&
               static_cast<double>(*test.gpu_mem_mib) >= options.over_factor * double(need) &&
               *test.gpu_mem_mib - need >= mib_per_gib) {
      Advice a = base;
      a.kind = AdviceKind::gpu_mem_too_high;
      a.runs = m.vram_runs;
      a.suggested_mib = need;
      a.change = gpu_mem_change(test, need);
      result.advice.push_back(std::move(a));
    }
  }
  std::stable_sort(result.advice.begin(), result.advice.end(), [](const Advice& a, const Advice& b) {
    return std::tie(a.kind, a.label) < std::tie(b.kind, b.label);
  });
  return result;
}

}  // namespace gpuplan
