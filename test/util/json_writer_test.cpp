#include "util/json_writer.hpp"

#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

using gpuplan::util::JsonWriter;
using nlohmann::ordered_json;

namespace {

/// Writes `document` through the streaming writer, element by element.
void stream(JsonWriter& out, const ordered_json& document) {
  if (document.is_object()) {
    out.begin_object();
    for (const auto& [key, value] : document.items()) {
      out.key(key);
      stream(out, value);
    }
    out.end_object();
  } else if (document.is_array()) {
    out.begin_array();
    for (const auto& value : document) stream(out, value);
    out.end_array();
  } else if (document.is_string()) {
    out.value(document.get<std::string>());
  } else if (document.is_boolean()) {
    out.value(document.get<bool>());
  } else if (document.is_number_float()) {
    out.value(document.get<double>());
  } else if (document.is_number_unsigned()) {
    out.value(document.get<std::size_t>());
  } else if (document.is_number_integer()) {
    out.value(document.get<std::int64_t>());
  } else {
    out.null();
  }
}

std::string streamed(const ordered_json& document, int indent) {
  std::string text;
  JsonWriter out([&](std::string_view piece) { text += piece; }, indent);
  stream(out, document);
  out.flush();
  return text;
}

ordered_json sample() {
  ordered_json j;
  j["empty_object"] = ordered_json::object();
  j["empty_array"] = ordered_json::array();
  j["text"] = "quote \" backslash \\ tab \t newline \n bell \x07 delete \x7f é ü 中 😀";
  j["numbers"] = {0, -1, 42, std::numeric_limits<std::int64_t>::min(), 18446744073709551615ULL};
  j["doubles"] = {0.0,     -0.0,    1.0,  0.1, 300.25, 1e-5, 1.5e300, 123456789012345678.0,
                  1.0 / 3, -2.5e-7, 1e15, 1e16};
  j["nested"] = {
      {"a", {{"b", ordered_json::array({ordered_json::object(), ordered_json::array(), nullptr})}}},
      {"flag", false}};
  j["null"] = nullptr;
  return j;
}

}  // namespace

TEST_CASE("the streaming writer writes the bytes nlohmann's dump writes, indented and compact") {
  auto document = sample();
  CHECK(streamed(document, 2) == document.dump(2));
  CHECK(streamed(document, 4) == document.dump(4));
  CHECK(streamed(document, -1) == document.dump());
  for (const auto& scalar :
       {ordered_json(1), ordered_json("x"), ordered_json::array(), ordered_json::object()})
    CHECK(streamed(scalar, 2) == scalar.dump(2));
}

TEST_CASE("each byte that needs escaping is escaped wherever it stands in a long string") {
  // The writer checks eight bytes at a time: put each such byte at every offset of a word.
  for (std::string special : {"\"", "\\", "\n", "\x01", "\x1f", "\x7f", "\xc3\xa9", "\xf0\x9f\x98\x80"}) {
    for (std::size_t at = 0; at <= 20; ++at) {
      std::string text(24, 'a');
      text.replace(at, 1, special);
      ordered_json document = {{text, text}};
      CHECK(streamed(document, 2) == document.dump(2));
    }
  }
  std::string bad(24, 'a');
  bad[13] = '\xff';
  std::string ignored;
  JsonWriter out([&](std::string_view piece) { ignored += piece; });
  CHECK_THROWS_WITH(out.value(bad), Catch::Contains("offset 13"));
}

// export kubernetes sizes a ConfigMap's slice, escaped, against kubectl's 256 KiB annotation; its
// own copy of the escaping rules could drift from the writer's.
TEST_CASE("a string's escaped size is what the writer and nlohmann's dump write of it, quotes aside") {
  std::vector<std::string> texts = {"", "plain", sample().dump(), sample().dump(2),
                                    sample()["text"].get<std::string>()};
  for (std::string special : {"\"", "\\", "\b", "\f", "\n", "\r", "\t", "\x01", "\x1f", "\x7f", "\xc3\xa9"}) {
    std::string text(24, 'a');
    text.replace(7, 1, special);
    texts.push_back(text);
  }
  for (const auto& text : texts) {
    INFO(text);
    CHECK(gpuplan::util::escaped_size(text) + 2 == ordered_json(text).dump().size());
  }
  CHECK_THROWS_WITH(gpuplan::util::escaped_size("ab\xff"), Catch::Contains("offset 2"));
}

