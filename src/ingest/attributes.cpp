#include "ingest/attributes.hpp"

#include <fmt/format.h>

#include <charconv>
#include <limits>

#include "gpuplan/limits.hpp"

namespace gpuplan::ingest {

Attribute attribute_named(std::string_view name) {
  if (name == "tags") return Attribute::tags;
  if (name == "size") return Attribute::size;
  if (name == "timeout") return Attribute::timeout;
  if (name == "shard_count") return Attribute::shard_count;
  if (name == "flaky") return Attribute::flaky;
  if (name == "exec_properties") return Attribute::exec_properties;
  if (name == "generator_function") return Attribute::generator_function;
  return Attribute::none;
}

std::string_view expected_type(Attribute attribute) {
  switch (attribute) {
    case Attribute::shard_count: return "INTEGER";
    case Attribute::flaky: return "BOOLEAN";
    case Attribute::tags: return "STRING_LIST";
    case Attribute::exec_properties: return "STRING_DICT";
    default: return "STRING";
  }
}

std::string parse_integer(std::string_view text, long& out) {
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), out);
  if (error == std::errc::result_out_of_range) return fmt::format("the integer {} is out of range", text);
  if (error != std::errc{} || end != text.data() + text.size() || text.empty())
    return fmt::format("\"{}\" is not an integer", text);
  return {};
}

std::string set_shard_count(Target& target, long value) {
  if (value < -1) return fmt::format("shard_count {} is negative", value);
  if (value > max_shard_count)
    return fmt::format("shard_count {} is above gpuplan's limit of {} (Bazel's default limit is 50)", value,
                       max_shard_count);
  target.shard_count = value < 0 ? 0 : static_cast<int>(value);
  return {};
}

}  // namespace gpuplan::ingest
