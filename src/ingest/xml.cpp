// bazel query --output=xml, streamed through expat: each <rule> is read as it closes,
// and nothing of rule-input, rule-output or other targets is kept, unless a GraphSink wants
// every rule and its rule-inputs.
#include <expat.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gpuplan/error.hpp"
#include "ingest/attributes.hpp"
#include "ingest/bazel_latin1.hpp"
#include "ingest/readers.hpp"
#include "ingest/select_trace.hpp"

namespace gpuplan::ingest {

namespace {

constexpr std::size_t feed_size = 1 << 20;

/// The value of XML attribute `key` among expat's name/value pairs, or nullptr.
const char* xml_attribute(const XML_Char** pairs, const char* key) {
  for (; *pairs; pairs += 2)
    if (std::strcmp(pairs[0], key) == 0) return pairs[1];
  return nullptr;
}

/// The XML element each kept attribute must be, as XmlOutputFormatter writes it.
const char* element_for(Attribute attribute) {
  switch (attribute) {
    case Attribute::shard_count: return "int";
    case Attribute::flaky: return "boolean";
    case Attribute::tags:
    case Attribute::target_compatible_with:
    case Attribute::exec_compatible_with:
    case Attribute::args: return "list";
    case Attribute::exec_properties:
    case Attribute::env: return "dict";
    default: return "string";
  }
}

bool is_xml_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

/// <rule-input> or <rule-output>, the elements blank_rule_io turns into spaces.
bool is_rule_io(const char* element) {
  return element[0] == 'r' &&
         (std::strcmp(element, "rule-input") == 0 || std::strcmp(element, "rule-output") == 0);
}

/// The end of an empty element whose name (`length` bytes from `at`, "<" included) ends at
/// `at + length`: just past its "/>", reading its attributes; nullptr if it is not one complete
/// before `end`. With `name`, the value of its `name` attribute goes there (nullptr if that
/// holds an entity, which expat would decode).
const char* empty_element_end(const char* at, std::size_t length, const char* end,
                              std::optional<std::string_view>* name) {
  for (const char* p = at + length; p < end;) {
    if (*p == '/') {
      return p + 1 < end && p[1] == '>' ? p + 2 : nullptr;
    } else if (*p == '=') {
      bool is_name = false;
      if (name) {
        const char* key_end = p;
        while (key_end > at && is_xml_space(key_end[-1])) --key_end;
        is_name =
            key_end - at >= 5 && std::string_view(key_end - 4, 4) == "name" && is_xml_space(key_end[-5]);
      }
      ++p;
      while (p < end && is_xml_space(*p)) ++p;
      if (p == end || (*p != '"' && *p != '\'')) return nullptr;
      const void* close = std::memchr(p + 1, *p, static_cast<std::size_t>(end - p - 1));
      if (!close) return nullptr;
      std::string_view value(p + 1, static_cast<std::size_t>(static_cast<const char*>(close) - p - 1));
      if (is_name) {
        if (value.find('&') != std::string_view::npos) return nullptr;
        *name = value;
      }
      p = static_cast<const char*>(close) + 1;
    } else if (*p == '>' || *p == '<' || *p == '"' || *p == '\'') {
      return nullptr;
    } else {
      ++p;  // a space or a letter of an attribute name
    }
  }
  return nullptr;
}

/// The end of the empty element `<rule-input name="..."/>` (or rule-output) that starts at
/// `at`, just past its "/>"; nullptr if `at` starts no such element complete before `end`.
/// With `name`, as empty_element_end.
const char* rule_io_end(const char* at, const char* end, std::optional<std::string_view>* name) {
  std::string_view rest(at, static_cast<std::size_t>(end - at));
  std::size_t length = rest.starts_with("<rule-input") ? 11 : rest.starts_with("<rule-output") ? 12 : 0;
  if (length == 0 || rest.size() <= length || !is_xml_space(rest[length])) return nullptr;
  return empty_element_end(at, length, end, name);
}

/// Whether the scan of blank_rule_io is inside a <rule> after the tag that starts at `at`, given
/// whether it was before: `<rule ...>` enters one (`<rule .../>` does not), `</rule>` leaves it,
/// any other tag changes nothing. A <rule ...> cut off by `end` leaves it outside, to be sure.
bool inside_rule_after(const char* at, const char* end, bool inside) {
  std::string_view rest(at, static_cast<std::size_t>(end - at));
  if (rest.size() > 5 && rest[1] == 'r' && rest.starts_with("<rule") &&
      (is_xml_space(rest[5]) || rest[5] == '>')) {
    const void* close = std::memchr(at + 5, '>', rest.size() - 5);
    return close && static_cast<const char*>(close)[-1] != '/';
  }
  if (rest.size() > 6 && rest[1] == '/' && rest.starts_with("</rule") &&
      (is_xml_space(rest[6]) || rest[6] == '>'))
    return false;
  return inside;
}

/// Whether `data` ends inside a tag that may be a </rule> (one that begins "</", or a lone "<"):
/// the next buffer's scan cannot tell whether it starts inside a rule.
bool ends_in_closing_tag(const char* data, std::size_t size) {
  for (const char* p = data + size; p > data; --p) {
    if (p[-1] == '>') return false;
    if (p[-1] == '<') return p == data + size || *p == '/';
  }
  return false;
}

/// Spaces over `from` to `to`, keeping line breaks so that expat's lines stay true. An element
/// nearly always lies on one line: then it is one memset, where a byte-by-byte loop was most of
/// the reader's own time on a rule-input-heavy query.
void blank(char* from, const char* to) {
  auto size = static_cast<std::size_t>(to - from);
  if (!std::memchr(from, '\n', size)) {
    std::memset(from, ' ', size);
    return;
  }
  for (; from < to; ++from)
    if (*from != '\n') *from = ' ';
}

/// The rule-inputs taken out of the XML before expat saw them, for the GraphSink: each
/// label with the input offset of its element, handed on when expat reaches the end of the rule.
struct PendingInputs {
  std::uint64_t base = 0;                                   ///< input offset of the buffer being blanked
  std::string text;                                         ///< the labels, back to back
  std::vector<std::pair<std::uint64_t, std::size_t>> ends;  ///< element offset, end of its label in text
  std::size_t flushed = 0;
  std::vector<std::string_view> labels;  ///< the rule's labels being handed on, into text
  std::string scratch;                   ///< for undo_latin1_utf8
};

/// The test rules in a buffer that the blanking scans leave whole for expat: those that set
/// exec_properties or whose target_compatible_with holds @platforms//:incompatible, whose
/// rule-inputs and label attributes the reader compares (a select()'s only trace, see
/// XmlReader::note_if_unexplained and note_condition), and one cut off by the buffer's end, which may.
struct KeptRules {
  std::vector<std::pair<std::size_t, std::size_t>> ranges;  ///< [begin, end) in the buffer, in order
  bool carry = false;  ///< the buffer ended inside a kept rule: the next one starts in it
};

/// Where, in one buffer, kept_rule_end looks: the next `"exec_properties"` and the next
/// `//:incompatible"` at or after the scan (`end` when there is none), each found once a buffer and
/// then only when the scan passes it, and the start of the buffer's last `</rule>` (nullptr if
/// none), before which every rule is whole. A buffer with neither costs two memmems, not one a test
/// rule (README "Performance").
struct KeptScan {
  static constexpr std::string_view exec_properties_text = "\"exec_properties\"";
  static constexpr std::string_view incompatible_text = "//:incompatible\"";
  const char* end;
  const char* exec_properties;
  const char* incompatible;
  const char* last_close = nullptr;
  KeptScan(const char* data, const char* end)
      : end(end),
        exec_properties(find(data, exec_properties_text)),
        incompatible(find(data, incompatible_text)) {
    for (const char* p = end; p > data;) {
      const void* lt = memrchr(data, '<', static_cast<std::size_t>(p - data));
      if (!lt) break;
      p = static_cast<const char*>(lt);
      if (end - p >= 7 && std::memcmp(p, "</rule>", 7) == 0) {
        last_close = p;
        break;
      }
    }
  }
  const char* find(const char* from, std::string_view text) const {
    const void* found = memmem(from, static_cast<std::size_t>(end - from), text.data(), text.size());
    return found ? static_cast<const char*>(found) : end;
  }
  /// The first of the two at or after `from`.
  const char* next_mark(const char* from) {
    if (exec_properties < from) exec_properties = find(from, exec_properties_text);
    if (incompatible < from) incompatible = find(from, incompatible_text);
    return std::min(exec_properties, incompatible);
  }
};

/// The value of the attribute that `key` (" class=", "name=") begins in the text of a tag,
/// without its quotes; empty when the tag has no such attribute.
std::optional<std::string_view> quoted_value(std::string_view tag, std::string_view key) {
  auto at = tag.find(key);
  if (at == std::string_view::npos || at + key.size() + 1 > tag.size()) return std::nullopt;
  std::string_view value = tag.substr(at + key.size() + 1);
  return value.substr(0, value.find(tag[at + key.size()]));
}

/// At a `<rule ...>` tag starting at `at`: the end of the rule (just past its "</rule>", or `end`
/// when the buffer cuts it off) if it is a test rule whose text names exec_properties or
/// @platforms//:incompatible, or that is cut off; nullptr for any other rule, whose rule-inputs
/// and labels are blanked as before.
const char* kept_rule_end(const char* at, KeptScan& scan) {
  const char* end = scan.end;
  std::string_view rest(at, static_cast<std::size_t>(end - at));
  auto tag_end = rest.find('>');
  if (tag_end == std::string_view::npos) return end;
  std::string_view tag = rest.substr(0, tag_end);
  auto rule_class = quoted_value(tag, " class=");
  if (!rule_class || !Collector::keeps(*rule_class)) return nullptr;
  if (!scan.last_close || at > scan.last_close) return end;  // its </rule> is in a later buffer
  const char* from = at + tag_end;
  const char* mark = scan.next_mark(from);
  if (mark == end) return nullptr;
  // The mark in this rule: no </rule> before it (memmem, not string_view::find, which stops at
  // every '<').
  if (memmem(from, static_cast<std::size_t>(mark - from), "</rule>", 7)) return nullptr;
  const void* close = memmem(mark, static_cast<std::size_t>(end - mark), "</rule>", 7);
  return close ? static_cast<const char*>(close) + 7 : end;
}

/// Turns every complete <rule-input .../> and <rule-output .../> element inside a <rule> in
/// `data` into spaces (keeping line breaks, so positions stay true). They are most of Bazel's
/// XML, gpuplan ignores them, and expat skips spaces three times faster than it parses tags.
/// `in_rule`: whether `data` starts inside a <rule>; where the scan is unsure, it leaves the
/// element for expat, which refuses one outside a rule at its position. With `pending`, each
/// rule-input's name is kept there first (one with an entity, or empty, is left for expat,
/// which reads or refuses it). In well-formed XML a '<' outside comments and CDATA (which
/// Bazel never writes) always begins a tag, so nothing else is touched. Returns whether it
/// blanked anything. The test rules kept_rule_end keeps are left whole, and noted in `kept`
/// for blank_unused_attributes; `kept.carry` goes from one buffer to the next.
bool blank_rule_io(char* data, std::size_t size, bool in_rule, KeptRules& kept,
                   PendingInputs* pending = nullptr) {
  char* end = data + size;
  bool blanked = false;
  char* p = data;
  kept.ranges.clear();
  KeptScan scan(data, end);
  if (kept.carry) {  // the rest of a kept rule that the last buffer cut off
    auto close = std::string_view(data, size).find("</rule>");
    std::size_t rule_end = close == std::string_view::npos ? size : close + 7;
    kept.ranges.emplace_back(0, rule_end);
    kept.carry = close == std::string_view::npos;
    if (kept.carry) return false;
    p = data + rule_end;
    in_rule = false;
  }
  for (; (p = static_cast<char*>(std::memchr(p, '<', static_cast<std::size_t>(end - p))));) {
    std::optional<std::string_view> name;
    const char* element_end = in_rule ? rule_io_end(p, end, pending ? &name : nullptr) : nullptr;
    if (!element_end) {
      if (!in_rule && (p + 1 == end || p[1] == 'r')) {  // a <rule tag, maybe cut off
        std::string_view rest(p, static_cast<std::size_t>(end - p));
        bool rule_tag = rest.size() > 5
                            ? rest.starts_with("<rule") && (is_xml_space(rest[5]) || rest[5] == '>')
                            : std::string_view("<rule").starts_with(rest);
        if (const char* rule_end = rule_tag ? kept_rule_end(p, scan) : nullptr) {
          kept.ranges.emplace_back(static_cast<std::size_t>(p - data),
                                   static_cast<std::size_t>(rule_end - data));
          if (rule_end == end) {
            kept.carry = true;
            break;
          }
          p = const_cast<char*>(rule_end);
          continue;
        }
      }
      in_rule = inside_rule_after(p, end, in_rule);
      ++p;
      continue;
    }
    if (pending && p[6] == 'i') {  // <rule-input
      if (!name || name->empty()) {
        p = const_cast<char*>(element_end);
        continue;
      }
      pending->text.append(undo_latin1_utf8(*name, pending->scratch));
      pending->ends.emplace_back(pending->base + static_cast<std::uint64_t>(p - data), pending->text.size());
    }
    blank(p, element_end);
    p = const_cast<char*>(element_end);
    blanked = true;
  }
  return blanked;
}

/// The end (just past "/>") of an empty attribute element of a rule that gpuplan never reads,
/// starting at `at`: `<string name="N" .../>`, `<int ...>`, `<boolean ...>`, `<label ...>`,
/// `<output ...>`, `<tristate ...>` whose name is no kept attribute (attribute_named), and a
/// nameless `<label value="..."/>`, an item of a label list other than the two kept ones
/// (`in_kept_list`: inside target_compatible_with or exec_compatible_with; nameless strings may
/// be tags or exec_properties, and stay). nullptr for anything else, including an element this
/// cannot read whole before `end`.
const char* unused_attribute_end(const char* at, const char* end, bool in_kept_list) {
  static constexpr std::string_view kinds[] = {"<string",  "<label",  "<int",
                                               "<boolean", "<output", "<tristate"};
  std::string_view rest(at, static_cast<std::size_t>(end - at));
  std::size_t length = 0;
  for (auto kind : kinds)
    if (rest.starts_with(kind)) length = kind.size();
  if (length == 0 || rest.size() <= length || !is_xml_space(rest[length])) return nullptr;
  std::optional<std::string_view> name;
  const char* element_end = empty_element_end(at, length, end, &name);
  if (!element_end) return nullptr;
  bool unused = name ? attribute_named(*name) == Attribute::none : length == 6 && !in_kept_list;  // "<label"
  return unused ? element_end : nullptr;
}

/// At a `<list` tag: whether it is target_compatible_with or exec_compatible_with, whose
/// `<label>` items are kept. True where the scan cannot tell (the tag cut off, an entity).
bool list_of_kept_labels(const char* at, const char* end) {
  std::string_view rest(at, static_cast<std::size_t>(end - at));
  auto close = rest.find('>');
  if (close == std::string_view::npos) return true;
  std::string_view tag = rest.substr(0, close);
  auto value = quoted_value(tag, "name=");
  if (!value) return false;
  if (value->find('&') != std::string_view::npos) return true;
  auto attribute = attribute_named(*value);
  return attribute == Attribute::target_compatible_with || attribute == Attribute::exec_compatible_with;
}

/// Turns the attribute elements of rules that gpuplan never reads (unused_attribute_end) into
/// spaces, keeping line breaks, as blank_rule_io does for rule inputs: in a query with few rule
/// inputs they are most of what expat would tokenize. Only elements inside a rule have these
/// names, and what is blanked would be ignored, so the targets read are the same. Returns
/// whether it blanked anything. `in_kept_list` carries, from one buffer to the next, whether the
/// scan is inside a list whose labels are kept. The rules in `kept` are left whole.
bool blank_unused_attributes(char* data, std::size_t size, bool& in_kept_list, const KeptRules& kept) {
  char* end = data + size;
  bool blanked = false;
  auto next_kept = kept.ranges.begin();
  for (char* p = data; (p = static_cast<char*>(std::memchr(p, '<', static_cast<std::size_t>(end - p))));) {
    if (next_kept != kept.ranges.end() && static_cast<std::size_t>(p - data) >= next_kept->first) {
      p = data + next_kept->second;  // a kept rule: its labels stay for the reader
      ++next_kept;
      in_kept_list = false;
      continue;
    }
    std::string_view rest(p, static_cast<std::size_t>(end - p));
    if (rest.starts_with("<list") && (rest.size() == 5 || rest[5] == '>' || is_xml_space(rest[5])))
      in_kept_list = list_of_kept_labels(p, end);
    else if (rest.starts_with("</list"))
      in_kept_list = false;
    const char* element_end = unused_attribute_end(p, end, in_kept_list);
    if (!element_end) {
      ++p;
      continue;
    }
    blank(p, element_end);
    p = const_cast<char*>(element_end);
    blanked = true;
  }
  // A buffer that ends in the first letters of a tag ("<", "<l", "<lis") may have cut a <list
  // tag whose rest starts the next one, where no '<' shows it: keep that list's labels.
  std::string_view data_view(data, size);
  if (auto last = data_view.rfind('<'); last != std::string_view::npos && size - last < 5 &&
                                        std::string_view("<list").starts_with(data_view.substr(last)))
    in_kept_list = true;
  return blanked;
}

class XmlReader {
 public:
  XmlReader(Source& source, Collector& out) : source_(source), out_(out), parser_(XML_ParserCreate("UTF-8")) {
    XML_SetUserData(parser_, this);
    XML_SetElementHandler(parser_, &XmlReader::on_start, &XmlReader::on_end);
  }
  ~XmlReader() { XML_ParserFree(parser_); }
  XmlReader(const XmlReader&) = delete;
  XmlReader& operator=(const XmlReader&) = delete;

