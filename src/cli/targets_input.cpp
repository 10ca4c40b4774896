#include "cli/targets_input.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <sstream>

#include "cli/io.hpp"
#include "cli/progress.hpp"
#include "gpuplan/error.hpp"
#include "gpuplan/ingest.hpp"

namespace gpuplan::cli {

void add_targets_input(CLI::App& command, TargetsInput& input) {
  command.add_option("FILE", input.path, "Bazel query or cquery output (default: standard input)");
  command
      .add_option("--input-format", input.input_format,
                  "label, label_kind, xml, streamed_jsonproto, jsonproto, cquery_label, cquery_label_kind "
                  "or cquery_jsonproto (default: detected from the content)")
      ->option_text("FORMAT");
  command
      .add_option("--attrs", input.attrs,
                  "query output with attributes (xml or JSON) for the tests of a labels-only FILE")
      ->option_text("FILE");
  progress::add_quiet_flag(command);
}

namespace {

TargetList read_one(const std::string& path, const std::string& format_name, GraphSink* graph,
                    TargetSink* tests, const std::optional<std::string>& text = std::nullopt) {
  std::optional<InputFormat> format;
  if (!format_name.empty()) {
    format = parse_input_format(format_name);
    if (!format)
      throw InputError(
          Position{"--input-format"},
          fmt::format("unknown format \"{}\"; known: label, label_kind, xml, streamed_jsonproto, "
                      "jsonproto, cquery_label, cquery_label_kind, cquery_jsonproto",
                      format_name));
  }
  if (text) {
    std::istringstream in(*text);
    return tests ? read_targets(in, path, format, graph, *tests) : read_targets(in, path, format, graph);
  }
  Input in = open_input(path);
  std::error_code ec;
  auto size = path.empty() || path == "-" ? 0 : std::filesystem::file_size(path, ec);
  progress::stage("reading " + in.name, ec ? 0 : static_cast<long long>(size));
  return tests ? read_targets(in.in(), in.name, format, graph, *tests)
               : read_targets(in.in(), in.name, format, graph);
}

}  // namespace

TargetList read_targets_input(const TargetsInput& input, GraphSink* graph) {
  TargetList targets = read_one(input.path, input.input_format, graph, nullptr);
  if (!input.attrs.empty()) join_attributes(targets, read_one(input.attrs, "", nullptr, nullptr));
  return targets;
}

TargetList read_targets_input(const TargetsInput& input, GraphSink* graph, TargetSink& tests) {
  if (input.attrs.empty()) return read_one(input.path, input.input_format, graph, &tests, input.text);
  // --attrs joins the two lists: read FILE whole, then hand its tests over.
  TargetList targets = read_targets_input(input, graph);
  if (auto format = parse_input_format(targets.format)) tests.start(*format);
  for (Target& target : targets.tests) tests.test(std::move(target));
  std::vector<Target>().swap(targets.tests);
  return targets;
}

}  // namespace gpuplan::cli
