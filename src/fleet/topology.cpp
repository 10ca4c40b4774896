// The NVLink relation: built from the topology forms, recognised back as groups, put in words.
#include "fleet/topology.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>

#include "gpuplan/fleet.hpp"

namespace gpuplan::fleet {

Links no_links(int gpus) {
  auto n = static_cast<size_t>(gpus);
  return Links(n, std::vector<bool>(n, false));
}

Links all_to_all(int gpus) {
  auto links = no_links(gpus);
  for (size_t i = 0; i < links.size(); ++i)
    for (size_t j = 0; j < links.size(); ++j) links[i][j] = i != j;
  return links;
}

Links within_groups(int gpus, const std::vector<std::vector<int>>& groups) {
  auto links = no_links(gpus);
  for (const auto& group : groups)
    for (int a : group)
      for (int b : group)
        if (a != b) links[static_cast<size_t>(a)][static_cast<size_t>(b)] = true;
  return links;
}

bool is_nvlink_cell(std::string_view cell) {
  return cell.size() > 2 && cell.size() < 6 && cell.starts_with("NV") &&
         cell.find_first_not_of("0123456789", 2) == std::string_view::npos;
}

bool is_pcie_cell(std::string_view cell) {
  static constexpr std::array<std::string_view, 6> kinds = {"SYS", "NODE", "PHB", "PXB", "PIX", "SOC"};
  return std::ranges::find(kinds, cell) != kinds.end();
}

std::optional<std::pair<int, int>> first_asymmetry(const Links& links) {
  for (size_t i = 0; i < links.size(); ++i)
    for (size_t j = 0; j < i; ++j)
      if (links[i][j] != links[j][i]) return std::pair{static_cast<int>(i), static_cast<int>(j)};
  return std::nullopt;
}

std::optional<std::vector<std::vector<int>>> as_groups(const Links& links) {
  std::vector<std::vector<int>> groups;
  std::vector<bool> placed(links.size(), false);
  for (size_t i = 0; i < links.size(); ++i) {
    if (placed[i]) continue;
    std::vector<int> group{static_cast<int>(i)};
    for (size_t j = i + 1; j < links.size(); ++j)
      if (links[i][j]) group.push_back(static_cast<int>(j));
    for (int a : group) {
      placed[static_cast<size_t>(a)] = true;
      int neighbours = 0;
      for (size_t j = 0; j < links.size(); ++j) neighbours += links[static_cast<size_t>(a)][j] ? 1 : 0;
      if (neighbours != static_cast<int>(group.size()) - 1) return std::nullopt;
      for (int b : group)
        if (a != b && !links[static_cast<size_t>(a)][static_cast<size_t>(b)]) return std::nullopt;
    }
    if (group.size() > 1) groups.push_back(std::move(group));
  }
  return groups;
}

}  // namespace gpuplan::fleet

namespace gpuplan {

namespace {

/// "0-3" for a run of consecutive GPUs, "0,2,4" otherwise.
std::string group_text(const std::vector<int>& group) {
  bool consecutive = true;
  for (size_t i = 1; i < group.size(); ++i) consecutive = consecutive && group[i] == group[i - 1] + 1;
  if (consecutive) return fmt::format("{}-{}", group.front(), group.back());
  return fmt::format("{}", fmt::join(group, ","));
}

}  // namespace

std::string describe_nvlink(const Node& node, const std::string& topology) {
  auto gpus = static_cast<int>(node.gpus.size());
  if (gpus < 2) return "none (1 GPU)";
  if (node.nvlink == fleet::all_to_all(gpus))
    return topology == "nvswitch" ? "all-to-all (NVSwitch)" : "all-to-all";
  if (node.nvlink == fleet::no_links(gpus)) return "none (PCIe)";
  if (auto groups = fleet::as_groups(node.nvlink)) {
    bool pairs = true;
    std::vector<std::string> parts;
    for (const auto& group : *groups) {
      pairs = pairs && group.size() == 2;
      parts.push_back(group_text(group));
    }
    return fmt::format("{} {}", pairs ? "pairs" : "groups", fmt::join(parts, " "));
  }
  std::vector<std::string> links;
  for (int i = 0; i < gpus; ++i)
    for (int j = i + 1; j < gpus; ++j)
      if (node.nvlink[static_cast<size_t>(i)][static_cast<size_t>(j)])
        links.push_back(fmt::format("{}-{}", i, j));
  return fmt::format("links {}", fmt::join(links, " "));
}

}  // namespace gpuplan
