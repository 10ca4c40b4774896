// The compact rolling history `gpuplan history summarize` writes: per unit, its last samples and
// the older ones its memory estimate still uses (window_samples).
#include <algorithm>
#include <optional>
#include <string_view>
#include <vector>

#include "gpuplan/history.hpp"
#include "util/json_writer.hpp"

namespace gpuplan {

namespace {

/// Whether a gpuplan that reads version 1 only would misread the unit's runs `recent`: it knows no
/// given_no_gpu, gpus, gpus_asked or filtered, and took a run given no GPU, filtered to some test
/// cases, given another GPU count than its other runs (fewer than the test needs, perhaps), or
/// given fewer GPUs than it asked for (a machine short of them) for a whole run of the test, which
/// then set its duration.
bool misread_by_version_1(const std::vector<Sample>& recent) {
  std::optional<int> gpus;
  for (const auto& s : recent) {
    if (s.given_no_gpu || s.filtered) return true;
    if (!s.gpus_given) continue;
    if (s.gpus_asked && *s.gpus_given < *s.gpus_asked) return true;
    if (gpus && *gpus != *s.gpus_given) return true;
    gpus = s.gpus_given;
  }
  return false;
}

}  // namespace

void write_summary(const History& history, int window, const std::function<void(std::string_view)>& write) {
  util::JsonWriter out(write, -1);
  // Version 2 only where a version-1 reader (gpuplan before this round: it refuses version 2,
  // exit 2) would take a partial run for a whole one; else 1, which every gpuplan reads.
  const bool second = std::any_of(history.samples.begin(), history.samples.end(), [&](const auto& unit) {
    auto recent = window_samples(unit.second, window);
    return !recent.empty() && misread_by_version_1(recent);
  });
  out.raw(second ? "{\n  \"gpuplan_history\": 2,\n  \"units\": ["
                 : "{\n  \"gpuplan_history\": 1,\n  \"units\": [");
  const char* separator = "\n    ";
  for (const auto& [key, samples] : history.samples) {
    auto recent = window_samples(samples, window);
    if (recent.empty()) continue;
    out.raw(separator);
    separator = ",\n    ";
    out.begin_object();
    out.key("label").value(key.label);
    out.key("shard");
    if (key.shard)
      out.value(*key.shard);
    else
      out.null();
    if (auto count = history.shard_counts.find(key.label); key.shard && count != history.shard_counts.end())
      out.key("shard_count").value(count->second);
    out.key("seconds").begin_array();
    for (const auto& sample : recent) out.value(sample.seconds);
    out.end_array();
    // A column of one entry a sample, null where it has none; left out when no sample has one.
    auto column = [&](const char* name, auto entry) {
      if (std::none_of(recent.begin(), recent.end(), [&](const Sample& s) { return entry(s).has_value(); }))
        return;
      out.key(name).begin_array();
      for (const auto& sample : recent) {
        if (auto value = entry(sample))
          out.value(*value);
        else
          out.null();
      }
      out.end_array();
    };
    // A column of true or false, left out when every sample's is false.
    auto flags = [&](const char* name, bool Sample::*flag) {
      if (std::none_of(recent.begin(), recent.end(), [&](const Sample& s) { return s.*flag; })) return;
      out.key(name).begin_array();
      for (const auto& sample : recent) out.value(sample.*flag);
      out.end_array();
    };
    column("peak_vram_mib", [](const Sample& s) { return s.peak_vram_mib; });
    flags("timed_out", &Sample::timed_out);
    flags("failed", &Sample::failed);
    flags("peak_up_front", &Sample::peak_up_front);
    column("gpu_touched", [](const Sample& s) { return s.gpu_touched; });
    flags("given_no_gpu", &Sample::given_no_gpu);
    // Kept whatever the test needs, which only a plan knows: it leaves out a run given fewer
    // GPUs than that, and every filtered run.
    column("gpus", [](const Sample& s) { return s.gpus_given; });
    // What the test asked for then, beside it: all of it, a run of the test's older count (a note
    // in a plan that needs more); less, a machine short of GPUs. A gpuplan of before gpus_asked
    // reads the file without it, and takes every run given fewer than the test needs as a
    // warning, as it did: nothing counts as whole there that this one leaves out.
    column("gpus_asked", [](const Sample& s) { return s.gpus_asked; });
    flags("filtered", &Sample::filtered);
    column("node", [](const Sample& s) {
      return s.node.empty() ? std::nullopt : std::optional<std::string_view>(s.node.str());
    });
    // Kept, so that a run read again (a rolling history fed its results file) counts once.
    column("start_ms", [](const Sample& s) { return s.start_ms; });
    out.end_object();
  }
  out.raw("\n  ]\n}\n");
  out.flush();
}

std::string summarize(const History& history, int window) {
  std::string out;
  write_summary(history, window, [&](std::string_view piece) { out += piece; });
  return out;
}

}  // namespace gpuplan
