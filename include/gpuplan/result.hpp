#pragma once
// Result<T>: a value, or why a piece of text is not one. The one way a value parser reports a
// bad value (as ccache's tl::expected): the parser knows what is wrong, not where; the reader
// that knows the file and the line turns the problem into an InputError with its Position.
#include <string>
#include <utility>
#include <variant>

namespace gpuplan {

/// What is wrong with a value, in words: "\"x\" is not a GPU count (a whole number of at least 1)".
struct Problem {
  std::string what;
};

template <class T>
class [[nodiscard]] Result {
 public:
  using value_type = T;

  /// Implicit, as std::expected's: a parser says `return value;` or `return Problem{...};`.
  Result(T value) : value_(std::move(value)) {}
  Result(Problem problem) : value_(std::move(problem)) {}

  bool ok() const { return value_.index() == 0; }
  explicit operator bool() const { return ok(); }
  const T& operator*() const& { return std::get<0>(value_); }
  T&& operator*() && { return std::get<0>(std::move(value_)); }
  const T* operator->() const { return &std::get<0>(value_); }
  /// Why there is no value; only when !ok().
  const std::string& problem() const { return std::get<1>(value_).what; }

 private:
  std::variant<T, Problem> value_;
};

}  // namespace gpuplan
