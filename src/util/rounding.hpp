#pragma once
// Numbers rounded for JSON: the plan, compare.
#include <cmath>

namespace gpuplan::util {

/// `value` to `decimals` digits after the point, as the double nearest that decimal: dividing by a
/// power of ten, where multiplying by its inverse (not exact in binary) wrote 0.5407000000000001.
inline double round_to(double value, int decimals) {
  const double scale = std::pow(10.0, decimals);
  return std::round(value * scale) / scale;
}

/// Seconds as JSON gives them: to the millisecond.
inline double json_seconds(double value) { return round_to(value, 3); }

/// A ratio (utilisation, the gap to the lower bound) as JSON gives it: to 4 digits.
inline double json_ratio(double value) { return round_to(value, 4); }

}  // namespace gpuplan::util
