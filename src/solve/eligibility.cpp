// Can node N ever run unit U, and if no node can, which came closest and why not.
#include "solve/eligibility.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <map>
#include <set>
#include <tuple>

#include "gpuplan/error.hpp"
#include "gpuplan/size.hpp"
#include "util/text.hpp"

namespace gpuplan::solve {

namespace {

std::vector<GpuMask> link_masks(const Node& node) {
  std::vector<GpuMask> links(node.gpus.size(), 0);
  for (size_t i = 0; i < node.gpus.size(); ++i)
    for (size_t j = 0; j < node.gpus.size(); ++j)
      if (i != j && node.connected({static_cast<int>(i), static_cast<int>(j)}))
        links[i] |= bit(static_cast<int>(j));
  return links;
}

/// Everything eligibility and GPU choice look at, as one comparable string.
std::string type_key(const Node& node, const std::vector<GpuMask>& links) {
  std::string key = node.cuda.str();
  for (size_t i = 0; i < node.gpus.size(); ++i) {
    const Gpu& g = node.gpus[i];
    key += fmt::format("|{}/{}/{}/{}/{}/{:x}", g.model, g.family, g.vendor, g.vram_mib,
                       g.compute_capability.str(), links[i]);
  }
  return key;
}

bool memory_ok(const Requirement& r, const Gpu& gpu) {
  return !r.gpu_mem_mib || gpu.vram_mib >= r.gpu_mem_mib->value;
}

bool model_ok(const Requirement& r, const Gpu& gpu) {
  return !r.gpu_models || std::ranges::any_of(r.gpu_models->value, [&](const std::string& wanted) {
    return gpu_is_model(gpu, wanted);
  });
}

bool vendor_ok(const Requirement& r, const Gpu& gpu) { return !r.vendor || r.vendor->value == gpu.vendor; }

bool capability_ok(const Requirement& r, const Gpu& gpu) {
  return std::all_of(r.compute_capability.begin(), r.compute_capability.end(),
                     [&](const auto& c) { return c.value.satisfied_by(gpu.compute_capability); });
}

bool cuda_ok(const Requirement& r, const Node& node) {
  return std::all_of(r.cuda.begin(), r.cuda.end(),
                     [&](const auto& c) { return c.value.satisfied_by(node.cuda); });
}

/// gpu-mem:80GB against an 80 GB GPU whose memory.total (nvidia-smi's, in binary units) is a
/// little less: a declared whole-GiB need of at most 10% more than `most`.
bool sold_as_needed(const Requirement& r, std::int64_t most) {
  if (!r.gpu_mem_mib || r.gpu_mem_mib->source == measured_memory_source) return false;
  std::int64_t wanted = r.gpu_mem_mib->value;
  return wanted % 1024 == 0 && most < wanted && most * 10 >= wanted * 9;
}

int largest_clique(const std::vector<GpuMask>& links, GpuMask within) {
  int size = 0;
  while (size < count(within) && has_clique(links, within, size + 1)) ++size;
  return size;
}

/// "== 9.0", ">= 12.4, < 13": constraints as a sentence writes them.
std::string spoken(const std::vector<Sourced<VersionConstraint>>& constraints) {
  std::vector<std::string> parts;
  for (const auto& c : constraints) {
    std::string text = c.value.str();
    size_t op = text.find_first_of("0123456789");
    parts.push_back(text.substr(0, op) + " " + text.substr(op));
  }
  return fmt::format("{}", fmt::join(parts, ", "));
}

std::string gpus_phrase(int n) { return n == 1 ? "1 GPU" : fmt::format("{} GPUs", n); }

enum class Need { gpus, vendor, memory, model, capability, cuda, together, nvlink };

/// What `node` has, in the words of the need it fails.
std::string fact(Need need, const Requirement& r, const Node& node, const std::vector<GpuMask>& links) {
  std::set<std::string> values;
  switch (need) {
    case Need::gpus: return gpus_phrase(static_cast<int>(node.gpus.size()));
    case Need::vendor:
      for (const auto& g : node.gpus) values.insert(vendor_display(g.vendor));
      return fmt::format("{} GPUs", fmt::join(values, " and "));
    case Need::memory: {
      std::int64_t most = 0;
      for (const auto& g : node.gpus) {
        values.insert(format_mib(g.vram_mib));
        most = std::max(most, g.vram_mib);
      }
      auto facts = fmt::format("GPUs of {}", fmt::join(values, " and "));
      if (!sold_as_needed(r, most)) return facts;
      return fmt::format(
          "{} ({} is {} MiB, more than nvidia-smi's memory.total of these GPUs; "
          "gpu-mem:{}GiB fits them)",
          facts, format_mib(r.gpu_mem_mib->value), r.gpu_mem_mib->value, most / 1024);
    }
    case Need::model:
      for (const auto& g : node.gpus) values.insert(g.model);
      return fmt::format("{} GPUs", fmt::join(values, " and "));
    case Need::capability:
      for (const auto& g : node.gpus) values.insert(g.compute_capability.str());
      if (values.size() == 1 && values.begin()->empty()) return "no compute capability";  // AMD, Intel
      return fmt::format("compute capability {}", fmt::join(values, " and "));
    case Need::cuda: return node.cuda.empty() ? "no CUDA version" : "CUDA " + node.cuda.str();
    case Need::together:
      return fmt::format("only {} GPUs that meet all of these", count(eligible_gpus(r, node)));
    case Need::nvlink:
      return fmt::format("at most {} NVLink-connected GPUs", largest_clique(links, eligible_gpus(r, node)));
  }
  return {};
}

std::vector<Need> failed_needs(const Requirement& r, const Node& node, const std::vector<GpuMask>& links) {
  std::vector<Need> failed;
  int wanted = r.gpus.value;
  // A node of too few GPUs fails that need alone when those it has are of the kind asked for
  // (one L4 for two L4s: "1 GPU", not also a model or vendor it has).
  int each = std::min(wanted, static_cast<int>(node.gpus.size()));
  auto gpus_with = [&](auto ok) {
    return static_cast<int>(
        std::count_if(node.gpus.begin(), node.gpus.end(), [&](const Gpu& g) { return ok(r, g); }));
  };
  if (static_cast<int>(node.gpus.size()) < wanted) failed.push_back(Need::gpus);
  if (gpus_with(vendor_ok) < each) failed.push_back(Need::vendor);
  if (gpus_with(memory_ok) < each) failed.push_back(Need::memory);
  if (gpus_with(model_ok) < each) failed.push_back(Need::model);
  if (gpus_with(capability_ok) < each) failed.push_back(Need::capability);
  if (!cuda_ok(r, node)) failed.push_back(Need::cuda);
  if (!failed.empty()) return failed;
  GpuMask eligible = eligible_gpus(r, node);
  if (count(eligible) < wanted)
    failed.push_back(Need::together);
  else if (r.needs_nvlink() && !has_clique(links, eligible, wanted))
    failed.push_back(Need::nvlink);
  return failed;
}

/// The requirement as a sentence: "4 GPUs with 40GiB per GPU with CUDA >= 12.4".
std::string needs_phrase(const Requirement& r, bool show_count) {
  std::vector<std::string> parts;
  if (show_count || r.gpus.value > 1 || r.vendor) parts.push_back(gpus_phrase(r.gpus.value));
  if (r.vendor) parts.back().insert(parts.back().find("GPU"), vendor_display(r.vendor->value) + " ");
  if (r.gpu_mem_mib) parts.push_back(format_mib(r.gpu_mem_mib->value) + " per GPU");
  if (r.gpu_models) parts.push_back(fmt::format("GPU model {}", fmt::join(r.gpu_models->value, " or ")));
  if (!r.compute_capability.empty()) parts.push_back("compute capability " + spoken(r.compute_capability));
  if (!r.cuda.empty()) parts.push_back("CUDA " + spoken(r.cuda));
  if (r.needs_nvlink()) parts.emplace_back("NVLink between its GPUs");
  if (parts.empty()) parts.push_back(gpus_phrase(r.gpus.value));
  return fmt::format("{}", fmt::join(parts, " with "));
}

}  // namespace

FleetIndex index_fleet(const Fleet& fleet) {
  FleetIndex index;
  std::map<std::string, int> type_by_key;
  for (size_t n = 0; n < fleet.nodes.size(); ++n) {
    const Node& node = fleet.nodes[n];
    if (node.gpus.size() > max_gpus_per_node)
      throw InputError(Position{fleet.source},
                       fmt::format("node {}: {} GPUs; gpuplan plans nodes of up to {} GPUs", node.name,
                                   node.gpus.size(), max_gpus_per_node));
    auto links = link_masks(node);
    auto [it, added] = type_by_key.try_emplace(type_key(node, links), static_cast<int>(index.types.size()));
    if (added) index.types.push_back(NodeType{{}, static_cast<int>(node.gpus.size()), links});
    NodeType& type = index.types[static_cast<size_t>(it->second)];
    index.type_of_node.push_back(it->second);
    index.slot_of_node.push_back(static_cast<int>(type.nodes.size()));
    type.nodes.push_back(static_cast<int>(n));
  }
  return index;
}

GpuMask eligible_gpus(const Requirement& r, const Node& node) {
  if (!cuda_ok(r, node)) return 0;
  GpuMask mask = 0;
  for (size_t i = 0; i < node.gpus.size(); ++i) {
    const Gpu& g = node.gpus[i];
    if (vendor_ok(r, g) && memory_ok(r, g) && model_ok(r, g) && capability_ok(r, g))
      mask |= bit(static_cast<int>(i));
  }
  return mask;
}

std::int64_t shareable_mib(const Gpu& gpu, double headroom) {
  return std::max<std::int64_t>(1, static_cast<std::int64_t>(double(gpu.vram_mib) * (1 - headroom)));
}

bool has_clique(const std::vector<GpuMask>& links, GpuMask within, int size) {
  if (size <= 1) return count(within) >= size;
  while (count(within) >= size) {
    int first = std::countr_zero(within);
    within &= within - 1;
    if (has_clique(links, within & links[static_cast<size_t>(first)], size - 1)) return true;
  }
  return false;
}

bool can_run(const Requirement& r, const Node& node, const std::vector<GpuMask>& links) {
  GpuMask eligible = eligible_gpus(r, node);
  int wanted = r.gpus.value;
  if (count(eligible) < wanted) return false;
  return !r.needs_nvlink() || has_clique(links, eligible, wanted);
}

std::string memory_passed_over(const Requirement& r, const Fleet& fleet, const FleetIndex& index) {
  if (!r.gpu_mem_mib || r.gpu_mem_mib->source == measured_memory_source) return {};
  std::map<std::string, long> passed;  // "H100-80GB GPUs of 81559 MiB" → how many
  std::int64_t fits = r.gpu_mem_mib->value;
  for (const NodeType& type : index.types) {
    const Node& node = fleet.nodes[static_cast<size_t>(type.nodes.front())];
    if (can_run(r, node, type.links)) continue;
    std::int64_t most = 0;
    for (const auto& g : node.gpus) most = std::max(most, g.vram_mib);
    if (!sold_as_needed(r, most)) continue;
    Requirement fitting = r;
    fitting.gpu_mem_mib->value = most / 1024 * 1024;
    if (!can_run(fitting, node, type.links)) continue;
    fits = std::min(fits, fitting.gpu_mem_mib->value);
    for (const auto& g : node.gpus)
      if (g.vram_mib < r.gpu_mem_mib->value && g.vram_mib >= fitting.gpu_mem_mib->value)
        passed[fmt::format("{} GPUs ({} MiB)", g.model, g.vram_mib)] += static_cast<long>(type.nodes.size());
  }
  if (passed.empty()) return {};
  std::vector<std::string> which;
  for (const auto& [gpus, n] : passed) which.push_back(fmt::format("{} {}", n, gpus));
  return fmt::format(
      "needs {} MiB a GPU ({}), more than nvidia-smi's memory.total of the fleet's {}, so it is not placed "
      "on them; gpu-mem:{}GiB fits them",
      r.gpu_mem_mib->value, format_mib(r.gpu_mem_mib->value), fmt::join(which, " and "), fits / 1024);
}

std::string unschedulable_reason(const Requirement& r, const Fleet& fleet, const FleetIndex& index) {
  if (fleet.nodes.empty()) return fmt::format("needs {}; the fleet has no nodes", needs_phrase(r, true));
  size_t largest = 0;
  for (const auto& node : fleet.nodes) largest = std::max(largest, node.gpus.size());
  if (static_cast<int>(largest) < r.gpus.value)
    return fmt::format("needs {}; the largest node has {}", gpus_phrase(r.gpus.value), largest);
  const Node* closest = nullptr;
  const std::vector<GpuMask>* closest_links = nullptr;
  std::vector<Need> closest_failed;
  auto most_memory = [](const Node& node) {
    std::int64_t most = 0;
    for (const auto& gpu : node.gpus) most = std::max(most, gpu.vram_mib);
    return most;
  };
  // One node of each type (its first in fleet order) answers for all of that type.
  for (const NodeType& type : index.types) {
    const Node& node = fleet.nodes[static_cast<size_t>(type.nodes.front())];
    auto failed = failed_needs(r, node, type.links);
    // Closest: GPUs of the vendor and model asked for (single-L4 runners say more of a test that
    // asks for two L4s with NVLink than an A100 pool does); then the fewest needs failed; then
    // the most GPU memory (the bigger machine).
    auto other_kind = [](const std::vector<Need>& needs) {
      return std::count_if(needs.begin(), needs.end(),
                           [](Need n) { return n == Need::vendor || n == Need::model; });
    };
    auto rank = [&](const std::vector<Need>& needs, const Node& n) {
      return std::tuple(other_kind(needs), needs.size(), -most_memory(n));
    };
    if (!closest || rank(failed, node) < rank(closest_failed, *closest)) {
      closest = &node;
      closest_links = &type.links;
      closest_failed = std::move(failed);
    }
  }
  // A CUDA version alone is wanting: name every version of the nodes that have all else it needs,
  // not the one node chosen by memory (a100-80's 12.2 for `cuda>=13.0` where h100s have 12.4).
  if (closest_failed == std::vector<Need>{Need::cuda}) {
    std::set<Version> versions;
    for (const NodeType& type : index.types) {
      const Node& node = fleet.nodes[static_cast<size_t>(type.nodes.front())];
      if (failed_needs(r, node, type.links) == closest_failed && !node.cuda.empty())
        versions.insert(node.cuda);
    }
    if (versions.size() > 1) {
      std::vector<std::string> names;
      for (const auto& version : versions) names.push_back(version.str());
      return fmt::format("needs {}; the nodes with all else it needs have CUDA {} and {}",
                         needs_phrase(r, false), fmt::join(names.begin(), names.end() - 1, ", "),
                         names.back());
    }
  }
  std::vector<std::string> facts;
  facts.reserve(closest_failed.size());
  for (Need need : closest_failed) facts.push_back(fact(need, r, *closest, *closest_links));
  auto pool_size = std::count_if(fleet.nodes.begin(), fleet.nodes.end(),
                                 [&](const Node& n) { return n.pool == closest->pool; });
  std::string who = !closest->pool.empty() && pool_size > 1 ? fmt::format("the {} nodes have", closest->pool)
                                                            : fmt::format("node {} has", closest->name);
  return fmt::format("needs {}; {} {}", needs_phrase(r, false), who, fmt::join(facts, " and "));
}

}  // namespace gpuplan::solve
