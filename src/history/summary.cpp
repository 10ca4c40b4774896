// The compact rolling history `gpuplan history summarize` writes: per unit, its last samples and
// the older ones its memory estimate still uses (window_samples).
#include <algorithm>
#include <optional>
#include <string_view>

#include "gpuplan/history.hpp"
#include "util/json_writer.hpp"

namespace gpuplan {

void write_summary(const History& history, int window, const std::function<void(std::string_view)>& write) {
  util::JsonWriter out(write, -1);
  out.raw("{\n  \"gpuplan_history\": 1,\n  \"units\": [");
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
