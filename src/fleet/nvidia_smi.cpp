// `gpuplan fleet import`: a fleet file for one node from two nvidia-smi outputs, so an
// admin describes a real machine by running two commands on it.
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <optional>
#include <sstream>
#include <utility>

#include "core/utf8.hpp"
#include "fleet/names.hpp"
#include "fleet/topology.hpp"
#include "gpuplan/error.hpp"
#include "gpuplan/fleet.hpp"
#include "util/text.hpp"

namespace gpuplan {

namespace {

/// A piece of an input with the 1-based line and column where it starts.
struct Cell {
  std::string text;
  long line = 0;
  long column = 0;
};

[[noreturn]] void fail(const NamedText& input, const Cell& cell, const std::string& what) {
  throw InputError(Position{input.name, cell.line, cell.column}, what);
}

/// The text's lines, without "\r" and without the underline escapes `topo -m` puts around its header.
std::vector<std::string> lines_of(std::string_view text) {
  std::vector<std::string> lines;
  std::string line;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '\x1b' && i + 1 < text.size() && text[i + 1] == '[') {
      auto end = text.find('m', i);
      if (end != std::string_view::npos) {
        line.append(end - i + 1, ' ');
        i = end;
        continue;
      }
    }
    if (c == '\n')
      lines.push_back(std::exchange(line, {}));
    else if (c != '\r')
      line += c;
  }
  if (!line.empty()) lines.push_back(line);
  return lines;
}

std::vector<Cell> split(const std::string& line, long number, char separator) {
  std::vector<Cell> cells;
  size_t start = 0;
  while (start <= line.size()) {
    auto end = line.find(separator, start);
    if (end == std::string::npos) end = line.size();
    auto first = line.find_first_not_of(" \t", start);
    if (first == std::string::npos || first > end) first = end;
    auto last = line.find_last_not_of(" \t", end == 0 ? 0 : end - 1);
    std::string text = last == std::string::npos || last < first ? "" : line.substr(first, last - first + 1);
    cells.push_back({text, number, static_cast<long>(first) + 1});
    start = end + 1;
  }
  return cells;
}

std::vector<Cell> words(const std::string& line, long number) {
  std::vector<Cell> cells;
  size_t i = 0;
  while (true) {
    auto first = line.find_first_not_of(" \t", i);
    if (first == std::string::npos) break;
    auto end = line.find_first_of(" \t", first);
    if (end == std::string::npos) end = line.size();
    cells.push_back({line.substr(first, end - first), number, static_cast<long>(first) + 1});
    i = end;
  }
  return cells;
}

std::optional<long> whole(std::string_view text) {
  long value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value < 0) return std::nullopt;
  return value;
}

/// One row of the --query-gpu CSV.
struct SmiGpu {
  long index = 0;
  Cell name, uuid, memory, compute_cap, driver;
  std::optional<Cell> mig;  ///< mig.mode.current: "Enabled", "Disabled", empty; none when not asked for
};

/// The columns the importer reads, in the order the README's command asks for them. Without a
/// header: all of them, or the first six (the README's list before it read MIG).
const std::vector<std::string> query_columns = {
    "index", "name", "uuid", "memory.total", "compute_cap", "driver_version", "mig.mode.current"};

