#include "cli/number_options.hpp"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <string>

#include "gpuplan/limits.hpp"

namespace gpuplan::cli {

CLI::Validator finite_number(double min, double max) {
  return {[min, max](std::string& input) -> std::string {
            // Decimal as written (from_chars: no hexadecimal 0x1p3, no leading space or +).
            double value = 0;
            const char* end = input.data() + input.size();
            auto [stop, error] = std::from_chars(input.data(), end, value);
            bool number = !input.empty() && error == std::errc{} && stop == end && std::isfinite(value);
            if (!number || value < min || value > max)
              return fmt::format("{:?} is not a number from {} to {}", input, min, max);
            return {};
          },
          fmt::format("NUMBER {}..{}", min, max)};
}

CLI::Validator whole_number(std::uint64_t min, std::uint64_t max) {
  return {[min, max](std::string& input) -> std::string {
            std::uint64_t value = 0;
            const char* end = input.data() + input.size();
            auto [stop, error] = std::from_chars(input.data(), end, value);
            bool digits = !input.empty() && input.find_first_not_of("0123456789") == std::string::npos;
            if (!digits || error != std::errc{} || stop != end || value < min || value > max)
              return fmt::format("{:?} is not a whole number from {} to {}", input, min, max);
            input = std::to_string(value);
            return {};
          },
          fmt::format("UINT {}..{}", min, max)};
}

CLI::Validator lease_seconds() { return finite_number(min_lease_s, max_duration_s); }

}  // namespace gpuplan::cli