  void read() {
    bool last = false;
    while (!last) {
      void* buffer = XML_GetBuffer(parser_, feed_size);
      if (!buffer) throw std::bad_alloc();
      std::size_t count = source_.read(static_cast<char*>(buffer), feed_size);
      pending_.base = fed_;
      // Where expat stopped (in a rule or not) is where this buffer starts, unless a tag that
      // may be </rule> was cut off there, which expat has yet to read.
      bool in_rule = in_rule_ && !cut_closing_tag_;
      cut_closing_tag_ = ends_in_closing_tag(static_cast<char*>(buffer), count);
      if (blank_rule_io(static_cast<char*>(buffer), count, in_rule, kept_, out_.graph ? &pending_ : nullptr))
        unread_ = 0;  // whole elements went by
      if (blank_unused_attributes(static_cast<char*>(buffer), count, in_kept_list_, kept_)) unread_ = 0;
      fed_ += count;
      last = count == 0;
      if (XML_ParseBuffer(parser_, static_cast<int>(count), last) != XML_STATUS_OK) fail();
      unread_ += count;
      if (unread_ > max_target_bytes)
        throw InputError(here(), fmt::format("an XML element longer than {} MiB", max_target_bytes >> 20));
    }
  }

 private:
  static void on_start(void* self, const XML_Char* element, const XML_Char** pairs) {
    static_cast<XmlReader*>(self)->start(element, pairs);
  }
  static void on_end(void* self, const XML_Char* /*element*/) { static_cast<XmlReader*>(self)->end(); }

