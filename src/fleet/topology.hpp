#pragma once
// The NVLink relation between a node's GPUs, built from the fleet file's `topology` forms
// and from `nvidia-smi topo -m`; shared by the loader and the importer.
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

namespace gpuplan::fleet {

/// links[i][j]: GPUs i and j are directly NVLink-connected (symmetric; false on the diagonal).
using Links = std::vector<std::vector<bool>>;

Links no_links(int gpus);
Links all_to_all(int gpus);
/// All-to-all within each group (a pair is a group of two), nothing across groups.
Links within_groups(int gpus, const std::vector<std::vector<int>>& groups);

/// A GPU-to-GPU cell of `nvidia-smi topo -m`: NV<n> is NVLink (n bonded links); SYS, NODE, PHB,
/// PXB, PIX (and SOC, SYS's old name) are PCIe paths. The fleet file's matrix uses the same words.
bool is_nvlink_cell(std::string_view cell);
bool is_pcie_cell(std::string_view cell);

/// The first GPUs (i, j) with i > j on which links[i][j] and links[j][i] disagree, if any.
std::optional<std::pair<int, int>> first_asymmetry(const Links& links);

/// The relation as disjoint all-to-all groups of two or more GPUs, each sorted, ordered by
/// first GPU; nullopt when some linked GPUs do not form such a group (an irregular mesh).
std::optional<std::vector<std::vector<int>>> as_groups(const Links& links);

}  // namespace gpuplan::fleet
