#include "util/yaml_keys.hpp"

#include <algorithm>

#include "util/suggest.hpp"

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

}  // namespace gpuplan::util
