#pragma once
// Bazel's Latin-1 strings: Bazel reads BUILD files as Latin-1, so a target named `тест_test`
// is a Java string of the name's UTF-8 bytes, one character each, and `query --output=xml`
// (Bazel 4's, and others) encodes those characters to UTF-8 again: `//t:ÑÐµÑÑ_test`, a label
// that names no target (`bazel test` refuses it, and run-under's TEST_TARGET, the results and
// the JSON outputs all say `//t:тест_test`). cquery's JSON and `--output=label` write the bytes.
#include <string>
#include <string_view>

namespace gpuplan::ingest {

/// `text` with Bazel's double encoding undone where it is one: every non-ASCII character is one
/// of U+0080 to U+00FF and the bytes they stand for are UTF-8. Otherwise (ASCII, a `é` written as
/// UTF-8 once, any character above U+00FF) `text` itself. The result may live in `scratch`.
std::string_view undo_latin1_utf8(std::string_view text, std::string& scratch);

}  // namespace gpuplan::ingest
