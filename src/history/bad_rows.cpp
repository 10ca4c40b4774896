#include "history/bad_rows.hpp"

#include <fmt/format.h>

#include "gpuplan/error.hpp"

namespace gpuplan::history {

void BadRows::add(long line, std::string_view what) {
  Position where{file_, line};
  if (strict_) throw InputError(where, std::string(what));
  if (count_++ == 0) first_ = fmt::format("{}: {}", where.str(), what);
}

void BadRows::warn(long line, std::string_view what) {
  Position where{file_, line};
  if (strict_) throw InputError(where, std::string(what));
  warnings_.push_back(Diagnostic{Severity::warning, "", file_,
                                 fmt::format("{}: {}; --strict makes this an error", where.str(), what)});
}

Diagnostics BadRows::diagnostics() const {
  Diagnostics all = warnings_;
  if (count_ > 0)
    all.push_back(
        Diagnostic{Severity::warning, "", file_,
                   fmt::format("skipped {} bad history {} (the first: {}); --strict makes this an error",
                               count_, count_ == 1 ? "row" : "rows", first_)});
  return all;
}

}  // namespace gpuplan::history