  Position here() const {
    return Position{source_.name(), static_cast<long>(XML_GetCurrentLineNumber(parser_)),
                    static_cast<long>(XML_GetCurrentColumnNumber(parser_)) + 1};
  }

  /// Stops expat with an error; read() throws it once expat has returned (exceptions
  /// must not unwind through expat's C frames).
  void stop(const std::string& message) {
    if (!error_) error_.emplace(here(), message);
    XML_StopParser(parser_, XML_FALSE);
  }

  [[noreturn]] void fail() {
    if (error_) throw *error_;
    throw InputError(here(), fmt::format("malformed XML: {}", XML_ErrorString(XML_GetErrorCode(parser_))));
  }

  void start(const char* element, const XML_Char** pairs) {
    unread_ = 0;
    ++depth_;
    if (depth_ == 1) {
      if (std::strcmp(element, "query") != 0)
        stop(fmt::format("<{}> is not the root of Bazel's query XML (<query version=\"2\">)", element));
    } else if (is_rule_io(element)) {
      start_rule_io(element, pairs);
    } else if (depth_ == 2) {
      start_target(element, pairs);
    } else {
      if (links_ && out_.graph) read_linkopts(element, pairs);
      if (in_test_) start_inside_test(element, pairs);
    }
  }

  /// A rule's `<list name="linkopts">` and its `<string value=...>` items, for the GraphSink.
  void read_linkopts(const char* element, const XML_Char** pairs) {
    if (depth_ == 3) {
      const char* name = xml_attribute(pairs, "name");
      in_linkopts_ = std::strcmp(element, "list") == 0 && name && std::strcmp(name, "linkopts") == 0;
    } else if (depth_ == 4 && in_linkopts_) {
      if (const char* value = xml_attribute(pairs, "value")) out_.graph->linkopt(value);
    }
  }

