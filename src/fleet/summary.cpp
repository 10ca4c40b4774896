// `gpuplan fleet check`'s report: what the fleet file amounts to, for people and for machines.
#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "gpuplan/fleet.hpp"
#include "util/text.hpp"

namespace gpuplan {

namespace {

/// The facts of one pool; its nodes are identical, so the first one speaks for all.
struct PoolFacts {
  const Pool* pool;
  const Node* node;
  std::string nvlink;
};

std::vector<PoolFacts> facts(const Fleet& fleet) {
  std::vector<PoolFacts> result;
  for (const auto& pool : fleet.pools) {
    auto node = std::ranges::find(fleet.nodes, pool.name, &Node::pool);
    if (node == fleet.nodes.end() || node->gpus.empty()) continue;
    result.push_back({&pool, &*node, describe_nvlink(*node, pool.topology)});
  }
  return result;
}

struct Totals {
  std::int64_t gpus = 0;
  std::int64_t vram_mib = 0;
  std::map<std::string, std::int64_t> gpus_by_model;
  std::map<std::string, std::int64_t> vram_mib_by_model;
  std::vector<std::pair<Version, std::int64_t>> nodes_by_cuda;  ///< ascending by version
};

Totals totals(const Fleet& fleet) {
  Totals totals;
  for (const auto& node : fleet.nodes) {
    for (const auto& gpu : node.gpus) {
      ++totals.gpus;
      totals.vram_mib += gpu.vram_mib;
      ++totals.gpus_by_model[gpu.model];
      totals.vram_mib_by_model[gpu.model] += gpu.vram_mib;
    }
    auto it = std::ranges::find(totals.nodes_by_cuda, node.cuda, &std::pair<Version, std::int64_t>::first);
    if (it == totals.nodes_by_cuda.end())
      totals.nodes_by_cuda.emplace_back(node.cuda, 1);
    else
      ++it->second;
  }
  std::ranges::sort(totals.nodes_by_cuda, {}, &std::pair<Version, std::int64_t>::first);
  return totals;
}

/// 2609888 → "2.5 TiB", 92160 → "90.0 GiB": the order of magnitude people think in.
std::string human_mib(std::int64_t mib) {
  constexpr double tib = 1024.0 * 1024;
  if (static_cast<double>(mib) >= tib) return fmt::format("{:.1f} TiB", static_cast<double>(mib) / tib);
  return fmt::format("{:.1f} GiB", static_cast<double>(mib) / 1024);
}

std::string plural(std::int64_t n, std::string_view word) {
  return fmt::format("{} {}{}", n, word, util::plural(n));
}

}  // namespace

std::string fleet_summary(const Fleet& fleet) {
  auto pools = facts(fleet);
  auto sums = totals(fleet);
  std::string out = fmt::format("{}: {}, {}, {}, {} of GPU memory\n\n", fleet.source,
                                plural(static_cast<std::int64_t>(fleet.pools.size()), "pool"),
                                plural(static_cast<std::int64_t>(fleet.nodes.size()), "node"),
                                plural(sums.gpus, "GPU"), human_mib(sums.vram_mib));

  std::vector<std::vector<std::string>> rows = {
      {"pool", "nodes", "GPUs/node", "model", "VRAM/GPU", "CC", "CUDA", "driver", "NVLink"}};
  for (const auto& [pool, node, nvlink] : pools) {
    const auto& gpu = node->gpus.front();
    rows.push_back({pool->name, std::to_string(pool->nodes.size()), std::to_string(node->gpus.size()),
                    gpu.model, fmt::format("{} MiB", gpu.vram_mib), gpu.compute_capability.str(),
                    node->cuda.str(), node->driver.empty() ? "-" : node->driver, nvlink});
  }
  std::vector<size_t> widths(rows.front().size(), 0);
  for (const auto& row : rows)
    for (size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], row[i].size());
  const std::vector<bool> numeric = {false, true, true, false, true, false, false, false, false};
  for (const auto& row : rows) {
    std::string line;
    for (size_t i = 0; i < row.size(); ++i) {
      if (i > 0) line += "  ";
      line += i + 1 == row.size() ? row[i]
              : numeric[i]        ? fmt::format("{:>{}}", row[i], widths[i])
                                  : fmt::format("{:<{}}", row[i], widths[i]);
    }
    out += line + "\n";
  }

  size_t model_width = 0;
  for (const auto& [model, count] : sums.gpus_by_model) model_width = std::max(model_width, model.size());
  out += "\nGPUs by model:\n";
  for (const auto& [model, count] : sums.gpus_by_model)
    out += fmt::format("  {:<{}}  {:>5} GPU{:<1}  {:>9}\n", model, model_width, count, util::plural(count),
                       human_mib(sums.vram_mib_by_model.at(model)));

  std::vector<std::string> cuda;
  for (const auto& [version, nodes] : sums.nodes_by_cuda)
    cuda.push_back(fmt::format("{} ({})", version.empty() ? "none" : version.str(), plural(nodes, "node")));
  out += fmt::format("\nCUDA versions: {}\n", fmt::join(cuda, ", "));
  return out;
}

std::string fleet_summary_json(const Fleet& fleet) {
  using nlohmann::ordered_json;
  auto sums = totals(fleet);
  ordered_json cuda = ordered_json::array();
  for (const auto& [version, nodes] : sums.nodes_by_cuda)
    cuda.push_back({{"cuda", version.str()}, {"nodes", nodes}});
  ordered_json pools = ordered_json::array();
  for (const auto& [pool, node, nvlink] : facts(fleet)) {
    const auto& gpu = node->gpus.front();
    ordered_json links = ordered_json::array();
    for (size_t i = 0; i < node->nvlink.size(); ++i)
      for (size_t j = i + 1; j < node->nvlink.size(); ++j)
        if (node->nvlink[i][j]) links.push_back({i, j});
    pools.push_back({{"name", pool->name},
                     {"nodes", pool->nodes},
                     {"gpus_per_node", node->gpus.size()},
                     {"model", gpu.model},
                     {"family", gpu.family},
                     {"vram_mib", gpu.vram_mib},
                     {"compute_capability", gpu.compute_capability.str()},
                     {"cuda", node->cuda.str()},
                     {"driver", node->driver.empty() ? ordered_json() : ordered_json(node->driver)},
                     {"topology", pool->topology},
                     {"nvlink", nvlink},
                     {"nvlink_links", links},
                     {"labels", node->labels}});
  }
  ordered_json report = {{"fleet", fleet.source},
                         {"totals",
                          {{"pools", fleet.pools.size()},
                           {"nodes", fleet.nodes.size()},
                           {"gpus", sums.gpus},
                           {"vram_mib", sums.vram_mib},
                           {"gpus_by_model", sums.gpus_by_model},
                           {"cuda_versions", cuda}}},
                         {"pools", pools}};
  return report.dump(2) + "\n";
}

}  // namespace gpuplan
