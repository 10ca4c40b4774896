// The environment a plan gives each assignment's test: what the plan file lists and what
// `exec` and `run-under` apply.
#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "gpuplan/plan.hpp"

namespace gpuplan {

namespace {

/// "0,1" appended digit by digit: fmt::join parsed "{}" per GPU, once per assignment written.
void append_gpu_list(fmt::memory_buffer& out, const std::vector<int>& gpus) {
  for (int gpu : gpus) {
    if (out.size() > 0) out.push_back(',');
    fmt::format_int digits(gpu);
    out.append(digits.data(), digits.data() + digits.size());
  }
}

}  // namespace

std::string gpu_list(const std::vector<int>& gpus) {
  fmt::memory_buffer list;
  append_gpu_list(list, gpus);
  return fmt::to_string(list);
}

bool shares_gpu(const Unit& unit, Policy policy) {
  return policy == Policy::pack && unit.requirement->gpus.value == 1 && !unit.requirement->is_exclusive() &&
         unit.vram_mib.has_value();
}

bool holds_whole_node(const Assignment& a, Policy policy) {
  const Requirement& r = a.unit.requirement;
  return r.is_exclusive() ||
         (policy == Policy::whole_node && std::max<size_t>(a.gpus.size(), r.gpus.value) > 1);
}

void for_each_planned_env(const Assignment& a, bool shares_gpu,
                          const std::function<void(std::string_view name, std::string_view value)>& each) {
  fmt::memory_buffer gpus;
  append_gpu_list(gpus, a.gpus);
  each("CUDA_VISIBLE_DEVICES", std::string_view(gpus.data(), gpus.size()));
  if (a.unit.shard_index) {
    fmt::format_int index(*a.unit.shard_index), count(a.unit.shard_count);
    each("TEST_SHARD_INDEX", std::string_view(index.data(), index.size()));
    each("TEST_TOTAL_SHARDS", std::string_view(count.data(), count.size()));
  }
  if (!shares_gpu) return;
  each("TF_FORCE_GPU_ALLOW_GROWTH", "true");
  each("XLA_PYTHON_CLIENT_PREALLOCATE", "false");
}

std::map<std::string, std::string> planned_env(const Assignment& a, bool shares_gpu) {
  std::map<std::string, std::string> env;
  for_each_planned_env(a, shares_gpu,
                       [&](std::string_view name, std::string_view value) { env.emplace(name, value); });
  return env;
}

std::vector<UnschedulableGroup> unschedulable_by_reason(const Plan& plan) {
  std::map<std::string_view, std::vector<const UnschedulableUnit*>> by_reason;
  for (const auto& u : plan.unschedulable) by_reason[u.reason].push_back(&u);
  std::vector<UnschedulableGroup> groups(by_reason.begin(), by_reason.end());
  std::stable_sort(groups.begin(), groups.end(),
                   [](const UnschedulableGroup& a, const UnschedulableGroup& b) {
                     return a.second.size() > b.second.size();
                   });
  return groups;
}

}  // namespace gpuplan
