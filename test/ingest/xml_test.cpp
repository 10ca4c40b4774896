#include <fmt/format.h>

#include <catch2/catch.hpp>
#include <map>
#include <string>

#include "gpuplan/error.hpp"
#include "ingest/ingest_helpers.hpp"

using namespace gpuplan;
using namespace gpuplan::testing;

TEST_CASE("the captured query of the example workspace yields its 23 tests and drops the rest") {
  TargetList list = read_fixture("bazel/all.query.xml");
  REQUIRE(list.format == "xml");
  REQUIRE(list.tests.size() == 23);
  REQUIRE(list.dropped.test_suites == 2);
  REQUIRE(list.dropped.non_test_rules == 1);  // the filegroup
}

TEST_CASE("xml keeps tags, size, shards, flakiness, exec_properties, macro and location") {
  TargetList list = read_fixture("bazel/all.query.xml");
  const Target& train = find(list, "//ml:train_test");
  REQUIRE(train.rule_class == "sh_test");
  REQUIRE(train.size == "large");
  REQUIRE(train.shard_count == 4);
  REQUIRE(train.tags == std::vector<Symbol>{"cuda>=12.4", "gpu-mem:40GiB", "gpu:2", "nvlink"});
  REQUIRE(train.has_attributes);
  REQUIRE(find(list, "//ml:flaky_kernel_test").flaky);
  REQUIRE(find(list, "//ml:team_macro_test").generator_function == "gpu_test");
  const Target& remote = find(list, "//ml:remote_exec_test");
  REQUIRE(remote.exec_properties == ExecProperties{{"resources:gpu", "1"}, {"gpu_model", "a100"}});
  REQUIRE(remote.location.ends_with("examples/workspace/ml/BUILD:32:8"));
  REQUIRE(find(list, "//xla:triton_test").tags.front() == "gpu-cc>=8.0");  // entity decoded
}

TEST_CASE("xml counts source files, generated files and package groups as dropped") {
  TargetList list = read_text(R"(<?xml version="1.1" encoding="UTF-8" standalone="no"?>
<query version="2">
  <source-file location="/w/a/BUILD" name="//a:x.py"><visibility-label name="//visibility:private"/></source-file>
  <generated-file generating-rule="//a:gen" location="/w/a/BUILD:1:1" name="//a:out.txt"/>
  <package-group location="/w/a/BUILD:2:1" name="//a:friends"/>
  <rule class="genrule" location="/w/a/BUILD:3:1" name="//a:gen"><rule-input name="//a:x.py"/></rule>
  <rule class="py_test" location="/w/a/BUILD:4:1" name="//a:t"><rule-input name="//a:x.py"/></rule>
</query>
)");
  REQUIRE(list.tests.size() == 1);
  REQUIRE(list.tests[0].size == "medium");  // Bazel leaves the default out
  REQUIRE(list.dropped.source_files == 1);
  REQUIRE(list.dropped.generated_files == 1);
  REQUIRE(list.dropped.other == 1);
  REQUIRE(list.dropped.non_test_rules == 1);
}

TEST_CASE("a query with no results is an empty list, not an error") {
  TargetList list = read_text(
      "<?xml version=\"1.1\" encoding=\"UTF-8\" standalone=\"no\"?>\n<query version=\"2\">\n</query>\n");
  REQUIRE(list.format == "xml");
  REQUIRE(list.tests.empty());
}

// Bazel never prints such a name; passed on after bazel test's --, "-//a:x" subtracted a target
// and "//..." ran every test of the workspace.
TEST_CASE("a test whose name is no label is an error at its line, in XML and JSON alike") {
  for (const std::string name : {"-//a:x", "pkg:rel", "...", " //a:x"}) {
    INFO(name);
    REQUIRE_THROWS_WITH(read_text("<?xml version=\"1.1\"?>\n<query version=\"2\">\n  <rule class=\"sh_test\" "
                                  "name=\"" +
                                  name + "\"/>\n</query>\n"),
                        Catch::Contains("input:3") && Catch::Contains("\"" + name + "\" is not a label"));
    REQUIRE_THROWS_WITH(read_text(R"({"type":"RULE","rule":{"name":")" + name +
                                  R"(","ruleClass":"sh_test"}})"
                                  "\n"),
                        Catch::Contains("input:1") && Catch::Contains("\"" + name + "\" is not a label"));
  }
  // A library may be named anyhow: only tests reach bazel test.
  REQUIRE(read_text(R"({"type":"RULE","rule":{"name":"weird","ruleClass":"py_library"}})"
                    "\n")
              .tests.empty());
}