  /// A <rule-input> or <rule-output> that blank_rule_io left (at a buffer's start, with an
  /// entity or an empty name, or outside a rule).
  void start_rule_io(const char* element, const XML_Char** pairs) {
    bool input = element[5] == 'i';  // rule-input
    if (!in_rule_)
      return stop(fmt::format("a <{}> outside any <rule>: Bazel writes a rule's inputs and outputs inside it",
                              element));
    const char* name = xml_attribute(pairs, "name");
    if (input && in_test_ && name) {
      note_if_unexplained(name);
      note_condition(name);
    }
    if (!input || !out_.graph) return;  // at any depth in the rule, as blank_rule_io reads it
    if (!name || !*name)
      return stop(fmt::format("a <rule-input> with {} name: Bazel names every input of a rule (//pkg:name)",
                              name ? "an empty" : "no"));
    flush_inputs();  // the rule's inputs blanked before this one go first: the graph keeps their order
    out_.graph->input(undo_latin1_utf8(name, label_));
  }

  void start_target(const char* element, const XML_Char** pairs) {
    if (out_.graph && std::strcmp(element, "generated-file") == 0) {
      const char* name = xml_attribute(pairs, "name");
      const char* generating_rule = xml_attribute(pairs, "generating-rule");
      if (name && generating_rule)
        out_.graph->generated_file(undo_latin1_utf8(name, label_),
                                   undo_latin1_utf8(generating_rule, other_label_));
    } else if (out_.graph && std::strcmp(element, "rule") != 0) {
      if (const char* name = xml_attribute(pairs, "name")) out_.graph->leaf(undo_latin1_utf8(name, label_));
    }
    if (std::strcmp(element, "rule") != 0) {
      out_.drop(std::strcmp(element, "source-file") == 0      ? TargetKind::source_file
                : std::strcmp(element, "generated-file") == 0 ? TargetKind::generated_file
                                                              : TargetKind::other);
      return;
    }
    const char* rule_class = xml_attribute(pairs, "class");
    const char* raw_name = xml_attribute(pairs, "name");
    if (!rule_class || !raw_name) return stop("a <rule> without a class or name");
    std::string_view name = undo_latin1_utf8(raw_name, label_);
    in_rule_ = true;
    links_ = may_have_linkopts(rule_class);
    if (out_.graph) out_.graph->rule(name, rule_class);
    if (!Collector::keeps(rule_class)) return out_.drop(TargetKind::rule, rule_class);
    if (!starts_like_label(name)) return stop(not_a_label(name));
    in_test_ = true;
    test_ = Target{};
    test_.label = name;
    test_.rule_class = rule_class;
    if (const char* location = xml_attribute(pairs, "location"))
      test_.location = undo_latin1_utf8(location, other_label_);
    test_.has_attributes = true;
    trace_.clear();
  }

