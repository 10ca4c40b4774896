#include "util/yaml_keys.hpp"

#include <fmt/format.h>
#include <yaml-cpp/eventhandler.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <sstream>

#include "util/suggest.hpp"
#include "util/text.hpp"

namespace gpuplan::util {

std::optional<KeyProblem> KeyChecker::check(const YAML::Node& key) {
  if (!key.IsScalar()) return KeyProblem{KeyProblem::Kind::not_a_word, "", std::nullopt};
  const std::string& word = key.Scalar();
  if (std::find(known_.begin(), known_.end(), word) == known_.end())
    return KeyProblem{KeyProblem::Kind::unknown, word, closest_match(word, known_)};
  for (const auto& [seen, line] : seen_)
    if (seen == word) return KeyProblem{KeyProblem::Kind::repeated, word, std::nullopt, line};
  seen_.emplace_back(word, key.Mark().line + 1);
  return std::nullopt;
}

std::string shown(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Scalar: return fmt::format("'{}'", excerpt(node.Scalar()));
    case YAML::NodeType::Sequence: return "a list";
    case YAML::NodeType::Map: return "a mapping";
    default: return "empty";
  }
}

Result<long> whole_number(const YAML::Node& node, long least, long most) {
  const std::string text = node.IsScalar() ? node.Scalar() : "";
  long number = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), number);
  if (ec == std::errc::result_out_of_range)
    return Problem{fmt::format("must be at most {}, not {}", most, excerpt(text))};
  if (text.empty() || ec != std::errc() || end != text.data() + text.size())
    return Problem{fmt::format("must be a whole number, not {}", shown(node))};
  if (number < least) return Problem{fmt::format("must be at least {}, not {}", least, number)};
  if (number > most) return Problem{fmt::format("must be at most {}, not {}", most, number)};
  return number;
}

namespace {

/// The node's scalar read whole as a number (from_chars: no sign but a minus, no blank around it).
Result<double> scalar_number(const YAML::Node& node) {
  const std::string text = node.IsScalar() ? node.Scalar() : "";
  double number = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), number);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size())
    return Problem{fmt::format("must be a number, not {}", shown(node))};
  return number;
}

}  // namespace

Result<double> number_below(const YAML::Node& node, double least, double below) {
  auto number = scalar_number(node);
  if (number && !(*number >= least && *number < below))
    return Problem{
        fmt::format("must be at least {} and below {}, not {}", least, below, excerpt(node.Scalar()))};
  return number;
}

Result<double> number_from(const YAML::Node& node, double least, double most) {
  auto number = scalar_number(node);
  if (number && !(*number >= least && *number <= most))
    return Problem{fmt::format("must be from {} to {}, not {}", least, most, excerpt(node.Scalar()))};
  return number;
}

std::optional<SecondDocument> second_document(const std::string& text) {
  // Where a document starts and where its first node is, and whether it holds anything but an
  // empty node (a `---` at the end of a file drops nothing): all a loader needs to tell a second.
  struct Nodes : YAML::EventHandler {
    std::optional<YAML::Mark> start, mark;
    bool empty = true;
    void seen(const YAML::Mark& m, bool null = false) {
      if (!mark) mark = m;
      empty = empty && null;
    }
    void OnDocumentStart(const YAML::Mark& m) override { start = m; }
    void OnDocumentEnd() override {}
    void OnNull(const YAML::Mark& m, YAML::anchor_t) override { seen(m, true); }
    void OnAlias(const YAML::Mark& m, YAML::anchor_t) override { seen(m); }
    void OnScalar(const YAML::Mark& m, const std::string&, YAML::anchor_t, const std::string&) override {
      seen(m);
    }
    void OnSequenceStart(const YAML::Mark& m, const std::string&, YAML::anchor_t,
                         YAML::EmitterStyle::value) override {
      seen(m);
    }
    void OnSequenceEnd() override {}
    void OnMapStart(const YAML::Mark& m, const std::string&, YAML::anchor_t,
                    YAML::EmitterStyle::value) override {
      seen(m);
    }
    void OnMapEnd() override {}
  };
  std::istringstream in(text);
  YAML::Parser parser(in);
  Nodes first;
  if (!parser.HandleNextDocument(first)) return std::nullopt;
  int last = first.mark ? first.mark->pos : -1;
  for (;;) {
    Nodes next;
    // Where a token is left unread, yaml-cpp 0.7 hands out the same empty document again and
    // again: a document must start past the last one's first node.
    if (!parser.HandleNextDocument(next) || !next.mark || next.mark->pos <= last) return std::nullopt;
    last = next.mark->pos;
    if (next.empty) continue;
    auto start = next.start ? *next.start : *next.mark;
    auto at = static_cast<std::size_t>(std::max(start.pos, 0));
    std::string_view before = std::string_view(text).substr(0, at);
    while (!before.empty() && std::isspace(static_cast<unsigned char>(before.back())))
      before.remove_suffix(1);
    std::string marker = std::string_view(text).substr(at).starts_with("---") ? "---"
                         : before.ends_with("...")                            ? "..."
                                                                              : "";
    return SecondDocument{marker.empty() ? *next.mark : start, marker};
  }
}

std::string second_document_problem(const SecondDocument& second, std::string_view what) {
  if (!second.marker.empty())
    return fmt::format("a second YAML document (after {}): {}", second.marker, what);
  return "YAML syntax error: this line is not part of the document above it (a line indented less than "
         "the document's first line ends it)";
}

}  // namespace gpuplan::util
