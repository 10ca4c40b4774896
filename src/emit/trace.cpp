// `gpuplan render --format trace`: the plan as Chrome trace events, so Perfetto or
// chrome://tracing zoom and search plans far larger than an HTML chart can hold.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <map>
#include <nlohmann/json.hpp>

#include "gpuplan/emit.hpp"

namespace gpuplan {

namespace {

std::string json_string(std::string_view text) {
  return nlohmann::json(std::string(text)).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

/// Microseconds with no fraction beyond what the plan's millisecond times carry.
std::string micros(double seconds) { return fmt::format("{:.0f}", seconds * 1e6); }

}  // namespace

void write_trace(const Plan& plan, const std::function<void(std::string_view)>& sink) {
  std::map<std::string, int> pids;
  std::map<std::string, int> gpus;
  for (const auto& a : plan.assignments) {
    pids.emplace(std::string(a.node), 0);
    for (int g : a.gpus) gpus[std::string(a.node)] = std::max(gpus[std::string(a.node)], g + 1);
  }
  int next = 1;
  for (auto& [node, pid] : pids) pid = next++;

  sink("{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n");
  bool first = true;
  auto event = [&](const std::string& text) {
    if (!first) sink(",\n");
    first = false;
    sink(text);
  };
  for (const auto& [node, pid] : pids) {
    event(fmt::format(R"({{"ph":"M","name":"process_name","pid":{},"tid":0,"args":{{"name":{}}}}})", pid,
                      json_string(node)));
    event(fmt::format(
        R"({{"ph":"M","name":"process_sort_index","pid":{},"tid":0,"args":{{"sort_index":{}}}}})", pid, pid));
    for (int g = 0; g < gpus[node]; ++g)
      event(fmt::format(R"({{"ph":"M","name":"thread_name","pid":{},"tid":{},"args":{{"name":"GPU {}"}}}})",
                        pid, g, g));
  }
  for (const auto& a : plan.assignments) {
    int pid = pids[std::string(a.node)];
    std::string args =
        fmt::format(R"({{"label":{},"gpus":{},"duration_source":{},"vram_mib":{}}})",
                    json_string(a.unit.label), json_string(fmt::format("{}", fmt::join(a.gpus, ","))),
                    json_string(std::string(a.unit.duration_source)),
                    a.unit.vram_mib ? std::to_string(*a.unit.vram_mib) : "null");
    for (int g : a.gpus)
      event(fmt::format(R"({{"ph":"X","name":{},"cat":{},"pid":{},"tid":{},"ts":{},"dur":{},"args":{}}})",
                        json_string(a.unit.id), json_string(std::string(a.unit.size)), pid, g,
                        micros(a.start_s), micros(a.end_s - a.start_s), args));
  }
  if (!plan.unschedulable.empty()) {
    int pid = next;
    event(fmt::format(
        R"({{"ph":"M","name":"process_name","pid":{},"tid":0,"args":{{"name":"unschedulable"}}}})", pid));
    for (const auto& u : plan.unschedulable)
      event(fmt::format(R"({{"ph":"i","s":"p","name":{},"cat":"unschedulable","pid":{},"tid":0,"ts":0,)"
                        R"("args":{{"reason":{}}}}})",
                        json_string(u.unit.id), pid, json_string(u.reason)));
  }
  sink("\n]}\n");
}

}  // namespace gpuplan