  void start_inside_test(const char* element, const XML_Char** pairs) {
    if (std::strncmp(element, "rule-", 5) == 0) return;  // rule-default-setting
    const char* value = xml_attribute(pairs, "value");
    if (value && element[0] == 'l' && std::strcmp(element, "label") == 0) trace_.add_label(value);
    if (depth_ == 4) pair_key_.reset();  // a <pair> starts: no key of another pair carries over
    if (depth_ == 3) {
      const char* name = xml_attribute(pairs, "name");
      attribute_ = name ? attribute_named(name) : Attribute::none;
      // An env set by select() is every branch's entries merged (a CPU config's
      // CUDA_VISIBLE_DEVICES="" beside a CUDA one's nothing): not what any one build runs with.
      const char* configurable = xml_attribute(pairs, "configurable");
      // So are select()ed args: every branch's flags, of which the last would seem to win.
      if ((attribute_ == Attribute::env || attribute_ == Attribute::args) && configurable &&
          std::strcmp(configurable, "yes") == 0)
        attribute_ = Attribute::none;
      if (attribute_ == Attribute::none) return;
      if (std::strcmp(element, element_for(attribute_)) != 0)
        return stop(fmt::format("attribute {} of {} is a <{}>; Bazel writes it as <{}>", name, test_.label,
                                element, element_for(attribute_)));
      if (is_list(attribute_) || attribute_ == Attribute::exec_properties || attribute_ == Attribute::env)
        return;
      if (!value) {
        // `shard_count = select(...)`: query prints <int configurable="yes" name="shard_count"/>,
        // no value (the only attribute read here that Bazel lets a select() set).
        const char* configurable = xml_attribute(pairs, "configurable");
        if (attribute_ == Attribute::shard_count && configurable && std::strcmp(configurable, "yes") == 0) {
          test_.shard_count_unresolved = true;
          return;
        }
        return stop(fmt::format("attribute {} of {} has no value", name, test_.label));
      }
      set_scalar(name, value);
    } else if (is_list(attribute_) && depth_ == 4 && value) {
      add_item(attribute_, test_, value);  // <string value=...> of tags, <label value=...> of the constraints
    } else if ((attribute_ == Attribute::exec_properties || attribute_ == Attribute::env) && depth_ == 5 &&
               value) {
      if (pair_key_) {
        add_entry(attribute_, test_, *pair_key_, value);
        pair_key_.reset();
      } else {
        pair_key_ = value;
      }
    }
  }

