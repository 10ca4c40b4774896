#include "util/json_locate.hpp"

#include <cstring>
#include <nlohmann/json.hpp>
#include <string>

namespace gpuplan::util {

namespace {

/// One pass over a JSON text, down the one path looked for; every other value is skipped
/// without recursion, however deep it nests.
class PathScanner {
 public:
  explicit PathScanner(std::streambuf& in) : in_(in) {}

  /// Past a UTF-8 byte order mark, which the plan reader skips too: counted in the offset, not
  /// in the column, as an editor shows the line.
  void skip_byte_order_mark() {
    for (int byte : {0xEF, 0xBB, 0xBF}) {
      if (peek() != byte) return;
      in_.sbumpc();
      ++spot_.offset;
    }
  }

  /// Reads one value, at whose start the scanner is (space before it allowed); where the value
  /// at `path` within it begins.
  std::optional<TextSpot> find(std::string_view path) {
    skip_space();
    const TextSpot here = spot_;
    if (path.empty()) {
      skip_value();
      return here;
    }
    const int c = peek();
    if (c == '{') return find_in_object(path);
    if (c == '[') return find_in_array(path);
    skip_value();
    return std::nullopt;
  }

 private:
  static constexpr int end = std::streambuf::traits_type::eof();

  int peek() { return in_.sgetc(); }
  int get() {
    const int c = in_.sbumpc();
    if (c == end) return c;
    ++spot_.offset;
    if (c == '\n') {
      ++spot_.line;
      spot_.column = 1;
    } else {
      ++spot_.column;
    }
    return c;
  }
  void skip_space() {
    for (int c = peek(); c == ' ' || c == '\t' || c == '\n' || c == '\r'; c = peek()) get();
  }
  /// At a '"': the string, its quotes and escapes as written, into `raw` when given.
  bool read_string(std::string* raw) {
    if (get() != '"') return broken();
    if (raw) *raw = "\"";
    for (int c = get();; c = get()) {
      if (c == end) return broken();
      if (raw) *raw += static_cast<char>(c);
      if (c == '"') return true;
      if (c == '\\') {
        c = get();
        if (c == end) return broken();
        if (raw) *raw += static_cast<char>(c);
      }
    }
  }
  bool skip_value() {
    skip_space();
    int c = peek();
    if (c == '"') return read_string(nullptr);
    if (c == '{' || c == '[') {
      long depth = 0;
      do {
        c = peek();
        if (c == end) return broken();
        if (c == '"') {
          if (!read_string(nullptr)) return false;
          continue;
        }
        get();
        if (c == '{' || c == '[') ++depth;
        if (c == '}' || c == ']') --depth;
      } while (depth > 0);
      return true;
    }
    bool any = false;
    for (c = peek(); c != end && !std::strchr(",]} \t\r\n", c); c = peek(), any = true) get();
    return any || broken();
  }
  bool broken() {
    broken_ = true;
    return false;
  }
  /// After a value inside a container: true at ',', false at `close` or where the text is broken.
  bool next(char close) {
    skip_space();
    const int c = get();
    if (c == ',') return true;
    if (c != close) broken();
    return false;
  }

  /// What of `path` is left inside the value of `key`; none when the path does not go there.
  static std::optional<std::string_view> after_key(std::string_view path, std::string_view key) {
    if (!path.starts_with(key)) return std::nullopt;
    if (path.size() == key.size()) return std::string_view();
    if (path[key.size()] == '.') return path.substr(key.size() + 1);
    if (path[key.size()] == '[') return path.substr(key.size());
    return std::nullopt;
  }

  std::optional<TextSpot> find_in_object(std::string_view path) {
    std::optional<TextSpot> found;
    get();
    skip_space();
    if (peek() == '}') {
      get();
      return found;
    }
    do {
      skip_space();
      std::string raw;
      if (peek() != '"' || !read_string(&raw)) return found;
      skip_space();
      if (get() != ':') {
        broken();
        return found;
      }
      std::string key;
      try {
        key = nlohmann::json::parse(raw).get<std::string>();
      } catch (const nlohmann::json::exception&) {
        key = raw;
      }
      if (auto rest = after_key(path, key)) {
        if (auto spot = find(*rest)) found = spot;  // a key given twice: the last one
      } else {
        skip_value();
      }
      if (broken_) return found;
    } while (next('}'));
    return found;
  }

  std::optional<TextSpot> find_in_array(std::string_view path) {
    std::optional<TextSpot> found;
    auto close = path.find(']');
    std::uint64_t wanted = 0;
    bool indexed = path.starts_with('[') && close != std::string_view::npos && close > 1;
    for (std::size_t i = 1; indexed && i < close; ++i) {
      indexed = path[i] >= '0' && path[i] <= '9';
      wanted = wanted * 10 + static_cast<std::uint64_t>(path[i] - '0');
    }
    if (!indexed) {
      skip_value();
      return found;
    }
    auto rest = path.substr(close + 1);
    if (rest.starts_with('.')) rest.remove_prefix(1);
    get();
    skip_space();
    if (peek() == ']') {
      get();
      return found;
    }
    std::uint64_t index = 0;
    do {
      if (index++ == wanted)
        found = find(rest);
      else
        skip_value();
      if (broken_) return found;
    } while (next(']'));
    return found;
  }

  std::streambuf& in_;
  TextSpot spot_;
  bool broken_ = false;
};

}  // namespace

std::optional<TextSpot> locate_json_path(std::streambuf& in, std::string_view path) {
  if (path.starts_with('$')) path.remove_prefix(path.starts_with("$.") ? 2 : 1);
  PathScanner scanner(in);
  scanner.skip_byte_order_mark();
  return scanner.find(path);
}

}  // namespace gpuplan::util
