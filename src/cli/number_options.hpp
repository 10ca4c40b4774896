#pragma once
// Checks for the command line's numbers. CLI11 reads "nan", "inf" and 1e999 into a double (and
// its Range lets NaN through), "-1" into an unsigned as 2^64-1, 2^64 as 2^64-1 and "010" as
// octal 8; these take a number only as written, in range, or refuse it (exit 2, README "Limits").
#include <CLI/CLI.hpp>
#include <cstdint>

namespace gpuplan::cli {

/// A floating-point option's value: a finite number from `min` to `max`, both inclusive.
CLI::Validator finite_number(double min, double max);

/// An integer option's value: decimal digits only (no sign, no 0x, no octal), from `min` to
/// `max`. A transform: "010" reaches CLI11 as "10".
CLI::Validator whole_number(std::uint64_t min, std::uint64_t max);

/// A claim lease in seconds (exec, run-under, export slurm --lease): from min_lease_s to a year.
CLI::Validator lease_seconds();

}  // namespace gpuplan::cli