  void set_scalar(const char* name, const char* value) {
    std::string error;
    switch (attribute_) {
      case Attribute::size:
      case Attribute::timeout:
        error = bad_size_or_timeout(attribute_, value);
        (attribute_ == Attribute::size ? test_.size : test_.timeout) = value;
        break;
      case Attribute::generator_function: test_.generator_function = value; break;
      case Attribute::flaky:
        if (std::strcmp(value, "true") != 0 && std::strcmp(value, "false") != 0)
          error = fmt::format("\"{}\" is not a boolean", value);
        test_.flaky = std::strcmp(value, "true") == 0;
        break;
      case Attribute::shard_count:
        if (auto count = parse_shard_count(value))
          test_.shard_count = *count;
        else
          error = count.problem();
        break;
      default: break;
    }
    if (!error.empty()) stop(fmt::format("attribute {} of {}: {}", name, test_.label, error));
  }

  /// Query prints a select()ed exec_properties as its branches merged, each key with the first
  /// branch's value, and with no configurable mark; the only trace is the config_setting among
  /// the test's rule-inputs, which SelectTrace judges against its printed <label>s (classify
  /// warns when the exec_properties ask for GPUs). A select() on another attribute (deps) leaves
  /// the same trace; query cannot tell which attribute it was on.
  void note_if_unexplained(const char* input) {
    trace_.judge_input(input, test_, SelectedExecProperties::Trace::xml_input);
  }

