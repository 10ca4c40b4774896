#include "gpuplan/target.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace gpuplan {

std::string canonical_label(std::string_view label) {
  if (label.starts_with("@@//"))
    label.remove_prefix(2);
  else if (label.starts_with("@//"))
    label.remove_prefix(1);
  else if (label.starts_with('@') && !label.starts_with("@@") &&
           label.substr(0, label.find("//")).find_first_of("+~") != std::string_view::npos)
    return "@" + std::string(label);  // only a canonical repository name has + or ~ (bzlmod's)
  return std::string(label);
}

std::string_view apparent_repo_name(std::string_view repo) {
  auto first = repo.find_first_of("+~");
  if (first == std::string_view::npos) return repo;
  if (repo.find_first_of("+~", first + 1) == std::string_view::npos) return repo.substr(0, first);
  return repo.substr(repo.find_last_of("+~") + 1);
}

std::string label_identity(std::string_view label) {
  if (!label.starts_with('@') || label.starts_with("@//") || label.starts_with("@@//"))
    return canonical_label(label);
  auto name = label.substr(label.starts_with("@@") ? 2 : 1);
  auto slashes = name.find("//");
  if (slashes == std::string_view::npos) return std::string(label);
  auto apparent = apparent_repo_name(name.substr(0, slashes));
  if (apparent.empty()) return canonical_label(label);  // "@@+//x:t": no name to match by
  return fmt::format("@{}{}", apparent, name.substr(slashes));
}

void ExecProperties::set(std::string_view key, std::string_view value) {
  auto& entries = entries_.items();
  auto at = std::lower_bound(entries.begin(), entries.end(), key,
                             [](const Entry& entry, std::string_view k) { return entry.first < k; });
  if (at != entries.end() && at->first == key)
    at->second = value;
  else
    entries.emplace(at, key, value);
}

std::string Constraint::source() const {
  return (exec        ? "exec_compatible_with "
          : condition ? "target_compatible_with select() on "
                      : "target_compatible_with ") +
         label.str();
}

bool is_test_rule_class(std::string_view rule_class) {
  return rule_class.ends_with("_test") && rule_class != "test_suite";
}

std::string describe(const DroppedCounts& dropped) {
  std::string words;
  auto add = [&](long count, std::string_view one, std::string_view many) {
    if (count <= 0) return;
    if (!words.empty()) words += ", ";
    words += fmt::format("{} {}", count, count == 1 ? one : many);
  };
  add(dropped.non_test_rules, "non-test rule", "non-test rules");
  add(dropped.test_suites, "test_suite", "test_suites");
  add(dropped.source_files, "source file", "source files");
  add(dropped.generated_files, "generated file", "generated files");
  add(dropped.other, "other target", "other targets");
  return words;
}

}  // namespace gpuplan
