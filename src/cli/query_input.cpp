#include "cli/query_input.hpp"

#include <fmt/format.h>

#include "cli/io.hpp"
#include "gpuplan/error.hpp"
#include "gpuplan/ingest.hpp"

namespace gpuplan::cli {

void add_query_options(CLI::App& command, QueryOptions& options) {
  command.add_option("FILE", options.input, "bazel query/cquery output (default: standard input)");
  command.add_option("--input-format", options.input_format,
                     "force the input format instead of detecting it "
                     "(label, label_kind, xml, streamed_jsonproto, jsonproto, cquery_label, "
                     "cquery_label_kind, cquery_jsonproto)");
  command.add_option("--attrs", options.attrs,
                     "query output with attributes (xml, jsonproto) for labels-only input");
  command.add_option("--rules", options.rules, "the repository's own conventions and knobs (YAML)");
  command.add_flag("--strict", options.strict,
                   "conflicting or malformed annotations are errors (exit 2), not warnings");
  command.add_flag("--include-manual", options.include_manual, "plan tests tagged manual too");
}

Rules read_rules(const QueryOptions& options) {
  if (options.rules.empty()) return Rules{};
  auto input = open_input(options.rules);
  return load_rules(input.in(), input.name);
}

namespace {

TargetList read_query(const std::string& path, std::optional<InputFormat> format) {
  auto input = open_input(path);
  return read_targets(input.in(), input.name, format);
}

}  // namespace

Classification read_and_classify(const QueryOptions& options, const Rules& rules) {
  std::optional<InputFormat> format;
  if (!options.input_format.empty()) {
    format = parse_input_format(options.input_format);
    if (!format)
      throw InputError(Position{"--input-format"},
                       fmt::format("unknown format \"{}\"", options.input_format));
  }
  auto targets = read_query(options.input, format);
  if (!options.attrs.empty()) join_attributes(targets, read_query(options.attrs, std::nullopt));
  auto classification = classify(targets, rules, {options.include_manual, options.strict});
  if (!has_errors(classification.diagnostics)) return classification;
  std::string errors;
  long count = 0;
  for (const auto& d : classification.diagnostics) {
    if (d.severity != Severity::error) continue;
    ++count;
    errors += fmt::format("\n  {}: {}", d.label, d.message);
  }
  auto name = options.input.empty() || options.input == "-" ? std::string("<stdin>") : options.input;
  throw InputError(Position{name},
                   fmt::format("{} annotation error{} (--strict):{}", count, count == 1 ? "" : "s", errors));
}

}  // namespace gpuplan::cli
