// The per-node facts every export starts from, and the node's slice of the plan.
#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "gpuplan/error.hpp"
#include "gpuplan/export.hpp"

namespace gpuplan {

std::vector<ExportNode> export_nodes(const Plan& plan, const Fleet* fleet) {
  std::map<std::string, ExportNode> by_name;
  std::map<std::string, std::set<std::string>> vendors;  // what each node's units, or its GPUs, are
  for (const auto& a : plan.assignments) {
    auto& node = by_name[std::string(a.node)];
    node.name = a.node;
    node.units++;
    node.end_s = std::max(node.end_s, a.end_s);
    node.unit_ids.push_back(a.unit.id);
    for (int gpu : a.gpus) node.gpus = std::max(node.gpus, gpu + 1);
    if (a.unit.requirement->vendor) vendors[node.name].insert(a.unit.requirement->vendor->value);
  }
  for (const auto& [name, seconds] : rerun_allowance_s(plan)) by_name[name].reruns_s = seconds;
  std::vector<ExportNode> nodes;
  for (auto& [name, node] : by_name) {
    if (fleet) {
      auto it = std::find_if(fleet->nodes.begin(), fleet->nodes.end(),
                             [&name = name](const Node& n) { return n.name == name; });  // clang 14
      if (it == fleet->nodes.end())
        throw InputError(
            Position{fleet->source},
            fmt::format("the plan has units on node \"{}\", which this fleet does not have", name));
      node.gpus = std::max(node.gpus, static_cast<int>(it->gpus.size()));
      node.labels = it->labels;
      vendors[name].clear();
      for (const auto& gpu : it->gpus) vendors[name].insert(gpu.vendor);
    }
    if (vendors[name].size() == 1) node.vendor = *vendors[name].begin();
    nodes.push_back(std::move(node));
  }
  return nodes;
}

std::map<std::string, std::vector<std::size_t>> assignments_by_node(const Plan& plan) {
  std::map<std::string, std::vector<std::size_t>> by_node;
  for (std::size_t i = 0; i < plan.assignments.size(); ++i)
    by_node[std::string(plan.assignments[i].node)].push_back(i);
  return by_node;
}

Plan node_slice(const Plan& plan, const std::vector<std::size_t>& assignments) {
  Plan slice;
  slice.schema_version = plan.schema_version;
  slice.generator_version = plan.generator_version;
  slice.policy = plan.policy;
  slice.fleet = plan.fleet;
  slice.summary = plan.summary;
  for (std::size_t i : assignments) slice.assignments.push_back(plan.assignments[i]);
  return slice;
}

}  // namespace gpuplan
