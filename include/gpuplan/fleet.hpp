#pragma once
// The GPU nodes tests may run on (SPEC section 4).
#include <cstdint>
#include <istream>
#include <map>
#include <string>
#include <vector>

#include "gpuplan/version.hpp"

namespace gpuplan {

struct Gpu {
  int index = 0;           ///< as CUDA_VISIBLE_DEVICES counts on the node
  std::string model;       ///< "H100-SXM-80GB", as the fleet names it
  std::string family;      ///< lower-case family from the catalog: "h100", "a100", "l4"
  std::int64_t vram_mib = 0;
  Version compute_capability;
  std::string uuid;        ///< optional
};

struct Node {
  std::string name;
  std::string pool;
  std::vector<Gpu> gpus;
  Version cuda;        ///< highest CUDA version the driver supports
  std::string driver;
  std::map<std::string, std::string> labels;
  /// nvlink[i][j]: GPUs i and j are directly NVLink-connected (symmetric; false on the diagonal).
  std::vector<std::vector<bool>> nvlink;

  /// True when every two GPUs of `gpus` are NVLink-connected (always for fewer than two).
  bool connected(const std::vector<int>& gpus) const;
};

/// A named group of identical nodes, as written in the fleet file.
struct Pool {
  std::string name;
  std::vector<std::string> nodes;  ///< node names, in order
  std::string topology;            ///< "nvswitch", "pcie", "nvlink_pairs", "nvlink_groups", "matrix"
};

struct Fleet {
  std::vector<Pool> pools;
  std::vector<Node> nodes;  ///< every node of every pool, pool by pool
  std::string source;       ///< the fleet file's name
};

/// Reads and validates a fleet file. Throws InputError ("file:line:col: key: what is wrong").
Fleet load_fleet(std::istream& in, const std::string& name);

}  // namespace gpuplan