TEST_CASE("keys written in the code come out as keys from a string do, indented and compact") {
  for (int indent : {2, -1}) {
    std::string text;
    JsonWriter out([&](std::string_view piece) { text += piece; }, indent);
    out.begin_object();
    out.key("node").value("a");
    out.key(std::string("gpus")).begin_array();
    out.value(1);
    out.end_array();
    out.key("empty").begin_object();
    out.end_object();
    out.end_object();
    out.flush();
    ordered_json expected = {{"node", "a"}, {"gpus", {1}}, {"empty", ordered_json::object()}};
    CHECK(text == expected.dump(indent));
  }
}

TEST_CASE("documents deeper than the writer's ready-made margin are indented as dump indents them") {
  ordered_json document = 1;
  for (int depth = 0; depth < 40; ++depth) document = ordered_json::array({document, depth});
  CHECK(streamed(document, 2) == document.dump(2));
  CHECK(streamed(document, 4) == document.dump(4));
}

TEST_CASE("a small nlohmann document written inside a streamed one is indented to its depth") {
  std::string text;
  JsonWriter out([&](std::string_view piece) { text += piece; });
  out.begin_object();
  out.key("outer").begin_array();
  out.value(ordered_json{{"inner", {1, 2}}, {"empty", ordered_json::object()}});
  out.end_array();
  out.end_object();
  out.flush();
  ordered_json expected = {{"outer", {{{"inner", {1, 2}}, {"empty", ordered_json::object()}}}}};
  CHECK(text == expected.dump(2));
}

TEST_CASE("a value written once at a depth is taken as it is by a writer at that depth") {
  for (int indent : {2, -1}) {
    std::string text;
    JsonWriter out([&](std::string_view piece) { text += piece; }, indent);
    out.begin_object();
    out.key("outer").begin_array();
    std::string value;
    JsonWriter part([&](std::string_view piece) { value += piece; }, out.indent(), out.depth());
    stream(part, sample());
    part.flush();
    out.value_text(value);
    out.value_text(value);
    out.end_array();
    out.end_object();
    out.flush();
    ordered_json expected = {{"outer", {sample(), sample()}}};
    CHECK(text == expected.dump(indent));
  }
}

TEST_CASE("indented JSON made compact is what the compact writer writes, strings untouched") {
  auto document = sample();
  // Spaces, a ": " and quotes inside strings, and a string that ends in a backslash.
  document["keys with spaces"] = {{"a: b", " \\\" , "}, {"\\", "x\\"}, {"", " "}};
  CHECK(gpuplan::util::compact(streamed(document, 2)) == document.dump());
  CHECK(gpuplan::util::compact(streamed(document, 4)) == streamed(document, -1));
  CHECK(gpuplan::util::compact(" [ 1 ,\n\t\"a b\" ]\r\n") == R"([1,"a b"])");
}

TEST_CASE("a double that is not finite is written as null, as nlohmann writes it") {
  std::string text;
  JsonWriter out([&](std::string_view piece) { text += piece; }, -1);
  out.begin_array();
  out.value(std::nan(""));
  out.value(std::numeric_limits<double>::infinity());
  out.end_array();
  out.flush();
  CHECK(text == "[null,null]");
}

TEST_CASE("a string that is not UTF-8 is an error naming what came before it") {
  std::string text;
  JsonWriter out([&](std::string_view piece) { text += piece; });
  CHECK_THROWS_WITH(out.value(std::string("//a:b\xff")), Catch::Contains("0xFF") && Catch::Contains("//a:b"));
  CHECK_THROWS(out.value(std::string("\xed\xa0\x80")));  // a UTF-16 surrogate
  CHECK_THROWS(out.value(std::string("\xc0\xaf")));      // an overlong '/'
  CHECK_THROWS(out.value(std::string("\xe4\xb8")));      // cut short
}

TEST_CASE("a large document reaches the sink in pieces, not at the end") {
  std::size_t pieces = 0, largest = 0;
  JsonWriter out([&](std::string_view piece) {
    ++pieces;
    largest = std::max(largest, piece.size());
  });
  out.begin_array();
  for (int i = 0; i < 100000; ++i) {
    out.begin_object();
    out.key("label").value("//team/models:case_test");
    out.end_object();
  }
  out.end_array();
  out.flush();
  CHECK(pieces > 50);
  CHECK(largest < 80 * 1024);
}
