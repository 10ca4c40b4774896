// Finding a node's units in a plan and what each one's process is given.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "gpuplan/error.hpp"
#include "gpuplan/json_value_error.hpp"
#include "gpuplan/run.hpp"
#include "gpuplan/target.hpp"
#include "util/text.hpp"

namespace gpuplan {

namespace {

/// A ZE_AFFINITY_MASK that hides every GPU: an index far past the devices of any node (a node of
/// 8 four-tile cards has 32), which Intel's driver leaves out as it does any index past its last
/// device (drivers before 2025 compared with `>` under the flat hierarchy, so the device count
/// itself would not do), and which a reader of a signed or unsigned 32-bit number takes as it is.
/// An empty mask shows every GPU, and the driver reads each entry with std::stoul, which throws
/// on a word.
constexpr std::string_view no_level_zero_gpu = "2147483647";

}  // namespace

std::vector<Assignment> node_assignments(const Plan& plan, std::string_view node) {
  std::vector<Assignment> units;
  for (const auto& a : plan.assignments)
    if (a.node == node) units.push_back(a);
  std::stable_sort(units.begin(), units.end(), [](const Assignment& x, const Assignment& y) {
    int gx = x.gpus.empty() ? -1 : x.gpus.front();
    int gy = y.gpus.empty() ? -1 : y.gpus.front();
    return std::tie(x.start_s, gx, x.unit.id) < std::tie(y.start_s, gy, y.unit.id);
  });
  return units;
}

std::map<std::string, std::string> command_env(const Assignment& a, bool shares_gpu) {
  auto env = planned_env(a, shares_gpu);
  env["CUDA_DEVICE_ORDER"] = "PCI_BUS_ID";
  // Intel's Level Zero (PyTorch's XPU, SYCL, oneAPI, and Intel's OpenCL) reads its own list, in
  // the PCI order the second variable asks for. To it an empty list means every GPU; a list of only
  // indices past the last device enables none, and the driver then reports no device
  // (intel/compute-runtime, ExecutionEnvironment::parseAffinityMask).
  env["ZE_AFFINITY_MASK"] = a.gpus.empty() ? std::string(no_level_zero_gpu) : env.at("CUDA_VISIBLE_DEVICES");
  env["ZE_ENABLE_PCI_ID_DEVICE_ORDER"] = "1";
  // ROCm's HIP reads HIP_VISIBLE_DEVICES before CUDA_VISIBLE_DEVICES, and its OpenCL only
  // GPU_DEVICE_ORDINAL, each counted within ROCR_VISIBLE_DEVICES (ROCm/clr, rocdevice.cpp). An
  // empty list is no list there, and shows every GPU: a unit without GPUs gets -1, a list that
  // ends before its first GPU, as CUDA's does. A unit with GPUs gets its list in both: without
  // GPU_DEVICE_ORDINAL an OpenCL test saw every GPU, and Ray's AMD support refuses a
  // HIP_VISIBLE_DEVICES other than CUDA_VISIBLE_DEVICES, older releases one unset (amd_gpu.py).
  const std::string rocm = a.gpus.empty() ? std::string("-1") : env.at("CUDA_VISIBLE_DEVICES");
  env["HIP_VISIBLE_DEVICES"] = rocm;
  env["GPU_DEVICE_ORDINAL"] = rocm;
  if (a.unit.shard_index) {
    env["GTEST_SHARD_INDEX"] = env.at("TEST_SHARD_INDEX");
    env["GTEST_TOTAL_SHARDS"] = env.at("TEST_TOTAL_SHARDS");
  }
  return env;
}

std::string oneapi_selector_hides_gpus(std::string_view selector, std::size_t gpus) {
  if (gpus == 0) return {};  // every GPU runtime shows such a unit none: there is none to hide
  struct Backend {
    bool all_gpus = false;   // an accepted * or gpu (or *.*: every GPU, as its tiles)
    std::set<long> indices;  // accepted devices by number (1.0: device 1, as its tile)
  };
  std::map<std::string, Backend> accepted;
  auto number = [](std::string_view device) -> std::optional<long> {
    const auto root = device.substr(0, device.find('.'));
    if (root.empty() || root.size() > 9 ||
        !std::all_of(root.begin(), root.end(), [](char c) { return c >= '0' && c <= '9'; }))
      return std::nullopt;
    return std::stol(std::string(root));
  };
  for (std::string_view rest = selector; !rest.empty();) {
    const auto end = std::min(rest.find(';'), rest.size());
    std::string filter = util::lower(rest.substr(0, end));
    rest.remove_prefix(std::min(end + 1, rest.size()));
    std::erase_if(filter, [](char c) { return c == ' ' || c == '\t'; });
    if (filter.empty()) continue;
    const bool discard = filter.front() == '!';
    const auto colon = filter.find(':');
    if (colon == std::string::npos) return {};  // SYCL refuses it, with an error the test shows
    const std::string backend = filter.substr(discard, colon - discard);
    for (std::string_view devices = std::string_view(filter).substr(colon + 1); !devices.empty();) {
      const auto comma = std::min(devices.find(','), devices.size());
      const auto device = devices.substr(0, comma);
      devices.remove_prefix(std::min(comma + 1, devices.size()));
      const bool every = device == "*" || device == "gpu" || device.starts_with("*.");
      const auto index = number(device);
      if (discard && index)
        return fmt::format("discards device {} of the unit's GPUs (SYCL numbers them from 0)", *index);
      if (discard && every && backend == "*") return fmt::format("discards every GPU ({})", filter);
      if (discard) continue;  // one backend's devices: the runtime the team chose
      auto& b = accepted[backend];
      if (every) b.all_gpus = true;
      if (index) b.indices.insert(*index);
    }
  }
  bool any_gpu = accepted.empty();
  for (const auto& [backend, b] : accepted) {
    any_gpu = any_gpu || b.all_gpus || !b.indices.empty();
    if (b.all_gpus || b.indices.empty()) continue;
    if (auto past = b.indices.lower_bound(static_cast<long>(gpus)); past != b.indices.end())
      return fmt::format(
          "names device {} of {}, and SYCL numbers a unit's GPUs from 0 among its own (a unit of {} GPU{} "
          "has devices 0 to {}): it would show a unit no device there",
          *past, backend, gpus, util::plural(gpus), gpus - 1);
    if (b.indices.size() < gpus)
      return fmt::format(
          "shows only device{} {} of {}, and SYCL numbers a unit's GPUs from 0 among its own: a unit of {} "
          "GPUs would see {} of them",
          util::plural(b.indices.size()), fmt::join(b.indices, ","), backend, gpus, b.indices.size());
  }
  if (!any_gpu) return "shows no GPU (only cpu or fpga devices)";
  return {};
}

bool inherited_by_unit(std::string_view name, std::string_view value,
                       const std::map<std::string, std::string>& env) {
  if (chosen_by_plan(name) || env.count(std::string(name))) return false;
  // ROCr filters by a ROCR_VISIBLE_DEVICES that is set, even empty, which showed the unit no GPU;
  // the checks take an empty one as unset (outside_allocation).
  if (name == "ROCR_VISIBLE_DEVICES" && value.empty()) return false;
  if (name == "ONEAPI_DEVICE_SELECTOR") {
    const auto listed = env.find("CUDA_VISIBLE_DEVICES");
    const std::size_t gpus =
        listed == env.end() || listed->second.empty()
            ? 0
            : 1 + static_cast<std::size_t>(std::count(listed->second.begin(), listed->second.end(), ','));
    return oneapi_selector_hides_gpus(value, gpus).empty();
  }
  return true;
}

bool chosen_by_plan(std::string_view name) {
  static constexpr std::string_view names[] = {
      "CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "GPU_DEVICE_ORDINAL", "ZE_AFFINITY_MASK",
      "TEST_SHARD_INDEX",     "TEST_TOTAL_SHARDS",   "GTEST_SHARD_INDEX",  "GTEST_TOTAL_SHARDS"};
  return std::find(std::begin(names), std::end(names), name) != std::end(names);
}

LabelMatch::LabelMatch(const Plan& plan, std::string_view label)
    : exact_(canonical_label(label)), identity_(label_identity(label)) {
  std::set<std::string> same_identity;
  auto see = [&](std::string_view other) {
    if (label_identity(other) == identity_) same_identity.insert(canonical_label(other));
  };
  for (const auto& a : plan.assignments) see(a.unit.label);
  for (const auto& u : plan.unschedulable) see(u.unit.label);
  for (const auto& t : plan.cpu_tests) see(t.label);
  for (const auto& t : plan.skipped_tests) see(t.label);
  by_identity_ = !same_identity.count(exact_);
  if (by_identity_ && same_identity.size() > 1) candidates_ = std::move(same_identity);
}

bool LabelMatch::operator()(std::string_view other) const {
  return by_identity_ ? label_identity(other) == identity_ : canonical_label(other) == exact_;
}

TestPlacement place_test(const Plan& plan, std::string_view node, std::string_view label,
                         std::optional<int> shard_index) {
  using Kind = TestPlacement::Kind;
  LabelMatch named(plan, label);
  auto refuse = [](std::string reason) {
    return TestPlacement{Kind::refused, std::nullopt, std::move(reason)};
  };
  // Either way a CPU test runs with no GPU visible: only a GPU test's candidates are ambiguous.
  if (!named.ambiguous().empty() &&
      !std::all_of(named.ambiguous().begin(), named.ambiguous().end(), [&](const std::string& candidate) {
        return std::any_of(plan.cpu_tests.begin(), plan.cpu_tests.end(),
                           [&](const ListedTest& t) { return canonical_label(t.label) == candidate; });
      }))
    return refuse(fmt::format("the plan has {} tests it could name ({}); name it by its canonical label",
                              named.ambiguous().size(), fmt::join(named.ambiguous(), ", ")));
  for (const auto& t : plan.cpu_tests)
    if (named(t.label)) return {Kind::cpu, std::nullopt, {}};
  std::set<std::string> nodes, elsewhere;
  bool node_known = false;
  for (const auto& a : plan.assignments) {
    nodes.insert(a.node);
    node_known = node_known || a.node == node;
    if (!named(a.unit.label) || (a.unit.shard_index && a.unit.shard_index != shard_index)) continue;
    if (a.node == node) return {Kind::planned, a, {}};
    elsewhere.insert(a.node);
  }
  if (!node_known)
    return refuse(
        fmt::format("node {:?} has no units in the plan (its nodes: {})", node, fmt::join(nodes, ", ")));
  if (!elsewhere.empty())
    return refuse(fmt::format("it is planned on node {}, not on {}", fmt::join(elsewhere, ", "), node));
  for (const auto& u : plan.unschedulable)
    if (named(u.unit.label)) return refuse(fmt::format("the plan could not schedule it: {}", u.reason));
  for (const auto& t : plan.skipped_tests)
    if (named(t.label)) return refuse(fmt::format("the plan skipped it: {}", t.reason));
  return {Kind::unknown, std::nullopt, {}};
}

int planned_gpu_count(const Plan& plan, std::string_view node) {
  int count = 0;
  for (const auto& a : plan.assignments)
    if (a.node == node)
      for (int gpu : a.gpus) count = std::max(count, gpu + 1);
  return count;
}

std::vector<int> run_node_gpus(const Plan& plan, std::string_view node, const Node* fleet_node,
                               const std::string& fleet_path) {
  const int planned = planned_gpu_count(plan, node);
  std::vector<int> gpus;
  if (!fleet_node) {
    for (int gpu = 0; gpu < planned; ++gpu) gpus.push_back(gpu);
    return gpus;
  }
  for (const auto& gpu : fleet_node->gpus) gpus.push_back(gpu.index);
  if (auto gpu = first_missing_gpu(planned, *fleet_node))
    throw InputError(Position{fleet_path},
                     fmt::format("node {} has no GPU {} here, which the plan runs units on: the plan was "
                                 "made for another fleet",
                                 node, *gpu));
  return gpus;
}

std::optional<int> first_missing_gpu(int planned, const Node& fleet_node) {
  for (int gpu = 0; gpu < planned; ++gpu)
    if (std::none_of(fleet_node.gpus.begin(), fleet_node.gpus.end(),
                     [gpu](const Gpu& g) { return g.index == gpu; }))
      return gpu;
  return std::nullopt;
}

void check_launchable(const Assignment& a, const std::string& plan_path, std::optional<std::size_t> index) {
  auto refuse = [&](const std::string& what) {
    Position position{plan_path == "-" ? std::string("<stdin>") : plan_path};
    auto message = fmt::format("{} on node {} {}; not run (`gpuplan verify` checks the whole plan)",
                               a.unit.id, a.node.str(), what);
    // At its JSON path where its place in the plan's assignments is known, for the CLI to give
    // it its line.
    if (index) throw JsonValueError(position, fmt::format("assignments[{}]", *index), message);
    throw InputError(position, message);
  };
  if (a.unit.label.empty()) refuse("has no label");
  if (a.gpus.empty()) refuse("has no GPUs in the plan");
  std::set<int> seen;
  for (int gpu : a.gpus) {
    if (gpu < 0) refuse(fmt::format("lists GPU {}", gpu));
    if (!seen.insert(gpu).second) refuse(fmt::format("lists GPU {} twice", gpu));
  }
  const int need = a.unit.requirement->gpus.value;
  if (static_cast<int>(a.gpus.size()) < need)
    refuse(fmt::format("holds {} GPU{} but needs {}", a.gpus.size(), a.gpus.size() == 1 ? "" : "s", need));
}

void check_planned_once(const Plan& plan, const std::string& plan_path) {
  // At the second of the two units, whose place in the file the CLI finds (JsonValueError).
  std::size_t index = 0;
  auto refuse = [&](const std::string& what) {
    return JsonValueError(Position{plan_path == "-" ? std::string("<stdin>") : plan_path},
                          fmt::format("assignments[{}]", index),
                          what + "; not run (`gpuplan verify` checks the whole plan)");
  };
  std::map<std::string_view, std::string_view> planned_on;
  std::map<std::string_view, const Unit*> shards_of;
  for (; index < plan.assignments.size(); ++index) {
    const auto& a = plan.assignments[index];
    if (auto [it, first] = planned_on.emplace(a.unit.id, a.node.str()); !first)
      throw refuse(fmt::format("{} is planned twice (on {} and on {})", a.unit.id, it->second, a.node.str()));
    if (!a.unit.shard_index) continue;
    if (auto [it, first] = shards_of.emplace(a.unit.label, &a.unit);
        !first && it->second->shard_count != a.unit.shard_count)
      throw refuse(
          fmt::format("the shards of {} disagree on their count, {} ({}) and {} ({}): with two "
                      "TEST_TOTAL_SHARDS, some of its cases would run twice and others never",
                      a.unit.label, it->second->shard_count, it->second->id, a.unit.shard_count, a.unit.id));
  }
}

int timeout_seconds(const Unit& unit) {
  static const std::map<std::string, int> by_timeout{
      {"short", 60}, {"moderate", 300}, {"long", 900}, {"eternal", 3600}};
  static const std::map<std::string, std::string> by_size{
      {"small", "short"}, {"medium", "moderate"}, {"large", "long"}, {"enormous", "eternal"}};
  if (auto it = by_timeout.find(unit.timeout); it != by_timeout.end()) return it->second;
  auto size = by_size.find(unit.size);
  return by_timeout.at(size == by_size.end() ? "moderate" : size->second);
}

std::map<std::string, double> rerun_allowance_s(const Plan& plan) {
  // In start order, each unit is late by the most any of its GPUs is, and with its own reruns
  // makes each of them that late: a multi-GPU unit passes one GPU's delay on to the others.
  std::vector<const Assignment*> order;
  for (const auto& a : plan.assignments) order.push_back(&a);
  std::ranges::stable_sort(order, {}, [](const Assignment* a) { return a->start_s; });
  std::map<std::pair<std::string_view, int>, double> late;  // (node, GPU) → seconds
  std::map<std::string, double> by_node;
  for (const Assignment* a : order) {
    double delay = 0;
    for (int gpu : a->gpus) delay = std::max(delay, late[{a->node.str(), gpu}]);
    if (a->unit.flaky) delay += 2 * a->unit.duration_s;
    if (delay == 0) continue;
    for (int gpu : a->gpus) late[{a->node.str(), gpu}] = delay;
    auto& most = by_node[a->node.str()];
    most = std::max(most, delay);
  }
  return by_node;
}

}  // namespace gpuplan
