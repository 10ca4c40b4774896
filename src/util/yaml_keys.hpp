#pragma once
// The keys and plain values of a YAML mapping, read the one way the fleet and rules loaders
// share: each key a plain word, one the loader knows (with a did-you-mean when it is not), none
// given twice; numbers in one message style ("must be ..."). Each loader puts the key's name
// in front of the problem and throws with its file's position.
#include <yaml-cpp/yaml.h>

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gpuplan/result.hpp"

namespace gpuplan::util {

/// What an unknown key "<<" is: YAML 1.1's merge key (`<<: *defaults`), which yaml-cpp, a YAML 1.2
/// reader, takes as a plain key.
inline constexpr std::string_view merge_key_problem =
    "a YAML merge key, which YAML 1.2 (gpuplan's reader) does not have, so nothing is merged: write the "
    "keys out, or give a whole value by an alias (gpu: *h100)";

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

/// A second YAML document: where it starts, and the `---` or `...` before it (empty where
/// yaml-cpp began one at a line indented less than the document's first: a syntax error).
struct SecondDocument {
  YAML::Mark at;
  std::string marker;
};

/// The second YAML document of `text` that holds anything (an empty one after a last `---`
/// drops nothing), if it has one: a loader that reads the first alone would drop it unseen. Not
/// YAML::LoadAll: yaml-cpp 0.7's loops forever, allocating, on a stray "," (jbeder/yaml-cpp#1040; it took 23
/// GB in a minute). Throws YAML::Exception for a syntax error in a document it reads.
std::optional<SecondDocument> second_document(const std::string& text);

/// The message for a second document in a file of one (`what`: "a fleet is one document; ...").
std::string second_document_problem(const SecondDocument& second, std::string_view what);

/// A value as a message shows it: 'text' (an excerpt: never a whole file), or a list, a mapping, empty.
std::string shown(const YAML::Node& node);

/// A whole number from `least` to `most`; the problem says "must be ..., not ...".
Result<long> whole_number(const YAML::Node& node, long least, long most);

/// A number from `least` and below `below`; the problem says "must be ..., not ...".
Result<double> number_below(const YAML::Node& node, double least, double below);

/// A number from `least` to `most`, both included; the problem says "must be ..., not ...".
Result<double> number_from(const YAML::Node& node, double least, double most);

}  // namespace gpuplan::util
