// Names a launcher takes, made from node names that it may not take.
#include "export/names.hpp"

#include <fmt/format.h>

#include <cctype>
#include <cstdint>

namespace gpuplan {

std::string hashed_name(const std::string& prefix, const std::string& node, const std::string& tail,
                        std::size_t limit) {
  const std::size_t room = limit - tail.size();
  std::string name;
  for (char c : node) {
    bool alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    name += alnum ? static_cast<char>(std::tolower(static_cast<unsigned char>(c))) : '-';
  }
  bool changed = name != node;
  std::uint32_t hash = 2166136261u;  // FNV-1a
  for (char c : node) hash = (hash ^ static_cast<unsigned char>(c)) * 16777619u;
  std::string suffix = changed ? fmt::format("-{:08x}", hash) : "";
  std::string full = prefix + name;
  if (full.size() + suffix.size() > room) {
    full.resize(room - 9);
    suffix = fmt::format("-{:08x}", hash);
  }
  full += suffix;
  std::string out;  // runs of '-' made one, none at the end
  for (char c : full)
    if (c != '-' || (!out.empty() && out.back() != '-')) out += c;
  while (!out.empty() && out.back() == '-') out.pop_back();
  return out + tail;
}

}  // namespace gpuplan
