#pragma once
// The attributes of a test rule that gpuplan keeps, checked the same way for every format.
#include <string>
#include <string_view>

#include "gpuplan/target.hpp"

namespace gpuplan::ingest {

/// The attributes of a rule that a Target holds, and the kind of value each must have.
enum class Attribute { none, size, timeout, generator_function, shard_count, flaky, tags, exec_properties };

/// Which kept attribute `name` is; Attribute::none for the many gpuplan ignores.
Attribute attribute_named(std::string_view name);

/// The value type each kept attribute has in Bazel: "STRING", "INTEGER", "BOOLEAN",
/// "STRING_LIST", "STRING_DICT" (build.proto's Attribute.Discriminator).
std::string_view expected_type(Attribute attribute);

/// Parses an integer attribute as Bazel prints it. Returns the error text, empty when
/// `text` is a valid integer that fits `out`.
std::string parse_integer(std::string_view text, long& out);

/// Stores a shard_count (Bazel's default -1 becomes 0: not sharded). Returns the
/// error text, empty on success.
std::string set_shard_count(Target& target, long value);

}  // namespace gpuplan::ingest
