#include "history/bad_rows.hpp"

#include <fmt/format.h>

#include "gpuplan/error.hpp"

namespace gpuplan::history {

void BadRows::add(long line, std::string_view what) {
  Position where{file_, line};
  if (strict_) throw InputError(where, std::string(what));
  if (count_++ == 0) first_ = fmt::format("{}: {}", where.str(), what);
}

Diagnostics BadRows::diagnostics() const {
  if (count_ == 0) return {};
  return {Diagnostic{Severity::warning, "", file_,
                     fmt::format("skipped {} bad history {} (the first: {}); --strict makes this an error",
                                 count_, count_ == 1 ? "row" : "rows", first_)}};
}

}  // namespace gpuplan::history
