#pragma once
// The GPU nodes tests may run on (SPEC section 4).
#include <cstdint>
#include <istream>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpuplan/version.hpp"

namespace gpuplan {

struct Gpu {
  int index = 0;       ///< as CUDA_VISIBLE_DEVICES counts on the node
  std::string model;   ///< "H100-SXM-80GB", as the fleet names it
  std::string family;  ///< lower-case family from the catalog: "h100", "a100", "l4"
  std::int64_t vram_mib = 0;
  Version compute_capability;
  std::string uuid;  ///< optional
  /// "nvidia", "amd", "intel": from the catalog, `gpu.vendor` or the model name.
  std::string vendor = "nvidia";
};

struct Node {
  std::string name;
  std::string pool;
  std::vector<Gpu> gpus;
  Version cuda;  ///< highest CUDA version the driver supports
  std::string driver;
  std::map<std::string, std::string> labels;
  /// nvlink[i][j]: GPUs i and j are directly NVLink-connected (symmetric; false on the diagonal).
  std::vector<std::vector<bool>> nvlink;

  /// True when every two GPUs of `gpus` are NVLink-connected (always for fewer than two).
  bool connected(const std::vector<int>& gpus) const;

  /// Every set of k GPU indices that is pairwise NVLink-connected, each sorted ascending and
  /// the list in lexicographic order; k = 1 gives every GPU, k = 0 or k > GPU count nothing.
  /// Enumerates: meant for the handful of GPUs a node has (70 sets of 4 on an 8-GPU NVSwitch node).
  std::vector<std::vector<int>> connected_sets(int k) const;
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
  /// Guesses the loader made that the user should see ("file:line:col: gpu.model: 'H100-SXM-80G' is
  /// not in the catalog; did you mean H100-SXM-80GB?"): commands print them on stderr.
  std::vector<std::string> warnings;
};

/// Reads and validates a fleet file. Throws InputError ("file:line:col: key: what is wrong").
Fleet load_fleet(std::istream& in, const std::string& name);

/// One entry of the built-in GPU catalog: what `model:` alone stands for.
struct GpuModel {
  std::string name;            ///< the fleet's spelling: "H100-SXM-80GB"
  std::string family;          ///< "h100"
  std::int64_t vram_mib = 0;   ///< memory.total as nvidia-smi reports it
  Version compute_capability;  ///< empty for AMD and Intel GPUs, and a model of one's own given none
  std::vector<std::string>
      smi_names;  ///< names nvidia-smi (rocm-smi, xpu-smi) prints: "NVIDIA H100 80GB HBM3"
  std::string vendor = "nvidia";
};

/// The catalog, in the order the README's table lists it.
const std::vector<GpuModel>& gpu_catalog();

/// The catalog entry whose name or nvidia-smi name is `name`, ignoring case; nullptr if none.
const GpuModel* find_gpu_model(std::string_view name);

/// The family people write in `gpu-model:` for a model outside the catalog, from its name:
/// "NVIDIA A100-SXM-64GB" → "a100", "AMD Instinct MI250X" → "mi250x", "Tesla P100-PCIE-16GB" → "p100".
std::string family_from_name(std::string_view model);

/// Whether `gpu` is the model a `gpu-model:` name asks for (README "Tags and constraints that
/// name a GPU model"): its model or family ("H100-SXM-80GB", "h100"); a name nvidia-smi gives it,
/// in any case and with any separators ("A100-SXM4-80GB", "nvidia-tesla-t4"); its model without
/// the memory ("h100-sxm": every memory of it); its family's last words ("rtx-4090", "4090" of
/// GeForce-RTX-4090's "geforce-rtx-4090"); or any of these with the memory after it ("a100-80gb":
/// an A100 of 80 GB as sold, whose nvidia-smi memory.total is within 90–102% of 80 GiB).
bool gpu_is_model(const Gpu& gpu, std::string_view wanted);

/// The vendor a model outside the catalog is from, by its name: "MI…"/"AMD…"/"Instinct…" → "amd";
/// "Intel…"/"Data Center GPU Max…"/"Arc…"/"Flex…" → "intel"; anything else "nvidia".
std::string vendor_from_name(std::string_view model);

/// How a node's GPUs are NVLinked, in words: "all-to-all (NVSwitch)", "pairs 0-1 2-3",
/// "groups 0-3 4-7", "none (PCIe)", or the links one by one for anything irregular.
std::string describe_nvlink(const Node& node, const std::string& topology);

/// `gpuplan fleet check`'s report: a table for people, and the same facts as JSON.
std::string fleet_summary(const Fleet& fleet);
std::string fleet_summary_json(const Fleet& fleet);

/// A text handed to the importer, with the name its errors should carry.
struct NamedText {
  std::string text;
  std::string name;
};

/// What the importer cannot learn from nvidia-smi's output.
struct ImportOptions {
  std::string node = "node-0";  ///< the node's name
  std::string pool;             ///< default: the GPU family ("h100")
  std::string cuda;             ///< default: the CUDA version the driver's branch supports
};

struct ImportedFleet {
  std::string yaml;                   ///< the fleet file
  std::vector<std::string> warnings;  ///< what the import had to assume, for standard error
};

/// The CUDA version nvidia-smi reports ("CUDA Version: 12.4") for a driver ("550.54.15"), known
/// from its branch; nullopt for a branch the table does not hold.
std::optional<std::string> cuda_of_driver(const std::string& driver);

/// A fleet file for one node, from the text of `nvidia-smi --query-gpu=index,name,uuid,
/// memory.total,compute_cap,driver_version,mig.mode.current --format=csv` and `nvidia-smi topo -m`.
/// Throws InputError pointing into whichever text is wrong.
ImportedFleet import_nvidia_smi(const NamedText& query, const NamedText& topo, const ImportOptions& options);

}  // namespace gpuplan
