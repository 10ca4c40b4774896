// The fleet file (SPEC section 4): YAML in, a validated Fleet out, or an InputError that
// names the file, line, column and key of the first thing wrong.
#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <optional>
#include <set>
#include <string_view>
#include <utility>

#include "core/utf8.hpp"
#include "fleet/names.hpp"
#include "fleet/topology.hpp"
#include "gpuplan/error.hpp"
#include "gpuplan/fleet.hpp"
#include "gpuplan/limits.hpp"
#include "gpuplan/size.hpp"
#include "util/suggest.hpp"
#include "util/text.hpp"
#include "util/yaml_keys.hpp"

namespace gpuplan {

namespace {

using util::excerpt;
using util::shown;

constexpr long max_nodes_per_pool = 10000;

/// " (did you mean 'count'?)" when one of `known` is a likely typo of `word`, or
/// " (did you mean 'H100-PCIE-80GB' or 'H100-SXM-80GB'?)" when `word` is part of some; else "".
std::string did_you_mean(std::string_view word, const std::vector<std::string_view>& known) {
  std::vector<std::string> containing;
  for (auto candidate : known)
    if (word.size() >= 2 && util::lower(candidate).find(util::lower(word)) != std::string::npos)
      containing.push_back(fmt::format("'{}'", candidate));
  if (!containing.empty()) return fmt::format(" (did you mean {}?)", fmt::join(containing, " or "));
  auto best = util::closest_match(word, known);
  return best ? fmt::format(" (did you mean '{}'?)", *best) : "";
}

/// The digits of a model name in order: "H100-SXM-80G" → "10080". A name outside the catalog with the
/// digits of a catalog name is a typo of it; with other digits (A100-SXM-64GB) a model of its own.
std::string digits(std::string_view name) {
  std::string out;
  for (char c : name)
    if (std::isdigit(static_cast<unsigned char>(c))) out += c;
  return out;
}

/// One key of a mapping and its value, both with their positions.
struct Field {
  YAML::Node key;
  YAML::Node value;
};

class Reader {
 public:
  explicit Reader(std::string file) : file_(std::move(file)) {}

  Position at(const YAML::Mark& mark) const { return Position{file_, mark.line + 1, mark.column + 1}; }
  Position at(const YAML::Node& node) const { return at(node.Mark()); }

  [[noreturn]] void fail(const YAML::Node& node, std::string_view key, std::string_view what) const {
    throw InputError(at(node), fmt::format("{}: {}", key, what));
  }

  /// The fields of a mapping, in file order; unknown and repeated keys are errors.
  /// `path` prefixes the keys in messages ("gpu" → "gpu.count"); `self` names the mapping itself.
  std::vector<std::pair<std::string, Field>> fields(const YAML::Node& node, const std::string& path,
                                                    std::string_view self,
                                                    const std::vector<std::string_view>& known) const {
    if (!node.IsMap()) fail(node, self, fmt::format("must be a mapping, not {}", shown(node)));
    std::vector<std::pair<std::string, Field>> result;
    util::KeyChecker keys(known);
    for (const auto& item : node) {
      if (auto problem = keys.check(item.first)) {
        using Kind = util::KeyProblem::Kind;
        if (problem->kind == Kind::not_a_word) fail(item.first, self, "keys must be plain words");
        auto key_path = (path.empty() ? std::string() : path + ".") + excerpt(problem->word);
        if (problem->kind == Kind::unknown && problem->word == "<<")
          fail(item.first, key_path, std::string(util::merge_key_problem));
        if (problem->kind == Kind::unknown)
          fail(item.first, key_path,
               fmt::format("unknown key{}; known here: {}", did_you_mean(problem->word, known),
                           fmt::join(known, ", ")));
        fail(item.first, key_path, fmt::format("given twice (first on line {})", problem->first_line));
      }
      result.emplace_back(item.first.Scalar(), Field{item.first, item.second});
    }
    return result;
  }

  std::string text(const YAML::Node& node, std::string_view key) const {
    if (!node.IsScalar() || node.Scalar().empty())
      fail(node, key, fmt::format("must be a word or number, not {}", shown(node)));
    return node.Scalar();
  }

