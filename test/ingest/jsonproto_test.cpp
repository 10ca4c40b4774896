#include <fmt/format.h>

#include <catch2/catch.hpp>

#include "gpuplan/error.hpp"
#include "ingest/ingest_helpers.hpp"

using namespace gpuplan;
using namespace gpuplan::testing;

TEST_CASE("the three JSON formats read the same tests with the same attributes as the xml") {
  TargetList xml = read_fixture("bazel/all.query.xml");
  for (auto file : {"tests.streamed_jsonproto", "tests.jsonproto", "tests.cquery.jsonproto"}) {
    INFO(file);
    TargetList json = read_fixture(std::string("bazel/") + file);
    REQUIRE(json.tests.size() == 23);
    for (const Target& expected : xml.tests) {
      const Target& got = find(json, expected.label);
      INFO(expected.label);
      REQUIRE(got.rule_class == expected.rule_class);
      REQUIRE(got.tags == expected.tags);
      REQUIRE(got.size == expected.size);
      REQUIRE(got.timeout == expected.timeout);
      REQUIRE(got.shard_count == expected.shard_count);
      REQUIRE(got.flaky == expected.flaky);
      REQUIRE(got.exec_properties == expected.exec_properties);
      REQUIRE(got.generator_function == expected.generator_function);
      REQUIRE(got.location == expected.location);
    }
  }
}

TEST_CASE("each JSON format is detected from its content") {
  REQUIRE(read_fixture("bazel/tests.streamed_jsonproto").format == "streamed_jsonproto");
  REQUIRE(read_fixture("bazel/tests.jsonproto").format == "jsonproto");
  REQUIRE(read_fixture("bazel/tests.cquery.jsonproto").format == "cquery_jsonproto");
}

TEST_CASE("cquery jsonproto gives each test the short id of its configuration") {
  TargetList list = read_fixture("bazel/tests.cquery.jsonproto");
  REQUIRE(find(list, "//ml:train_test").configuration == "f5527a6");
  // cquery prints the defaults too (timeout long of a large test): one nobody wrote is not read.
  REQUIRE(find(list, "//ml:train_test").timeout.str().empty());
}

// A timeout the size implies, read as written, made every JSON-read test's duration_source
// timeout-default and its plan timeout non-null, where XML's were size-default and null.
TEST_CASE("a JSON timeout is the test's own only when it was written") {
  auto timeout = [](const std::string& specified) {
    return read_text(R"({"type":"RULE","rule":{"name":"//a:t","ruleClass":"sh_test","attribute":[)"
                     R"({"name":"timeout","type":"STRING","stringValue":"eternal","explicitlySpecified":)" +
                     specified + "}]}}\n")
        .tests.at(0)
        .timeout.str();
  };
  CHECK(timeout("true") == "eternal");
  CHECK(timeout("false").empty());
}

TEST_CASE("newer cquery jsonproto names configurations by id in configurations[]") {
  TargetList list = read_text(R"({
  "results": [{
    "target": {"type": "RULE", "rule": {"name": "//a:t", "ruleClass": "sh_test", "attribute": []}},
    "configurationId": 2
  }],
  "configurations": [{"id": 1, "checksum": "aaaaaaaaaaaa"}, {"id": 2, "checksum": "9f87702c0ffee"}]
})");
  REQUIRE(list.tests.at(0).configuration == "9f87702");
}

TEST_CASE("cquery's configuration is read before or after its target (jq -S sorts the keys)") {
  TargetList list = read_text(R"({"results": [{
    "configuration": {"checksum": "9f87702c0ffee"},
    "target": {"type": "RULE", "rule": {"name": "//a:t", "ruleClass": "sh_test", "attribute": []}}
  }]})");
  REQUIRE(list.tests.at(0).configuration == "9f87702");  // was "null"
}

TEST_CASE("a streamed_jsonproto line that is not JSON is an error at that line") {
  std::string good = R"({"type":"RULE","rule":{"name":"//a:t","ruleClass":"sh_test"}})";
  try {
    read_text(good + "\n" + good + "\n{\"type\":\"RULE\",\"rule\":{\"name\":\"//a:u\",\n",
              InputFormat::streamed_jsonproto);
    FAIL("no error");
  } catch (const InputError& error) {
    REQUIRE(error.position().line == 3);
    REQUIRE_THAT(error.what(), Catch::Contains("not valid JSON"));
  }
}