/// A row's values where the columns may have been another order than the importer read them in
/// (a header-less CSV): a compute capability is X.Y with X from 1 to 15, a driver NNN.NN[.NN],
/// a MIG mode Enabled or Disabled. Before, a driver read as the compute capability placed tests
/// that need sm_100 on an H100.
void check_plausible(const NamedText& input, const SmiGpu& gpu, bool has_header) {
  const std::string order =
      has_header ? ""
                 : fmt::format(" (without a header the columns must be {})", fmt::join(query_columns, ","));
  // nvidia-smi writes a GPU's uuid as GPU-xxxxxxxx-... (a MIG device's as MIG-...): name and uuid
  // swapped on a one-GPU node (no second GPU to disagree with) made the model a uuid, no
  // gpu-model test went there, and the uuid list held the name.
  if (gpu.name.text.starts_with("GPU-") || gpu.name.text.starts_with("MIG-"))
    fail(input, gpu.name, fmt::format("'{}' is a GPU uuid, not a GPU name{}", gpu.name.text, order));
  if (!gpu.uuid.text.empty() && !gpu.uuid.text.starts_with("GPU-") && !gpu.uuid.text.starts_with("MIG-"))
    fail(input, gpu.uuid,
         fmt::format("'{}' is not a GPU uuid (nvidia-smi writes GPU-xxxxxxxx-...){}", gpu.uuid.text, order));
  const auto& cc = gpu.compute_cap.text;
  auto parsed_cc = Version::parse(cc);
  if (!cc.empty() && (!parsed_cc || parsed_cc->parts.size() != 2 || parsed_cc->parts[0] < 1 ||
                      parsed_cc->parts[0] > 15 || parsed_cc->parts[1] > 9))
    fail(input, gpu.compute_cap,
         fmt::format("'{}' is not a compute capability (X.Y, such as 9.0){}", cc, order));
  const auto& driver = gpu.driver.text;
  auto parsed_driver = Version::parse(driver);
  if (!driver.empty() && (!parsed_driver || parsed_driver->parts.size() < 2 || parsed_driver->parts[0] < 100))
    fail(input, gpu.driver, fmt::format("'{}' is not a driver version (such as 550.54.15){}", driver, order));
  if (gpu.mig && !gpu.mig->text.empty() && util::lower(gpu.mig->text) != "enabled" &&
      util::lower(gpu.mig->text) != "disabled")
    fail(input, *gpu.mig,
         fmt::format("'{}' is not a MIG mode (Enabled, Disabled or [N/A]){}", gpu.mig->text, order));
}