  long whole_number(const YAML::Node& node, std::string_view key, long least, long most) const {
    text(node, key);  // a list or a mapping is "not a word or number"
    auto number = util::whole_number(node, least, most);
    if (!number) fail(node, key, number.problem());
    return *number;
  }

  Version version(const YAML::Node& node, std::string_view key, std::string_view example) const {
    auto value = text(node, key);
    auto version = Version::parse(value);
    if (!version) fail(node, key, fmt::format("{} is not a version like \"{}\"", shown(node), example));
    return *version;
  }

  std::string name(const YAML::Node& node, std::string_view key) const {
    auto value = text(node, key);
    if (!fleet::is_name(value))
      fail(node, key,
           fmt::format(
               "{} is not a name: use letters, digits, '-', '_' and '.', starting with a letter or digit",
               shown(node)));
    return value;
  }

  const YAML::Node& list(const YAML::Node& node, std::string_view key) const {
    if (!node.IsSequence()) fail(node, key, fmt::format("must be a list, not {}", shown(node)));
    return node;
  }

 private:
  std::string file_;
};

const Field* find(const std::vector<std::pair<std::string, Field>>& fields, std::string_view key) {
  for (const auto& [name, field] : fields)
    if (name == key) return &field;
  return nullptr;
}

/// The field `key` ("gpu.count" looks up "count") or an error at the mapping that lacks it.
const Field& require(const Reader& reader, const std::vector<std::pair<std::string, Field>>& fields,
                     const YAML::Node& mapping, std::string_view key, std::string_view what) {
  if (const auto* field = find(fields, key.substr(key.rfind('.') + 1))) return *field;
  reader.fail(mapping, key, fmt::format("missing: {}", what));
}

/// What `gpu:` says, with the catalog filling what it leaves out.
struct GpuSpec {
  GpuModel model;
  int count = 0;
  std::vector<std::string> uuids;
  YAML::Node uuids_node;
  std::string warning;  ///< a model outside the catalog that looks like a typo of one
};

GpuSpec read_gpu(const Reader& reader, const YAML::Node& node) {
  auto fields =
      reader.fields(node, "gpu", "gpu", {"model", "count", "vram", "compute_capability", "vendor", "uuids"});
  GpuSpec spec;
  const auto& model = require(reader, fields, node, "gpu.model", "the GPU model, e.g. H100-SXM-80GB");
  auto name = reader.text(model.value, "gpu.model");
  const auto* vram = find(fields, "vram");
  const auto* cc = find(fields, "compute_capability");
  const auto* vendor = find(fields, "vendor");
  if (const auto* known = find_gpu_model(name)) {
    spec.model = *known;
  } else {
    std::vector<std::string_view> names;
    for (const auto& entry : gpu_catalog()) names.push_back(entry.name);
    spec.model.vendor =
        vendor ? util::lower(reader.text(vendor->value, "gpu.vendor")) : vendor_from_name(name);
    if (!vram) {
      // A100-80GB: the catalog's A100s (of 80 GB, when some are), not the nearest spelling (V100-16GB).
      std::vector<std::string> of_family, of_family_and_memory;
      auto last_word = util::lower(name.substr(std::min(name.find_last_of("-_ "), name.size() - 1) + 1));
      for (const auto& entry : gpu_catalog())
        if (entry.family == family_from_name(name)) {
          of_family.push_back(fmt::format("'{}'", entry.name));
          if (util::lower(entry.name).ends_with(last_word)) of_family_and_memory.push_back(of_family.back());
        }
      if (!of_family_and_memory.empty()) of_family = of_family_and_memory;
      auto near = util::closest_match(name, names);
      bool typo = near && find_gpu_model(*near)->family == family_from_name(name);  // H100-SXM-80G
      reader.fail(model.value, "gpu.model",
                  fmt::format("unknown model '{}'{}: give gpu.vram, or use a model from the catalog "
                              "(README, \"Fleet\")",
                              excerpt(name),
                              typo || of_family.empty()
                                  ? did_you_mean(name, names)
                                  : fmt::format(" (did you mean {}?)", fmt::join(of_family, " or "))));
    }
    spec.model.name = name;
    spec.model.family = family_from_name(name);
    if (auto near = util::closest_match(name, names); near && digits(*near) == digits(name))
      spec.warning = fmt::format(
          "{}: gpu.model: '{}' is not in the catalog; did you mean '{}'? (read as a model of "
          "its own, family {})",
          reader.at(model.value).str(), excerpt(name), *near, spec.model.family);
    if (spec.model.vendor == "nvidia" && !cc)  // SPEC: only vram is required of a model of one's own
      spec.warning += fmt::format(
          "{}{}: gpu.model: '{}' is not in the catalog and has no gpu.compute_capability, so no test that "
          "asks for one (gpu-cc, requires-gpu-smXY) is placed on it; give gpu.compute_capability",
          spec.warning.empty() ? "" : "; ", reader.at(model.value).str(), excerpt(name));
  }
  if (vendor) {
    auto text = util::lower(reader.text(vendor->value, "gpu.vendor"));
    if (text != "nvidia" && text != "amd" && text != "intel")
      reader.fail(vendor->value, "gpu.vendor",
                  fmt::format("'{}' is not nvidia, amd or intel", excerpt(text)));
    if (const auto* known = find_gpu_model(name); known && known->vendor != text)
      reader.fail(vendor->value, "gpu.vendor",
                  fmt::format("the catalog's {} is {}'s, not {}: leave gpu.vendor out, or name the model",
                              known->name, known->vendor, text));
    spec.model.vendor = text;
  }
  if (vram) {
    auto text = reader.text(vram->value, "gpu.vram");
    auto mib = parse_size_mib(text);
    if (!mib)
      reader.fail(
          vram->value, "gpu.vram",
          fmt::format("'{}' is not a size: write it with a unit, e.g. 81559MiB or 80GiB", excerpt(text)));
    // A catalog model's memory is what nvidia-smi measured: more than that (80GB on an H100 of 81559
    // MiB) lets through tests that do not fit, and sizes no GPU has are typos (80TB, 80M).
    const auto* known = find_gpu_model(name);
    if (known && *mib > known->vram_mib)
      spec.warning += fmt::format(
          "{}{}: gpu.vram: {} is more than the catalog's {} has ({} MiB, nvidia-smi's memory.total): "
          "tests that need more than it has may be placed on it",
          spec.warning.empty() ? "" : "; ", reader.at(vram->value).str(), excerpt(text), known->name,
          known->vram_mib);
    else if (*mib < 1024 || *mib > 4 * 1024 * 1024)
      spec.warning +=
          fmt::format("{}{}: gpu.vram: {} is a size no GPU has (1 GiB to 4 TiB): a typo?",
                      spec.warning.empty() ? "" : "; ", reader.at(vram->value).str(), excerpt(text));
    spec.model.vram_mib = *mib;
  }
  if (cc) {
    // CUDA's notion, X.Y with one digit after the point ("89" was read as 89.0, and an RTX 4090 took
    // the tests that need sm_90); AMD and Intel GPUs have none, and gpu-cc asks never land there.
    spec.model.compute_capability = reader.version(cc->value, "gpu.compute_capability", "9.0");
    const auto& parts = spec.model.compute_capability.parts;
    if (parts.size() != 2 || parts[0] < 1 || parts[0] > 15 || parts[1] > 9)
      reader.fail(
          cc->value, "gpu.compute_capability",
          fmt::format("'{}' is not a compute capability: X.Y, such as \"8.9\" (an RTX 4090) or \"9.0\"",
                      excerpt(cc->value.Scalar())));
    if (spec.model.vendor != "nvidia")
      reader.fail(
          cc->value, "gpu.compute_capability",
          fmt::format("a compute capability is NVIDIA's (CUDA's) notion, and these GPUs are {}'s: leave "
                      "it out (a test that asks for one never runs on them)",
                      spec.model.vendor == "amd" ? "AMD" : "Intel"));
  }
  const auto& count = require(reader, fields, node, "gpu.count", "how many GPUs each node has");
  spec.count = static_cast<int>(reader.whole_number(count.value, "gpu.count", 1, max_gpus_per_node));
  if (const auto* uuids = find(fields, "uuids")) {
    for (const auto& uuid : reader.list(uuids->value, "gpu.uuids"))
      spec.uuids.push_back(reader.text(uuid, "gpu.uuids"));
    if (static_cast<int>(spec.uuids.size()) != spec.count)
      reader.fail(uuids->value, "gpu.uuids",
                  fmt::format("lists {} UUIDs for {} GPUs", spec.uuids.size(), spec.count));
    spec.uuids_node = uuids->value;
  }
  return spec;
}

/// A GPU index in a topology list: a whole number below the node's GPU count.
int gpu_index(const Reader& reader, const YAML::Node& node, const std::string& key, int gpus) {
  auto value = reader.text(node, key);
  int index = -1;
  auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), index);
  if (ec != std::errc() || end != value.data() + value.size())
    reader.fail(node, key, fmt::format("{} is not a GPU index", shown(node)));
  if (index < 0 || index >= gpus)
    reader.fail(node, key,
                fmt::format("GPU {} is out of range: the node has {} GPUs (0 to {})", index, gpus, gpus - 1));
  return index;
}

