#pragma once
// Building fleets and units in a line each, and checking that a plan keeps every promise.
// Header-only: the test binary is made of *_test.cpp files.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "gpuplan/fleet.hpp"
#include "gpuplan/plan.hpp"
#include "gpuplan/rules.hpp"
#include "gpuplan/solve.hpp"

namespace gpuplan::testing {

/// `count` identical nodes named NAME-0, NAME-1, ... Topology: "nvswitch", "pcie",
/// "pairs" ([0,1],[2,3],...), "quads" ([0..3],[4..7],...) or "halves" (two NVSwitch islands).
struct Pool {
  std::string name;
  int count = 1;
  int gpus = 8;
  std::string topology = "nvswitch";
  std::string family = "h100";
  std::int64_t vram_mib = 81920;
  std::string compute_capability = "9.0";
  std::string cuda = "12.4";
};

inline Fleet fleet_of(const std::vector<Pool>& pools) {
  Fleet fleet;
  fleet.source = "test-fleet.yaml";
  for (const auto& p : pools) {
    fleet.pools.push_back({p.name, {}, p.topology});
    for (int n = 0; n < p.count; ++n) {
      Node node;
      node.name = fmt::format("{}-{}", p.name, n);
      node.pool = p.name;
      node.cuda = *Version::parse(p.cuda);
      for (int g = 0; g < p.gpus; ++g) {
        Gpu gpu;
        gpu.index = g;
        gpu.family = p.family;
        gpu.model = fmt::format("{}-TEST-{}GB", p.family, p.vram_mib / 1024);
        for (char& c : gpu.model) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
        gpu.vram_mib = p.vram_mib;
        gpu.compute_capability = *Version::parse(p.compute_capability);
        node.gpus.push_back(gpu);
      }
      node.nvlink.assign(static_cast<size_t>(p.gpus), std::vector<bool>(static_cast<size_t>(p.gpus), false));
      for (int i = 0; i < p.gpus; ++i)
        for (int j = 0; j < p.gpus; ++j) {
          bool linked = p.topology == "nvswitch" || (p.topology == "pairs" && i / 2 == j / 2) ||
                        (p.topology == "quads" && i / 4 == j / 4) ||
                        (p.topology == "halves" && 2 * i / p.gpus == 2 * j / p.gpus);
          node.nvlink[static_cast<size_t>(i)][static_cast<size_t>(j)] = linked && i != j;
        }
      fleet.pools.back().nodes.push_back(node.name);
      fleet.nodes.push_back(node);
    }
  }
  return fleet;
}

inline Unit unit(const std::string& id, double seconds, int gpus = 1) {
  Unit u;
  u.id = id;
  u.label = id;
  u.duration_s = seconds;
  u.duration_source = "test";
  u.requirement.edit().gpus = {gpus, "test"};
  return u;
}

inline Unit& with_nvlink(Unit& u) {
  u.requirement.edit().nvlink = Sourced<bool>{true, "tag nvlink"};
  return u;
}
inline Unit& with_exclusive(Unit& u) {
  u.requirement.edit().exclusive = Sourced<bool>{true, "tag gpu-exclusive"};
  return u;
}
inline Unit& with_memory(Unit& u, std::int64_t mib) {
  u.requirement.edit().gpu_mem_mib = Sourced<std::int64_t>{mib, "tag gpu-mem"};
  u.vram_mib = mib;
  return u;
}
inline Unit& with_cuda(Unit& u, const std::string& constraints) {
  auto parsed = *parse_constraints(constraints);
  for (const auto& c : parsed) u.requirement.edit().cuda.push_back({c, "tag cuda"});
  return u;
}
inline Unit& with_capability(Unit& u, const std::string& constraints) {
  auto parsed = *parse_constraints(constraints);
  for (const auto& c : parsed) u.requirement.edit().compute_capability.push_back({c, "tag gpu-cc"});
  return u;
}
inline Unit& with_models(Unit& u, std::vector<std::string> models) {
  u.requirement.edit().gpu_models = Sourced<std::vector<std::string>>{std::move(models), "tag gpu-model"};
  return u;
}

inline Plan plan_of(std::vector<Unit> units, const Fleet& fleet, Policy policy = Policy::exact,
                    Rules rules = {}) {
  SolveOptions options;
  options.policy = policy;
  options.rules = std::move(rules);
  return make_plan(Classification{}, std::move(units), fleet, options);
}

inline const Assignment& assignment_of(const Plan& plan, const std::string& unit_id) {
  for (const auto& a : plan.assignments)
    if (a.unit.id == unit_id) return a;
  throw std::runtime_error("no assignment for " + unit_id);
}

inline std::string broken_promise(const Plan& plan, const Fleet& fleet, const Rules& rules = {}) {
  std::map<std::string, const Node*> nodes;
  for (const auto& n : fleet.nodes) nodes[n.name] = &n;
  double last_end = 0;
  for (const auto& a : plan.assignments) {
    const Requirement& r = a.unit.requirement;
    auto it = nodes.find(a.node);
    if (it == nodes.end()) return a.unit.id + ": unknown node " + a.node.str();
    const Node& node = *it->second;
    if (r.takes_every_node_gpu() ? static_cast<int>(a.gpus.size()) < r.gpus.value
                                 : static_cast<int>(a.gpus.size()) != r.gpus.value)
      return a.unit.id + ": wrong number of GPUs";
    if (std::abs(a.end_s - a.start_s - a.unit.duration_s) > 1e-6 || a.start_s < 0)
      return a.unit.id + ": bad times";
    last_end = std::max(last_end, a.end_s);
    for (const auto& c : r.cuda)
      if (!c.value.satisfied_by(node.cuda)) return a.unit.id + ": CUDA constraint broken";
    for (int g : a.gpus) {
      if (g < 0 || g >= static_cast<int>(node.gpus.size())) return a.unit.id + ": no such GPU";
      const Gpu& gpu = node.gpus[static_cast<size_t>(g)];
      if (r.gpu_mem_mib && gpu.vram_mib < r.gpu_mem_mib->value) return a.unit.id + ": too little memory";
      for (const auto& c : r.compute_capability)
        if (!c.value.satisfied_by(gpu.compute_capability)) return a.unit.id + ": compute capability broken";
      if (r.gpu_models) {
        bool ok = false;
        for (const auto& m : r.gpu_models->value) {
          std::string model = gpu.model, wanted = m;
          for (char& c : model) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
          for (char& c : wanted) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
          ok = ok || wanted == model || wanted == gpu.family;
        }
        if (!ok) return a.unit.id + ": model broken";
      }
    }
    if (r.needs_nvlink() && !node.connected(a.gpus)) return a.unit.id + ": GPUs not NVLink-connected";
  }
  if (std::abs(last_end - plan.summary.makespan_s) > 1e-6) return "makespan is not the last end";
  // Overlaps, pairwise (the tests are small).
  bool pack = plan.policy == Policy::pack;
  auto shares = [&](const Assignment& a) {
    return pack && a.unit.requirement->gpus.value == 1 && !a.unit.requirement->is_exclusive() &&
           a.unit.vram_mib;
  };
  auto alone = [&](const Assignment& a) {
    return a.unit.requirement->is_exclusive() ||
           (plan.policy == Policy::whole_node && a.unit.requirement->gpus.value > 1);
  };
  for (const auto& a : plan.assignments) {
    std::map<int, std::pair<int, std::int64_t>> on_gpu;  // GPU → units and memory at a's start
    for (const auto& b : plan.assignments) {
      if (&a == &b || a.node != b.node) continue;
      bool overlap = b.start_s < a.end_s - 1e-9 && a.start_s < b.end_s - 1e-9;
      if (!overlap) continue;
      if (alone(a) || alone(b))
        return a.unit.id + " and " + b.unit.id + ": share a node one of them needs alone";
      bool at_start = b.start_s <= a.start_s + 1e-9 && a.start_s < b.end_s - 1e-9;
      for (int g : b.gpus)
        if (std::find(a.gpus.begin(), a.gpus.end(), g) != a.gpus.end()) {
          if (!shares(a) || !shares(b)) return a.unit.id + " and " + b.unit.id + ": share a GPU";
          if (at_start) {
            ++on_gpu[g].first;
            on_gpu[g].second += *b.unit.vram_mib;
          }
        }
    }
    for (auto& [g, load] : on_gpu) {
      const Gpu& gpu = nodes[a.node]->gpus[static_cast<size_t>(g)];
      if (load.first + 1 > rules.max_tests_per_gpu) return a.unit.id + ": too many units on one GPU";
      if (double(load.second + *a.unit.vram_mib) > double(gpu.vram_mib) * (1 - rules.vram_headroom))
        return a.unit.id + ": GPU memory over capacity";
    }
  }
  return "";
}

}  // namespace gpuplan::testing
