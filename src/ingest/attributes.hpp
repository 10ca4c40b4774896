#pragma once
// The attributes of a test rule that gpuplan keeps, checked the same way for every format.
#include <string>
#include <string_view>
#include <vector>

#include "gpuplan/result.hpp"
#include "gpuplan/target.hpp"

namespace gpuplan::ingest {

/// The attributes of a rule that a Target holds, and the kind of value each must have.
enum class Attribute {
  none,
  size,
  timeout,
  generator_function,
  shard_count,
  flaky,
  tags,
  exec_properties,
  target_compatible_with,
  exec_compatible_with,
  env,
  args
};

/// Which kept attribute `name` is; Attribute::none for the many gpuplan ignores.
Attribute attribute_named(std::string_view name);

/// The value type each kept attribute has in Bazel: "STRING", "INTEGER", "BOOLEAN",
/// "STRING_LIST", "LABEL_LIST", "STRING_DICT" (build.proto's Attribute.Discriminator).
std::string_view expected_type(Attribute attribute);

/// Whether the attribute is a list (tags, the constraint label lists, args).
bool is_list(Attribute attribute);
/// Adds one item of such a list to `target`: of args, only JAX's process counts
/// (LaunchSettings::process_args).
void add_item(Attribute attribute, Target& target, std::string_view item);

/// Adds one entry of a dict (exec_properties, env) to `target`: of env, only a key that chooses
/// GPUs (LaunchSettings::device_env) and WORLD_SIZE (LaunchSettings::world_size_env).
void add_entry(Attribute attribute, Target& target, const std::string& key, std::string_view value);

/// The shard_count a Target holds for Bazel's value (its default -1 becomes 0: not sharded).
Result<int> shard_count(long value);

/// The same for a shard_count as Bazel prints it in XML: an integer that fits a long.
Result<int> parse_shard_count(std::string_view text);

/// Why a size or timeout value is none of the four Bazel allows (`small`…`enormous`,
/// `short`…`eternal`: Bazel refuses others when it loads the BUILD file); empty when it is one.
std::string bad_size_or_timeout(Attribute attribute, std::string_view value);

}  // namespace gpuplan::ingest