/// nvlink_pairs or nvlink_groups: lists of GPU indices, no GPU in two of them.
std::vector<std::vector<int>> read_groups(const Reader& reader, const YAML::Node& node,
                                          const std::string& key, int gpus, bool pairs) {
  std::vector<std::vector<int>> groups;
  std::vector<std::optional<YAML::Mark>> owner(static_cast<size_t>(gpus));
  const char* what = pairs ? "pair" : "group";
  for (const auto& entry : reader.list(node, key)) {
    reader.list(entry, key);
    if (pairs && entry.size() != 2)
      reader.fail(entry, key, fmt::format("a pair has two GPUs, this has {}", entry.size()));
    if (!pairs && entry.size() < 2)
      reader.fail(entry, key, fmt::format("a group has at least two GPUs, this has {}", entry.size()));
    std::vector<int> group;
    for (const auto& item : entry) {
      int index = gpu_index(reader, item, key, gpus);
      auto& first = owner[static_cast<size_t>(index)];
      if (first)
        reader.fail(
            item, key,
            fmt::format("GPU {} is already in the {} at line {}, column {}: a GPU is in one NVLink {}", index,
                        what, first->line + 1, first->column + 1, what));
      first = entry.Mark();
      group.push_back(index);
    }
    std::ranges::sort(group);
    groups.push_back(std::move(group));
  }
  return groups;
}