std::vector<SmiGpu> parse_query(const NamedText& input) {
  auto lines = lines_of(input.text);
  std::vector<std::vector<Cell>> rows;
  for (size_t i = 0; i < lines.size(); ++i)
    if (lines[i].find_first_not_of(" \t") != std::string::npos)
      rows.push_back(split(lines[i], static_cast<long>(i) + 1, ','));
  if (rows.empty())
    throw InputError(Position{input.name}, "is empty: expected the output of nvidia-smi --query-gpu");

  // With a header, columns are found by name ("memory.total [MiB]" is memory.total);
  // without one (--format=csv,noheader) they must be in the README's order.
  std::vector<std::string> header = query_columns;
  bool has_header = !whole(rows.front().front().text);
  if (!has_header && rows.front().size() == query_columns.size() - 1) header.pop_back();
  if (has_header) {
    header.clear();
    for (const auto& cell : rows.front()) header.push_back(cell.text.substr(0, cell.text.find(" [")));
    rows.erase(rows.begin());
  }
  auto column = [&](const std::string& name) -> std::optional<size_t> {
    auto it = std::ranges::find(header, name);
    return it == header.end() ? std::nullopt
                              : std::optional<size_t>(static_cast<size_t>(it - header.begin()));
  };
  // nvidia-smi's own message in place of the CSV ("No devices were found", "Failed to initialize
  // NVML: Driver/library version mismatch", or a driver too old for a field) is quoted as it is.
  const std::string first_line = lines.front().substr(0, 200);
  if (first_line.find("is not a valid field to query") != std::string::npos)
    throw InputError(
        Position{input.name, 1, 1},
        fmt::format("is nvidia-smi's refusal, not its output: \"{}\". Older drivers cannot print "
                    "compute_cap (nor, before MIG, mig.mode.current): leave the field it names out "
                    "of --query-gpu; the catalog knows the compute capability of the GPUs it lists, "
                    "and a fleet file written by hand can give others theirs",
                    first_line));
  for (const auto* required : {"index", "name", "memory.total"})
    if (!column(required))
      throw InputError(
          Position{input.name, 1, 1},
          fmt::format("no {} column in its first line, \"{}\": expected the output of nvidia-smi "
                      "--query-gpu={} --format=csv",
                      required, first_line, fmt::join(query_columns, ",")));
  if (rows.empty()) throw InputError(Position{input.name, 1, 1}, "lists no GPUs");

  std::vector<SmiGpu> gpus;
  for (const auto& cells : rows) {
    // A GPU nvidia-smi cannot reach prints this line in its row's place (the rest are listed).
    if (cells.front().text.starts_with("Unable to determine the device handle"))
      fail(
          input, cells.front(),
          fmt::format("is nvidia-smi's \"{}\": a GPU is lost or in an error state (nvidia-smi -q says more); "
                      "import the node once it is fixed, or describe its good GPUs by hand",
                      util::excerpt(cells.front().text, 120)));
    if (cells.size() != header.size() && !has_header)
      fail(input, cells.front(),
           fmt::format(
               "has {} values, and without a header the columns must be {} (all seven, or the first six); "
               "keep the header (--format=csv or csv,nounits) to give other columns, in any order",
               cells.size(), fmt::join(query_columns, ",")));
    if (cells.size() != header.size())
      fail(input, cells.front(), fmt::format("has {} values for {} columns", cells.size(), header.size()));
    auto cell = [&](const std::string& name) {
      auto at = column(name);
      Cell value = at ? cells[*at] : Cell{"", cells.front().line, 1};
      if (value.text == "[N/A]" || value.text == "N/A" || value.text == "[Not Supported]") value.text.clear();
      // nvidia-smi's word for a value it could not read ("[Unknown Error]", "[GPU is lost]"):
      // the GPU is broken, and counted it was handed to tests.
      if (value.text.size() > 2 && value.text.front() == '[' && value.text.back() == ']')
        fail(input, value,
             fmt::format("{} of this GPU is nvidia-smi's \"{}\": the GPU is in an error state (nvidia-smi -q "
                         "says more); import the node once it is fixed, or describe its good GPUs by hand",
                         name, value.text));
      return value;
    };
    SmiGpu gpu{0,
               cell("name"),
               cell("uuid"),
               cell("memory.total"),
               cell("compute_cap"),
               cell("driver_version"),
               column("mig.mode.current") ? std::optional(cell("mig.mode.current")) : std::nullopt};
    auto index = cell("index");
    auto value = whole(index.text);
    if (!value) fail(input, index, fmt::format("'{}' is not a GPU index", index.text));
    gpu.index = *value;
    if (gpu.name.text.empty()) fail(input, gpu.name, "the GPU has no name");
    check_plausible(input, gpu, has_header);
    gpus.push_back(std::move(gpu));
  }
  std::ranges::stable_sort(gpus, {}, &SmiGpu::index);
  for (size_t i = 0; i < gpus.size(); ++i)
    if (gpus[i].index != static_cast<long>(i))
      fail(input, gpus[i].name,
           gpus[i].index < static_cast<long>(i)
               ? fmt::format("GPU indices must be 0 to {} once each; GPU {} is listed twice", gpus.size() - 1,
                             gpus[i].index)
               : fmt::format("GPU indices must be 0 to {} once each; GPU {} is missing", gpus.size() - 1, i));
  return gpus;
}

/// "81559 MiB" (or "81559" with nounits) → 81559.
std::int64_t memory_mib(const NamedText& input, const Cell& cell) {
  auto text = cell.text;
  if (text.empty())
    fail(input, cell,
         "memory.total is [N/A]: nvidia-smi reports no memory of its own for a GPU that shares the "
         "system's (DGX Spark's GB10); describe this machine by hand in the fleet file, with the vram "
         "its tests may use");
  if (text.ends_with(" MiB")) text.resize(text.size() - 4);
  auto value = whole(text);
  if (!value || *value == 0) fail(input, cell, fmt::format("'{}' is not a memory size in MiB", cell.text));
  return *value;
}

/// The GPU-to-GPU part of `nvidia-smi topo -m`: the cells as printed, and the NVLink relation
/// they say (NV<n> is NVLink, anything else is not).
struct Topo {
  std::vector<std::vector<std::string>> cells;
  fleet::Links links;
  std::vector<long> row_lines;  ///< the line of each GPU's row
};

