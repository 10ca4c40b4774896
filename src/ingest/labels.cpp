// bazel query/cquery --output=label and --output=label_kind: one target a line,
// "//a:b", "py_test rule //a:b", with " (9f87702)" or " (null)" after it for cquery.
#include <fmt/format.h>

#include "core/utf8.hpp"
#include "gpuplan/error.hpp"
#include "ingest/readers.hpp"

namespace gpuplan::ingest {

namespace {

/// Splits " (9f87702)" or " (null)" off the end of a cquery line; throws without one.
std::string_view take_configuration(std::string_view& line, const Position& where) {
  std::size_t open = line.rfind(" (");
  if (open == std::string_view::npos || !line.ends_with(')'))
    throw InputError(
        where, "a cquery line without its configuration: expected \" (9f87702)\" or \" (null)\" at its end");
  std::string_view id = line.substr(open + 2, line.size() - open - 3);
  line = line.substr(0, open);
  return id;
}

/// Splits "py_test rule" (or "source file", ...) off the front of a label_kind line.
std::string_view take_kind(std::string_view& line, const Position& where) {
  // Every kind is two words ("py_test rule", "source file", "package group"), and a rule class
  // has no space; a label may ("//sp:gpu @h100_test" is one target's).
  std::size_t first = line.find(' ');
  std::size_t space = first == std::string_view::npos ? first : line.find(' ', first + 1);
  if (space == std::string_view::npos || first == 0)
    throw InputError(where, fmt::format("\"{}\" is not a label_kind line (\"py_test rule //a:b\")", line));
  std::string_view kind = line.substr(0, space);
  line = line.substr(space + 1);
  return kind;
}

TargetKind kind_of(std::string_view kind, std::string_view& rule_class) {
  if (kind.ends_with(" rule")) {
    rule_class = kind.substr(0, kind.size() - 5);
    return TargetKind::rule;
  }
  if (kind == "source file") return TargetKind::source_file;
  if (kind == "generated file") return TargetKind::generated_file;
  return TargetKind::other;
}

}  // namespace

void read_label_lines(Source& source, InputFormat format, Collector& out) {
  bool with_kind = format == InputFormat::label_kind || format == InputFormat::cquery_label_kind;
  bool cquery = format == InputFormat::cquery_label || format == InputFormat::cquery_label_kind;
  LineReader lines(source, max_label_line);
  std::string_view line;
  while (lines.next(line)) {
    while (!line.empty() && (line.back() == ' ' || line.back() == '\t')) line.remove_suffix(1);
    if (line.empty()) continue;
    Position where{source.name(), lines.line_number()};
    if (line.find('\0') != std::string_view::npos) throw InputError(where, "binary input (a NUL byte)");
    if (auto problem = utf8_problem(line); !problem.empty())
      throw InputError(where, fmt::format("not UTF-8 text, as Bazel writes labels: {}", problem));
    if (auto hint = bazel_log_hint(line); !hint.empty())
      throw InputError(where, fmt::format("\"{}\" is not a {} line{}", line, to_string(format), hint));
    if (!cquery && has_configuration(line))  // --input-format label on cquery's, or the two mixed
      throw InputError(where, fmt::format("\"{}\" ends in a cquery configuration: read cquery's output with "
                                          "--input-format cquery_{}, and do not mix query's and cquery's",
                                          line, with_kind ? "label_kind" : "label"));
    const std::string_view whole = line;
    std::string_view configuration = cquery ? take_configuration(line, where) : std::string_view{};
    std::string_view kind = with_kind ? take_kind(line, where) : std::string_view{};
    if (!starts_like_label(line))
      throw InputError(where, not_a_label(line) + (whole == line ? "" : fmt::format(" in \"{}\"", whole)));
    Target target;
    target.label = line;
    target.configuration = configuration;
    if (with_kind) {
      std::string_view rule_class;
      TargetKind target_kind = kind_of(kind, rule_class);
      target.rule_class = rule_class;
      out.add(target_kind, std::move(target));
    } else if (configuration == "null") {
      out.drop(TargetKind::other);  // cquery gives every test a configuration; "(null)" is a file
    } else {
      out.add_unchecked(std::move(target));
    }
  }
}

}  // namespace gpuplan::ingest