/// topology: {matrix: rows}, each row a list of cells or one string of them, as
/// `nvidia-smi topo -m` prints: X on the diagonal, NV<n> for NVLink, SYS/NODE/PHB/PXB/PIX for none.
fleet::Links read_matrix(const Reader& reader, const YAML::Node& node, int gpus) {
  const std::string key = "topology.matrix";
  reader.list(node, key);
  if (static_cast<int>(node.size()) != gpus)
    reader.fail(node, key, fmt::format("has {} rows for {} GPUs", node.size(), gpus));
  auto links = fleet::no_links(gpus);
  std::vector<YAML::Node> rows;
  for (int i = 0; i < gpus; ++i) {
    const auto row = node[static_cast<size_t>(i)];
    std::vector<std::string> cells;
    if (row.IsScalar()) {
      std::string cell;
      for (char c : row.Scalar() + " ") {
        if (c != ' ' && c != '\t')
          cell += c;
        else if (!cell.empty())
          cells.push_back(std::exchange(cell, {}));
      }
    } else {
      for (const auto& cell : reader.list(row, key)) cells.push_back(reader.text(cell, key));
    }
    if (static_cast<int>(cells.size()) != gpus)
      reader.fail(row, key, fmt::format("row {} has {} cells for {} GPUs", i, cells.size(), gpus));
    for (int j = 0; j < gpus; ++j) {
      const auto& cell = cells[static_cast<size_t>(j)];
      if (i == j && cell != "X")
        reader.fail(row, key,
                    fmt::format("row {} must say X for GPU {} itself, not '{}'", i, i, excerpt(cell)));
      if (i != j && !fleet::is_nvlink_cell(cell) && !fleet::is_pcie_cell(cell))
        reader.fail(row, key,
                    fmt::format("row {}, column {}: '{}' is not NV<n>, SYS, NODE, PHB, PXB or PIX", i, j,
                                excerpt(cell)));
      links[static_cast<size_t>(i)][static_cast<size_t>(j)] = fleet::is_nvlink_cell(cell);
    }
    rows.push_back(row);
  }
  if (auto pair = fleet::first_asymmetry(links)) {
    auto [i, j] = *pair;
    reader.fail(rows[static_cast<size_t>(i)], key,
                fmt::format("row {} and row {} disagree on whether GPUs {} and {} are NVLinked", i, j, i, j));
  }
  return links;
}