/// The GPU columns come first, so splitting on blanks works whether the output kept its tabs or not.
Topo parse_topo(const NamedText& input, int gpus) {
  auto lines = lines_of(input.text);
  std::optional<long> header;
  std::vector<std::vector<Cell>> rows;
  for (size_t i = 0; i < lines.size(); ++i) {
    auto cells = words(lines[i], static_cast<long>(i) + 1);
    if (cells.empty()) continue;
    if (!header && cells.front().text == "GPU0") {
      header = static_cast<long>(i) + 1;
      int columns = 0;
      while (columns < static_cast<int>(cells.size()) &&
             cells[static_cast<size_t>(columns)].text == fmt::format("GPU{}", columns))
        ++columns;
      if (columns != gpus)
        throw InputError(Position{input.name, *header, 1},
                         fmt::format("shows {} GPUs, the --query-gpu output {}", columns, gpus));
    } else if (header && cells.front().text.starts_with("GPU") && whole(cells.front().text.substr(3))) {
      rows.push_back(std::move(cells));
    }
  }
  if (!header)
    throw InputError(Position{input.name},
                     "has no GPU0 GPU1 ... header: expected the output of nvidia-smi topo -m");
  if (static_cast<int>(rows.size()) != gpus)
    throw InputError(Position{input.name, *header, 1},
                     fmt::format("has {} GPU rows for {} GPUs", rows.size(), gpus));

  Topo topo{{}, fleet::no_links(gpus), {}};
  auto& links = topo.links;
  for (int i = 0; i < gpus; ++i) {
    const auto& row = rows[static_cast<size_t>(i)];
    topo.cells.emplace_back();
    topo.row_lines.push_back(row.front().line);
    if (row.front().text != fmt::format("GPU{}", i))
      fail(input, row.front(), fmt::format("expected the row of GPU{} here", i));
    if (static_cast<int>(row.size()) < gpus + 1)
      fail(input, row.front(), fmt::format("GPU{}'s row has fewer than {} cells", i, gpus));
    for (int j = 0; j < gpus; ++j) {
      const auto& cell = row[static_cast<size_t>(j) + 1];
      bool nvlink = fleet::is_nvlink_cell(cell.text);
      if (i == j ? cell.text != "X" : !nvlink && !fleet::is_pcie_cell(cell.text))
        fail(input, cell,
             fmt::format("'{}' is not a link kind (X, NV<n>, SYS, NODE, PHB, PXB, PIX)", cell.text));
      links[static_cast<size_t>(i)][static_cast<size_t>(j)] = nvlink;
      topo.cells.back().push_back(cell.text);
    }
  }
  if (auto pair = fleet::first_asymmetry(links)) {
    auto [i, j] = *pair;
    fail(input, rows[static_cast<size_t>(i)][static_cast<size_t>(j) + 1],
         fmt::format("GPU{} and GPU{} disagree on whether they are NVLinked", i, j));
  }
  return topo;
}

/// What a GPU model is, as far as NVLink goes, by its nvidia-smi name (NVIDIA's driver README lists
/// them) or the catalog: the words the warnings call it, and whether every board that holds more
/// than one of it NVLinks them.
struct NvlinkPart {
  std::string what;         ///< "an SXM module", "a Grace Blackwell superchip's GPU", ...
  bool every_board = true;  ///< false: some multi-GPU boards have no NVLink between them
};

/// An SXM module (a catalog SXM model, a name with SXM in it such as A800-SXM4-80GB or B300 SXM6 AC,
/// and H800 and H20, sold only on HGX boards) or a Grace Blackwell superchip's GPU (GB200, GB300) is
/// NVLinked on every board it is sold on, to its neighbours or through an NVSwitch. A GH200 is NVLinked
/// to the other superchips of GH200 NVL2 and NVL32 boards and four-superchip blades, but a dual-GH200
/// workstation's two GPUs are SYS to each other. Nothing for PCIe cards, whose NVLink bridges are
/// optional (H800 PCIe, H800 NVL, H100 NVL), H20 NVL16, nor a model gpuplan does not know.
std::optional<NvlinkPart> nvlink_part(const std::string& name, const GpuModel* known) {
  const std::string lower = util::lower(name);
  if (lower.find("sxm") != std::string::npos || (known && known->name.find("-SXM-") != std::string::npos))
    return NvlinkPart{"an SXM module"};
  std::vector<std::string> words;
  std::string word;
  for (char c : lower + " ") {
    if (c != ' ' && c != '-') {
      word += c;
      continue;
    }
    if (!word.empty() && !(words.empty() && word == "nvidia")) words.push_back(word);
    word.clear();
  }
  if (words.empty()) return std::nullopt;
  const std::string& part = words.front();
  if (part == "gb200" || part == "gb300") return NvlinkPart{"a Grace Blackwell superchip's GPU"};
  if (part == "gh200") return NvlinkPart{"a Grace Hopper superchip", false};
  const bool card =
      std::ranges::any_of(words, [](const std::string& w) { return w == "pcie" || w.starts_with("nvl"); });
  if ((part == "h800" || part == "h20") && !card) return NvlinkPart{"an SXM module"};
  return std::nullopt;
}

