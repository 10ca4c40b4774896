#pragma once
// Checking that text is UTF-8 before it reaches JSON output, which can carry nothing else.
#include <cstddef>
#include <string>
#include <string_view>

namespace gpuplan {

/// The offset of the first byte of `text` that does not begin or continue a well-formed
/// UTF-8 character (overlong forms, surrogates and values past U+10FFFF included);
/// npos when all of it is UTF-8.
std::size_t invalid_utf8_at(std::string_view text);

/// `text` with every byte that is not UTF-8 written as "\xff": a file name as messages and
/// JSON output can carry it.
std::string escape_invalid_utf8(std::string_view text);

/// Throws InputError at the line and column of the first byte of `text` that is not UTF-8
/// (for files whose strings end up in JSON: yaml-cpp passes such bytes through).
void require_utf8(std::string_view text, const std::string& name);

/// "byte 0xff at offset 3 is not UTF-8" for the message of an input error; "" when valid.
std::string utf8_problem(std::string_view text);

}  // namespace gpuplan