/// The `topology` value: its kind ("nvswitch", ...) and the relation it makes.
std::pair<std::string, fleet::Links> read_topology(const Reader& reader, const Field* field, int gpus) {
  if (!field) return {"pcie", fleet::no_links(gpus)};
  const auto& node = field->value;
  const std::vector<std::string_view> words = {"nvswitch", "pcie"};
  if (node.IsScalar()) {
    const auto& word = node.Scalar();
    if (word == "nvswitch") return {word, fleet::all_to_all(gpus)};
    if (word == "pcie") return {word, fleet::no_links(gpus)};
    reader.fail(node, "topology",
                fmt::format("unknown topology '{}'{}: use nvswitch, pcie, {{nvlink_pairs: ...}}, "
                            "{{nvlink_groups: ...}} or {{matrix: ...}}",
                            excerpt(word), did_you_mean(word, words)));
  }
  if (!node.IsMap())
    reader.fail(node, "topology",
                fmt::format("must be nvswitch, pcie, {{nvlink_pairs: ...}}, {{nvlink_groups: ...}} or "
                            "{{matrix: ...}}, not {}",
                            shown(node)));
  auto fields = reader.fields(node, "topology", "topology", {"nvlink_pairs", "nvlink_groups", "matrix"});
  if (fields.size() != 1)
    reader.fail(node, "topology", "give exactly one of nvlink_pairs, nvlink_groups or matrix");
  const auto& [kind, value] = fields.front();
  if (kind == "matrix") return {kind, read_matrix(reader, value.value, gpus)};
  auto groups = read_groups(reader, value.value, "topology." + kind, gpus, kind == "nvlink_pairs");
  return {kind, fleet::within_groups(gpus, groups)};
}

std::map<std::string, std::string> read_labels(const Reader& reader, const Field* field) {
  std::map<std::string, std::string> labels;
  if (!field) return labels;
  if (!field->value.IsMap())
    reader.fail(field->value, "labels", fmt::format("must be a mapping, not {}", shown(field->value)));
  for (const auto& item : field->value) {
    auto key = reader.text(item.first, "labels");
    if (key == "<<") reader.fail(item.first, "labels.<<", util::merge_key_problem);
    if (labels.contains(key)) reader.fail(item.first, "labels." + excerpt(key), "given twice");
    labels[key] = reader.text(item.second, "labels." + excerpt(key));
  }
  return labels;
}

/// Where each node name was first given, to report a duplicate with both places.
struct Names {
  std::map<std::string, std::pair<std::string, long>> pool_and_line;

  void add(const Reader& reader, const YAML::Node& where, const std::string& key, const std::string& node,
           const std::string& pool) {
    auto line = where.Mark().line + 1;
    auto [it, added] = pool_and_line.emplace(node, std::pair{pool, line});
    if (!added)
      reader.fail(where, key,
                  fmt::format("node name '{}' is already used by pool {} (line {})", excerpt(node),
                              excerpt(it->second.first), it->second.second));
  }
};

