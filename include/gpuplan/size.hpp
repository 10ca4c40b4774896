#pragma once
// Memory sizes as users write them. All units are binary: a "40GB" A100 has 40960 MiB.
#include <cstdint>
#include <string>
#include <string_view>

#include "gpuplan/result.hpp"

namespace gpuplan {

/// "40GiB", "40G", "40GB", "40g", "40960MiB", "40960M", "1TiB", "0.5GiB" → MiB.
/// A bare number or anything else is rejected; so is zero, a negative or an absurd size.
Result<std::int64_t> parse_size_mib(std::string_view text);

/// 40960 → "40GiB", 1536 → "1.5GiB", 700 → "700MiB".
std::string format_mib(std::int64_t mib);

}  // namespace gpuplan
