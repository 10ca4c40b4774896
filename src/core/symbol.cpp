#include "gpuplan/symbol.hpp"

#include <mutex>
#include <unordered_set>

namespace gpuplan {
namespace {

struct TextHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view text) const { return std::hash<std::string_view>{}(text); }
};

/// Never freed, so a Symbol stays valid in the destructors of other statics.
const std::string* intern(std::string_view text) {
  static auto& texts = *new std::unordered_set<std::string, TextHash, std::equal_to<>>();
  static std::mutex mutex;
  std::lock_guard lock(mutex);
  auto it = texts.find(text);
  if (it == texts.end()) it = texts.emplace(text).first;
  return &*it;
}

}  // namespace

Symbol::Symbol() {
  static const std::string* const empty = intern({});
  text_ = empty;
}
Symbol::Symbol(std::string_view text) : text_(intern(text)) {}

}  // namespace gpuplan
