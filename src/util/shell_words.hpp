#pragma once
// The words a POSIX shell reads in a command line, for looking at what a command runs without
// running it. Not wordexp(3): glibc's refuses an unquoted { } ; | & < >, which command templates
// hold (`{label}`, `&&`).
#include <string>
#include <string_view>
#include <vector>

namespace gpuplan::util {

/// The words /bin/sh reads in `line`, with its quotes removed as the shell removes them: '…' as
/// written; "…" with a backslash quoting only $ ` " \ and a line break; a backslash outside
/// quotes quoting the next character (a line break: nothing). Blanks, line breaks and the
/// operators ; & | ( ) < > end a word and are none; a # that starts a word comments to the end
/// of its line. Nothing is expanded: $NAME, $(…) and `…` stay as written, a substitution one
/// piece of its word. The script of a shell started with -c (`sh -c 'pytest -k x'`,
/// `bash -lc …`) is split in its place, since what it runs is there.
std::vector<std::string> shell_words(std::string_view line);

}  // namespace gpuplan::util
