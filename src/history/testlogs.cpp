// Which test a test.xml belongs to, from where it sits under bazel-testlogs.
#include <algorithm>
#include <charconv>
#include <cstdint>
#include <limits>
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

/// A base-128 varint of the protocol buffer wire format at `at`, which it moves past it.
std::optional<std::uint64_t> varint(std::string_view bytes, std::size_t& at) {
  std::uint64_t value = 0;
  for (int shift = 0; shift < 64 && at < bytes.size(); shift += 7) {
    const auto byte = static_cast<unsigned char>(bytes[at++]);
    value |= static_cast<std::uint64_t>(byte & 0x7F) << shift;
    if (byte < 0x80) return value;
  }
  return std::nullopt;
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

// Three fields of a message whose other fields are skipped by their wire type, which is all the
// protocol buffer wire format needs: no generated code, and no libprotobuf in the build for them.
std::optional<BazelCacheStatus> read_bazel_cache_status(std::string_view bytes) {
  constexpr std::uint64_t status_field = 3, run_duration_field = 12;
  BazelCacheStatus result;
  for (std::size_t at = 0; at < bytes.size();) {
    auto key = varint(bytes, at);
    if (!key || (*key >> 3) == 0) return std::nullopt;
    std::optional<std::uint64_t> length;
    switch (*key & 7) {
      case 0: {  // varint
        auto value = varint(bytes, at);
        if (!value) return std::nullopt;
        if (*key >> 3 == status_field) result.status = static_cast<int>(*value & 0x7FFFFFFF);
        if (*key >> 3 == run_duration_field)
          result.run_duration_ms = static_cast<std::int64_t>(
              std::min<std::uint64_t>(*value, std::numeric_limits<std::int64_t>::max()));
        continue;
      }
      case 1: length = 8; break;                  // fixed64
      case 2: length = varint(bytes, at); break;  // length-delimited
      case 5: length = 4; break;                  // fixed32
      default: return std::nullopt;               // groups, which TestResultData has none of
    }
    if (!length || *length > bytes.size() - at) return std::nullopt;
    at += *length;
  }
  return result;
}

}  // namespace gpuplan
