#include "gpuplan/symbol.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <unordered_set>

namespace gpuplan {
namespace {

struct TextHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view text) const { return std::hash<std::string_view>{}(text); }
};

/// Where a text goes in a thread's cache of recent symbols: its length and its first and last
/// eight bytes, enough to part the tags, sizes and sources that repeat.
std::size_t cache_slot(std::string_view text, std::size_t slots) {
  std::uint64_t head = 0, tail = 0;
  if (!text.empty()) std::memcpy(&head, text.data(), std::min<std::size_t>(8, text.size()));
  if (text.size() > 8) std::memcpy(&tail, text.data() + text.size() - 8, 8);
  std::uint64_t mixed = (head ^ (tail * 0x9E3779B97F4A7C15ull) ^ text.size()) * 0xFF51AFD7ED558CCDull;
  return static_cast<std::size_t>(mixed >> 40) % slots;
}

/// Never freed, so a Symbol stays valid in the destructors of other statics. A thread first
/// asks its own cache of the symbols it made last: a query's million tests intern the same few
/// tags, sizes and sources again and again, and the lock and the set's lookup were 3.5% of
/// `plan` at 1M tests (perf).
const std::string* intern(std::string_view text) {
  static constexpr std::size_t slots = 256;
  thread_local std::array<const std::string*, slots> recent{};
  const std::string*& cached = recent[cache_slot(text, slots)];
  if (cached != nullptr && *cached == text) return cached;
  static auto& texts = *new std::unordered_set<std::string, TextHash, std::equal_to<>>();
  static std::mutex mutex;
  std::lock_guard lock(mutex);
  auto it = texts.find(text);
  if (it == texts.end()) it = texts.emplace(text).first;
  cached = &*it;
  return cached;
}

}  // namespace

Symbol::Symbol() {
  static const std::string* const empty = intern({});
  text_ = empty;
}
Symbol::Symbol(std::string_view text) : text_(intern(text)) {}

}  // namespace gpuplan
