#pragma once
// Checking that text is UTF-8 before it reaches JSON output, which can carry nothing else.
#include <cstddef>
#include <istream>
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

/// Throws InputError at the line and column of the first byte of `text` that is not UTF-8, or
/// is NUL (binary data; UTF-16 without its byte-order mark, which a Windows editor's "Unicode"
/// writes, is one in every two), naming UTF-16 when the text starts with its byte-order mark
/// (for files whose strings end up in JSON: yaml-cpp passes such bytes through).
void require_utf8(std::string_view text, const std::string& name);

/// The whole of a small text input (a fleet or rules file), or InputError when it holds more than
/// `limit` bytes: /dev/zero given by mistake, or a stream that never ends, would otherwise be
/// read until memory runs out.
std::string read_small_text(std::istream& in, const std::string& name, std::size_t limit);

/// The most a fleet or rules file, or an nvidia-smi capture, may hold.
inline constexpr std::size_t max_yaml_bytes = std::size_t{64} << 20;

/// "byte 0xff at offset 3 is not UTF-8" for the message of an input error; "" when valid.
std::string utf8_problem(std::string_view text);

}  // namespace gpuplan
