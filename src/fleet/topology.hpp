#pragma once
// The NVLink relation between a node's GPUs, built from the fleet file's `topology` forms
// and from `nvidia-smi topo -m`; shared by the loader and the importer.
#include <optional>
#include <vector>

namespace gpuplan::fleet {

/// links[i][j]: GPUs i and j are directly NVLink-connected (symmetric; false on the diagonal).
using Links = std::vector<std::vector<bool>>;

Links no_links(int gpus);
Links all_to_all(int gpus);
/// All-to-all within each group (a pair is a group of two), nothing across groups.
Links within_groups(int gpus, const std::vector<std::vector<int>>& groups);

/// The relation as disjoint all-to-all groups of two or more GPUs, each sorted, ordered by
/// first GPU; nullopt when some linked GPUs do not form such a group (an irregular mesh).
std::optional<std::vector<std::vector<int>>> as_groups(const Links& links);

}  // namespace gpuplan::fleet
