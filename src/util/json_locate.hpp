#pragma once
// Where a value named by a JSON path lies in a JSON text: the line a message about a field
// names, found only once there is a message (the readers keep no positions while they read).
#include <cstdint>
#include <optional>
#include <streambuf>
#include <string_view>

namespace gpuplan::util {

/// A place in a text: the byte offset from where the reading began, and its line and column
/// (1-based, a column a byte).
struct TextSpot {
  std::uint64_t offset = 0;
  long line = 1;
  long column = 1;
};

/// Where the value at `path` begins in the JSON text `in` yields from its current place on.
/// `path` is written as gpuplan's messages write it: keys joined by ".", array elements as
/// "[N]", "$" (or "") the whole value: "assignments[3].requirements.gpus". A key with "." or "["
/// in it is matched as a whole, against the keys the text has; of a key given twice, the last,
/// as JSON readers take it. None when the text has no such value or is no JSON where it is
/// looked for. Reads `in` once, to its end at most, holding none of it.
std::optional<TextSpot> locate_json_path(std::streambuf& in, std::string_view path);

}  // namespace gpuplan::util
