#pragma once
// "Did you mean ...?" for misspelt keys and names.
#include <optional>
#include <string_view>
#include <vector>

namespace gpuplan::util {

/// The entry of `known` nearest to `word` by edit distance, ignoring case, when it is near
/// enough to be a likely typo (within about a third of the word's length); else nullopt.
std::optional<std::string_view> closest_match(std::string_view word,
                                              const std::vector<std::string_view>& known);

}  // namespace gpuplan::util