TEST_CASE("truncated xml is an error at the line where it stops") {
  std::string text =
      "<?xml version=\"1.1\"?>\n<query version=\"2\">\n  <rule class=\"sh_test\" name=\"//a:t\">\n";
  try {
    read_text(text);
    FAIL("no error");
  } catch (const InputError& error) {
    REQUIRE(error.position().line == 4);
    REQUIRE_THAT(error.what(), Catch::Contains("malformed XML"));
  }
}

TEST_CASE("an xml shard_count that is not a number is an error naming the target and position") {
  std::string text =
      "<query version=\"2\">\n<rule class=\"sh_test\" name=\"//a:t\">\n"
      "  <int name=\"shard_count\" value=\"four\"/>\n</rule></query>";
  try {
    read_text(text);
    FAIL("no error");
  } catch (const InputError& error) {
    REQUIRE(error.position().str() == "input:3:3");
    REQUIRE_THAT(error.what(),
                 Catch::Contains("shard_count of //a:t") && Catch::Contains("\"four\" is not an integer"));
  }
}

TEST_CASE(
    "an xml shard_count set by select() is marked unresolved; any other attribute without a value is an "
    "error") {
  auto target = read_text(
                    "<query version=\"2\"><rule class=\"sh_test\" name=\"//a:t\">"
                    "<int configurable=\"yes\" name=\"shard_count\"/></rule></query>")
                    .tests.at(0);
  CHECK(target.shard_count_unresolved);
  CHECK(target.shard_count == 0);
  REQUIRE_THROWS_WITH(read_text("<query version=\"2\"><rule class=\"sh_test\" name=\"//a:t\">"
                                "<int name=\"shard_count\"/></rule></query>"),
                      Catch::Contains("attribute shard_count of //a:t has no value"));
  REQUIRE_THROWS_WITH(read_text("<query version=\"2\"><rule class=\"sh_test\" name=\"//a:t\">"
                                "<string configurable=\"yes\" name=\"size\"/></rule></query>"),
                      Catch::Contains("attribute size of //a:t has no value"));
}

TEST_CASE("an xml attribute written as the wrong element is an error, not a guess") {
  std::string text =
      "<query version=\"2\"><rule class=\"sh_test\" name=\"//a:t\">"
      "<string name=\"tags\" value=\"gpu\"/></rule></query>";
  REQUIRE_THROWS_WITH(read_text(text), Catch::Contains("attribute tags of //a:t is a <string>"));
}

TEST_CASE("xml that is not a query is refused") {
  REQUIRE_THROWS_WITH(read_text("<html><body/></html>"), Catch::Contains("<html> is not the root"));
}

TEST_CASE("rule inputs in every spelling and across read boundaries leave the tests intact") {
  std::string text = "<query version=\"2\">\n";
  for (int i = 0; i < 20000; ++i) {  // about 3 MB: elements straddle the 1 MiB reads
    text += "<rule class=\"sh_test\" name=\"//a:t" + std::to_string(i) + "\">\n";
    text += "  <rule-input name='//a:in.sh' />\n  <rule-input  name=\"@x//y:z\"></rule-input>\n";
    text += "  <list name=\"tags\"><string value=\"gpu\"/><string value=\"rule-input\"/></list>\n";
    text += "  <rule-output name=\"//a:out\"/>\n</rule>\n";
  }
  TargetList list = read_text(text + "</query>\n");
  REQUIRE(list.tests.size() == 20000);
  for (const Target& target : list.tests) REQUIRE(target.tags == std::vector<Symbol>{"gpu", "rule-input"});
}

