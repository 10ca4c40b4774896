#pragma once
// What an export into a folder does about the files an earlier export left there.
#include <map>
#include <string>
#include <string_view>

namespace gpuplan::cli {

/// Removes from `directory` the files named *`suffix` that are not in `written` and that gpuplan
/// made: their first line, or the line after a first `#!` line, starts with `mark`. Other files
/// are left alone. Says on stdout which it removed: "removed N `what` an earlier export wrote for
/// nodes this plan does not use: a, b". A launcher that takes every such file of the folder
/// (`kubectl apply -f DIR`, a loop over DIR/*.sbatch) would otherwise run their old units again.
void remove_earlier_exports(const std::string& directory, const std::map<std::string, std::string>& written,
                            std::string_view suffix, std::string_view mark, std::string_view what);

}  // namespace gpuplan::cli
