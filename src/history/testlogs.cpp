// Which test a test.xml belongs to, from where it sits under bazel-testlogs.
#include <algorithm>
#include <charconv>
#include <regex>
#include <vector>

#include "gpuplan/history.hpp"

namespace gpuplan {

namespace {

std::vector<std::string_view> split_path(std::string_view path) {
  std::vector<std::string_view> parts;
  while (!path.empty()) {
    auto slash = path.find('/');
    auto part = path.substr(0, slash);
    if (!part.empty() && part != ".") parts.push_back(part);
    if (slash == std::string_view::npos) break;
    path.remove_prefix(slash + 1);
  }
  return parts;
}

int to_int(const std::string& digits) {
  int value = 0;
  std::from_chars(digits.data(), digits.data() + digits.size(), value);
  return value;
}

}  // namespace

std::optional<TestLogPath> parse_testlog_path(std::string_view relative) {
  auto parts = split_path(relative);
  if (parts.size() < 2) return std::nullopt;
  // A test's undeclared outputs (--nozip_undeclared_test_outputs) are its own files, never Bazel's.
  if (std::find(parts.begin(), parts.end(), "test.outputs") != parts.end()) return std::nullopt;
  TestLogPath result;
  static const std::regex attempt_file(R"(attempt_([1-9][0-9]{0,5})\.xml)");
  std::match_results<std::string_view::const_iterator> match;
  std::string_view file = parts.back();
  parts.pop_back();
  if (std::regex_match(file.begin(), file.end(), match, attempt_file)) {
    if (parts.empty() || parts.back() != "test_attempts") return std::nullopt;
    result.attempt = to_int(match[1].str());
    parts.pop_back();
  } else if (file != "test.xml") {
    return std::nullopt;
  }
  // Bazel names the folder of a shard or a run: shard_2_of_4, run_1_of_3, shard_2_of_4_run_1_of_3.
  static const std::regex shard_run(
      R"((?:shard_([1-9][0-9]{0,5})_of_([1-9][0-9]{0,5}))?_?(?:run_[1-9][0-9]{0,5}_of_[1-9][0-9]{0,5})?)");
  if (!parts.empty() && !parts.back().empty() &&
      (parts.back().starts_with("shard_") || parts.back().starts_with("run_")) &&
      std::regex_match(parts.back().begin(), parts.back().end(), match, shard_run)) {
    if (match[1].matched) {
      int index = to_int(match[1].str());
      int count = to_int(match[2].str());
      if (index > count) return std::nullopt;
      if (count > 1) {
        result.shard = index - 1;
        result.shard_count = count;
      }
    }
    parts.pop_back();
  }
  if (parts.empty()) return std::nullopt;
  std::string repository;
  std::size_t first = 0;
  if (parts.size() >= 3 && parts[0] == "external") {
    // external/NAME is the repository's canonical name: with bzlmod one with + or ~
    // (rules_foo+), which only @@ spells, as BEP and the query do.
    bool canonical = parts[1].find_first_of("+~") != std::string_view::npos;
    repository = (canonical ? "@@" : "@") + std::string(parts[1]);
    first = 2;
  }
  if (parts.size() - first < 1) return std::nullopt;
  std::string package;
  for (std::size_t i = first; i + 1 < parts.size(); ++i) {
    if (!package.empty()) package += '/';
    package += parts[i];
  }
  result.label = repository + "//" + package + ":" + std::string(parts.back());
  return result;
}

}  // namespace gpuplan
