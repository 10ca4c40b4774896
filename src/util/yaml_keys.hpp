#pragma once
// The keys of a YAML mapping, checked the one way the fleet and rules loaders share: each a
// plain word, one the loader knows (with a did-you-mean when it is not), none given twice.
// Each loader words the problem in its own messages and throws with its file's position.
#include <yaml-cpp/yaml.h>

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gpuplan::util {

/// What is wrong with one key of a mapping.
struct KeyProblem {
  enum class Kind { not_a_word, unknown, repeated };
  Kind kind;
  std::string word;                      ///< the key's text (empty when it is not a word)
  std::optional<std::string_view> typo;  ///< unknown: the known key it is likely a typo of
  int first_line = 0;                    ///< repeated: the 1-based line of its first use
};

/// Checks the keys of one mapping as a loader walks them, in file order.
class KeyChecker {
 public:
  explicit KeyChecker(std::vector<std::string_view> known) : known_(std::move(known)) {}

  /// The problem with `key`, the next key of the mapping; none when it is fine.
  std::optional<KeyProblem> check(const YAML::Node& key);

 private:
  std::vector<std::string_view> known_;
  std::vector<std::pair<std::string, int>> seen_;  ///< keys so far and their 1-based lines
};

}  // namespace gpuplan::util
