#pragma once
// Names in fleet files: what a pool or node name may be (it ends up in plan JSON, Slurm node
// lists and file names).
#include <algorithm>
#include <cctype>
#include <string>
#include <string_view>

namespace gpuplan::fleet {

/// Letters, digits, '-', '_' and '.', starting with a letter or digit.
inline bool is_name(std::string_view text) {
  if (text.empty() || !std::isalnum(static_cast<unsigned char>(text[0]))) return false;
  return std::ranges::all_of(text, [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
  });
}

}  // namespace gpuplan::fleet
