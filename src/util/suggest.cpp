#include "util/suggest.hpp"

#include <algorithm>

#include "util/text.hpp"

namespace gpuplan::util {

namespace {

size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t above = row[j];
      bool same = lower_char(a[i - 1]) == lower_char(b[j - 1]);
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (same ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

}  // namespace

std::optional<std::string_view> closest_match(std::string_view word,
                                              const std::vector<std::string_view>& known) {
  std::optional<std::string_view> best;
  size_t best_distance = std::max<size_t>(2, word.size() / 3) + 1;
  for (auto candidate : known) {
    auto distance = edit_distance(word, candidate);
    if (distance < best_distance) {
      best = candidate;
      best_distance = distance;
    }
  }
  return best;
}

}  // namespace gpuplan::util
