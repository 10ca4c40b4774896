#include "ingest/json.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/utf8.hpp"
#include "ingest/attributes.hpp"

namespace gpuplan::ingest {

namespace ondemand = simdjson::ondemand;

namespace {

/// Where simdjson's first pass would stop: the first control character inside a string
/// or the first byte that is not UTF-8. Null when the text holds neither.
const char* first_bad_byte(std::string_view json) {
  if (std::size_t at = invalid_utf8_at(json); at != std::string_view::npos) return json.data() + at;
  bool in_string = false;
  bool escaped = false;
  for (const char& byte : json) {
    auto c = static_cast<unsigned char>(byte);
    if (!in_string) {
      in_string = c == '"';
    } else if (escaped) {
      escaped = false;
    } else if (c == '\\') {
      escaped = true;
    } else if (c == '"') {
      in_string = false;
    } else if (c < 0x20) {
      return &byte;
    }
  }
  return nullptr;
}

constexpr std::string_view after_object = "text after the end of the JSON object";

bool is_json_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

/// What is wrong with JSON that simdjson refused, when it is one of the two mistakes its own
/// message misnames: text after a complete object (simdjson says the document "ended early")
/// or an object that is cut off. Where it is (the text after the object, or the start of the
/// object cut off), and what to say; nothing for any other mistake.
std::optional<std::pair<const char*, std::string>> misshapen(std::string_view json) {
  std::vector<char> open;
  bool in_string = false;
  bool escaped = false;
  for (const char& byte : json) {
    char c = byte;
    if (in_string) {
      if (escaped)
        escaped = false;
      else if (c == '\\')
        escaped = true;
      else if (c == '"')
        in_string = false;
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      open.push_back(c);
    } else if (c == '}' || c == ']') {
      if (open.empty() || open.back() != (c == '}' ? '{' : '[')) return std::nullopt;  // not a shape mistake
      open.pop_back();
      if (open.empty()) {
        std::size_t rest = static_cast<std::size_t>(&byte - json.data()) + 1;
        while (rest < json.size() && is_json_space(json[rest])) ++rest;
        if (rest == json.size()) return std::nullopt;  // the object is whole: the mistake is inside it
        return std::pair{json.data() + rest, std::string(after_object)};
      }
    }
  }
  if (open.empty() && !in_string) return std::nullopt;
  return std::pair{json.data(),
                   std::string(in_string ? "not valid JSON: the object ends early, inside a string: "
                                           "is it cut off?"
                                         : "not valid JSON: the object ends early, before its "
                                           "closing '}': is it cut off?")};
}

/// One more select() concatenated (`select() + select()`, `|` for dicts): each configuration so
/// far combined with each of its branches (`merge` adds the branch's value), their conditions
/// joined with " + ". Past 64 configurations (hundreds of branches, or several select()s) the rest
/// are not kept, and `more` says so, for classify's warning.
template <typename Configuration, typename Merge>
void add_select(std::vector<Configuration>& combinations, const std::vector<Configuration>& branches,
                bool& more, Merge merge) {
  constexpr std::size_t max_combinations = 64;
  std::vector<Configuration> next;
  for (const auto& so_far : combinations)
    for (const auto& branch : branches) {
      if (next.size() == max_combinations) {
        more = true;
        break;
      }
      Configuration& combined = next.emplace_back(so_far);
      if (branches.size() > 1) {  // a plain value's //conditions:default chooses nothing
        if (!combined.conditions.empty()) combined.conditions += " + ";
        combined.conditions += branch.conditions;
      }
      merge(combined, branch);
    }
  combinations = std::move(next);
}

/// The select()s of an attribute query left unflattened (--noproto:flatten_selects, type
/// SELECTOR_LIST), each as its branches in order. build.proto: Attribute.selector_list is a
/// SelectorList {type, elements: [Selector]}, a Selector {entries: [SelectorEntry],
/// has_default_value, no_match_error}, a SelectorEntry {label, <type>_value, is_default_value};
/// `{...} | select(...)` is two Selectors, the plain one with the single entry
/// //conditions:default. Each branch gets its entry's label as `conditions`, and `read(branch,
/// value)` the entry's `value_key` to read as it likes; an entry without one ([], {} or None) is
/// left empty. `wrong(what)` fails on a selectorList not so shaped.
template <typename Branch, typename Wrong, typename Read>
std::vector<std::vector<Branch>> read_selector_list(ondemand::object attribute, const char* value_key,
                                                    Wrong wrong, Read read) {
  ondemand::object list;
  ondemand::array elements;
  if (attribute.find_field_unordered("selectorList").get_object().get(list) != simdjson::SUCCESS)
    wrong("is missing");
  if (list.find_field_unordered("elements").get_array().get(elements) != simdjson::SUCCESS)
    wrong("has no \"elements\" list");
  std::vector<std::vector<Branch>> selectors;
  for (auto element : elements) {
    ondemand::object selector;
    ondemand::array entries;
    if (element.get_object().get(selector) != simdjson::SUCCESS ||
        selector.find_field_unordered("entries").get_array().get(entries) != simdjson::SUCCESS)
      wrong("has an element without \"entries\"");
    auto& branches = selectors.emplace_back();
    for (auto entry : entries) {
      ondemand::object object;
      std::string_view condition;
      if (entry.get_object().get(object) != simdjson::SUCCESS ||
          object.find_field_unordered("label").get_string().get(condition) != simdjson::SUCCESS)
        wrong("has an entry without a \"label\"");
      Branch& branch = branches.emplace_back();
      branch.conditions = condition;
      auto found = object.find_field_unordered(value_key);
      if (found.error() != simdjson::NO_SUCH_FIELD) read(branch, found);
    }
    if (branches.empty()) wrong("has a select() without branches");
  }
  return selectors;
}

}  // namespace

std::string short_configuration(std::string_view checksum) { return std::string(checksum.substr(0, 7)); }

void JsonTargets::parse_object(std::string_view json, std::size_t readable, const Position& start,
                               const std::function<void(ondemand::object)>& use) {
  text_ = json;
  readable_ = readable;
  start_ = start;
  have_document_ = false;  // the last object's document points into text that is gone
  try {
    auto parsed = parser_.iterate(simdjson::padded_string_view(json.data(), json.size(), readable));
    if (parsed.error() != simdjson::SUCCESS) fail_invalid(parsed.error(), first_bad_byte(json));
    document_ = std::move(parsed.value_unsafe());
    have_document_ = true;
    use(document_.get_object());
    const char* rest =
        nullptr;  // simdjson 3.0 has no document::at_end(): a location past the object means more text
    if (document_.current_location().get(rest) == simdjson::SUCCESS) fail(std::string(after_object), rest);
  } catch (const simdjson::simdjson_error& error) {
    fail_invalid(error.error());
  }
}

void JsonTargets::fail_invalid(simdjson::error_code error, const char* bad_byte) {
  // simdjson calls text after a whole object an object that "ended early", and a cut-off one
  // anything from that to "improper structure": those two are told apart here, on the error path.
  if (auto shape = bad_byte ? std::nullopt : misshapen(text_)) fail(shape->second, shape->first);
  fail(fmt::format("not valid JSON: {}", simdjson::error_message(error)), bad_byte);
}

void JsonTargets::finish() {
  if (out_.graph && cquery_ && saw_non_test_rule_) out_.graph->configured_closure(saw_configured_inputs_);
}

void JsonTargets::add(std::string_view json, std::size_t readable, const Position& start) {
  parse_object(json, readable, start, [this](ondemand::object target) { read_target(target); });
}

std::uint64_t JsonTargets::add_configured(std::string_view json, std::size_t readable,
                                          const Position& start) {
  std::uint64_t id = 0;
  cquery_ = true;
  parse_object(json, readable, start, [&](ondemand::object result) {
    std::size_t before = out_.size();
    // Bazel writes "target" first; a tool that sorts keys (jq -S) puts "configuration" before it.
    std::string configuration = "null";
    for (auto field : result) {
      std::string_view key = field.unescaped_key();
      if (key == "target") {
        read_target(field.value().get_object());
      } else if (key == "configuration") {
        configuration = short_configuration(field.value().find_field_unordered("checksum").get_string());
      } else if (key == "configurationId") {
        id = field.value().get_uint64();
      }
    }
    if (out_.size() > before) out_.at(before).configuration = configuration;
  });
  return id;
}

void JsonTargets::read_target(ondemand::object target) {
  std::string_view type;
  bool read = false, listing = false;
  for (auto field : target) {
    std::string_view key = field.unescaped_key();
    if (key == "target") listing = true;
    if (key == "type") {
      type = field.value().get_string();
    } else if (key == "rule") {
      read_rule(field.value().get_object());
      read = true;
    } else if (key == "generatedFile" && out_.graph) {
      read_generated_file(field.value().get_object());
    } else if (out_.graph && (key == "sourceFile" || key == "packageGroup" || key == "environmentGroup")) {
      std::string_view name;
      if (field.value().find_field_unordered("name").get_string().get(name) == simdjson::SUCCESS)
        out_.graph->leaf(name);
    }
  }
  if (type.empty() && listing)
    fail(
        "a list of targets without their configurations, as cquery --output=jsonproto "
        "--noproto:include_configurations writes it: query again without that flag");
  if (type.empty()) fail("not a Bazel Target: no \"type\" (RULE, SOURCE_FILE, ...)");
  if (type == "RULE" && !read) fail("a target of type RULE without its \"rule\"");
  if (type != "RULE") {
    out_.drop(type == "SOURCE_FILE"      ? TargetKind::source_file
              : type == "GENERATED_FILE" ? TargetKind::generated_file
                                         : TargetKind::other);
  }
}

void JsonTargets::read_rule(ondemand::object rule) {
  Target target;
  target.has_attributes = true;
  config_dependencies_ = ConfigDependencies::unknown;
  bool test = true;
  for (auto field : rule) {
    std::string_view key = field.unescaped_key();
    if (key == "name") {
      target.label = std::string_view(field.value().get_string());
      if (out_.graph) out_.graph->coming(target.label);
    } else if (key == "ruleClass") {
      target.rule_class = std::string_view(field.value().get_string());
      test = Collector::keeps(target.rule_class);
      saw_non_test_rule_ = saw_non_test_rule_ || (!test && target.rule_class.str() != "test_suite");
    } else if (key == "location") {
      target.location = std::string_view(field.value().get_string());
    } else if (key == "attribute" && test) {
      for (auto attribute : field.value().get_array()) read_attribute(attribute.get_object(), target);
    } else if (key == "attribute" && out_.graph && may_have_linkopts(target.rule_class.str())) {
      read_linkopts(field.value().get_array(), target.label);
    } else if (out_.graph && (key == "ruleInput" || key == "configuredRuleInput")) {
      read_rule_inputs(field.value().get_array(), key == "configuredRuleInput", target.label);
    }
  }
  if (target.label.empty() || target.rule_class.empty()) fail("a rule without its \"name\" or \"ruleClass\"");
  if (Collector::keeps(target.rule_class.str()) && !starts_like_label(target.label))
    fail(not_a_label(target.label));
  if (out_.graph) {
    out_.graph->rule(target.label, target.rule_class.str());
    const auto& inputs = configured_inputs_.empty() ? inputs_ : configured_inputs_;
    out_.graph->inputs(inputs);
    for (const auto& flag : linkopts_) out_.graph->linkopt(flag);
    inputs_.clear();
    configured_inputs_.clear();
    linkopts_.clear();
  }
  if (!cquery_ && config_dependencies_ != ConfigDependencies::none &&
      Collector::keeps(target.rule_class.str()) && !target.selected_exec_properties &&
      (!target.exec_properties.empty() || has_incompatible_marker(target)))
    find_select_trace(target);
  out_.add(TargetKind::rule, std::move(target));
}

void JsonTargets::find_select_trace(Target& target) {
  // Bazel's JSON prints every attribute, its implicit ones ("$launcher") too, unless
  // --noproto:default_values; among them "$config_dependencies", a LABEL_LIST of the conditions
  // of every select() of the rule, the surest trace (seen with Bazel 4's --output=proto, the same
  // message). Without it, a rule-input none of the printed labels names, as in XML. Labels are in
  // the string values of the label types (AttributeFormatter.writeAttributeValueToBuilder).
  // Unflattened output (a SELECTOR_LIST anywhere in the rule) printed a select()ed
  // exec_properties as one: this one is plain; and a select()ed target_compatible_with too,
  // whose conditions read_selected_attribute kept.
  ondemand::document document;
  ondemand::object rule;
  if (again_parser_.iterate(simdjson::padded_string_view(text_.data(), text_.size(), readable_))
              .get(document) != simdjson::SUCCESS ||
      document.find_field_unordered("rule").get_object().get(rule) != simdjson::SUCCESS)
    return;  // read once already: this cannot fail
  trace_.clear();
  std::vector<std::string_view> config_dependencies;
  std::vector<std::string_view> inputs;
  auto strings = [](ondemand::value value, auto&& each) {
    ondemand::array items;
    if (value.get_array().get(items) != simdjson::SUCCESS) return;
    for (auto item : items) {
      std::string_view text;
      if (item.get_string().get(text) == simdjson::SUCCESS) each(text);
    }
  };
  auto entries = [](ondemand::value value, std::string_view key, auto&& each) {
    ondemand::array items;
    if (value.get_array().get(items) != simdjson::SUCCESS) return;
    for (auto item : items) {
      ondemand::value field;
      if (item.find_field_unordered(key).get(field) == simdjson::SUCCESS) each(field);
    }
  };
  auto add = [&](std::string_view label) { trace_.add_label(label); };
  for (auto field : rule) {
    std::string_view key;
    if (field.unescaped_key().get(key) != simdjson::SUCCESS) return;
    if (key == "ruleInput") strings(field.value(), [&](std::string_view input) { inputs.push_back(input); });
    if (key != "attribute") continue;
    ondemand::array attributes;
    if (field.value().get_array().get(attributes) != simdjson::SUCCESS) return;
    for (auto item : attributes) {
      std::string_view name;
      std::string_view type;
      ondemand::object attribute;
      if (item.get_object().get(attribute) != simdjson::SUCCESS ||
          attribute.find_field_unordered("name").get_string().get(name) != simdjson::SUCCESS ||
          attribute.find_field_unordered("type").get_string().get(type) != simdjson::SUCCESS)
        continue;
      if (type == "SELECTOR_LIST") return;
      ondemand::value value;
      auto found = [&](std::string_view key) {
        return attribute.find_field_unordered(key).get(value) == simdjson::SUCCESS;
      };
      if (type == "LABEL" || type == "NODEP_LABEL" || type == "OUTPUT") {
        std::string_view label;
        if (found("stringValue") && value.get_string().get(label) == simdjson::SUCCESS) add(label);
      } else if (name == "$config_dependencies") {
        if (found("stringListValue"))
          strings(value, [&](std::string_view label) { config_dependencies.push_back(label); });
      } else if (type == "LABEL_LIST" || type == "NODEP_LABEL_LIST" || type == "OUTPUT_LIST") {
        if (found("stringListValue")) strings(value, add);
      } else if (type == "LABEL_DICT_UNARY" || type == "LABEL_KEYED_STRING_DICT") {
        bool keyed = type == "LABEL_KEYED_STRING_DICT";
        if (found(keyed ? "labelKeyedStringDictValue" : "labelDictUnaryValue"))
          entries(value, keyed ? "key" : "value", [&](ondemand::value v) {
            std::string_view label;
            if (v.get_string().get(label) == simdjson::SUCCESS) add(label);
          });
      } else if (type == "LABEL_LIST_DICT") {
        if (found("labelListDictValue")) entries(value, "value", [&](ondemand::value v) { strings(v, add); });
      }
    }
  }
  // A target_compatible_with that holds @platforms//:incompatible keeps the conditions, as the
  // XML reader keeps the rule-inputs nothing explains.
  if (has_incompatible_marker(target)) {
    for (std::string_view label : config_dependencies) note_compatibility_condition(target, label);
    if (config_dependencies.empty())
      for (std::string_view input : inputs)
        if (!trace_.names(input)) note_compatibility_condition(target, input);
  }
  if (!config_dependencies.empty())
    return note_select_trace(target, config_dependencies.front(),
                             SelectedExecProperties::Trace::json_config_dependencies);
  for (std::string_view input : inputs)
    trace_.judge_input(input, target, SelectedExecProperties::Trace::json_input);
}

void JsonTargets::read_rule_inputs(ondemand::array inputs, bool configured, std::string_view rule) {
  for (auto input : inputs) {
    std::string_view label;
    auto error = configured ? input.get_object().find_field_unordered("label").get_string().get(label)
                            : input.get_string().get(label);
    if (error != simdjson::SUCCESS)
      fail(configured ? "a configuredRuleInput without a \"label\"" : "a ruleInput that is not a string");
    if (label.empty()) fail_empty_input(configured, rule);
    (configured ? configured_inputs_ : inputs_).push_back(label);
    saw_configured_inputs_ = saw_configured_inputs_ || configured;
  }
}

void JsonTargets::fail_empty_input(bool configured, std::string_view rule) {
  // The "" just read ends right before the token simdjson is at now: point at it, not past it.
  const char* at = nullptr;
  if (document_.current_location().get(at) == simdjson::SUCCESS) {
    while (at > text_.data() && is_json_space(at[-1])) --at;
    at = at - text_.data() >= 2 ? at - 2 : nullptr;
  }
  fail(fmt::format("an empty label \"\" in the {} of {}: Bazel names every input of a rule (//pkg:name)",
                   configured ? "configuredRuleInput" : "ruleInput", rule.empty() ? "a rule" : rule),
       at);
}

void JsonTargets::read_generated_file(ondemand::object file) {
  std::string_view name;
  std::string_view generating_rule;
  for (auto field : file) {
    std::string_view key = field.unescaped_key();
    if (key == "name") name = field.value().get_string();
    if (key == "generatingRule") generating_rule = field.value().get_string();
  }
  if (!name.empty() && !generating_rule.empty()) out_.graph->generated_file(name, generating_rule);
}

void JsonTargets::read_linkopts(ondemand::array attributes, std::string_view rule) {
  // Most rules have no linkopts, and skipping the array is all the reader does with it; so it
  // is taken as text and parsed again only where it names them.
  std::string_view raw;
  auto bad = [&] { fail(fmt::format("the \"attribute\" of {} is no array of attributes", rule)); };
  if (attributes.raw_json().get(raw) != simdjson::SUCCESS) bad();
  constexpr std::string_view key = "\"linkopts\"";
  if (!memmem(raw.data(), raw.size(), key.data(), key.size())) return;  // glibc's, far faster than find
  simdjson::padded_string copy(raw);
  ondemand::document document;
  ondemand::array again;
  if (again_parser_.iterate(copy).get(document) != simdjson::SUCCESS ||
      document.get_array().get(again) != simdjson::SUCCESS)
    bad();
  for (auto attribute : again) {
    ondemand::object object;
    std::string_view name;
    if (attribute.get_object().get(object) != simdjson::SUCCESS) bad();
    if (object.find_field_unordered("name").get_string().get(name) != simdjson::SUCCESS)
      fail(fmt::format("an attribute of {} without a \"name\"", rule));
    if (name == "linkopts") add_linkopts(object, rule);
  }
}

void JsonTargets::add_linkopts(ondemand::object attribute, std::string_view rule) {
  auto add = [&](ondemand::value list, std::string_view where) {
    ondemand::array items;
    auto wrong = [&] {
      fail(fmt::format("attribute linkopts of {}: {} is not a list of strings", rule, where));
    };
    if (list.get_array().get(items) != simdjson::SUCCESS) wrong();
    for (auto item : items) {
      std::string_view flag;
      if (item.get_string().get(flag) != simdjson::SUCCESS) wrong();
      linkopts_.emplace_back(flag);
    }
  };
  std::string_view type;
  if (attribute.find_field_unordered("type").get_string().get(type) == simdjson::SUCCESS &&
      type == "SELECTOR_LIST") {
    // --noproto:flatten_selects: every branch's flags, as the flattened output lists them (the
    // union of the possible values) and as query's deps follow every branch.
    ondemand::array elements;
    auto wrong = [&](std::string_view what) {
      fail(fmt::format("attribute linkopts of {} is a select() whose \"selectorList\" {}", rule, what));
    };
    if (attribute.find_field_unordered("selectorList")
            .get_object()
            .find_field_unordered("elements")
            .get_array()
            .get(elements) != simdjson::SUCCESS)
      wrong("has no \"elements\" list");
    for (auto element : elements) {
      ondemand::array entries;
      if (element.get_object().find_field_unordered("entries").get_array().get(entries) != simdjson::SUCCESS)
        wrong("has an element without \"entries\"");
      for (auto entry : entries) {
        ondemand::object object;
        ondemand::value list;
        if (entry.get_object().get(object) != simdjson::SUCCESS) wrong("has an entry that is no object");
        if (object.find_field_unordered("stringListValue").get(list) == simdjson::SUCCESS)
          add(list, "a branch's \"stringListValue\"");  // none: the branch is [] or None
      }
    }
    return;
  }
  auto found = attribute.find_field_unordered("stringListValue");
  if (found.error() == simdjson::NO_SUCH_FIELD) return;  // none
  ondemand::value list;
  if (found.get(list) != simdjson::SUCCESS)
    fail(fmt::format("attribute linkopts of {}: \"stringListValue\" is not a list of strings", rule));
  add(list, "\"stringListValue\"");
}

void JsonTargets::read_attribute(ondemand::object attribute, Target& target) {
  std::string_view name;
  if (attribute.find_field_unordered("name").get_string().get(name) != simdjson::SUCCESS)
    fail(fmt::format("an attribute of {} without a \"name\"", target.label));
  if (name == "linkopts" && out_.graph && may_have_linkopts(target.rule_class.str()))
    return add_linkopts(attribute, target.label);
  if (name == "$config_dependencies") {
    // Printed without a "stringListValue" (proto3's JSON leaves an empty list out), the rule has no
    // select(): find_select_trace() need not parse it again.
    bool empty = true;
    ondemand::array list;
    auto found = attribute.find_field_unordered("stringListValue");
    if (found.error() != simdjson::NO_SUCH_FIELD)
      empty = found.get_array().get(list) == simdjson::SUCCESS &&
              list.is_empty().get(empty) == simdjson::SUCCESS && empty;
    config_dependencies_ = empty ? ConfigDependencies::none : ConfigDependencies::some;
    return;
  }
  Attribute which = attribute_named(name);
  if (which == Attribute::none) return;
  std::string_view type;
  if (attribute.find_field_unordered("type").get_string().get(type) != simdjson::SUCCESS)
    fail(fmt::format("attribute {} of {} has no \"type\"", name, target.label));
  if (type == "SELECTOR_LIST" && which == Attribute::shard_count) {
    // A select() that query left unflattened (--noproto:flatten_selects): unresolved, as flattened.
    target.shard_count_unresolved = true;
    return;
  }
  if (type == "SELECTOR_LIST" && which == Attribute::exec_properties)
    return read_selected_exec_properties(attribute, target);
  if (type == "SELECTOR_LIST" && (which == Attribute::env || which == Attribute::target_compatible_with ||
                                  which == Attribute::exec_compatible_with))
    return read_selected_attribute(attribute, which, name, target);
  // A select()ed args (--noproto:flatten_selects): which branch's flags run is the build's; not read.
  if (type == "SELECTOR_LIST" && which == Attribute::args) return;
  if (type == "SELECTOR_LIST")
    fail(fmt::format(
        "attribute {} of {} is a select() that query left unflattened (--noproto:flatten_selects); "
        "query again without that flag: gpuplan reads a select() flattened, every branch merged",
        name, target.label));
  if (type != expected_type(which))
    fail(fmt::format("attribute {} of {} has type {}; Bazel gives {} the type {}", name, target.label, type,
                     name, expected_type(which)));
  const char* value_key = which == Attribute::shard_count                                  ? "intValue"
                          : which == Attribute::flaky                                      ? "booleanValue"
                          : is_list(which)                                                 ? "stringListValue"
                          : which == Attribute::exec_properties || which == Attribute::env ? "stringDictValue"
                                                                                           : "stringValue";
  auto found = attribute.find_field_unordered(value_key);
  if (found.error() == simdjson::NO_SUCH_FIELD) {
    // A select() flattened (query's default --proto:flatten_selects) leaves a scalar without a
    // value; unflattened, it has a "selectorList" instead. Either way query cannot resolve it.
    bool specified = false;
    if (which == Attribute::shard_count &&
        ((attribute.find_field_unordered("explicitlySpecified").get_bool().get(specified) ==
              simdjson::SUCCESS &&
          specified) ||
         attribute.find_field_unordered("selectorList").error() == simdjson::SUCCESS))
      target.shard_count_unresolved = true;
    return;  // else left out as a default value
  }
  ondemand::value value = found.value();
  auto wrong = [&](std::string_view what) {
    fail(fmt::format("attribute {} of {}: \"{}\" is not {}", name, target.label, value_key, what));
  };
  switch (which) {
    case Attribute::shard_count: {
      std::int64_t count = 0;
      if (value.get_int64().get(count) != simdjson::SUCCESS) wrong("an integer");
      auto shards = shard_count(count);
      if (!shards) fail(fmt::format("attribute {} of {}: {}", name, target.label, shards.problem()));
      target.shard_count = *shards;
      break;
    }
    case Attribute::flaky:
      if (value.get_bool().get(target.flaky) != simdjson::SUCCESS) wrong("true or false");
      break;
    case Attribute::tags:
    case Attribute::target_compatible_with:
    case Attribute::exec_compatible_with:
    case Attribute::args: {
      ondemand::array items;
      if (value.get_array().get(items) != simdjson::SUCCESS) wrong("a list of strings");
      for (auto item : items) {
        std::string_view text;
        if (item.get_string().get(text) != simdjson::SUCCESS) wrong("a list of strings");
        add_item(which, target, text);
      }
      break;
    }
    case Attribute::exec_properties:
    case Attribute::env: {
      ondemand::array entries;
      if (value.get_array().get(entries) != simdjson::SUCCESS)
        wrong("a list of {\"key\", \"value\"} entries");
      for (auto entry : entries) {
        std::string_view key;
        std::string_view text;
        ondemand::object pair;
        if (entry.get_object().get(pair) != simdjson::SUCCESS ||
            pair.find_field_unordered("key").get_string().get(key) != simdjson::SUCCESS)
          wrong("a list of {\"key\", \"value\"} entries");
        std::string owned_key(key);
        if (pair.find_field_unordered("value").get_string().get(text) != simdjson::SUCCESS) text = {};
        add_entry(which, target, owned_key, text);
      }
      break;
    }
    default: {
      std::string_view text;
      if (value.get_string().get(text) != simdjson::SUCCESS) wrong("a string");
      // The proto formats print a timeout nobody wrote too: the one the size implies (Bazel's XML
      // leaves it out). Only a written one is the test's own (the plan's is null when from the size).
      bool specified = true;
      if (which == Attribute::timeout &&
          attribute.find_field_unordered("explicitlySpecified").get_bool().get(specified) ==
              simdjson::SUCCESS &&
          !specified)
        return;
      if (which != Attribute::generator_function)
        if (auto problem = bad_size_or_timeout(which, text); !problem.empty())
          fail(fmt::format("attribute {} of {}: {}", name, target.label, problem));
      (which == Attribute::size      ? target.size
       : which == Attribute::timeout ? target.timeout
                                     : target.generator_function) = text;
    }
  }
}

void JsonTargets::read_selected_exec_properties(ondemand::object attribute, Target& target) {
  auto wrong = [&](std::string_view what) {
    fail(fmt::format("attribute exec_properties of {} is a select() whose \"selectorList\" {}", target.label,
                     what));
  };
  auto selectors = read_selector_list<ExecPropertiesBranch>(
      attribute, "stringDictValue", wrong,
      [&](ExecPropertiesBranch& branch, simdjson::simdjson_result<ondemand::value> found) {
        ondemand::array pairs;
        auto not_a_dict = [&] {
          wrong("has an entry whose \"stringDictValue\" is no list of {\"key\", \"value\"}");
        };
        if (found.get_array().get(pairs) != simdjson::SUCCESS) not_a_dict();
        for (auto pair : pairs) {
          ondemand::object fields;
          std::string_view key;
          std::string_view value;
          if (pair.get_object().get(fields) != simdjson::SUCCESS ||
              fields.find_field_unordered("key").get_string().get(key) != simdjson::SUCCESS)
            not_a_dict();
          std::string owned_key(key);
          if (fields.find_field_unordered("value").get_string().get(value) != simdjson::SUCCESS) value = {};
          branch.properties.set(owned_key, value);
        }
      });
  if (selectors.empty()) wrong("has no elements");

  // Every configuration's value: one branch of each select(), a later one's keys winning.
  bool more = false;
  std::vector<ExecPropertiesBranch> combinations{ExecPropertiesBranch{}};
  for (const auto& branches : selectors)
    add_select(combinations, branches, more,
               [](ExecPropertiesBranch& combined, const ExecPropertiesBranch& branch) {
                 for (const auto& [key, value] : branch.properties) combined.properties.set(key, value);
               });
  // What is planned: each key with the first configuration's value that sets it, as --output=xml
  // prints it (it merges every possible value so, first wins).
  ExecProperties planned;
  for (const auto& combination : combinations)
    for (const auto& entry : combination.properties)
      if (std::none_of(planned.begin(), planned.end(), [&](const auto& e) { return e.first == entry.first; }))
        planned.set(entry.first, entry.second);
  for (const auto& [key, value] : planned) add_entry(Attribute::exec_properties, target, key, value);
  if (combinations.size() > 1) {
    SelectedExecProperties& selected = selections(target);
    selected.branches = std::move(combinations);
    selected.more_branches = more;
  }
}

SelectedExecProperties& JsonTargets::selections(Target& target) {
  auto copy = target.selected_exec_properties
                  ? std::make_shared<SelectedExecProperties>(*target.selected_exec_properties)
                  : std::make_shared<SelectedExecProperties>();
  target.selected_exec_properties = copy;
  return *copy;
}

void JsonTargets::read_selected_attribute(ondemand::object attribute, Attribute which, std::string_view name,
                                          Target& target) {
  // As read_selected_exec_properties reads one: every configuration (one branch of each select(),
  // up to 64), each with a list's items, or env's GPU choice (the later select()'s winning).
  const bool env = which == Attribute::env;
  auto wrong = [&](std::string_view what) {
    fail(fmt::format("attribute {} of {} is a select() whose \"selectorList\" {}", name, target.label, what));
  };
  struct Configuration {
    std::string conditions;
    std::vector<std::string> items;  ///< a list's labels; env: its GPU choice, or none
  };
  auto selectors = read_selector_list<Configuration>(
      attribute, env ? "stringDictValue" : "stringListValue", wrong,
      [&](Configuration& branch, simdjson::simdjson_result<ondemand::value> found) {
        ondemand::array values;
        if (found.get_array().get(values) != simdjson::SUCCESS) wrong("has an entry whose value is no list");
        Target scratch;  // env: add_entry keeps the first key that chooses GPUs
        for (auto value : values) {
          std::string_view text;
          if (!env) {
            if (value.get_string().get(text) != simdjson::SUCCESS)
              wrong("has an entry whose value is no list");
            branch.items.emplace_back(text);
            continue;
          }
          std::string_view key;
          ondemand::object pair;
          if (value.get_object().get(pair) != simdjson::SUCCESS ||
              pair.find_field_unordered("key").get_string().get(key) != simdjson::SUCCESS)
            wrong("has an entry whose \"stringDictValue\" is no list of {\"key\", \"value\"}");
          std::string owned_key(key);
          if (pair.find_field_unordered("value").get_string().get(text) != simdjson::SUCCESS) text = {};
          add_entry(Attribute::env, scratch, owned_key, text);
        }
        if (env && !scratch.launch().device_env.empty())
          branch.items.push_back(scratch.launch().device_env.str());
      });
  bool more = false;
  std::vector<Configuration> combinations{Configuration{}};
  for (const auto& branches : selectors)
    add_select(combinations, branches, more, [env](Configuration& combined, const Configuration& branch) {
      if (env && !branch.items.empty()) combined.items = branch.items;
      if (!env) combined.items.insert(combined.items.end(), branch.items.begin(), branch.items.end());
    });
  for (auto& combination : combinations) {
    std::sort(combination.items.begin(), combination.items.end());
    combination.items.erase(std::unique(combination.items.begin(), combination.items.end()),
                            combination.items.end());
  }
  // What is planned: a list's every label (as --output=xml and the flattened JSON print it); env's
  // GPU choice only where every configuration makes the same one (--output=xml leaves a select()ed
  // env out: its branches merged are what no build runs with).
  std::vector<std::string> all;
  for (const auto& combination : combinations)
    for (const auto& item : combination.items)
      if (std::find(all.begin(), all.end(), item) == all.end()) all.push_back(item);
  const bool agree = std::all_of(combinations.begin(), combinations.end(), [&](const Configuration& c) {
    return c.items == combinations.front().items;
  });
  if (!env)
    for (const auto& item : all) add_item(which, target, item);
  else if (agree && !all.empty())
    target.edit_launch().device_env = Symbol(all.front());
  // A select() one of whose branches makes the test incompatible: every condition it names, as
  // the XML reader keeps them. Either branch may be the named one: rules_cuda's
  // requires_cuda_enabled() names the compatible branch, bazel-skylib's compatibility.none_of(":no_cuda")
  // the incompatible one and leaves //conditions:default compatible; XML, which prints the branches
  // merged, keeps the condition of both.
  auto incompatible = [](const Configuration& branch) {
    return std::any_of(branch.items.begin(), branch.items.end(),
                       [](const std::string& label) { return label.ends_with("//:incompatible"); });
  };
  if (which == Attribute::target_compatible_with)
    for (const auto& branches : selectors) {
      if (std::none_of(branches.begin(), branches.end(), incompatible)) continue;
      for (const auto& branch : branches)
        if (branch.conditions != "//conditions:default")
          note_compatibility_condition(target, branch.conditions);
    }
  if (agree && !more) return;
  SelectedAttribute differing{.attribute = std::string(name), .branches = {}, .differing = {}};
  for (const auto& item : all)
    if (!std::all_of(combinations.begin(), combinations.end(), [&](const Configuration& c) {
          return std::find(c.items.begin(), c.items.end(), item) != c.items.end();
        }))
      differing.differing.push_back(item);
  if (env && std::any_of(combinations.begin(), combinations.end(),
                         [](const Configuration& c) { return c.items.empty(); }))
    differing.differing.emplace_back();  // a configuration that chooses no GPUs
  for (std::size_t i = 0; i < combinations.size(); ++i) {
    std::string value;
    for (const auto& item : combinations[i].items) value += (value.empty() ? "" : " ") + item;
    differing.branches += fmt::format("{}{} gives {}", i ? ", " : "", combinations[i].conditions,
                                      value.empty() ? "nothing" : value);
  }
  if (more)
    differing.branches +=
        fmt::format(" (and configurations past these {}, not compared)", combinations.size());
  selections(target).other_attributes.push_back(std::move(differing));
}

void JsonTargets::fail(const std::string& message, const char* at) {
  if (!at && have_document_ && document_.current_location().get(at) != simdjson::SUCCESS) at = nullptr;
  Position where = start_;
  if (at && at >= text_.data() && at <= text_.data() + text_.size()) {
    std::string_view before(text_.data(), static_cast<std::size_t>(at - text_.data()));
    long newlines = static_cast<long>(std::count(before.begin(), before.end(), '\n'));
    where.line += newlines;
    std::size_t line_start = before.rfind('\n');
    where.column = line_start == std::string_view::npos ? start_.column + static_cast<long>(before.size())
                                                        : static_cast<long>(before.size() - line_start);
  }
  throw InputError(where, message);
}

void JsonObjects::fail(const std::string& message) const {
  throw InputError(Position{source_.name(), line_, column_}, message);
}

void JsonObjects::read(const Each& each) {
  std::vector<char> buffer(std::size_t{1} << 20);
  std::vector<char> open;  // the containers around the current byte: '{' or '['
  std::string object;      // the object being captured, up to this read's part of it
  std::string key;         // the last key of the top-level object
  std::string array_key;   // the key of the array being read at depth 1
  Position start;
  long ended = 0;  // the line where the last object (depth 0) or the document (depth 2) ended
  bool in_string = false;
  bool escaped = false;
  bool capturing = false;
  bool key_string = false;
  while (std::size_t count = source_.read(buffer.data(), buffer.size())) {
    const char* bytes = buffer.data();
    // Bytes are handed over, and lines counted, a run at a time: the captured object's part of
    // this read is copied from `capture_from` when it ends or the read does, and line_ and
    // column_ stand at the byte before `counted` until at() brings them to the one asked about.
    std::size_t capture_from = 0;
    std::size_t counted = 0;
    auto at = [&](std::size_t i) {
      if (i < counted) return;  // counted already
      const char* from = bytes + counted;
      const char* last = nullptr;
      for (const char* p = from; (p = static_cast<const char*>(std::memchr(p, '\n', bytes + i + 1 - p)));
           last = p++)
        ++line_;
      column_ = last ? static_cast<long>(bytes + i - last) : column_ + static_cast<long>(i + 1 - counted);
      counted = i + 1;
    };
    // The captured object may not pass max_target_bytes: said at the byte that passes it.
    auto check_size = [&](std::size_t i) {
      if (capturing && object.size() + (i + 1 - capture_from) > max_target_bytes) {
        at(capture_from + (max_target_bytes - object.size()));
        fail(fmt::format("a JSON object longer than {} MiB", max_target_bytes >> 20));
      }
    };
    auto fail_at = [&](std::size_t i, const std::string& message) {
      check_size(i);
      at(i);
      fail(message);
    };
    for (std::size_t i = 0; i < count; ++i) {
      char c = bytes[i];
      if (in_string) {
        if (escaped) {
          escaped = false;
          continue;
        }
        if (!key_string) {  // to the string's next quote or backslash at once
          const char* end = bytes + count;
          const char* quote = static_cast<const char*>(std::memchr(bytes + i, '"', end - (bytes + i)));
          const char* stop = quote ? quote : end;
          const char* backslash = static_cast<const char*>(std::memchr(bytes + i, '\\', stop - (bytes + i)));
          if (backslash) stop = backslash;
          i = static_cast<std::size_t>(stop - bytes);
          if (i == count) break;
          c = bytes[i];
        }
        if (c == '\\') {
          escaped = true;
        } else if (c == '"') {
          in_string = false;
        } else if (key_string) {
          key.push_back(c);
        }
        continue;
      }
      if (c == ' ' || c == '\n' || c == '\t' || c == '\r') continue;
      int depth = static_cast<int>(open.size());
      if (depth == 0 && ended > 0 && depth_ > 0)
        fail_at(i, fmt::format("text after the end of the JSON document, which ended at line {}", ended));
      // Outside every object, any byte but blanks is refused, a string's quote too (it was skipped
      // as a string, so "text" between two objects was read as nothing).
      if (depth == 0 && c != '{' && c != '[' && c != '}' && c != ']') {
        if (ended > 0)
          fail_at(i, fmt::format("text after the end of the JSON object that ended at line {}: '{}' where "
                                 "the next object should begin",
                                 ended, c));
        fail_at(i, fmt::format("'{}' where a JSON object should begin", c));
      }
      switch (c) {
        case '"':
          if (depth == depth_ && depth_ > 0 && open.back() == '[') fail_at(i, "expected a JSON object here");
          in_string = true;
          key_string = depth == 1 && !capturing;
          if (key_string) key.clear();
          break;
        case '{':
        case '[':
          if (depth == depth_ && !capturing) {
            if (c != '{') fail_at(i, "expected a JSON object here");
            capturing = true;
            object.clear();
            capture_from = i;
            at(i);
            start = Position{source_.name(), line_, column_};
          }
          if (depth == 1 && c == '[') array_key = key;
          open.push_back(c);
          break;
        case '}':
        case ']':
          if (open.empty() || open.back() != (c == '}' ? '{' : '['))
            fail_at(i, fmt::format("a '{}' that closes nothing", c));
          open.pop_back();
          check_size(i);
          if (open.empty()) {
            at(i);
            ended = line_;
          }
          if (capturing && static_cast<int>(open.size()) == depth_) {
            object.append(bytes + capture_from, i + 1 - capture_from);
            capturing = false;
            object.reserve(object.size() + simdjson::SIMDJSON_PADDING);
            each(array_key, object, object.capacity(), start);
          }
          break;
        default:
          if (depth == depth_ && c != ',' && open.back() == '[') fail_at(i, "expected a JSON object here");
      }
    }
    if (capturing) {
      check_size(count - 1);
      object.append(bytes + capture_from, count - capture_from);
    }
    at(count - 1);
  }
  if (!open.empty() || in_string)
    fail(capturing ? fmt::format("the input ends inside the JSON object begun at line {}: is it cut off?",
                                 start.line)
                   : "the input ends inside a JSON value: is it cut off?");
}

}  // namespace gpuplan::ingest