TEST_CASE("errors after rule inputs still point at the right line and column") {
  std::string text =
      "<query version=\"2\">\n<rule class=\"sh_test\" name=\"//a:t\">\n"
      "  <rule-input name=\"//a:x\"/>\n  <int name=\"shard_count\" value=\"-4\"/>\n</rule></query>";
  REQUIRE_THROWS_WITH(read_text(text), Catch::StartsWith("input:4:3: ") && Catch::Contains("negative"));
  // Elements blanked before expat sees them keep their line breaks, even inside a tag.
  std::string spread =
      "<query version=\"2\">\n<rule class=\"sh_test\" name=\"//a:t\">\n"
      "  <rule-input\n    name=\"//a:x\"/>\n  <string name=\"generator_location\"\n    "
      "value=\"a/BUILD:1\"/>\n"
      "  <int name=\"shard_count\" value=\"-4\"/>\n</rule></query>";
  REQUIRE_THROWS_WITH(read_text(spread), Catch::StartsWith("input:7:3: ") && Catch::Contains("negative"));
}

TEST_CASE("a shard_count above gpuplan's cap is an error in every format that carries it") {
  // 2^31-1 shards once made a 225-byte query allocate until the machine gave up.
  auto xml = [](const std::string& count) {
    return "<query version=\"2\">\n<rule class=\"sh_test\" name=\"//a:t\">\n  <int name=\"shard_count\" "
           "value=\"" +
           count + "\"/>\n</rule></query>";
  };
  auto json = [](const std::string& count) {
    return R"({"type":"RULE","rule":{"name":"//a:t","ruleClass":"sh_test","attribute":[{"name":"shard_count","type":"INTEGER","intValue":)" +
           count + "}]}}\n";
  };
  for (const auto& text : {xml("10001"), json("10001"), xml("2147483647"), json("2147483647")}) {
    INFO(text);
    REQUIRE_THROWS_WITH(
        read_text(text),
        Catch::StartsWith("input:") && Catch::Contains("above gpuplan's limit of 10000 (Bazel's default "
                                                       "limit is 50)"));
  }
  REQUIRE(read_text(xml("10000")).tests.at(0).shard_count == 10000);
  REQUIRE(read_text(json("50")).tests.at(0).shard_count == 50);
}

TEST_CASE("a size or timeout Bazel would refuse is an error at its line, in XML and JSON alike") {
  // Before, "huge" went into the plan as the test's size (outside the plan schema) and the test was
  // planned at the medium default, exit 0.
  auto xml = [](const std::string& name, const std::string& value) {
    return "<query version=\"2\">\n<rule class=\"sh_test\" name=\"//a:t\">\n  <string name=\"" + name +
           "\" value=\"" + value + "\"/>\n</rule></query>";
  };
  auto json = [](const std::string& name, const std::string& value) {
    return R"({"type":"RULE","rule":{"name":"//a:t","ruleClass":"sh_test","attribute":[{"name":")" + name +
           R"(","type":"STRING","stringValue":")" + value + "\"}]}}\n";
  };
  REQUIRE_THROWS_WITH(read_text(xml("size", "huge")),
                      Catch::StartsWith("input:3:3: attribute size of //a:t: \"huge\" is not small, medium, "
                                        "large or enormous"));
  REQUIRE_THROWS_WITH(read_text(json("size", "Large")), Catch::Contains("\"Large\" is not small"));
  REQUIRE_THROWS_WITH(
      read_text(xml("timeout", "forever")),
      Catch::Contains("attribute timeout of //a:t: \"forever\" is not short, moderate, long or "
                      "eternal"));
  REQUIRE_THROWS_WITH(read_text(json("timeout", "")), Catch::Contains("\"\" is not short"));
  REQUIRE(read_text(xml("size", "enormous")).tests.at(0).size == "enormous");
  REQUIRE(read_text(json("timeout", "eternal")).tests.at(0).timeout == "eternal");
}

TEST_CASE("a label line that is not UTF-8 is an error at its line") {
  REQUIRE_THROWS_WITH(read_text("//a:ok_test\n//a:\xff_test\n", InputFormat::label),
                      Catch::StartsWith("input:2: not UTF-8 text"));
}