  /// rules_cuda's requires_cuda_enabled() on target_compatible_with, which query prints as
  /// @platforms//:incompatible alone: its config_setting is only a rule-input. A rule-input that
  /// no printed label names is kept as such a select()'s condition (note_compatibility_condition),
  /// in bounded memory as note_if_unexplained is.
  void note_condition(const char* input) {
    if (has_incompatible_marker(test_) && !trace_.names(input)) note_compatibility_condition(test_, input);
  }

  /// Hands the graph the blanked rule-inputs that came before where expat is now.
  void flush_inputs() {
    auto here = static_cast<std::uint64_t>(XML_GetCurrentByteIndex(parser_));
    std::size_t begin = pending_.flushed == 0 ? 0 : pending_.ends[pending_.flushed - 1].second;
    pending_.labels.clear();
    for (; pending_.flushed < pending_.ends.size() && pending_.ends[pending_.flushed].first < here;
         ++pending_.flushed) {
      std::size_t end = pending_.ends[pending_.flushed].second;
      pending_.labels.push_back(std::string_view(pending_.text).substr(begin, end - begin));
      begin = end;
    }
    out_.graph->inputs(pending_.labels);
    if (pending_.flushed == pending_.ends.size()) {
      pending_.text.clear();
      pending_.ends.clear();
      pending_.flushed = 0;
    }
  }

