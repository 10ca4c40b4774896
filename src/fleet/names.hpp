#pragma once
// Names in fleet files: what a pool or node name may be (it ends up in plan JSON, Slurm node
// lists and file names), and the lower-case form families are compared in.
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

/// "H100-SXM" → "h100-sxm": families are compared and printed lower-case.
inline std::string lower(std::string_view text) {
  std::string result;
  for (char c : text) result += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return result;
}

}  // namespace gpuplan::fleet