TEST_CASE("attributes gpuplan never reads, in every spelling and across read boundaries, change nothing") {
  // The reader blanks these before expat sees them; the kept ones, nameless list items and a kept
  // name written as the wrong element must come through as before.
  std::string text = "<query version=\"2\">\n";
  for (int i = 0; i < 20000; ++i) {  // about 4 MB: elements straddle the 1 MiB reads
    text += "<rule class=\"sh_test\" name=\"//a:t" + std::to_string(i) + "\">\n";
    text += "  <string name=\"name\" value=\"t" + std::to_string(i) + "\"/>\n";
    text += "  <label  name='main' value=\"//a:m.sh\" />\n  <boolean\tname=\"linkstatic\" value=\"true\"/>\n";
    text += "  <list name=\"srcs\"><label value=\"//a:t.sh\"/><label value='//a:u.sh'/></list>\n";
    text += "  <list name=\"tags\"><string value=\"gpu\"/></list>\n";
    text += "  <list name=\"target_compatible_with\">\n    <label value=\"//:has_gpu\"/>\n  </list>\n";
    text += "  <list  name='exec_compatible_with'><label value=\"//:gpu_pool\"/></list>\n";
    text += "  <string value=\"large\" name=\"size\"/>\n  <int name=\"shard_count\" value=\"3\"/>\n</rule>\n";
  }
  TargetList list = read_text(text + "</query>\n");
  REQUIRE(list.tests.size() == 20000);
  for (const Target& target : list.tests) {
    REQUIRE(target.tags == std::vector<Symbol>{"gpu"});
    REQUIRE(target.size == "large");
    REQUIRE(target.shard_count == 3);
    REQUIRE(target.constraints.size() == 2);  // the srcs labels are not among them
    REQUIRE(target.constraints[0].source() == "target_compatible_with //:has_gpu");
    REQUIRE(target.constraints[1].source() == "exec_compatible_with //:gpu_pool");
  }
  std::string wrong =
      "<query version=\"2\">\n<rule class=\"sh_test\" name=\"//a:t\">\n"
      "  <label name=\"main\" value=\"//a:m\"/>\n  <label name=\"size\" value=\"//a:x\"/>\n</rule></query>";
  REQUIRE_THROWS_WITH(read_text(wrong), Catch::StartsWith("input:4:3: ") &&
                                            Catch::Contains("attribute size of //a:t is a <label>"));
}

TEST_CASE("a constraint list whose <list tag a read boundary cuts keeps its labels") {
  // The reader's first read ends at 64 KiB (what format detection read ahead): a <list tag of
  // target_compatible_with cut there as "<li" was not seen, and its labels were blanked as
  // unused, so the GPU constraint vanished with no word.
  const std::string rule_head = "<rule class=\"sh_test\" name=\"//a:t\">\n  ";
  const std::string list = "<list name=\"target_compatible_with\"><label value=\"//:nvidia_gpu\"/></list>\n";
  for (std::size_t cut = 0; cut <= 8; ++cut) {
    INFO("the tag starts " << cut << " bytes before the first read's end");
    std::string text =
        "<query version=\"2\">\n<rule class=\"filegroup\" name=\"//p:pad\">\n  <string name=\"name\" "
        "value=\"";
    std::size_t tag_at = (std::size_t{1} << 16) - cut;
    std::string after_pad = "\"/>\n</rule>\n" + rule_head;
    text += std::string(tag_at - text.size() - after_pad.size(), 'p') + after_pad;
    REQUIRE(text.size() == tag_at);
    TargetList read = read_text(text + list + "</rule>\n</query>\n");
    REQUIRE(read.tests.size() == 1);
    REQUIRE(read.tests[0].constraints.size() == 1);
    CHECK(read.tests[0].constraints[0].source() == "target_compatible_with //:nvidia_gpu");
  }
}

