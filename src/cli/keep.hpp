#pragma once
// Large results a command leaves to the end of the process instead of freeing them.
#include <memory>
#include <type_traits>
#include <utility>
#include <vector>

namespace gpuplan::cli {

/// What keep_until_exit holds; a global pointer, so LeakSanitizer sees it all as reachable.
inline std::vector<std::shared_ptr<void>>* kept_until_exit = nullptr;

/// Keeps `value` until the process ends, never destroyed. Freeing a plan of 150,000 units
/// (hundreds of thousands of small heap blocks) took about a tenth of `plan`'s CPU time, and
/// the operating system takes the memory back at exit in one step anyway. Call it last, once
/// the outputs are written: nothing may use `value` afterwards.
template <class T>
void keep_until_exit(T&& value) {
  if (!kept_until_exit) kept_until_exit = new std::vector<std::shared_ptr<void>>();
  kept_until_exit->push_back(std::make_shared<std::decay_t<T>>(std::forward<T>(value)));
}

}  // namespace gpuplan::cli
