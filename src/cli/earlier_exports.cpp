#include "cli/earlier_exports.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <vector>

namespace gpuplan::cli {

namespace {

/// Whether the file at `path` starts with `mark`, or with a `#!` line and then `mark`.
bool made_by_gpuplan(const std::filesystem::path& path, std::string_view mark) {
  std::ifstream file(path);
  std::string line;
  if (!std::getline(file, line)) return false;
  if (line.starts_with("#!") && !std::getline(file, line)) return false;
  return line.starts_with(mark);
}

}  // namespace

void remove_earlier_exports(const std::string& directory, const std::map<std::string, std::string>& written,
                            std::string_view suffix, std::string_view mark, std::string_view what) {
  namespace fs = std::filesystem;
  std::vector<std::string> removed;
  std::error_code ec;  // a folder that cannot be read to the end leaves what it could not read
  for (fs::directory_iterator it(directory, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    std::error_code kind;
    if (!name.ends_with(suffix) || written.contains(name) || !it->is_regular_file(kind)) continue;
    if (!made_by_gpuplan(it->path(), mark)) continue;
    if (std::error_code gone; fs::remove(it->path(), gone)) removed.push_back(name);
  }
  std::sort(removed.begin(), removed.end());
  if (!removed.empty())
    std::cout << fmt::format("removed {} {} an earlier export wrote for nodes this plan does not use: {}\n",
                             removed.size(), what, fmt::join(removed, ", "));
}

}  // namespace gpuplan::cli
