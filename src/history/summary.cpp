// The compact rolling history `gpuplan history summarize` writes: per unit, its last samples.
#include "gpuplan/history.hpp"
#include "util/json_writer.hpp"

namespace gpuplan {

void write_summary(const History& history, int window, const std::function<void(std::string_view)>& write) {
  util::JsonWriter out(write, -1);
  out.raw("{\n  \"gpuplan_history\": 1,\n  \"units\": [");
  const char* separator = "\n    ";
  for (const auto& [key, samples] : history.samples) {
    auto recent = recent_samples(samples, window);
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
    bool any_vram = false;
    bool any_timeout = false;
    bool any_failed = false;
    bool any_touched = false;
    bool any_node = false;
    bool any_start = false;
    out.key("seconds").begin_array();
    for (const auto& sample : recent) {
      out.value(sample.seconds);
      any_vram = any_vram || sample.peak_vram_mib;
      any_timeout = any_timeout || sample.timed_out;
      any_failed = any_failed || sample.failed;
      any_touched = any_touched || sample.gpu_touched;
      any_node = any_node || !sample.node.empty();
      any_start = any_start || sample.start_ms;
    }
    out.end_array();
    if (any_vram) {
      out.key("peak_vram_mib").begin_array();
      for (const auto& sample : recent) {
        if (sample.peak_vram_mib)
          out.value(static_cast<std::int64_t>(*sample.peak_vram_mib));
        else
          out.null();
      }
      out.end_array();
    }
    if (any_timeout) {
      out.key("timed_out").begin_array();
      for (const auto& sample : recent) out.value(sample.timed_out);
      out.end_array();
    }
    if (any_failed) {
      out.key("failed").begin_array();
      for (const auto& sample : recent) out.value(sample.failed);
      out.end_array();
    }
    if (any_touched) {
      out.key("gpu_touched").begin_array();
      for (const auto& sample : recent) {
        if (sample.gpu_touched)
          out.value(*sample.gpu_touched);
        else
          out.null();
      }
      out.end_array();
    }
    if (any_node) {
      out.key("node").begin_array();
      for (const auto& sample : recent) {
        if (sample.node.empty())
          out.null();
        else
          out.value(sample.node.str());
      }
      out.end_array();
    }
    if (any_start) {  // kept, so that a run read again (a rolling history fed its results file) counts once
      out.key("start_ms").begin_array();
      for (const auto& sample : recent) {
        if (sample.start_ms)
          out.value(static_cast<std::int64_t>(*sample.start_ms));
        else
          out.null();
      }
      out.end_array();
    }
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
