#pragma once
// Text put into GitHub-flavoured Markdown so that it shows as written: plain text, code spans,
// and either of them in a table cell.
#include <string>
#include <string_view>

namespace gpuplan::util::markdown {

/// Text shown as text: punctuation Markdown acts on is backslash-escaped (`|` too, so it
/// never ends a table cell), `<`, `>` and `&` become entities (GitHub renders inline HTML),
/// line breaks become spaces.
std::string text(std::string_view text);

/// Text as a code span, shown exactly as it is (no escape works inside one): fenced with more
/// backticks than it holds in a row, line breaks as spaces. Not for a table cell: see code_cell.
std::string code(std::string_view text);

/// code() for a table cell: a `|` ends the cell even between backticks, so it is written `\|`,
/// which the table is read with before the code span (GFM spec, example 200) and shows as `|`.
std::string code_cell(std::string_view text);

}  // namespace gpuplan::util::markdown
