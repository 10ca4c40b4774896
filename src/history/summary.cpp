// The compact rolling history `gpuplan history summarize` writes: per unit, its last samples.
#include <nlohmann/json.hpp>

#include "gpuplan/history.hpp"

namespace gpuplan {

std::string summarize(const History& history, int window) {
  std::string out = "{\n  \"gpuplan_history\": 1,\n  \"units\": [";
  const char* separator = "\n    ";
  for (const auto& [key, samples] : history.samples) {
    auto recent = recent_samples(samples, window);
    if (recent.empty()) continue;
    nlohmann::ordered_json unit;
    unit["label"] = key.label;
    unit["shard"] = key.shard ? nlohmann::ordered_json(*key.shard) : nlohmann::ordered_json();
    if (auto count = history.shard_counts.find(key.label); key.shard && count != history.shard_counts.end())
      unit["shard_count"] = count->second;
    auto& seconds = unit["seconds"] = nlohmann::ordered_json::array();
    bool any_vram = false;
    bool any_timeout = false;
    for (const auto& sample : recent) {
      seconds.push_back(sample.seconds);
      any_vram = any_vram || sample.peak_vram_mib;
      any_timeout = any_timeout || sample.timed_out;
    }
    if (any_vram) {
      auto& vram = unit["peak_vram_mib"] = nlohmann::ordered_json::array();
      for (const auto& sample : recent)
        vram.push_back(sample.peak_vram_mib ? nlohmann::ordered_json(*sample.peak_vram_mib)
                                            : nlohmann::ordered_json());
    }
    if (any_timeout) {
      auto& timed_out = unit["timed_out"] = nlohmann::ordered_json::array();
      for (const auto& sample : recent) timed_out.push_back(sample.timed_out);
    }
    out += separator;
    out += unit.dump();
    separator = ",\n    ";
  }
  out += "\n  ]\n}\n";
  return out;
}

}  // namespace gpuplan
