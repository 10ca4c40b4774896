// The exports' YAML writer: small because it only writes what JSON can say.
#include "export/yaml.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <string_view>

namespace gpuplan {

namespace {

/// Words YAML 1.1 or 1.2 parsers read as something other than a string (y and n: YAML 1.1's
/// booleans, which go-yaml v2, and so kubectl, reads as such).
bool reserved_word(std::string_view s) {
  static constexpr std::array<std::string_view, 26> words = {
      "true", "false", "True", "False", "TRUE", "FALSE", "yes",  "no",   "Yes", "No", "YES", "NO", "on",
      "off",  "On",    "Off",  "ON",    "OFF",  "null",  "Null", "NULL", "~",   "y",  "Y",   "n",  "N"};
  return std::find(words.begin(), words.end(), s) != words.end();
}

bool looks_numeric(std::string_view s) {
  return !s.empty() && (std::isdigit(static_cast<unsigned char>(s.front())) || s.front() == '.' ||
                        s.front() == '+' || s.front() == '-');
}

/// A plain scalar: letters, digits and `_./-@` only (a `:` only when no space follows, which
/// we never emit with a space), not a word or number YAML would convert.
bool plain_ok(std::string_view s) {
  if (s.empty() || reserved_word(s) || looks_numeric(s) || s.front() == '-' || s.front() == '@') return false;
  if (s.back() == ':') return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '.' || c == '/' || c == '-' || c == '@' || c == ':';
  });
}

/// Text that a literal block keeps exactly: several lines ending in one newline, no control
/// characters, no leading blank on the first line (it would set the indentation).
bool literal_ok(std::string_view s) {
  if (s.size() < 2 || s.back() != '\n' || s[s.size() - 2] == '\n' || s.front() == ' ') return false;
  return std::none_of(s.begin(), s.end(), [](char c) {
    auto u = static_cast<unsigned char>(c);
    return (u < 0x20 && c != '\n') || u == 0x7f;
  });
}

std::string scalar(const nlohmann::ordered_json& value) {
  if (value.is_string()) {
    const auto& s = value.get_ref<const std::string&>();
    return plain_ok(s) ? s : value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  }
  return value.dump();
}

std::string key_text(const std::string& key) { return scalar(nlohmann::ordered_json(key)); }

bool is_block(const nlohmann::ordered_json& v) { return (v.is_object() || v.is_array()) && !v.empty(); }

void write(std::string& out, const nlohmann::ordered_json& value, int indent);

/// A value after "key:" or "- ": inline scalars, a literal block, or a nested block on new lines.
void write_after(std::string& out, const nlohmann::ordered_json& v, int indent, bool in_sequence) {
  if (v.is_string() && literal_ok(v.get_ref<const std::string&>())) {
    out += " |\n";
    std::string_view text = v.get_ref<const std::string&>();
    std::string pad(indent + 2, ' ');
    while (!text.empty()) {
      auto end = text.find('\n');
      auto line = text.substr(0, end);
      if (!line.empty()) out += pad;
      out += line;
      out += '\n';
      text.remove_prefix(end + 1);
    }
  } else if (!is_block(v)) {
    out += ' ';
    out += v.is_object() ? "{}" : v.is_array() ? "[]" : scalar(v);
    out += '\n';
  } else if (in_sequence && v.is_object()) {
    out += ' ';
    bool first = true;
    for (const auto& [k, item] : v.items()) {
      if (!first) out += std::string(indent + 2, ' ');
      first = false;
      out += key_text(k) + ':';
      write_after(out, item, indent + 2, false);
    }
  } else {
    out += '\n';
    write(out, v, indent + 2);
  }
}

void write(std::string& out, const nlohmann::ordered_json& value, int indent) {
  std::string pad(indent, ' ');
  if (value.is_object()) {
    for (const auto& [k, item] : value.items()) {
      out += pad + key_text(k) + ':';
      write_after(out, item, indent, false);
    }
  } else if (value.is_array()) {
    for (const auto& item : value) {
      out += pad + '-';
      write_after(out, item, indent, true);
    }
  }
}

}  // namespace

std::string to_yaml(const nlohmann::ordered_json& value) {
  std::string out;
  if (is_block(value))
    write(out, value, 0);
  else
    out = (value.is_object() ? "{}" : value.is_array() ? "[]" : scalar(value)) + "\n";
  return out;
}

}  // namespace gpuplan