TEST_CASE("a rule-input or rule-output outside any rule is an error at its position, not skipped") {
  const std::string rule =
      "<rule class=\"sh_test\" name=\"//a:t\">\n  <rule-input name=\"//a:x\"/>\n</rule>\n";
  REQUIRE_THROWS_WITH(
      read_text("<query version=\"2\">\n" + rule + "  <rule-input name=\"//a:stray\"/>\n</query>"),
      "input:5:3: a <rule-input> outside any <rule>: Bazel writes a rule's inputs and outputs "
      "inside it");
  REQUIRE_THROWS_WITH(
      read_text("<query version=\"2\">\n<rule-output name=\"//a:out\"/>\n" + rule + "</query>"),
      Catch::StartsWith("input:2:1: a <rule-output> outside any <rule>"));
  REQUIRE_THROWS_WITH(read_text("<query version=\"2\">\n<source-file name=\"//a:x\" location=\"a/BUILD\">"
                                "<rule-input name=\"//a:y\"/></source-file>\n</query>"),
                      Catch::StartsWith("input:2:46: a <rule-input> outside any <rule>"));
  // After an empty <rule .../>, the next one is outside again.
  REQUIRE_THROWS_WITH(read_text("<query version=\"2\">\n<rule class=\"sh_test\" name=\"//a:t\"/>\n"
                                "<rule-input name=\"//a:y\"/>\n</query>"),
                      Catch::StartsWith("input:3:1: a <rule-input> outside any <rule>"));
}

TEST_CASE("a stray rule-input is found however the reads cut the </rule> before it") {
  // The reader blanks the rule inputs it knows to be inside a rule before expat reads them, one
  // read at a time. The first read ends where the look at the input's start ended (4 KiB when the
  // format is given, 64 KiB when it is detected); here the </rule> before the stray input
  // straddles that end by every amount.
  const std::string rule =
      "<rule class=\"sh_test\" name=\"//a:t\">\n  <rule-input name=\"//a:x\"/>\n</rule>\n";
  for (auto [format, first_read] : {std::pair{std::optional(InputFormat::xml), std::size_t{4096}},
                                    std::pair{std::optional<InputFormat>(), std::size_t{65536}}}) {
    std::string head = "<query version=\"2\">\n";
    while (head.size() + rule.size() < first_read - 128) head += rule;
    head += "<rule class=\"sh_test\" name=\"//a:last\">\n  <rule-input name=\"//a:x\"/>\n";
    for (std::size_t cut = 0; cut <= 8; ++cut) {
      std::string text =
          head + std::string(first_read - cut - head.size(), ' ');  // </rule> at `cut` before the end
      text += "</rule><rule-input name=\"//a:stray\"/>\n</query>";
      INFO("first read " << first_read << ", cut " << cut);
      REQUIRE_THROWS_WITH(read_text(text, format), Catch::Contains("a <rule-input> outside any <rule>"));
    }
  }
}

// A test's env that sets CUDA_VISIBLE_DEVICES replaces the GPUs gpuplan plans for it: read,
// as JSON reads it, so that classify can say so.
TEST_CASE("of a test's env, the key that chooses GPUs is kept, in XML and JSON alike") {
  auto xml = read_text(R"(<?xml version="1.1" encoding="UTF-8" standalone="no"?>
<query version="2">
  <rule class="sh_test" location="/w/a/BUILD:4:1" name="//a:t">
    <dict name="env">
      <pair><string value="PYTHONPATH"/><string value="x"/></pair>
      <pair><string value="CUDA_VISIBLE_DEVICES"/><string value="0,1"/></pair>
    </dict>
  </rule>
</query>
)");
  CHECK(xml.tests.at(0).launch().device_env == "CUDA_VISIBLE_DEVICES=0,1");
  auto json =
      read_text(R"({"type":"RULE","rule":{"name":"//a:t","ruleClass":"sh_test","attribute":[)"
                R"({"name":"env","type":"STRING_DICT","stringDictValue":[{"key":"HIP_VISIBLE_DEVICES",)"
                R"("value":""},{"key":"X","value":"y"}]}]}})"
                "\n");
  CHECK(json.tests.at(0).launch().device_env == "HIP_VISIBLE_DEVICES=");
  CHECK(read_fixture("bazel/all.query.xml").tests.at(0).launch().device_env.empty());
  // A select()ed env is every branch merged: no one build's. A pair with its key alone (not
  // Bazel's output) leaves nothing to the next dict.
  auto odd = read_text(R"(<?xml version="1.1" encoding="UTF-8" standalone="no"?>
<query version="2">
  <rule class="sh_test" location="/w/a/BUILD:4:1" name="//a:t">
    <dict configurable="yes" name="env">
      <pair><string value="CUDA_VISIBLE_DEVICES"/><string value=""/></pair>
    </dict>
    <dict name="exec_properties"><pair><string value="FOO"/></pair></dict>
    <dict name="exec_properties"><pair><string value="resources:gpu"/><string value="1"/></pair></dict>
  </rule>
</query>
)");
  CHECK(odd.tests.at(0).launch().device_env.empty());
  CHECK(odd.tests.at(0).exec_properties == ExecProperties{{"resources:gpu", "1"}});
}