  void end() {
    if (depth_ == 2 && out_.graph) flush_inputs();
    if (depth_ == 2 && in_test_) {
      out_.add(TargetKind::rule, std::move(test_));
      in_test_ = false;
    }
    if (depth_ == 2) in_rule_ = links_ = false;
    if (depth_ == 3) {
      attribute_ = Attribute::none;
      in_linkopts_ = false;
      pair_key_.reset();
    }
    --depth_;
  }

  Source& source_;
  Collector& out_;
  XML_Parser parser_;
  std::optional<InputError> error_;
  int depth_ = 0;
  std::size_t unread_ = 0;  ///< bytes fed since an element last began: bounds expat's buffer
  std::uint64_t fed_ = 0;   ///< bytes given to expat before the current buffer
  PendingInputs pending_;
  bool in_rule_ = false;          ///< inside a <rule>, a test or not
  bool cut_closing_tag_ = false;  ///< the last buffer ended inside a tag that may be </rule>
  bool in_test_ = false;
  bool links_ = false;         ///< inside a rule that may_have_linkopts()
  bool in_linkopts_ = false;   ///< inside its <list name="linkopts">
  bool in_kept_list_ = false;  ///< blank_unused_attributes: inside target/exec_compatible_with
  KeptRules kept_;             ///< the test rules the blanking leaves whole, in this buffer
  /// Of the test being read, as expat sees them (only a kept rule shows them): the values of its
  /// <label> elements, for note_if_unexplained.
  SelectTrace trace_;
  Target test_;
  Attribute attribute_ = Attribute::none;
  std::optional<std::string> pair_key_;
  /// Labels with Bazel's double encoding undone (undo_latin1_utf8), while they are handed on.
  std::string label_;
  std::string other_label_;
};

}  // namespace

void read_xml(Source& source, Collector& out) { XmlReader(source, out).read(); }

}  // namespace gpuplan::ingest
