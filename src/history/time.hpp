#pragma once
// Numbers, durations, timestamps and Bazel's test statuses as history files spell them.
#include <cstdint>
#include <optional>
#include <string_view>

namespace gpuplan::history {

/// A plain decimal number ("12", "12.5", "-3", "1e3"), nothing around it; finite.
std::optional<double> parse_number(std::string_view text);

/// A protobuf Duration in its JSON form: "12.5s", "0.000340s", "-1s".
std::optional<double> parse_proto_duration(std::string_view text);

/// RFC 3339 / ISO 8601 as BEP, gtest and pytest write it: "2024-05-01T12:00:00Z",
/// "2024-05-01T12:00:00.123+02:00", "2024-05-01 12:00:00" (no zone: UTC). Milliseconds since the epoch.
std::optional<std::int64_t> parse_timestamp_ms(std::string_view text);

/// Seconds since the epoch as milliseconds; empty outside 1970 to 9999 (max_timestamp_ms).
std::optional<std::int64_t> epoch_seconds_to_ms(double seconds);
/// The same check for milliseconds as given.
std::optional<std::int64_t> epoch_ms(double ms);

/// What a run's time says, by Bazel's test status (BlazeTestStatus, as BEP spells it).
enum class Outcome { sample, lower_bound, none };
/// PASSED, FAILED and FLAKY attempts ran to the end; a TIMEOUT ran at least that long;
/// the rest (INCOMPLETE, REMOTE_FAILURE, FAILED_TO_BUILD, ...) measured nothing. Any case.
Outcome outcome_of(std::string_view status);

}  // namespace gpuplan::history