// rtp-llm's multi-GPU tests give their GPU count only as their env's WORLD_SIZE: kept, from XML
// and JSON alike, beside the other env keys (not read).
TEST_CASE("of a test's env, WORLD_SIZE is kept, in XML and JSON alike") {
  for (const char* fixture : {"rtp_llm/world_size.query.xml", "rtp_llm/world_size.streamed_jsonproto"}) {
    INFO(fixture);
    auto list = read_fixture(fixture);
    REQUIRE(list.tests.size() == 4);
    for (const auto& t : list.tests) {
      INFO(t.label);
      bool sets = t.label == "//rtp_llm/models_py/modules/base/cuda/test:torch_symm_mem_test" ||
                  t.label == "//rtp_llm/test/perf_test:v4_flash_dp4_decode_grid_perf";
      CHECK(t.launch().world_size_env == (sets ? "WORLD_SIZE=4" : ""));
      CHECK(t.launch().device_env.empty());
    }
  }
}

// A WORLD_SIZE that is no count from 1 to 255 was kept as none, so classify could not say so.
TEST_CASE("of a test's env, WORLD_SIZE is kept as written, whatever its value") {
  for (const char* fixture :
       {"bazel/world_size_values.query.xml", "bazel/world_size_values.streamed_jsonproto"}) {
    INFO(fixture);
    std::map<std::string, std::string> kept;
    for (const auto& t : read_fixture(fixture).tests) kept[t.label] = t.launch().world_size_env.str();
    CHECK(kept == std::map<std::string, std::string>{{"//t:ranks_512", "WORLD_SIZE=512"},
                                                     {"//t:ranks_5000", "WORLD_SIZE=5000"},
                                                     {"//t:ranks_blank", "WORLD_SIZE=4 "},
                                                     {"//t:ranks_counted", "WORLD_SIZE=$(WORLD_SIZE)"},
                                                     {"//t:ranks_cpu", "WORLD_SIZE=$(WORLD_SIZE)"},
                                                     {"//t:ranks_empty", "WORLD_SIZE="},
                                                     {"//t:ranks_make_variable", "WORLD_SIZE=$(WORLD_SIZE)"},
                                                     {"//t:ranks_negative", "WORLD_SIZE=-1"},
                                                     {"//t:ranks_zero", "WORLD_SIZE=0"}});
  }
}

// Query prints a select()ed exec_properties as its branches merged, each key with the first
// branch's value, with no configurable mark: {"gpu": "1"} before {"gpu": "4"} reads as 1 GPU.
// Its only trace is the config_setting among the test's rule-inputs, which no printed label
// attribute names (test/data/bazel/select_props.*, real Bazel 4 output).
TEST_CASE("a test with exec_properties and an input none of its attributes names keeps that input") {
  TargetList list = read_fixture("bazel/select_props.query.xml");
  const Target& selected = find(list, "//:selected_gpu_test");
  CHECK(selected.exec_properties == ExecProperties{{"gpu", "1"}});
  CHECK(selected.unexplained_input() == "//:cuda_big");
  // Plain tests of each kind: srcs, deps, data, main, and the implicit @bazel_tools inputs.
  for (auto label : {"//:plain_sh_test", "//:plain_py_test", "//:plain_cc_test", "//:plain_cc_nogpu_test"}) {
    INFO(label);
    CHECK(find(list, label).unexplained_input().empty());
  }
  // A select() on deps leaves the same trace; query cannot tell which attribute had it, so a test
  // with exec_properties keeps it, one without has nothing to guess.
  CHECK(find(list, "//:selected_deps_test").unexplained_input() == "//:cuda");
  CHECK(find(list, "//:selected_deps_nogpu_test").unexplained_input().empty());
}

