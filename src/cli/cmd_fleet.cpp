// `gpuplan fleet check FILE`: validate a fleet file and say what it amounts to.
// `gpuplan fleet import`: write a fleet file for one node from nvidia-smi's output.
#include <fmt/format.h>

#include <iostream>
#include <memory>

#include "cli/commands.hpp"
#include "cli/io.hpp"
#include "cli/query_input.hpp"
#include "core/utf8.hpp"
#include "gpuplan/error.hpp"
#include "gpuplan/fleet.hpp"
#include "util/text.hpp"

namespace gpuplan::cli {

namespace {

struct CheckOptions {
  std::string file;
  bool json = false;
  bool strict = false;
};

struct ImportArguments {
  std::string query;
  std::string topo;
  std::string output = "-";
  bool strict = false;
  ImportOptions options;
};

void add_check(CLI::App& fleet, int& status) {
  auto options = std::make_shared<CheckOptions>();
  auto* check = fleet.add_subcommand("check", "Validate a fleet file and print a summary of it");
  check->add_option("FILE", options->file, "the fleet YAML ('-' for standard input)")->required();
  check->add_flag("--json", options->json, "print the summary as JSON");
  check->add_flag(
      "--strict", options->strict,
      "fail (exit 2, no summary) where the fleet file leaves something to guess that it warns of");
  check->callback([options, &status] {
    auto input = open_input(options->file);
    auto fleet = load_fleet(input.in(), input.name);
    // As `plan --strict` refuses them: a CI step that checks the fleet can refuse them too.
    if (long warnings = print_fleet_warnings(fleet, options->strict); warnings > 0)
      std::cerr << fmt::format("gpuplan: {} warning{} (errors under --strict)\n", warnings,
                               util::plural(warnings));
    write_output("-", options->json ? fleet_summary_json(fleet) : fleet_summary(fleet));
    status = exit_ok;
  });
}

void add_import(CLI::App& fleet, int& status) {
  auto arguments = std::make_shared<ImportArguments>();
  auto* import = fleet.add_subcommand(
      "import", "Write a fleet file for one node from `nvidia-smi --query-gpu=...` and `nvidia-smi topo -m`");
  import
      ->add_option("--query-gpu", arguments->query,
                   "output of nvidia-smi "
                   "--query-gpu=index,name,uuid,memory.total,compute_cap,driver_version,mig.mode.current "
                   "--format=csv ('-' for standard input)")
      ->required();
  import->add_option("--topo", arguments->topo, "output of nvidia-smi topo -m ('-' for standard input)")
      ->required();
  import->add_option("--name", arguments->options.node, "the node's name")->capture_default_str();
  import->add_option("--pool", arguments->options.pool,
                     "the pool's name (default: the GPU family, e.g. h100)");
  import->add_option(
      "--cuda", arguments->options.cuda,
      "the CUDA version nvidia-smi prints top right (default: known from the driver's branch)");
  import->add_flag("--strict", arguments->strict,
                   "fail (exit 2, nothing written) where the import had to assume something it warns of");
  import
      ->add_option("-o,--output", arguments->output,
                   "where to write the fleet YAML ('-' for standard output)")
      ->capture_default_str();
  import->callback([arguments, &status] {
    auto is_stdin = [](const std::string& path) { return path.empty() || path == "-";
};
if (is_stdin(arguments->query) && is_stdin(arguments->topo))
  throw InputError(Position{"<stdin>"}, "only one of --query-gpu and --topo can be standard input");
auto query = open_input(arguments->query);
auto topo = open_input(arguments->topo);
auto imported =
    import_nvidia_smi({read_small_text(query.in(), query.name, max_yaml_bytes), query.name},
                      {read_small_text(topo.in(), topo.name, max_yaml_bytes), topo.name}, arguments->options);
if (arguments->strict && !imported.warnings.empty())
  throw InputError(Position{"--strict"},
                   fmt::format("{}; nothing was written", fmt::join(imported.warnings, "; ")));
for (const auto& w : imported.warnings) std::cerr << fmt::format("gpuplan: warning: {}\n", w);
if (!imported.warnings.empty())
  std::cerr << fmt::format("gpuplan: {} warning{} (errors under --strict)\n", imported.warnings.size(),
                           util::plural(imported.warnings.size()));
write_output(arguments->output, imported.yaml);
status = exit_ok;
}  // namespace
);
}  // namespace gpuplan::cli

}  // namespace

void add_fleet_command(CLI::App& app, int& status) {
  auto* fleet = app.add_subcommand("fleet", "Check a fleet file, or write one from nvidia-smi's output");
  fleet->require_subcommand(1);
  add_check(*fleet, status);
  add_import(*fleet, status);
}

}  // namespace gpuplan::cli