void read_pool(const Reader& reader, const YAML::Node& node, Fleet& fleet, Names& names,
               std::set<std::string>& pool_names, long& size) {
  auto fields = reader.fields(node, "", "pools",
                              {"name", "count", "nodes", "gpu", "cuda", "driver", "topology", "labels"});
  Pool pool;
  const auto& name = require(reader, fields, node, "name", "the pool's name, e.g. h100");
  pool.name = reader.name(name.value, "name");
  if (!pool_names.insert(pool.name).second)
    reader.fail(name.value, "name", fmt::format("pool '{}' is already defined", excerpt(pool.name)));

  const auto* count = find(fields, "count");
  const auto* listed = find(fields, "nodes");
  if (count && listed) reader.fail(listed->key, "nodes", "give count or nodes, not both");
  if (listed) {
    reader.list(listed->value, "nodes");
    if (listed->value.size() == 0)
      reader.fail(listed->value, "nodes", "is empty: a pool has at least one node");
    for (const auto& entry : listed->value) {
      pool.nodes.push_back(reader.name(entry, "nodes"));
      names.add(reader, entry, "nodes", pool.nodes.back(), pool.name);
    }
  } else {
    long nodes = count ? reader.whole_number(count->value, "count", 1, max_nodes_per_pool) : 1;
    for (long i = 0; i < nodes; ++i) {
      pool.nodes.push_back(fmt::format("{}-{}", pool.name, i));
      names.add(reader, count ? count->value : name.value, count ? "count" : "name", pool.nodes.back(),
                pool.name);
    }
  }

  const auto& gpu_field = require(reader, fields, node, "gpu", "the mapping that describes each node's GPUs");
  auto gpu = read_gpu(reader, gpu_field.value);
  if (!gpu.warning.empty()) fleet.warnings.push_back(gpu.warning);
  if (!gpu.uuids.empty() && pool.nodes.size() != 1)
    reader.fail(gpu.uuids_node, "gpu.uuids", "only a pool of one node can list its GPUs' UUIDs");
  // CUDA is an NVIDIA notion: AMD and Intel pools may leave it out.
  Version cuda;
  if (const auto* given = find(fields, "cuda"); given && gpu.model.vendor != "nvidia")
    reader.fail(
        given->value, "cuda",
        fmt::format("a CUDA version on {} GPUs, which CUDA does not run on: leave it out (a test that "
                    "asks for CUDA would be placed on them)",
                    gpu.model.vendor == "amd" ? "AMD" : "Intel"));
  if (gpu.model.vendor == "nvidia") {
    const auto& cuda_field =
        require(reader, fields, node, "cuda", "the highest CUDA version the driver supports, e.g. \"12.4\"");
    cuda = reader.version(cuda_field.value, "cuda", "12.4");
    // nvidia-smi prints the driver beside it: "550.54" or "124" in cuda: met every constraint.
    if (cuda.parts.size() > 3 || cuda.parts.front() < 1 || cuda.parts.front() > 99)
      reader.fail(
          cuda_field.value, "cuda",
          fmt::format("'{}' is not a CUDA version, such as \"12.4\" (\"CUDA Version\" in nvidia-smi's "
                      "header; the number before it is the driver's)",
                      excerpt(cuda_field.value.Scalar())));
    // Unquoted, 12.40 is the number 12.4 to YAML 1.1 readers (PyYAML, Ansible); no CUDA has had
    // a minor version of 10 or more, so a trailing 0 there is that number written long.
    const std::string& written = cuda_field.value.Scalar();
    if (cuda_field.value.Tag() == "?" && cuda.parts.size() == 2 && cuda.parts[1] >= 10 &&
        written.ends_with('0'))
      fleet.warnings.push_back(fmt::format(
          "{}: cuda: {} is read as written, CUDA {}.{}, a minor version no CUDA has had; YAML 1.1 readers "
          "(PyYAML, Ansible) read it as the number {}: write \"{}\" if that was meant",
          reader.at(cuda_field.value).str(), excerpt(written), cuda.parts[0], cuda.parts[1],
          written.substr(0, written.find_last_not_of('0') + 1),
          written.substr(0, written.find_last_not_of('0') + 1)));
  }
  std::string driver;
  if (const auto* field = find(fields, "driver")) {
    reader.version(field->value, "driver", "550.54.15");
    driver = field->value.Scalar();
    // A test that needs the CUDA written here was planned on the node and refused at run time.
    if (auto supported = cuda_of_driver(driver);
        supported && !cuda.parts.empty() && *Version::parse(*supported) < cuda)
      fleet.warnings.push_back(fmt::format(
          "{}: cuda: {} is newer than driver {} supports (CUDA {}, as nvidia-smi prints it): tests that need "
          "CUDA {} are planned here and refused at run time; write the CUDA version nvidia-smi prints",
          reader.at(field->value).str(), cuda.str(), driver, *supported, cuda.str()));
  }
  auto [topology, links] = read_topology(reader, find(fields, "topology"), gpu.count);
  pool.topology = topology;
  auto labels = read_labels(reader, find(fields, "labels"));

  // Checked before the nodes are made: `count` multiplies everything above.
  auto nodes = static_cast<long>(pool.nodes.size());
  size += nodes * (1 + gpu.count + static_cast<long>(labels.size()));
  if (size > max_fleet_size) {
    const YAML::Node* where = &name.value;  // the field that made this pool so large
    std::string_view key = "name";
    if (count)
      where = &count->value, key = "count";
    else if (listed)
      where = &listed->value, key = "nodes";
    reader.fail(*where, key,
                fmt::format("the fleet reaches {} nodes, GPUs and node labels with this pool, more than the "
                            "{} gpuplan plans for (README, \"Limits\")",
                            size, max_fleet_size));
  }

  for (const auto& node_name : pool.nodes) {
    Node machine;
    machine.name = node_name;
    machine.pool = pool.name;
    machine.cuda = cuda;
    machine.driver = driver;
    machine.labels = labels;
    machine.nvlink = links;
    for (int i = 0; i < gpu.count; ++i)
      machine.gpus.push_back(
          Gpu{i, gpu.model.name, gpu.model.family, gpu.model.vram_mib, gpu.model.compute_capability,
              gpu.uuids.empty() ? std::string() : gpu.uuids[static_cast<size_t>(i)], gpu.model.vendor});
    fleet.nodes.push_back(std::move(machine));
  }
  fleet.pools.push_back(std::move(pool));
}

}  // namespace