TEST_CASE("the implicit inputs of later Bazels' test rules are not taken for a select()'s trace") {
  // A py_test of rules_python adds //python/config_settings inputs of its own repository, under
  // bzlmod by canonical name; only the user's config_setting is unexplained.
  auto rule_with = [](const std::string& inputs) {
    return "<query version=\"2\">\n<rule class=\"py_test\" location=\"/ws/BUILD:1:1\" name=\"//:t\">\n"
           "  <dict name=\"exec_properties\">\n    <pair>\n      <string value=\"gpu\"/>\n"
           "      <string value=\"2\"/>\n    </pair>\n  </dict>\n" +
           inputs + "</rule>\n</query>\n";
  };
  std::string implicit;
  for (auto label : {"@rules_python//python/config_settings:precompile", "@@rules_python+//python:none",
                     "@@rules_python~0.31.0//python/config_settings:is_python_3.11", "@@platforms//os:linux",
                     "@rules_cc//cc:optional_current_cc_toolchain", "@@rules_shell+//shell/runfiles",
                     "@io_bazel_rules_go//:go_context_data", "@@+_repo_rules+local_config_cc//:toolchain",
                     "@bazel_skylib//lib:paths", "//external:python_headers"})
    implicit += fmt::format("  <rule-input name=\"{}\"/>\n", label);
  CHECK(read_text(rule_with(implicit), InputFormat::xml).tests.back().unexplained_input().empty());
  CHECK(read_text(rule_with(implicit + "  <rule-input name=\"@@my_gpus+//:cuda_big\"/>\n"), InputFormat::xml)
            .tests.back()
            .unexplained_input() == "@@my_gpus+//:cuda_big");
}

TEST_CASE(
    "a select() that makes a test incompatible keeps its condition, as rules_cuda's requires_cuda_enabled() "
    "writes it") {
  // Query prints target_compatible_with merged (@platforms//:incompatible alone); the
  // config_setting is only a rule-input, which no printed label names.
  const TargetList list = read_fixture("pytorch/c10_cuda_test.query.xml");
  const Target& test = find(list, "//c10/cuda/test:test");
  REQUIRE(test.constraints.size() == 2);
  CHECK(test.constraints[0].label == "@platforms//:incompatible");
  CHECK(!test.constraints[0].condition);
  CHECK(test.constraints[1].label == "@rules_cuda//cuda:is_cuda_enabled");
  CHECK(test.constraints[1].condition);
  CHECK(test.constraints[1].source() ==
        "target_compatible_with select() on @rules_cuda//cuda:is_cuda_enabled");
  // Without @platforms//:incompatible the same input is nothing to read.
  auto rule = [](const std::string& compatible) {
    return "<query version=\"2\">\n<rule class=\"cc_test\" location=\"/ws/BUILD:1:1\" name=\"//:t\">\n"
           "  <list name=\"target_compatible_with\">\n    <label value=\"" +
           compatible + "\"/>\n  </list>\n  <rule-input name=\"" + compatible +
           "\"/>\n  <rule-input name=\"@bazel_tools//tools/test:runtime\"/>\n"
           "  <rule-input name=\"@rules_cuda//cuda:is_cuda_enabled\"/>\n</rule>\n</query>\n";
  };
  CHECK(read_text(rule("//:has_gpu"), InputFormat::xml).tests.back().constraints.size() == 1);
  CHECK(read_text(rule("@@platforms//:incompatible"), InputFormat::xml).tests.back().constraints.size() == 2);
}

