#include "util/yaml_keys.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>

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

Result<double> number_below(const YAML::Node& node, double least, double below) {
  const std::string text = node.IsScalar() ? node.Scalar() : "";
  double number = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), number);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size())
    return Problem{fmt::format("must be a number, not {}", shown(node))};
  if (!(number >= least && number < below))
    return Problem{fmt::format("must be at least {} and below {}, not {}", least, below, excerpt(text))};
  return number;
}

}  // namespace gpuplan::util