Fleet load_fleet(std::istream& in, const std::string& name) {
  Reader reader(name);
  YAML::Node root;
  std::string text = read_small_text(in, name, max_yaml_bytes);
  require_utf8(text, name);  // names and models go into JSON output
  try {
    // Fleet files of several machines put one after another (`---`): only the first was read.
    if (auto second = util::second_document(text))
      throw InputError(reader.at(second->at),
                       (second->marker.empty() ? "" : "fleet: ") +
                           util::second_document_problem(*second,
                                                         "a fleet is one document; merge the pools "
                                                         "into one list"));
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    throw InputError(reader.at(e.mark), fmt::format("YAML syntax error: {}", excerpt(e.msg, 200)));
  }
  if (!root.IsDefined() || root.IsNull())
    throw InputError(Position{name, 1, 1},
                     "empty fleet: expected `version: 1` and `pools:` (README, \"Fleet\")");
  if (root.IsScalar()) {  // a file of text, not YAML, which YAML reads whole as one string: quote its line
    auto from = static_cast<std::size_t>(std::max(root.Mark().pos, 0));
    reader.fail(root, "fleet",
                fmt::format("must be a mapping, not '{}'",
                            excerpt(std::string_view(text).substr(std::min(from, text.size())))));
  }
  auto fields = reader.fields(root, "", "fleet", {"version", "pools"});
  const auto& version = require(reader, fields, root, "version", "write `version: 1` first");
  if (!version.value.IsScalar() || version.value.Scalar() != "1")
    reader.fail(version.value, "version",
                fmt::format("only version 1 is known, not {}", shown(version.value)));
  const auto& pools = require(reader, fields, root, "pools", "the list of pools");
  reader.list(pools.value, "pools");
  if (pools.value.size() == 0) reader.fail(pools.value, "pools", "empty fleet: list at least one pool");

  Fleet fleet;
  fleet.source = name;
  Names names;
  std::set<std::string> pool_names;
  long size = 0;  // nodes, GPUs and node labels so far
  for (const auto& pool : pools.value) read_pool(reader, pool, fleet, names, pool_names, size);
  return fleet;
}

}  // namespace gpuplan