TEST_CASE("the input no attribute names is found wherever the reads cut the test's rule") {
  // The reader blanks rule-inputs and unused labels one read at a time; a test rule with
  // exec_properties is left whole, also when a read ends inside it (the first read is 4 KiB
  // when the format is given).
  const std::string selected =
      "<rule class=\"sh_test\" location=\"/ws/BUILD:1:1\" name=\"//:sel_test\">\n"
      "  <string name=\"name\" value=\"sel_test\"/>\n"
      "  <list name=\"data\">\n    <label value=\"//:data.txt\"/>\n  </list>\n"
      "  <dict name=\"exec_properties\">\n    <pair>\n      <string value=\"gpu\"/>\n"
      "      <string value=\"1\"/>\n    </pair>\n  </dict>\n"
      "  <list name=\"srcs\">\n    <label value=\"//:pass.sh\"/>\n  </list>\n"
      "  <rule-input name=\"//:cuda_big\"/>\n  <rule-input name=\"//:data.txt\"/>\n"
      "  <rule-input name=\"//:pass.sh\"/>\n"
      "  <rule-input name=\"@bazel_tools//tools/test:runtime\"/>\n</rule>\n";
  const std::string trace = "  <rule-input name=\"//:cuda_big\"/>\n";
  std::string plain = selected;
  plain.erase(plain.find(trace), trace.size());
  const std::string filler =
      "<rule class=\"sh_test\" name=\"//a:t\">\n  <rule-input name=\"//a:x\"/>\n</rule>\n";
  for (const std::string* rule : {&selected, static_cast<const std::string*>(&plain)}) {
    for (std::size_t cut = 1; cut < rule->size(); ++cut) {
      std::string text = "<query version=\"2\">\n";
      while (text.size() + filler.size() < 4096 - rule->size()) text += filler;
      text += std::string(4096 - cut - text.size(), ' ') + *rule + "</query>\n";
      INFO("cut " << cut << " bytes into " << *rule);
      TargetList list = read_text(text, InputFormat::xml);
      const Target& test = list.tests.back();
      CHECK(test.unexplained_input() == (rule == &selected ? "//:cuda_big" : ""));
      CHECK(test.exec_properties == ExecProperties{{"gpu", "1"}});
    }
  }
}

// JAX's multi-process tests say in their args how many processes they start with how many GPUs
// each: those two flags are kept, in order, from XML and JSON alike; a select()ed args is not.
TEST_CASE("of a test's args, JAX's process and GPU counts are kept, in XML and JSON alike") {
  auto fixture = read_fixture("jax/tests.query.xml");
  std::map<std::string, std::string> kept;
  for (const auto& t : fixture.tests) kept[t.label] = t.launch().process_args.str();
  CHECK(kept.at("//tests/mosaic:gpu_distributed_test_gpu") == "--num_processes=2 --gpus_per_process=1");
  CHECK(kept.at("//tests/multiprocess:all_reduce_test_gpu") == "--num_processes=4 --gpus_per_process=2");
  CHECK(kept.at("//tests/multiprocess:all_reduce_test_cpu") == "--num_processes=4");
  auto selected = read_text(R"(<?xml version="1.1" encoding="UTF-8" standalone="no"?>
<query version="2">
  <rule class="py_test" location="/w/a/BUILD:4:1" name="//a:t">
    <list configurable="yes" name="args">
      <string value="--num_processes=2"/>
      <string value="--num_processes=4"/>
    </list>
  </rule>
</query>
)");
  CHECK(selected.tests.at(0).launch().process_args.empty());
  auto json = read_text(R"({"type":"RULE","rule":{"name":"//a:t","ruleClass":"py_test","attribute":[)"
                        R"({"name":"args","type":"STRING_LIST","stringListValue":["--jax_test_dut=gpu",)"
                        R"("--num_processes=4","--gpus_per_process=2"]}]}})"
                        "\n");
  CHECK(json.tests.at(0).launch().process_args == "--num_processes=4 --gpus_per_process=2");
  auto unflattened =
      read_text(R"({"type":"RULE","rule":{"name":"//a:t","ruleClass":"py_test","attribute":[)"
                R"({"name":"args","type":"SELECTOR_LIST","selectorList":{"type":"STRING_LIST"}}]}})"
                "\n");
  CHECK(unflattened.tests.at(0).launch().process_args.empty());
}