/// The GPUs of an NVLink part that `topo -m` shows without an NVLink: their links are down, or the
/// file is `topo -mp` (PCIe paths only). The fleet says what the file says (a DGX A100 was written as
/// `pcie` without a word, and a B200 board with a GPU's links down as a group of the other seven). A
/// part not NVLinked on every board is warned of only for a GPU left out beside NVLinked ones.
std::vector<std::string> unlinked_nvlink_warnings(const NamedText& input, const Topo& topo,
                                                  const std::string& name, const NvlinkPart& part) {
  const auto count = topo.links.size();
  std::vector<size_t> unlinked;
  for (size_t i = 0; i < count; ++i)
    if (std::ranges::none_of(topo.links[i], [](bool linked) { return linked; })) unlinked.push_back(i);
  if (count < 2 || unlinked.empty()) return {};
  if (unlinked.size() == count) {
    if (!part.every_board) return {};
    return {fmt::format(
        "{}: no two of the {} GPUs are NVLinked (no NV# cell), yet the {} is {}, NVLinked on every board it "
        "is sold on; the fleet says topology pcie, so no test that needs NVLink goes to this node. Was this "
        "nvidia-smi topo -mp (PCIe paths only), or are the NVLinks down (nvidia-smi nvlink -s; on an "
        "NVSwitch board, is nvidia-fabricmanager running)? Import again from nvidia-smi topo -m once they "
        "are up",
        input.name, count, name, part.what)};
  }
  std::vector<std::string> warnings;
  for (auto gpu : unlinked)
    warnings.push_back(fmt::format(
        "{}:{}: GPU{} has no NVLink to any other GPU (no NV# cell in its row), yet it is {} ({}) and the "
        "other GPUs are NVLinked: its NVLinks are down (nvidia-smi nvlink -s -i {}). The fleet gives it "
        "none, so no test that needs NVLink gets it; import again once they are up",
        input.name, topo.row_lines[gpu], gpu, part.what, name, gpu));
  return warnings;
}

/// A YAML scalar for text that came from nvidia-smi: plain if it is safe, else double-quoted.
std::string scalar(const std::string& text) {
  if (fleet::is_name(text)) return text;
  std::string quoted = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') quoted += '\\';
    quoted += c;
  }
  return quoted + "\"";
}

/// The fleet's name for a GPU the catalog does not know: "NVIDIA GeForce RTX 4090" → "GeForce-RTX-4090".
std::string model_name(std::string name) {
  for (std::string_view prefix : {"NVIDIA ", "Tesla "})
    if (name.starts_with(prefix)) name.erase(0, prefix.size());
  std::ranges::replace(name, ' ', '-');
  return name;
}

}  // namespace

// nvidia-smi's --query-gpu cannot print the CUDA version, so the importer knows it from the
// driver's branch (and fleet files are checked against it).
std::optional<std::string> cuda_of_driver(const std::string& driver) {
  static const std::vector<std::pair<int, std::string_view>> branches = {
      {384, "9.0"},  {387, "9.1"},  {390, "9.1"},  {396, "9.2"},  {410, "10.0"}, {418, "10.1"}, {430, "10.1"},
      {435, "10.1"}, {440, "10.2"}, {450, "11.0"}, {455, "11.1"}, {460, "11.2"}, {465, "11.3"}, {470, "11.4"},
      {495, "11.5"}, {510, "11.6"}, {515, "11.7"}, {520, "11.8"}, {525, "12.0"}, {530, "12.1"}, {535, "12.2"},
      {545, "12.3"}, {550, "12.4"}, {555, "12.5"}, {560, "12.6"}, {565, "12.7"}, {570, "12.8"}, {575, "12.9"},
      {580, "13.0"}, {590, "13.1"}, {595, "13.2"}, {610, "13.3"}};
  // Releases whose "CUDA Version" is not their branch's: 430.26 says 10.2 (430.50 and later 10.1).
  static const std::vector<std::pair<std::string_view, std::string_view>> releases = {{"430.26", "10.2"}};
  for (auto [release, cuda] : releases)
    if (driver == release || driver.starts_with(std::string(release) + ".")) return std::string(cuda);
  auto version = Version::parse(driver);
  if (!version) return std::nullopt;
  for (auto [branch, cuda] : branches)
    if (version->parts.front() == branch) return std::string(cuda);
  return std::nullopt;
}