TEST_CASE("a JSON shard_count of the wrong type is an error, whichever way it is wrong") {
  auto rule = [](const std::string& attribute) {
    return R"({"type":"RULE","rule":{"name":"//a:t","ruleClass":"sh_test","attribute":[)" + attribute +
           "]}}\n";
  };
  REQUIRE_THROWS_WITH(read_text(rule(R"({"name":"shard_count","type":"INTEGER","intValue":"four"})")),
                      Catch::Contains("input:1") && Catch::Contains("shard_count of //a:t") &&
                          Catch::Contains("is not an integer"));
  REQUIRE_THROWS_WITH(read_text(rule(R"({"name":"shard_count","type":"STRING","stringValue":"four"})")),
                      Catch::Contains("has type STRING; Bazel gives shard_count the type INTEGER"));
}

TEST_CASE("a JSON shard_count set by select() is marked unresolved, flattened or not; a default is not") {
  auto rule = [](const std::string& attribute) {
    return read_text(R"({"type":"RULE","rule":{"name":"//a:t","ruleClass":"sh_test","attribute":[)" +
                     attribute + "]}}\n")
        .tests.at(0);
  };
  // query's default --proto:flatten_selects leaves a scalar select() without a value.
  auto flattened = rule(R"({"name":"shard_count","type":"INTEGER","explicitlySpecified":true})");
  CHECK(flattened.shard_count_unresolved);
  CHECK(flattened.shard_count == 0);
  CHECK(
      rule(
          R"({"name":"shard_count","type":"INTEGER","explicitlySpecified":true,"selectorList":{"type":"INTEGER",)"
          R"("elements":[{"entries":[{"label":"//:cuda","intValue":4}]}]}})")
          .shard_count_unresolved);
  // --noproto:flatten_selects: AttributeFormatter gives the unflattened select() the type SELECTOR_LIST
  // (refused before as a type shard_count never has).
  CHECK(rule(R"({"name":"shard_count","type":"SELECTOR_LIST","selectorList":{"type":"INTEGER",)"
             R"("elements":[{"entries":[{"label":"//:cuda","intValue":4}]}]},"explicitlySpecified":true})")
            .shard_count_unresolved);
  REQUIRE_THROWS_WITH(rule(R"({"name":"exec_properties","type":"SELECTOR_LIST","selectorList":{}})"),
                      Catch::Contains("exec_properties of //a:t is a select() whose \"selectorList\" has no "
                                      "\"elements\" list"));
  REQUIRE_THROWS_WITH(
      rule(R"({"name":"env","type":"SELECTOR_LIST","selectorList":{}})"),
      Catch::Contains("env of //a:t is a select() whose \"selectorList\" has no \"elements\" list"));
  CHECK_FALSE(
      rule(R"({"name":"shard_count","type":"INTEGER","explicitlySpecified":false})").shard_count_unresolved);
  CHECK_FALSE(rule(R"({"name":"shard_count","type":"INTEGER","intValue":4,"explicitlySpecified":true})")
                  .shard_count_unresolved);
}

TEST_CASE("pretty-printed jsonproto cut off in the middle is an error naming where the object began") {
  REQUIRE_THROWS_WITH(read_text("{\n  \"type\": \"RULE\",\n  \"rule\": {\n    \"name\": \"//a:t\""),
                      Catch::Contains("input:4") && Catch::Contains("begun at line 1"));
}

TEST_CASE("an object that is not a Bazel target is refused, not skipped") {
  REQUIRE_THROWS_WITH(read_text("{\"hello\":\"world\"}\n"), Catch::Contains("not a Bazel Target"));
  // cquery --noproto:include_configurations wraps the targets in one QueryResult: named as such.
  REQUIRE_THROWS_WITH(
      read_text(R"({"target": [{"type": "RULE", "rule": {"name": "//a:t", "ruleClass": "sh_test"}}]})"),
      Catch::Contains("--noproto:include_configurations"));
}

TEST_CASE("JSON that simdjson rejects outright is an error at its line, first object or later") {
  // A literal TAB inside a string fails before parsing starts; the error path once read the
  // document of the object before (freed) or of none.
  std::string good = R"({"type":"RULE","rule":{"name":"//a:t","ruleClass":"sh_test"}})";
  std::string tabbed = "{\"type\":\"RULE\",\"rule\":{\"name\":\"//a:\tt\",\"ruleClass\":\"sh_test\"}}";
  auto line_of = [](const std::string& text, InputFormat format) {
    try {
      read_text(text, format);
    } catch (const InputError& error) {
      REQUIRE_THAT(error.what(), Catch::Contains("not valid JSON"));
      REQUIRE(error.position().file == "input");
      return error.position().line;
    }
    return -1L;
  };
  REQUIRE(line_of(tabbed + "\n", InputFormat::streamed_jsonproto) == 1);
  REQUIRE(line_of(good + "\n" + tabbed + "\n", InputFormat::streamed_jsonproto) == 2);
  REQUIRE(line_of(tabbed + "\n", InputFormat::jsonproto) == 1);
  REQUIRE(line_of(good + "\n\n" + tabbed + "\n", InputFormat::jsonproto) == 3);
  REQUIRE(line_of("{\"results\": [\n" + tabbed + "\n]}\n", InputFormat::cquery_jsonproto) == 2);
  REQUIRE(line_of(good + "\n{\"type\":\"RULE\",\"rule\":{\"name\":\"//a:\xff\"}}\n",
                  InputFormat::jsonproto) == 2);
}

TEST_CASE("a streamed_jsonproto line with text after its object is an error at that text") {
  // simdjson calls this a document that "ended early", which sent users looking for a cut-off line.
  std::string good = R"({"type":"RULE","rule":{"name":"//a:t","ruleClass":"sh_test"}})";
  auto error_of = [](const std::string& text) {
    try {
      read_text(text, InputFormat::streamed_jsonproto);
    } catch (const InputError& error) {
      return std::string(error.what());
    }
    return std::string("(read)");
  };
  const std::string after = ": text after the end of the JSON object";
  REQUIRE(error_of(good + "\n" + good + " garbage\n") ==
          "input:2:" + std::to_string(good.size() + 2) + after);
  REQUIRE(error_of(good + good + "\n") == "input:1:" + std::to_string(good.size() + 1) + after);
  REQUIRE(error_of(good + "  " + good + "\n") == "input:1:" + std::to_string(good.size() + 3) + after);
  REQUIRE(error_of(good + "}\n") == "input:1:" + std::to_string(good.size() + 1) + after);
  // A line cut off is still one that ends early, inside the object or inside a string.
  REQUIRE(error_of(good + "\n" + good.substr(0, good.size() - 1) + "\n") ==
          "input:2:1: not valid JSON: the object ends early, before its closing '}': is it cut off?");
  REQUIRE(error_of(good.substr(0, 33) + "\n") ==
          "input:1:1: not valid JSON: the object ends early, inside a string: is it cut off?");
}

TEST_CASE("text after a jsonproto object or after the cquery document is an error, never skipped or read") {
  std::string object =
      "{\n  \"type\": \"RULE\",\n  \"rule\": {\"name\": \"//a:t\", \"ruleClass\": \"sh_test\"}\n}";
  REQUIRE_THROWS_WITH(
      read_text(object + " garbage\n"),
      "input:4:3: text after the end of the JSON object that ended at line 4: 'g' where the next "
      "object should begin");
  // A string between objects, or before the first, was skipped as a string, and read as nothing.
  REQUIRE_THROWS_WITH(
      read_text(object + "\n\"stray\"\n" + object + "\n"),
      "input:5:1: text after the end of the JSON object that ended at line 4: '\"' where the next "
      "object should begin");
  REQUIRE_THROWS_WITH(read_text("\"stray\" " + object, InputFormat::jsonproto),
                      "input:1:1: '\"' where a JSON object should begin");
  std::string cquery =
      "{\n  \"results\": [{\"target\": {\"type\": \"RULE\", \"rule\": {\"name\": \"//a:t\", "
      "\"ruleClass\": \"sh_test\"}}}]\n}";
  REQUIRE(read_text(cquery + "\n").tests.size() == 1);
  REQUIRE_THROWS_WITH(read_text("\"stray\"\n" + cquery, InputFormat::cquery_jsonproto),
                      "input:1:1: '\"' where a JSON object should begin");
  REQUIRE_THROWS_WITH(read_text(cquery + " garbage\n"),
                      "input:3:3: text after the end of the JSON document, which ended at line 3");
  // A second document was read as if it belonged to the first.
  REQUIRE_THROWS_WITH(read_text(cquery + "\n" + cquery + "\n"),
                      "input:4:1: text after the end of the JSON document, which ended at line 3");
  std::string scalar =
      "{\"results\": [{\"target\": {\"type\": \"RULE\", \"rule\": {\"name\": \"//a:t\", "
      "\"ruleClass\": \"sh_test\"}}}, 42, \"x\"]}\n";
  REQUIRE_THROWS_WITH(read_text(scalar), Catch::StartsWith("input:1:95: expected a JSON object here"));
}

TEST_CASE("JSON target_compatible_with and exec_compatible_with are LABEL_LISTs, kept as constraints") {
  // As Bazel 4's cquery --output=jsonproto writes them (test/integration/classify_test.sh runs it).
  TargetList list = read_text(
      R"({"type":"RULE","rule":{"name":"//a:t","ruleClass":"sh_test","attribute":[)"
      R"({"name":"compatible_with","type":"LABEL_LIST","explicitlySpecified":false,"nodep":false},)"
      R"({"name":"exec_compatible_with","type":"LABEL_LIST","stringListValue":["//:gpu_pool"],"explicitlySpecified":true},)"
      R"({"name":"target_compatible_with","type":"LABEL_LIST","stringListValue":["//:amd_gpu"],"explicitlySpecified":true}]}})"
      "\n");
  const auto& constraints = list.tests.at(0).constraints;
  REQUIRE(constraints.size() == 2);
  CHECK(constraints[0].source() == "exec_compatible_with //:gpu_pool");
  CHECK(constraints[1].source() == "target_compatible_with //:amd_gpu");
  CHECK_THROWS_WITH(read_text(R"({"type":"RULE","rule":{"name":"//a:t","ruleClass":"sh_test","attribute":[)"
                              R"({"name":"target_compatible_with","type":"STRING","stringValue":"//:x"}]}})"
                              "\n"),
                    Catch::Contains("Bazel gives target_compatible_with the type LABEL_LIST"));
}

// --noproto:flatten_selects gives a select()ed exec_properties as its branches (test/data/bazel/
// select_props_unflattened.*, written from Bazel's ProtoOutputFormatter, AttributeFormatter and build.proto):
// refused before. They are read merged as --output=xml prints them, and kept for classify.
TEST_CASE("a JSON exec_properties select() left unflattened is read by its branches") {
  for (auto file :
       {"bazel/select_props_unflattened.jsonproto", "bazel/select_props_unflattened.streamed_jsonproto"}) {
    INFO(file);
    TargetList list = read_fixture(file);
    REQUIRE(list.tests.size() == 5);
    const Target& gpu = find(list, "//:selected_gpu_test");
    CHECK(gpu.exec_properties == ExecProperties{{"gpu", "1"}});  // the first branch's, as XML
    REQUIRE(gpu.selected_exec_properties);
    REQUIRE(gpu.selected_exec_properties->branches.size() == 2);
    CHECK(gpu.selected_exec_properties->branches.at(0).conditions == "//conditions:default");
    CHECK(gpu.selected_exec_properties->branches.at(1).conditions == "//:cuda_big");
    CHECK(gpu.selected_exec_properties->branches.at(1).properties == ExecProperties{{"gpu", "4"}});
    // None (isDefaultValue, no stringDictValue) is the default, {}.
    const Target& none = find(list, "//:selected_none_test");
    CHECK(none.exec_properties == ExecProperties{{"gpu", "2"}});
    CHECK(none.selected_exec_properties->branches.at(1).properties.empty());
    // {"gpu": "1"} | select(...): one branch of each selector, the later one's keys winning; the plain
    // dict's one entry (//conditions:default) chooses nothing, so it names none.
    const Target& concat = find(list, "//:concat_test");
    CHECK(concat.exec_properties == ExecProperties{{"gpu", "4"}});
    REQUIRE(concat.selected_exec_properties->branches.size() == 2);
    CHECK(concat.selected_exec_properties->branches.at(0).conditions == "//:cuda_big");
    CHECK(concat.selected_exec_properties->branches.at(0).properties == ExecProperties{{"gpu", "4"}});
    CHECK(concat.selected_exec_properties->branches.at(1).conditions == "//conditions:default");
    CHECK(concat.selected_exec_properties->branches.at(1).properties == ExecProperties{{"gpu", "1"}});
    const Target& plain = find(list, "//:plain_test");
    CHECK(plain.exec_properties == ExecProperties{{"gpu", "1"}});
    CHECK_FALSE(plain.selected_exec_properties);
  }
  // Two select()s concatenated are planned as XML prints them: every configuration merged, the
  // first to set a key wins (select({A: gpu 1, B: gpu 2}) | select({C: x 1, D: gpu 3}): gpu 1).
  auto two = read_text(
      R"({"type":"RULE","rule":{"name":"//a:t","ruleClass":"sh_test","attribute":[{"name":"exec_properties",)"
      R"("type":"SELECTOR_LIST","selectorList":{"type":"STRING_DICT","elements":[)"
      R"({"entries":[{"label":"//:a","stringDictValue":[{"key":"gpu","value":"1"}]},)"
      R"({"label":"//:b","stringDictValue":[{"key":"gpu","value":"2"}]}]},)"
      R"({"entries":[{"label":"//:c","stringDictValue":[{"key":"x","value":"1"}]},)"
      R"({"label":"//:d","stringDictValue":[{"key":"gpu","value":"3"}]}]}]}}]}})"
      "\n");
  CHECK(two.tests.at(0).exec_properties == ExecProperties{{"gpu", "1"}, {"x", "1"}});
  CHECK(two.tests.at(0).selected_exec_properties->branches.size() == 4);

  // A select() of one branch is no choice: nothing kept.
  auto one = read_text(
      R"({"type":"RULE","rule":{"name":"//a:t","ruleClass":"sh_test","attribute":[{"name":"exec_properties",)"
      R"("type":"SELECTOR_LIST","explicitlySpecified":true,"selectorList":{"type":"STRING_DICT","elements":[{)"
      R"("entries":[{"label":"//conditions:default","stringDictValue":[{"key":"gpu","value":"2"}],)"
      R"("isDefaultValue":false}],"hasDefaultValue":true,"noMatchError":""}]}}]}})"
      "\n");
  CHECK(one.tests.at(0).exec_properties == ExecProperties{{"gpu", "2"}});
  CHECK_FALSE(one.tests.at(0).selected_exec_properties);
  REQUIRE_THROWS_WITH(
      read_text(
          R"({"type":"RULE","rule":{"name":"//a:t","ruleClass":"sh_test","attribute":[{"name":)"
          R"("exec_properties","type":"SELECTOR_LIST","selectorList":{"type":"STRING_DICT","elements":[{)"
          R"("entries":[{"label":"//:c","stringDictValue":"gpu"}]}]}}]}})"
          "\n"),
      Catch::Contains("input:1") && Catch::Contains("an entry whose \"stringDictValue\" is no list"));
}

// Query's default --proto:flatten_selects prints a select()ed exec_properties as a plain dict, each
// key with the last branch's value, unmarked (test/data/bazel/select_props.query.proto, real Bazel 4
// --output=proto, reprinted as JSON): the rule's $config_dependencies names the config_setting. It
// was planned by the last branch without a word; now its trace is kept for classify's warning.
TEST_CASE("a flattened JSON exec_properties select() is traced by the rule's $config_dependencies") {
  for (auto file : {"bazel/select_props.jsonproto", "bazel/select_props.streamed_jsonproto"}) {
    INFO(file);
    TargetList list = read_fixture(file);
    REQUIRE(list.tests.size() == 7);
    const Target& selected = find(list, "//:selected_gpu_test");
    CHECK(selected.exec_properties == ExecProperties{{"gpu", "4"}});  // the last branch's
    REQUIRE(selected.selected_exec_properties);
    CHECK(selected.unexplained_input() == "//:cuda_big");
    CHECK(selected.selected_exec_properties->trace ==
          SelectedExecProperties::Trace::json_config_dependencies);
    // A select() on deps leaves the same trace (query cannot tell which attribute it was on), as in XML.
    CHECK(find(list, "//:selected_deps_test").unexplained_input() == "//:cuda");
    // Without exec_properties, or without a select(), nothing.
    for (auto label : {"//:selected_deps_nogpu_test", "//:plain_sh_test", "//:plain_py_test",
                       "//:plain_cc_test", "//:plain_cc_nogpu_test"})
      CHECK_FALSE(find(list, label).selected_exec_properties);
  }
}

TEST_CASE("without $config_dependencies, a JSON test's input that no printed label names is the trace") {
  // --noproto:default_values prints no $config_dependencies: as in XML, an input none of the rule's
  // label attributes (LABEL, LABEL_LIST, label dicts) names, and that is no implicit one.
  auto rule = [](std::string_view attributes, std::string_view inputs) {
    return read_text(fmt::format(
        R"({{"type":"RULE","rule":{{"name":"//a:t","ruleClass":"sh_test","attribute":[{}{{"name":"exec_properties",)"
        R"("type":"STRING_DICT","stringDictValue":[{{"key":"gpu","value":"4"}}],"explicitlySpecified":true}}],)"
        R"("ruleInput":[{}]}}}})"
        "\n",
        attributes, inputs));
  };
  const std::string_view labels =
      R"({"name":"data","type":"LABEL_LIST","stringListValue":["//:d"]},)"
      R"({"name":"main","type":"LABEL","stringValue":"//:m"},)"
      R"({"name":"tools","type":"LABEL_KEYED_STRING_DICT","labelKeyedStringDictValue":[{"key":"//:k","value":"x"}]},)"
      R"({"name":"by","type":"LABEL_DICT_UNARY","labelDictUnaryValue":[{"key":"x","value":"//:u"}]},)"
      R"({"name":"lists","type":"LABEL_LIST_DICT","labelListDictValue":[{"key":"x","value":["//:l"]}]},)";
  auto explained = rule(labels, R"("//:d","//:k","//:l","//:m","//:u","@bazel_tools//tools/test:runtime")");
  CHECK_FALSE(explained.tests.at(0).selected_exec_properties);
  auto traced = rule(labels, R"("//:cuda","//:d","//:m")");
  REQUIRE(traced.tests.at(0).selected_exec_properties);
  CHECK(traced.tests.at(0).unexplained_input() == "//:cuda");
  CHECK(traced.tests.at(0).selected_exec_properties->trace == SelectedExecProperties::Trace::json_input);
  // An empty $config_dependencies (printed without a "stringListValue") says the rule has no
  // select(): an input no printed label names is something else, and the test is not parsed again.
  auto empty = rule(R"({"name":"$config_dependencies","type":"LABEL_LIST"},)", R"("//:cuda")");
  CHECK_FALSE(empty.tests.at(0).selected_exec_properties);
  // Output left unflattened (a SELECTOR_LIST in the rule) printed a select()ed exec_properties as
  // one: a plain one beside a select()ed deps is no select().
  auto unflattened = rule(
      R"({"name":"deps","type":"SELECTOR_LIST","selectorList":{"type":"LABEL_LIST","elements":[{"entries":[)"
      R"({"label":"//:cuda","stringListValue":["//:f"]}]}]}},)",
      R"("//:cuda","//:f")");
  CHECK_FALSE(unflattened.tests.at(0).selected_exec_properties);
}

// rules_cuda's requires_cuda_enabled() (test/data/pytorch/): target_compatible_with printed as
// @platforms//:incompatible alone keeps the select()'s condition, as the XML reader keeps it; before,
// JSON kept none, and the CUDA test was a CPU test.
TEST_CASE("a JSON test made incompatible by a select() keeps the select()'s condition, as XML does") {
  auto conditions = [](const Target& t) {
    std::vector<std::string> out;
    for (const auto& c : t.constraints)
      if (c.condition) out.push_back(c.label.str());
    return out;
  };
  const std::vector<std::string> cuda{"@rules_cuda//cuda:is_cuda_enabled"};
  CHECK(conditions(read_fixture("pytorch/c10_cuda_test.query.xml").tests.at(0)) == cuda);
  // Flattened: from $config_dependencies; unflattened: the branch of the select() without the marker.
  CHECK(conditions(read_fixture("pytorch/c10_cuda_test.jsonproto").tests.at(0)) == cuda);
  CHECK(conditions(read_fixture("pytorch/c10_cuda_test_unflattened.jsonproto").tests.at(0)) == cuda);
  // Whichever branch is the incompatible one: compatibility.none_of(":no_cuda") names it (before,
  // unflattened JSON kept no condition of it, where XML keeps //t:no_cuda).
  const std::vector<std::string> no_cuda{"//t:no_cuda"};
  CHECK(conditions(read_fixture("bazel/no_cuda.query.xml").tests.at(0)) == no_cuda);
  CHECK(conditions(read_fixture("bazel/no_cuda.jsonproto").tests.at(0)) == no_cuda);
  CHECK(conditions(read_fixture("bazel/no_cuda_unflattened.streamed_jsonproto").tests.at(0)) == no_cuda);
  // --noproto:default_values prints no $config_dependencies: a rule-input no printed label names.
  auto rule = [](std::string_view attributes) {
    return read_text(
               fmt::format(R"({{"type":"RULE","rule":{{"name":"//a:t","ruleClass":"cc_test","attribute":[{})"
                           R"({{"name":"target_compatible_with","type":"LABEL_LIST",)"
                           R"("stringListValue":["@platforms//:incompatible"]}}],"ruleInput":["//:gtest",)"
                           R"("@bazel_tools//tools/test:runtime","@platforms//:incompatible",)"
                           R"("@rules_cuda//cuda:is_cuda_enabled"]}}}})"
                           "\n",
                           attributes))
        .tests.at(0);
  };
  CHECK(conditions(rule(R"({"name":"deps","type":"LABEL_LIST","stringListValue":["//:gtest"]},)")) == cuda);
  // An empty $config_dependencies says there is no select(): the marker is the test's own.
  CHECK(conditions(rule(R"({"name":"$config_dependencies","type":"LABEL_LIST"},)")).empty());
}

TEST_CASE("cquery's JSON is resolved: its $config_dependencies is no trace") {
  auto list = read_text(
      R"({"results":[{"target":{"type":"RULE","rule":{"name":"//a:t","ruleClass":"sh_test","attribute":[)"
      R"({"name":"$config_dependencies","type":"LABEL_LIST","stringListValue":["//:cuda"]},)"
      R"({"name":"exec_properties","type":"STRING_DICT","stringDictValue":[{"key":"gpu","value":"4"}]}],)"
      R"("ruleInput":["//:cuda"]}},"configuration":{"checksum":"abcdef0123"}}]})"
      "\n");
  REQUIRE(list.tests.size() == 1);
  CHECK_FALSE(list.tests.at(0).selected_exec_properties);
}

// --noproto:flatten_selects: a select()ed env, target_compatible_with or exec_compatible_with was
// refused (exit 2, "query again without that flag"). Now a list is read as every branch's labels
// (as --output=xml and the flattened JSON print it), env's GPU choice only where every branch makes
// the same one (--output=xml leaves a select()ed env out), and what differs is kept for classify.
TEST_CASE("select()ed env and constraint lists left unflattened are read as --output=xml reads them") {
  auto rule = [](const std::string& attribute) {
    return read_text(R"({"type":"RULE","rule":{"name":"//a:t","ruleClass":"sh_test","attribute":[)" +
                     attribute + "]}}\n")
        .tests.at(0);
  };
  auto selector = [](std::string_view name, std::string_view type, std::string_view entries) {
    return fmt::format(
        R"({{"name":"{}","type":"SELECTOR_LIST","explicitlySpecified":true,"selectorList":{{)"
        R"("type":"{}","elements":[{{"entries":[{}],"hasDefaultValue":true,"noMatchError":""}}]}}}})",
        name, type, entries);
  };
  auto compatible =
      rule(selector("target_compatible_with", "LABEL_LIST",
                    R"({"label":"//:cuda","stringListValue":["//:has_gpu","@platforms//os:linux"]},)"
                    R"({"label":"//conditions:default","stringListValue":["@platforms//os:linux"]})"));
  REQUIRE(compatible.constraints.size() == 2);
  CHECK(compatible.constraints[0].label == "//:has_gpu");
  CHECK(compatible.constraints[1].label == "@platforms//os:linux");
  REQUIRE(compatible.selected_exec_properties);
  REQUIRE(compatible.selected_exec_properties->other_attributes.size() == 1);
  const auto& differing = compatible.selected_exec_properties->other_attributes[0];
  CHECK(differing.attribute == "target_compatible_with");
  CHECK(differing.differing == std::vector<std::string>{"//:has_gpu"});
  CHECK(differing.branches ==
        "//:cuda gives //:has_gpu @platforms//os:linux, //conditions:default gives @platforms//os:linux");
  // Branches that agree: read, nothing kept.
  auto agree = rule(selector("exec_compatible_with", "LABEL_LIST",
                             R"({"label":"//:a","stringListValue":["//:gpu_pool"]},)"
                             R"({"label":"//conditions:default","stringListValue":["//:gpu_pool"]})"));
  REQUIRE(agree.constraints.size() == 1);
  CHECK(agree.constraints[0].exec);
  CHECK_FALSE(agree.selected_exec_properties);
  // env: the same GPU choice in every branch is planned; different ones are not, as from XML.
  auto same_env =
      rule(selector("env", "STRING_DICT",
                    R"({"label":"//:a","stringDictValue":[{"key":"CUDA_VISIBLE_DEVICES","value":"0"}]},)"
                    R"({"label":"//conditions:default","stringDictValue":[{"key":"CUDA_VISIBLE_DEVICES",)"
                    R"("value":"0"},{"key":"X","value":"1"}]})"));
  CHECK(same_env.launch().device_env == "CUDA_VISIBLE_DEVICES=0");
  CHECK_FALSE(same_env.selected_exec_properties);
  auto env =
      rule(selector("env", "STRING_DICT",
                    R"({"label":"//:cuda","stringDictValue":[{"key":"CUDA_VISIBLE_DEVICES","value":"0,1"}]},)"
                    R"({"label":"//conditions:default","isDefaultValue":true})"));
  CHECK(env.launch().device_env.empty());
  REQUIRE(env.selected_exec_properties);
  CHECK(env.selected_exec_properties->other_attributes.at(0).branches ==
        "//:cuda gives CUDA_VISIBLE_DEVICES=0,1, //conditions:default gives nothing");
  // Beside a select()ed exec_properties, both are kept.
  auto both =
      rule(selector("env", "STRING_DICT",
                    R"({"label":"//:cuda","stringDictValue":[{"key":"CUDA_VISIBLE_DEVICES","value":"0"}]},)"
                    R"({"label":"//conditions:default"})") +
           "," +
           selector("exec_properties", "STRING_DICT",
                    R"({"label":"//:cuda","stringDictValue":[{"key":"gpu","value":"1"}]},)"
                    R"({"label":"//conditions:default"})"));
  REQUIRE(both.selected_exec_properties);
  CHECK(both.selected_exec_properties->branches.size() == 2);
  CHECK(both.selected_exec_properties->other_attributes.size() == 1);
}

TEST_CASE("jsonproto objects read across the reader's 1 MiB reads keep their strings and positions") {
  constexpr std::size_t read_size = std::size_t{1} << 20;  // what JsonObjects reads at a time
  auto object = [](const std::string& name, const std::string& location) {
    return "{\n  \"type\": \"RULE\",\n  \"rule\": {\"name\": \"" + name +
           "\", \"ruleClass\": \"sh_test\", \"location\": \"" + location + "\"}\n}\n";
  };
  // An escaped quote whose backslash ends the first read, and an escaped backslash whose second
  // half ends the second read, right before the quote that ends the string.
  std::string first = object("//a:t1", "");
  const std::size_t head = first.find("\"location\": \"") + 13;
  first = object("//a:t1", std::string(read_size - 1 - head, 'x') + "\\\"x");
  REQUIRE(first[read_size - 1] == '\\');
  std::string second = object("//a:t2", "");
  const std::size_t head2 = first.size() + second.find("\"location\": \"") + 13;
  second = object("//a:t2", std::string(2 * read_size - 2 - head2, 'y') + "\\\\");
  std::string text = first + second;
  REQUIRE(text.substr(2 * read_size - 2, 3) == "\\\\\"");
  TargetList list = read_text(text);
  REQUIRE(list.tests.size() == 2);
  REQUIRE(find(list, "//a:t1").location.ends_with("x\"x"));
  REQUIRE(find(list, "//a:t2").location.ends_with("y\\"));
  // Lines and columns counted over every read: the ninth line, after two objects of four.
  REQUIRE_THROWS_WITH(read_text(text + "  garbage\n"),
                      "input:9:3: text after the end of the JSON object that ended at line 8: 'g' where the "
                      "next object should begin");
  // An object past the limit is refused at the byte that passes it.
  std::string huge = "{\"type\": \"RULE\", \"rule\": {\"name\": \"//a:t\", \"location\": \"" +
                     std::string(std::size_t{65} << 20, 'z') + "\"}}\n";
  REQUIRE_THROWS_WITH(read_text(huge, InputFormat::jsonproto),
                      "input:1:67108865: a JSON object longer than 64 MiB");
}
