#pragma once
// A string kept once per process: for the small vocabularies that repeat across millions of
// targets and units (rule classes, sizes, tags, annotation sources, node names).
#include <fmt/format.h>

#include <compare>
#include <string>
#include <string_view>

namespace gpuplan {

/// Reads like a string, costs one pointer: every Symbol with the same text shares one copy,
/// which lives until the process ends. Only for values drawn from a small set; a label or
/// a path, unique per target, stays a std::string.
class Symbol {
 public:
  Symbol();  ///< ""
  // Implicit both ways, so that `target.size = "large"` and `fmt::format("{}", target.size)`
  // read as they would for a std::string.
  Symbol(std::string_view text);                                       // NOLINT(google-explicit-constructor)
  Symbol(const char* text) : Symbol(std::string_view(text)) {}         // NOLINT(google-explicit-constructor)
  Symbol(const std::string& text) : Symbol(std::string_view(text)) {}  // NOLINT(google-explicit-constructor)

  const std::string& str() const { return *text_; }
  operator const std::string&() const { return *text_; }  // NOLINT(google-explicit-constructor)
  operator std::string_view() const { return *text_; }    // NOLINT(google-explicit-constructor)
  const char* c_str() const { return text_->c_str(); }
  bool empty() const { return text_->empty(); }
  std::size_t size() const { return text_->size(); }

  friend bool operator==(const Symbol& a, const Symbol& b) { return a.text_ == b.text_; }
  friend bool operator==(const Symbol& a, std::string_view b) { return *a.text_ == b; }
  friend bool operator==(const Symbol& a, const std::string& b) { return *a.text_ == b; }
  friend bool operator==(const Symbol& a, const char* b) { return *a.text_ == b; }
  friend std::strong_ordering operator<=>(const Symbol& a, const Symbol& b) { return *a.text_ <=> *b.text_; }

 private:
  const std::string* text_;
};

}  // namespace gpuplan

template <>
struct fmt::formatter<gpuplan::Symbol> : fmt::formatter<std::string_view> {
  auto format(const gpuplan::Symbol& symbol, fmt::format_context& context) const {
    return fmt::formatter<std::string_view>::format(symbol, context);
  }
};