ImportedFleet import_nvidia_smi(const NamedText& query, const NamedText& topo, const ImportOptions& options) {
  if (!fleet::is_name(options.node))
    throw InputError(
        Position{"--name"},
        fmt::format("'{}' is not a node name: use letters, digits, '-', '_' and '.'", options.node));
  require_utf8(query.text, query.name);  // model names go into the fleet file and JSON
  require_utf8(topo.text, topo.name);
  auto gpus = parse_query(query);
  ImportedFleet imported;
  if (!gpus.front().mig)
    imported.warnings.push_back(fmt::format(
        "{} has no mig.mode.current column, so the GPUs are taken to be whole GPUs; a GPU in MIG mode "
        "would give each test one MIG instance of it, with a fraction of its memory. Add "
        "mig.mode.current to --query-gpu",
        query.name));
  for (const auto& gpu : gpus)
    if (gpu.mig && util::lower(gpu.mig->text) == "enabled")
      fail(query, *gpu.mig,
           fmt::format("GPU {} has MIG enabled: jobs see its MIG instances (nvidia-smi -L lists them), not "
                       "the whole GPU, and gpuplan plans and checks whole GPUs (run-under and exec refuse a "
                       "GPU in MIG mode). Disable MIG on it (nvidia-smi -i {} -mig 0) and import again, or "
                       "leave the node out of the fleet",
                       gpu.index, gpu.index));
  const auto& first = gpus.front();
  std::int64_t vram = memory_mib(query, first.memory);
  for (const auto& gpu : gpus) {
    if (gpu.name.text != first.name.text)
      fail(query, gpu.name,
           fmt::format("GPU {} is '{}' but GPU 0 is '{}': a fleet pool has one GPU model, so describe "
                       "this node by hand",
                       gpu.index, gpu.name.text, first.name.text));
    if (gpu.driver.text != first.driver.text) fail(query, gpu.driver, "the GPUs report different drivers");
    auto memory = memory_mib(query, gpu.memory);
    // A GDDR board reports less with ECC on than off, so one model can differ; a pool has one vram.
    if (memory != memory_mib(query, first.memory))
      imported.warnings.push_back(fmt::format(
          "{}:{}:{}: GPU {} reports {} MiB of memory.total but GPU 0 {} MiB (ECC on one and off on the other "
          "changes it): the fleet gives every GPU of the node the least of them",
          query.name, gpu.memory.line, gpu.memory.column, gpu.index, memory,
          memory_mib(query, first.memory)));
    vram = std::min(vram, memory);
  }
  const auto parsed_topo = parse_topo(topo, static_cast<int>(gpus.size()));
  const auto& cells = parsed_topo.cells;
  const auto& links = parsed_topo.links;

  const auto* known = find_gpu_model(first.name.text);
  if (auto part = nvlink_part(first.name.text, known))
    for (auto& warning : unlinked_nvlink_warnings(topo, parsed_topo, first.name.text, *part))
      imported.warnings.push_back(std::move(warning));
  std::string model = known ? known->name : model_name(first.name.text);
  std::string family = known ? known->family : family_from_name(first.name.text);
  std::string pool = options.pool.empty() ? family : options.pool;
  if (!fleet::is_name(pool))
    throw InputError(Position{"--pool"}, fmt::format("'{}' is not a pool name: pass --pool", pool));

  std::optional<Version> compute_capability;
  if (!first.compute_cap.text.empty()) {
    auto parsed = Version::parse(first.compute_cap.text);
    if (!parsed)
      fail(query, first.compute_cap, fmt::format("'{}' is not a compute capability", first.compute_cap.text));
    compute_capability = *parsed;
  }
  if (!known && !compute_capability)
    fail(query, first.name,
         fmt::format("the catalog does not know the {} and there is no compute_cap column to learn it from",
                     first.name.text));

  const auto& driver = first.driver.text;
  std::string cuda = options.cuda;
  std::string cuda_note;
  if (cuda.empty()) {
    auto known_cuda = driver.empty() ? std::nullopt : cuda_of_driver(driver);
    if (!known_cuda)
      throw InputError(Position{"--cuda"},
                       fmt::format("cannot tell which CUDA version driver '{}' supports: pass --cuda X.Y "
                                   "(plain nvidia-smi prints it as \"CUDA Version\")",
                                   driver));
    cuda = *known_cuda;
    cuda_note = fmt::format("  # what driver {} reports as \"CUDA Version\"", driver);
  } else if (!Version::parse(cuda)) {
    throw InputError(Position{"--cuda"}, fmt::format("'{}' is not a version like 12.4", cuda));
  }

  std::string& yaml = imported.yaml;
  yaml = fmt::format("# Written by gpuplan fleet import from {} and {}.\nversion: 1\npools:\n", query.name,
                     topo.name);
  yaml += fmt::format("  - name: {}\n    nodes: [{}]\n    gpu:\n      model: {}\n      count: {}\n", pool,
                      options.node, scalar(model), gpus.size());
  if (!known || known->vram_mib != vram) yaml += fmt::format("      vram: {}MiB\n", vram);
  if (compute_capability && (!known || known->compute_capability != *compute_capability))
    yaml += fmt::format("      compute_capability: \"{}\"\n", compute_capability->str());
  const auto without_uuid =
      std::ranges::count_if(gpus, [](const SmiGpu& gpu) { return gpu.uuid.text.empty(); });
  if (without_uuid > 0 && without_uuid < static_cast<long>(gpus.size()))
    imported.warnings.push_back(fmt::format(
        "{}: {} of the {} GPUs have no uuid ([N/A]): the fleet lists none, so run-under and exec cannot tell "
        "these GPUs from others by uuid",
        query.name, without_uuid, gpus.size()));
  if (without_uuid == 0) {
    yaml += "      uuids:\n";
    for (const auto& gpu : gpus) yaml += fmt::format("        - {}\n", scalar(gpu.uuid.text));
  }
  yaml += fmt::format("    cuda: \"{}\"{}\n", cuda, cuda_note);
  if (!driver.empty()) yaml += fmt::format("    driver: \"{}\"\n", driver);

  auto count = static_cast<int>(gpus.size());
  auto groups = fleet::as_groups(links);
  auto list = [](const std::vector<std::vector<int>>& sets) {
    std::vector<std::string> parts;
    parts.reserve(sets.size());
    for (const auto& set : sets) parts.push_back(fmt::format("[{}]", fmt::join(set, ", ")));
    return fmt::format("[{}]", fmt::join(parts, ", "));
  };
  // A full mesh of eight or more GPUs is an NVSwitch board; smaller meshes are direct links.
  if (links == fleet::no_links(count)) {
    yaml += "    topology: pcie\n";
  } else if (links == fleet::all_to_all(count) && count >= 8) {
    yaml += "    topology: nvswitch\n";
  } else if (groups && std::ranges::all_of(*groups, [](const auto& g) { return g.size() == 2; })) {
    yaml += fmt::format("    topology:\n      nvlink_pairs: {}\n", list(*groups));
  } else if (groups) {
    yaml += fmt::format("    topology:\n      nvlink_groups: {}\n", list(*groups));
  } else {
    yaml += "    topology:\n      matrix:\n";
    for (const auto& row : cells) yaml += fmt::format("        - \"{}\"\n", fmt::join(row, " "));
  }
  // What fleet check and every command will read: an import that writes what they refuse (a
  // --cuda of a driver's version) is refused here, and their warnings are its own.
  std::istringstream written(yaml);
  try {
    auto fleet = load_fleet(written, "the fleet it writes");
    imported.warnings.insert(imported.warnings.end(), fleet.warnings.begin(), fleet.warnings.end());
  } catch (const InputError& error) {
    throw InputError(Position{query.name}, fmt::format("{}; nothing was written", error.what()));
  }
  return imported;
}

}  // namespace gpuplan
