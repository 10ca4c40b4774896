#include "ingest/attributes.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <iterator>

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
  if (name == "target_compatible_with") return Attribute::target_compatible_with;
  if (name == "exec_compatible_with") return Attribute::exec_compatible_with;
  if (name == "env") return Attribute::env;
  if (name == "args") return Attribute::args;
  return Attribute::none;
}

std::string_view expected_type(Attribute attribute) {
  switch (attribute) {
    case Attribute::shard_count: return "INTEGER";
    case Attribute::flaky: return "BOOLEAN";
    case Attribute::tags:
    case Attribute::args: return "STRING_LIST";
    case Attribute::exec_properties:
    case Attribute::env: return "STRING_DICT";
    case Attribute::target_compatible_with:
    case Attribute::exec_compatible_with: return "LABEL_LIST";
    default: return "STRING";
  }
}

bool is_list(Attribute attribute) {
  return attribute == Attribute::tags || attribute == Attribute::target_compatible_with ||
         attribute == Attribute::exec_compatible_with || attribute == Attribute::args;
}

void add_item(Attribute attribute, Target& target, std::string_view item) {
  if (attribute == Attribute::tags) {
    target.tags.emplace_back(item);
  } else if (attribute == Attribute::args) {
    if (!item.starts_with("--num_processes=") && !item.starts_with("--gpus_per_process=")) return;
    Symbol& kept = target.edit_launch().process_args;
    kept = Symbol(kept.empty() ? std::string(item) : fmt::format("{} {}", kept.str(), item));
  } else {
    target.constraints.push_back(Constraint{Symbol(item), attribute == Attribute::exec_compatible_with});
  }
}

void add_entry(Attribute attribute, Target& target, const std::string& key, std::string_view value) {
  if (attribute == Attribute::exec_properties)
    target.exec_properties.set(key, value);
  else if (key == "WORLD_SIZE")
    target.edit_launch().world_size_env = Symbol(fmt::format("WORLD_SIZE={}", value));
  else if (target.launch().device_env.empty() &&
           (key == "CUDA_VISIBLE_DEVICES" || key == "HIP_VISIBLE_DEVICES" || key == "ROCR_VISIBLE_DEVICES"))
    target.edit_launch().device_env = Symbol(fmt::format("{}={}", key, value));
}

Result<int> shard_count(long value) {
  if (value < -1) return Problem{fmt::format("shard_count {} is negative", value)};
  if (value > max_shard_count)
    return Problem{fmt::format("shard_count {} is above gpuplan's limit of {} (Bazel's default limit is 50)",
                               value, max_shard_count)};
  return value < 0 ? 0 : static_cast<int>(value);
}

Result<int> parse_shard_count(std::string_view text) {
  long value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error == std::errc::result_out_of_range)
    return Problem{fmt::format("the integer {} is out of range", text)};
  if (error != std::errc{} || end != text.data() + text.size() || text.empty())
    return Problem{fmt::format("\"{}\" is not an integer", text)};
  return shard_count(value);
}

std::string bad_size_or_timeout(Attribute attribute, std::string_view value) {
  static constexpr std::string_view sizes[] = {"small", "medium", "large", "enormous"};
  static constexpr std::string_view timeouts[] = {"short", "moderate", "long", "eternal"};
  const auto& allowed = attribute == Attribute::size ? sizes : timeouts;
  if (std::find(std::begin(allowed), std::end(allowed), value) != std::end(allowed)) return {};
  return fmt::format("\"{}\" is not {}, {}, {} or {}", value, allowed[0], allowed[1], allowed[2], allowed[3]);
}

}  // namespace gpuplan::ingest
