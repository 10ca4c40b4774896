// Combining annotations: conflicts, malformed annotations, rules, and the order of the result.
#include <fmt/format.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <map>
#include <numeric>
#include <tuple>

#include "annotate/classify_helpers.hpp"
#include "util/text.hpp"

using namespace gpuplan;
using gpuplan::testing::classify_one;
using gpuplan::testing::make_target;

namespace {

Classification classify_tags(std::vector<std::string> tags, bool strict = false) {
  return classify_one(make_target("//ml:train_test", std::move(tags)), {}, {.strict = strict});
}

}  // namespace

TEST_CASE("two different GPU counts: the largest wins with a warning naming the label and both tags") {
  auto c = classify_tags({"gpu:2", "resources:gpu:4"});
  REQUIRE(c.tests.at(0).requirement->gpus == Sourced<int>{4, "tag resources:gpu:4"});
  REQUIRE(c.diagnostics.size() == 1);
  const auto& d = c.diagnostics[0];
  REQUIRE(d.severity == Severity::warning);
  REQUIRE(d.label == "//ml:train_test");
  REQUIRE(d.source == "tag gpu:2, tag resources:gpu:4");
  REQUIRE(d.message ==
          "tag gpu:2 asks for 2 GPUs but tag resources:gpu:4 for 4 GPUs; using 4, the largest count");
}

TEST_CASE("under --strict a conflict is an error") {
  auto c = classify_tags({"gpu:2", "resources:gpu:4"}, true);
  REQUIRE(has_errors(c.diagnostics));
}

TEST_CASE("a gpu tag beside an explicit count is no conflict") {
  auto c = classify_tags({"gpu", "gpu:2", "requires-gpu-nvidia"});
  REQUIRE(c.tests.at(0).requirement->gpus.value == 2);
  REQUIRE(c.diagnostics.empty());
}

TEST_CASE("CPU-only wins over GPU signals, with a warning naming both sources") {
  auto c = classify_tags({"gpu:2", "no_gpu"});
  const auto& t = c.tests.at(0);
  REQUIRE(t.bucket == Bucket::cpu);
  REQUIRE(t.requirement->gpus.value == 0);
  REQUIRE(t.reason == "tag no_gpu → CPU only (overriding tag gpu:2)");
  REQUIRE(c.diagnostics.size() == 1);
  REQUIRE(c.diagnostics[0].severity == Severity::warning);
  REQUIRE(c.diagnostics[0].source == "tag no_gpu, tag gpu:2");
  REQUIRE(c.diagnostics[0].message ==
          "tag no_gpu says CPU only but tag gpu:2 asks for a GPU; CPU-only wins, so it runs as a CPU test");
  REQUIRE(has_errors(classify_tags({"gpu:2", "no_gpu"}, true).diagnostics));
}

TEST_CASE("two memory sizes: the largest wins with a warning") {
  auto c = classify_tags({"gpu", "gpu-mem:16G", "gpu_mem:40G"});
  REQUIRE(c.tests.at(0).requirement->gpu_mem_mib->value == 40960);
  REQUIRE(c.diagnostics.size() == 1);
  REQUIRE(c.diagnostics[0].source == "tag gpu-mem:16G, tag gpu_mem:40G");
}

TEST_CASE("model lists from two annotations narrow to the models both allow") {
  auto c = classify_one(make_target("//t:t", {"gpu-model:A100|H100"}, {{"gpu_model", "h100"}}));
  REQUIRE(c.tests.at(0).requirement->gpu_models->value == std::vector<std::string>{"h100"});
  REQUIRE(c.diagnostics.empty());
  auto clash = classify_one(make_target("//t:t", {"gpu-model:L4"}, {{"gpu_model", "h100"}}));
  REQUIRE(clash.tests.at(0).requirement->gpu_models->value == std::vector<std::string>{"l4"});
  REQUIRE(clash.diagnostics.size() == 1);
}

// A tag may hold blanks, and nvidia-smi's names do: gpu-model:Tesla T4 was malformed, and the
// test went to the CPU runners.
TEST_CASE("a GPU model written as nvidia-smi names it, blanks and all, is read") {
  auto c = classify_tags({"gpu-model:Tesla T4|NVIDIA H100 80GB HBM3"});
  REQUIRE(c.diagnostics.empty());
  REQUIRE(c.tests.at(0).bucket == Bucket::gpu);
  REQUIRE(c.tests.at(0).requirement->gpu_models->value ==
          std::vector<std::string>{"tesla t4", "nvidia h100 80gb hbm3"});
  REQUIRE(classify_tags({"gpu-model: t4"}).diagnostics.size() == 1);  // a blank at either end is a slip
}

TEST_CASE("a GPU family and a model of it narrow to the model, in either order") {
  // Before, `a100` and `a100-sxm-80gb` had no model in common: a warning (an error under
  // --strict), and the test kept the first annotation's list, `a100` (40 GB A100s too) or not.
  for (const auto& [tags, attribute] : std::vector<std::pair<std::string, std::string>>{
           {"gpu-model:a100", "A100-SXM-80GB"}, {"gpu-model:A100-SXM-80GB|H100", "a100"}}) {
    auto c = classify_one(make_target("//t:t", {tags}, {{"gpu_model", attribute}}));
    REQUIRE(c.tests.at(0).requirement->gpu_models->value == std::vector<std::string>{"a100-sxm-80gb"});
    REQUIRE(c.diagnostics.empty());
  }
  // Families named_gpu_model does not read: max1100 (the catalog writes Max-1100), l4.
  for (const auto& [family, model] :
       std::vector<std::pair<std::string, std::string>>{{"max1100", "Max-1100"}, {"l4", "L4-24GB"}}) {
    auto c = classify_one(make_target("//t:t", {"gpu-model:" + family}, {{"gpu_model", model}}));
    REQUIRE(c.tests.at(0).requirement->gpu_models->value == std::vector<std::string>{util::lower(model)});
    REQUIRE(c.diagnostics.empty());
  }
  // A pool's family and memory (gpu-a100-80gb) and a model of both narrow to the model.
  auto pool = classify_one(make_target("//t:t", {"gpu-model:A100-SXM-80GB"}, {{"Pool", "gpu-a100-80gb"}}));
  REQUIRE(pool.tests.at(0).requirement->gpu_models->value == std::vector<std::string>{"a100-sxm-80gb"});
  REQUIRE(pool.diagnostics.empty());
  REQUIRE(classify_one(make_target("//t:t", {"gpu-model:A100-SXM-40GB"}, {{"Pool", "gpu-a100-80gb"}}))
              .diagnostics.size() == 1);
  auto clash = classify_one(make_target("//t:t", {"gpu-model:h100"}, {{"gpu_model", "A100-SXM-80GB"}}));
  REQUIRE(clash.diagnostics.size() == 1);
  REQUIRE(classify_one(make_target("//t:t", {"gpu-model:l4"}, {{"gpu_model", "L40S"}})).diagnostics.size() ==
          1);
}

TEST_CASE("the same constraint written twice is kept once, from the first annotation") {
  auto t = classify_tags({"gpu-cc>=8.0", "requires-gpu-sm80"}).tests.at(0);
  REQUIRE(t.requirement->compute_capability.size() == 1);
  REQUIRE(t.requirement->compute_capability[0].source == "tag gpu-cc>=8.0");
  REQUIRE(t.requirement->gpus.source == "tag requires-gpu-sm80");
}

TEST_CASE("every malformed annotation is a warning naming the label and the tag, and is ignored") {
  struct Case {
    std::string tag;
    std::string problem;
  };
  for (const auto& [tag, problem] : std::vector<Case>{
           {"gpu:0", "a GPU count must be at least 1"},
           {"gpu:-1", "\"-1\" is not a GPU count"},
           {"gpu:99999999999", "99999999999 GPUs is more than any node has"},
           {"gpu:two", "\"two\" is not a GPU count"},
           {"gpu-mem:lots", "\"lots\" is not a memory size"},
           {"cuda>=twelve", "\">=twelve\" is not a version constraint"},
           {"gpu-cc>=eight", "\">=eight\" is not a version constraint"},
           // sm_80 written as a number: as a bound every GPU meets (<90) or none does (>=80).
           {"gpu-cc<90", "90 is not a compute capability: X.Y, such as 8.0 (sm_80) or 9.0"},
           {"gpu-cc>=8.0.1", "8.0.1 is not a compute capability"},
           {"cuda>=124", "124 is not a CUDA version, such as 12.4"},
           {"gpu-model:", "a GPU model name is empty"},
           {"requires-gpu-sm8", "write requires-gpu-smXY"},
           {"requires-gpu-nvidia:0", "a GPU count must be at least 1"},
       }) {
    INFO(tag);
    auto c = classify_tags({"gpu", tag});
    REQUIRE(c.tests.at(0).bucket == Bucket::gpu);
    REQUIRE(c.tests.at(0).requirement->gpus == Sourced<int>{1, "tag gpu"});
    REQUIRE(c.diagnostics.size() == 1);
    const auto& d = c.diagnostics[0];
    REQUIRE(d.severity == Severity::warning);
    REQUIRE(d.label == "//ml:train_test");
    REQUIRE(d.source == "tag " + tag);
    REQUIRE_THAT(d.message, Catch::Contains("tag " + tag + " is malformed: " + problem));
    REQUIRE_THAT(d.message, Catch::EndsWith(tag.starts_with("requires-gpu-")
                                                ? "a CPU runner would run the test without one)"
                                                : "it is ignored"));
    REQUIRE(has_errors(classify_tags({"gpu", tag}, true).diagnostics));
  }
}

TEST_CASE("a malformed requires-gpu- tag still makes a GPU test, as any tag of that prefix does") {
  // Before, requires-gpu-nvidia:two was ignored and the test planned on CPU runners.
  for (std::string tag : {"requires-gpu-nvidia:two", "requires-gpu-sm8"}) {
    INFO(tag);
    auto c = classify_tags({tag});
    REQUIRE(c.tests.at(0).bucket == Bucket::gpu);
    REQUIRE(c.tests.at(0).requirement->gpus.value == 1);
    REQUIRE(c.diagnostics.at(0).severity == Severity::warning);
  }
  CHECK(classify_tags({"requires-gpu-amd:two"}).tests.at(0).requirement->vendor->value == "amd");
}

TEST_CASE("a malformed tag of thousands of characters is quoted in part, not echoed whole twice") {
  std::string tag = "gpu-mem:" + std::string(5000, '9');
  auto c = classify_tags({"gpu", tag});
  REQUIRE(c.diagnostics.size() == 1);
  const auto& d = c.diagnostics[0];
  REQUIRE(d.source == "tag " + tag);  // the JSON diagnostic keeps it whole for tools
  REQUIRE(d.message.size() < 500);
  REQUIRE_THAT(d.message, Catch::StartsWith("tag gpu-mem:999") && Catch::Contains("… is malformed: \"999") &&
                              Catch::Contains("…\" is not a memory size"));
}

TEST_CASE("a GPU test whose shard_count query could not resolve is planned unsharded, with a warning") {
  auto gpu = make_target("//t:gpu_test", {"gpu"});
  gpu.shard_count_unresolved = true;
  auto cpu = make_target("//t:cpu_test", {});
  cpu.shard_count_unresolved = true;
  TargetList list;
  list.tests = {gpu, cpu};
  auto c = classify(list, {}, {});
  REQUIRE(c.diagnostics.size() == 1);  // a CPU test's shards take no GPU: nothing to say
  CHECK(c.diagnostics[0].severity == Severity::warning);
  CHECK(c.diagnostics[0].label == "//t:gpu_test");
  CHECK_THAT(c.diagnostics[0].message,
             Catch::StartsWith("shard_count is a select(), which bazel query cannot "
                               "resolve: it is planned unsharded"));
  ClassifyOptions strict;
  strict.strict = true;
  CHECK(has_errors(classify(list, {}, strict).diagnostics));
  // Tests with the same tags share a classification: the second still gets its own warning.
  list.tests = {make_target("//t:a_test", {"gpu"}), gpu};
  CHECK(classify(list, {}, {}).diagnostics.size() == 1);
  list.tests = {gpu, make_target("//t:z_test", {"gpu"})};
  CHECK(classify(list, {}, {}).diagnostics.size() == 1);
}

/// A select()ed exec_properties's trace in XML query input: an input no attribute names.
std::shared_ptr<const SelectedExecProperties> traced(std::string input) {
  return std::make_shared<const SelectedExecProperties>(
      SelectedExecProperties{.unexplained_input = std::move(input)});
}

// XML query input: a select()ed exec_properties prints as its branches merged, the first
// branch's value kept, and its only trace is an input no attribute names
// (SelectedExecProperties::unexplained_input).
TEST_CASE("a test that reads its GPUs from exec_properties that may be a select() is warned of") {
  auto selected = make_target("//:selected_gpu_test", {});
  selected.exec_properties = {{"gpu", "1"}};
  selected.selected_exec_properties = traced("//:cuda_big");
  auto plain = make_target("//:plain_test", {});
  plain.exec_properties = {{"gpu", "1"}};
  auto pool_only = make_target("//:pool_test", {});  // nothing of GPUs read from them
  pool_only.exec_properties = {{"Pool", "fast"}};
  pool_only.selected_exec_properties = traced("//:cuda_big");
  TargetList list;
  list.tests = {selected, plain, pool_only};
  auto c = classify(list, {}, {});
  CHECK(c.tests.at(0).bucket == Bucket::gpu);
  std::vector<Diagnostic> warnings;
  for (const auto& d : c.diagnostics)
    if (d.source == "exec_properties") warnings.push_back(d);
  REQUIRE(warnings.size() == 1);
  CHECK(warnings[0].severity == Severity::warning);
  CHECK(warnings[0].label == "//:selected_gpu_test");
  CHECK_THAT(warnings[0].message,
             Catch::StartsWith("exec_properties may be a select(): the test has the input //:cuda_big, which "
                               "none of its attributes names") &&
                 Catch::Contains("it is planned by exec_properties gpu=1"));
  ClassifyOptions strict;
  strict.strict = true;
  CHECK(has_errors(classify(list, {}, strict).diagnostics));
}

// JSON query input under --noproto:flatten_selects: the branches themselves
// (SelectedExecProperties::branches).
TEST_CASE("a select()ed exec_properties whose branches ask for different things is warned of") {
  auto branches = [](std::vector<ExecPropertiesBranch> list) {
    return std::make_shared<const SelectedExecProperties>(
        SelectedExecProperties{.branches = std::move(list)});
  };
  auto selected = make_target("//:selected_gpu_test", {}, {{"gpu", "1"}});
  selected.selected_exec_properties =
      branches({{"//conditions:default", {{"gpu", "1"}}}, {"//:cuda_big", {{"gpu", "4"}}}});
  // Branches that differ in nothing gpuplan reads ask for the same.
  auto same = make_target("//:same_test", {}, {{"gpu", "2"}, {"container-image", "docker://a"}});
  same.selected_exec_properties =
      branches({{"//:cuda", {{"gpu", "2"}, {"container-image", "docker://a"}}},
                {"//conditions:default", {{"gpu", "2.0"}, {"container-image", "b"}}}});
  // A branch of None (nothing) against a GPU is a difference, whatever is planned.
  auto none = make_target("//:none_test", {}, {{"gpu", "2"}});
  none.selected_exec_properties = branches({{"//:cuda_big", {{"gpu", "2"}}}, {"//conditions:default", {}}});
  TargetList list;
  list.tests = {selected, same, none};
  auto c = classify(list, {}, {});
  auto planned = std::find_if(c.tests.begin(), c.tests.end(),
                              [](const auto& test) { return test.target.label == "//:selected_gpu_test"; });
  REQUIRE(planned != c.tests.end());
  CHECK(planned->requirement->gpus.value == 1);  // planned by the merge, as from XML
  std::map<std::string, Diagnostic> warnings;    // by test
  for (const auto& d : c.diagnostics)
    if (d.source == "exec_properties") warnings.emplace(d.label, d);
  REQUIRE(warnings.size() == 2);
  CHECK(warnings.at("//:selected_gpu_test").severity == Severity::warning);
  CHECK(warnings.at("//:selected_gpu_test").message ==
        "exec_properties is a select() whose branches ask for different things: //conditions:default gives "
        "gpu=1 (1 GPU), //:cuda_big gives gpu=4 (4 GPUs); bazel query cannot tell which applies, and it is "
        "planned by gpu=1 (1 GPU: the branches merged, each key with the first branch's value, as "
        "--output=xml prints it) (bazel cquery --output=jsonproto gives the value for a configuration)");
  CHECK_THAT(warnings.at("//:none_test").message, Catch::Contains("//conditions:default gives {} (nothing)"));
  // Configurations past the 64 kept (several select()s concatenated) were not compared: said, even
  // where the ones kept agree.
  SelectedExecProperties capped{.branches = {{"//:a", {{"gpu", "2"}}}, {"//:b", {{"gpu", "2"}}}},
                                .more_branches = true};
  auto many = make_target("//:many_test", {}, {{"gpu", "2"}});
  many.selected_exec_properties = std::make_shared<const SelectedExecProperties>(capped);
  TargetList many_list;
  many_list.tests = {many};
  const auto many_diagnostics = classify(many_list, {}, {}).diagnostics;
  REQUIRE(many_diagnostics.size() == 1);
  CHECK_THAT(
      many_diagnostics.front().message,
      Catch::StartsWith("exec_properties is a select() of more than 2 configurations; gpuplan compared "
                        "the first 2, which ask for 2 GPUs"));
  ClassifyOptions strict;
  strict.strict = true;
  CHECK(has_errors(classify(list, {}, strict).diagnostics));
}

TEST_CASE("a malformed count alone does not make a GPU test: it is ignored, and said so") {
  auto c = classify_tags({"gpu:0"});
  REQUIRE(c.tests.at(0).bucket == Bucket::cpu);
  REQUIRE(c.tests.at(0).reason == "no GPU annotation it could read (tag gpu:0 malformed, ignored)");
  REQUIRE(c.tests.at(0).annotations.at(0).meaning.starts_with("ignored: a GPU count must be at least 1"));
}

TEST_CASE("Bazel's resources:gpu takes a float: 2.0 is two GPUs, a share of one is a whole one") {
  auto c = classify_tags({"resources:gpu:2.0"}, true);
  REQUIRE(c.tests.at(0).requirement->gpus.value == 2);
  REQUIRE(c.diagnostics.empty());
  // A share made it a CPU test with a warning ("0.5" is not a GPU count): never the CPU bucket.
  for (auto [amount, gpus] : {std::pair{"0.5", 1}, {".25", 1}, {"1.5", 2}, {"001.5", 2}}) {
    c = classify_tags({fmt::format("resources:gpu:{}", amount)}, true);
    REQUIRE(c.tests.at(0).bucket == Bucket::gpu);
    REQUIRE(c.tests.at(0).requirement->gpus.value == gpus);
    REQUIRE(c.diagnostics.at(0).severity == Severity::note);
    REQUIRE_THAT(
        c.diagnostics.at(0).message,
        Catch::Contains(fmt::format("asks for {} GPUs: gpuplan hands out whole GPUs, so {}", amount, gpus)));
  }
  c = classify_one(make_target("//t:t", {}, {{"resources:gpu", "0.5"}}));
  REQUIRE(c.tests.at(0).requirement->gpus.value == 1);
  for (std::string bad : {"0.0", "1.", "1.5x", "99999.5", "-0.5"}) {
    c = classify_tags({"resources:gpu:" + bad});
    REQUIRE(c.tests.at(0).bucket == Bucket::cpu);
    REQUIRE(c.diagnostics.at(0).severity == Severity::warning);
  }
}

TEST_CASE("a malformed exec_property is named with its key and value") {
  auto c = classify_one(make_target("//t:t", {}, {{"resources:gpu", "lots"}}));
  REQUIRE(c.diagnostics.at(0).source == "exec_properties resources:gpu=lots");
}

TEST_CASE("a tag that only mentions GPUs is ignored with a note, never an error") {
  for (std::string tag :
       {"gpu_friendly", "gpufriendly", "no_cuda_on_cpu_tap", "notap_gpu", "cpu_or_gpu", "skip_gpu",
        "gpu_unsupported", "non_gpu", "nocuda_build", "no-h100", "gpu_mlir_deviceless_test", "fake_gpus"}) {
    auto c = classify_tags({tag}, true);
    REQUIRE(c.tests.at(0).bucket == Bucket::cpu);
    REQUIRE(c.diagnostics.size() == 1);
    REQUIRE(c.diagnostics[0].severity == Severity::note);
    REQUIRE(c.diagnostics[0].source == "tag " + tag);
    REQUIRE_FALSE(has_errors(c.diagnostics));
  }
}

TEST_CASE("a test whose name says GPU, with no annotation, gets a note naming the tag to write") {
  // Apollo's cuda_util_test: untagged; its CI leaves it out of CPU runs by name.
  auto c = classify_one(make_target("//modules/map/pnc_map:cuda_util_test", {}));
  REQUIRE(c.tests.at(0).bucket == Bucket::cpu);
  REQUIRE(c.diagnostics.size() == 1);
  CHECK(c.diagnostics[0].severity == Severity::note);
  CHECK(c.diagnostics[0].source == "name cuda_util_test");
  // What to write keeps the vendor the name says (cuda: NVIDIA's).
  CHECK_THAT(c.diagnostics[0].message, Catch::Contains("if it needs a GPU, tag it requires-gpu-nvidia"));
  // Not where the name says otherwise, a tag says GPU or cpu-only, nor for a package's name.
  for (auto [label, tags] :
       std::vector<std::pair<std::string, std::vector<std::string>>>{{"//a:gpu_disabled_test", {}},
                                                                     {"//a:gpu_test", {"gpu"}},
                                                                     {"//a:gpu_test", {"cpu-only"}},
                                                                     {"//gpu:rt_net_test", {}}})
    CHECK(classify_one(make_target(label, tags)).diagnostics.empty());
  // Tests of the same tags share their outcome, but not the note of another's name.
  TargetList two;
  two.format = "xml";
  two.tests = {make_target("//m:cuda_util_test", {}), make_target("//m:rt_net_test", {})};
  auto both = classify(two, {}, {});
  REQUIRE(both.diagnostics.size() == 1);
  CHECK(both.diagnostics[0].label == "//m:cuda_util_test");
}

TEST_CASE("a tag that names a GPU as a word, on a test without a GPU annotation, is a warning") {
  // Ray's CI runs its tests tagged train_v2_gpu on GPU machines; planned as CPU tests, they would
  // run without one.
  auto c = classify_tags({"train_v2_gpu"});
  REQUIRE(c.tests.at(0).bucket == Bucket::cpu);
  REQUIRE(c.diagnostics.size() == 1);
  REQUIRE(c.diagnostics[0].severity == Severity::warning);
  CHECK(
      c.diagnostics[0].message.starts_with("tag train_v2_gpu names a GPU, but no convention or rule reads "
                                           "it, so the test is planned as a CPU test"));
  CHECK(c.diagnostics[0].message.find("tag the test gpu or give a rule whose tag regex matches it, such as "
                                      "{tag: '^train_v2_gpu$', set: {gpus: 1}}") != std::string::npos);
  // A GPU word and a count: what to write says the count.
  for (std::string tag : {"gpu_2", "2gpus", "gpu-2", "gpus2", "team-gpus-2"}) {
    auto counted = classify_tags({tag});
    REQUIRE(counted.diagnostics.size() == 1);
    CHECK(counted.diagnostics[0].message.find("tag the test gpu:2 or") != std::string::npos);
    CHECK(counted.diagnostics[0].message.find("set: {gpus: 2}") != std::string::npos);
  }
  // Words that start as a negation does and are none: multi-node GPU tests.
  for (std::string tag : {"multi_node_gpu", "gpu_nodes", "gpu-normal"})
    CHECK(classify_tags({tag}).diagnostics.at(0).severity == Severity::warning);
  // cuda11 is a version, not 11 GPUs; what to write keeps the vendor it names.
  CHECK(classify_tags({"cuda11"}).diagnostics.at(0).message.find("tag the test requires-gpu-nvidia or") !=
        std::string::npos);
  // rocm alone, as cuda and nvidia: a word for AMD's GPU stack (it said nothing before).
  CHECK(classify_tags({"rocm"}).diagnostics.at(0).severity == Severity::warning);
  for (const auto& d : classify_tags({"no_hip"}).diagnostics) CHECK(d.severity == Severity::note);
  REQUIRE(classify_tags({"no_rocm"}).diagnostics.empty());  // TensorFlow's: NVIDIA's GPUs, on a GPU test
  // --strict: an error.
  REQUIRE(has_errors(classify_tags({"large_gpu"}, true).diagnostics));
  // An exec_property whose key names a GPU asks a remote executor for one; its value may say how many.
  auto property = classify_one(make_target("//t:t", {}, {{"nvidia.com/gpu", "2"}}));
  REQUIRE(property.diagnostics.size() == 1);
  REQUIRE(property.diagnostics[0].severity == Severity::warning);
  CHECK(property.diagnostics[0].message.find(
            "If it asks a remote executor for a GPU, tag the test requires-gpu-nvidia:2 or give a "
            "rule whose tag regex matches it, such as {tag: '^nvidia\\.com/gpu:2$', "
            "set: {gpus: 2, vendor: nvidia}}") != std::string::npos);
  // On a GPU test, or one tagged cpu-only, it is the note of any unread GPU-looking tag.
  for (const auto& tags : {std::vector<std::string>{"gpu", "train_v2_gpu"}, {"cpu-only", "train_v2_gpu"}}) {
    auto annotated = classify_tags(tags);
    auto found = std::find_if(annotated.diagnostics.begin(), annotated.diagnostics.end(),
                              [](const Diagnostic& d) { return d.source == "tag train_v2_gpu"; });
    REQUIRE(found != annotated.diagnostics.end());
    REQUIRE(found->severity == Severity::note);
  }
}

TEST_CASE("a tag written as a tag filter's exclusion asks for nothing, and suggests no GPU tag") {
  // TensorFlow Federated's py_cpu_gpu_test tags its _cpu variant -requires-gpu-nvidia; the
  // did-you-mean "requires-gpu-nvidia" it got pointed the wrong way.
  auto c = classify_tags({"-requires-gpu-nvidia"});
  REQUIRE(c.tests.at(0).bucket == Bucket::cpu);
  REQUIRE(c.diagnostics.size() == 1);
  CHECK(c.diagnostics[0].severity == Severity::note);
  CHECK(c.diagnostics[0].message.find("did you mean") == std::string::npos);
  CHECK(classify_tags({"-requires-gpu-nvidia"}, true).diagnostics.at(0).severity == Severity::note);
}

TEST_CASE("a test whose macro names a GPU, with no GPU annotation, is a warning") {
  auto made_by = [](std::string macro, std::vector<std::string> tags) {
    Target t = make_target("//basic_macros:test", std::move(tags));
    t.generator_function = macro;
    return classify_one(t);
  };
  auto gpu = made_by("gpu_test", {});
  REQUIRE(gpu.tests.at(0).bucket == Bucket::cpu);
  REQUIRE(gpu.diagnostics.size() == 1);
  CHECK(gpu.diagnostics[0].severity == Severity::warning);
  CHECK(gpu.diagnostics[0].source == "generator_function gpu_test");
  CHECK(gpu.diagnostics[0].message.find("have it tag them gpu or give a rule such as "
                                        "{generator_function: gpu_test, set: {gpus: 1}}") !=
        std::string::npos);
  CHECK(made_by("gpu2_test", {}).diagnostics.at(0).message.find("set: {gpus: 2}") != std::string::npos);
  // Annotated either way, a negated name, or a macro that says nothing of GPUs: no word.
  CHECK(made_by("gpu_test", {"gpu"}).diagnostics.empty());
  CHECK(made_by("gpu_test", {"cpu-only"}).diagnostics.empty());
  CHECK(made_by("no_gpu_test", {}).diagnostics.empty());
  CHECK(made_by("py_strict_test", {}).diagnostics.empty());
  // A tag that already said so is the one warning.
  CHECK(made_by("gpu_test", {"team-gpus-4"}).diagnostics.size() == 1);
}

TEST_CASE("rules_cuda's cuda_test makes an NVIDIA GPU test, with a warning") {
  // rules_cuda's cuda_test (cuda/private/macros/cuda_test.bzl) wraps a cc_test around a cuda_library
  // and adds no tag; its tests launch kernels (rules_cuda's examples/basic_macros,
  // VORTICITY-INC/VTensor's lib/*/tests). Before, a CPU test with a warning that the macro was not
  // read: CPU runners failed them ("no CUDA-capable device is detected").
  auto made_by = [](std::vector<std::string> tags, ClassifyOptions options = {}) {
    Target t = make_target("//lib/linalg/tests:test_linalg", std::move(tags));
    t.generator_function = "cuda_test";
    return classify_one(t, {}, options);
  };
  auto cuda = made_by({});
  REQUIRE(cuda.tests.at(0).bucket == Bucket::gpu);
  REQUIRE(cuda.tests[0].requirement->gpus.value == 1);
  REQUIRE(cuda.tests[0].requirement->vendor->value == "nvidia");
  REQUIRE(cuda.diagnostics.size() == 1);
  CHECK(cuda.diagnostics[0].severity == Severity::warning);
  CHECK(cuda.diagnostics[0].source == "generator_function cuda_test");
  CHECK(cuda.diagnostics[0].message.find("read as 1 NVIDIA GPU") != std::string::npos);
  CHECK(cuda.diagnostics[0].message.find(
            "Tag it requires-gpu-nvidia (or requires-gpu-nvidia:N), or cpu-only") != std::string::npos);
  CHECK(made_by({}, {.strict = true}).diagnostics.at(0).severity == Severity::error);
  // A GPU tag keeps its count and gets the vendor, with no word; a CPU tag, another vendor's tag or a
  // rule that names the macro decides.
  auto two = made_by({"gpu:2"});
  REQUIRE(two.tests.at(0).requirement->gpus.value == 2);
  REQUIRE(two.tests[0].requirement->vendor->value == "nvidia");
  CHECK(two.diagnostics.empty());
  auto cpu = made_by({"cpu-only"});
  CHECK(cpu.tests.at(0).bucket == Bucket::cpu);
  CHECK(cpu.diagnostics.empty());
  CHECK(made_by({"requires-gpu-amd"}).tests.at(0).requirement->vendor->value == "amd");
  Rules rules;
  Rule by_macro;
  by_macro.generator_function = "cuda_test";
  by_macro.set = {{"gpus", "4"}};
  rules.rules.push_back(by_macro);
  Target t = make_target("//lib/linalg/tests:test_linalg", {});
  t.generator_function = "cuda_test";
  auto ruled = classify_one(t, rules);
  REQUIRE(ruled.tests.at(0).requirement->gpus.value == 4);
  CHECK_FALSE(ruled.tests[0].requirement->vendor);
  for (const auto& d : ruled.diagnostics) CHECK(d.severity == Severity::note);
}

TEST_CASE("a tag that names a GPU model is a warning on a test without a GPU annotation or model") {
  // Planned as a CPU test, a test tagged a100_only runs without a GPU; planned as any GPU, on
  // another model, where it may skip what needs an A100 and pass.
  auto cpu = classify_tags({"a100_only"});
  REQUIRE(cpu.tests.at(0).bucket == Bucket::cpu);
  REQUIRE(cpu.diagnostics.size() == 1);
  CHECK(cpu.diagnostics[0].severity == Severity::warning);
  CHECK(cpu.diagnostics[0].message.starts_with("tag a100_only names a GPU model (a100), but no convention"));
  CHECK(cpu.diagnostics[0].message.find("tag the test gpu-model:a100 or give a rule whose tag regex matches "
                                        "it, such as {tag: '^a100_only$', set: {gpu_models: a100}}") !=
        std::string::npos);
  CHECK(classify_tags({"h100_gpus_8"})
            .diagnostics.at(0)
            .message.find(
                "tag the test gpu:8 and gpu-model:h100 or give a rule whose tag regex matches it, such as "
                "{tag: '^h100_gpus_8$', set: {gpus: 8, gpu_models: h100}}") != std::string::npos);
  REQUIRE(has_errors(classify_tags({"mi300x"}, true).diagnostics));
  auto gpu = classify_tags({"gpu", "h100"});
  REQUIRE(gpu.diagnostics.size() == 1);
  CHECK(gpu.diagnostics[0].severity == Severity::warning);
  CHECK(gpu.diagnostics[0].message.starts_with(
      "tag h100 names the GPU model h100, but no convention or rule reads it, so the test may be planned on "
      "a GPU of another model, where it may fail, or skip what needs that model and pass. If it needs h100, "
      "tag it gpu-model:h100"));
  // A test that asks for a model, or a tag that negates one: a note.
  for (const auto& tags : {std::vector<std::string>{"gpu", "gpu-model:h100", "h100"}, {"no_a100"}}) {
    auto c = classify_tags(tags);
    REQUIRE(c.diagnostics.size() == 1);
    CHECK(c.diagnostics[0].severity == Severity::note);
  }
}

TEST_CASE("a rule maps a team's tag through a regex capture, matched with its macro") {
  Rules rules;
  rules.source = "rules.yaml";
  Rule rule;
  rule.tag = "team-gpus-(\\d+)";
  rule.generator_function = "gpu_test";
  rule.set = {{"gpus", "$1"}, {"gpu_mem", "16GiB"}};
  rule.where = Position{"rules.yaml", 4, 5};
  rules.rules.push_back(rule);
  auto target = make_target("//ml:team_macro_test", {"team-gpus-4"});
  target.generator_function = "gpu_test";
  auto c = classify_one(target, rules);
  const auto& t = c.tests.at(0);
  REQUIRE(t.bucket == Bucket::gpu);
  REQUIRE(t.requirement->gpus == Sourced<int>{4, "rule rules.yaml:4:5 (tag team-gpus-4)"});
  REQUIRE(t.requirement->gpu_mem_mib->value == 16384);
  REQUIRE(c.diagnostics.empty());  // the tag mentions GPUs, but a rule reads it

  target.generator_function = "other_macro";
  REQUIRE(classify_one(target, rules).tests.at(0).bucket == Bucket::cpu);
}

TEST_CASE("rules match by label pattern and rule class") {
  Rules rules;
  Rule rule;
  rule.label = "//ml/...";
  rule.rule_class = "py_test";
  rule.set = {{"gpus", "1"}, {"cuda", ">=12.0"}};
  rule.where = Position{"r.yaml", 2, 5};
  rules.rules.push_back(rule);
  REQUIRE(classify_one(make_target("//ml/vision:t", {}), rules).tests.at(0).bucket == Bucket::gpu);
  REQUIRE(classify_one(make_target("//ml:t", {}), rules).tests.at(0).requirement->gpus.source ==
          "rule r.yaml:2:5");
  REQUIRE(classify_one(make_target("//mlx:t", {}), rules).tests.at(0).bucket == Bucket::cpu);
  auto cc = make_target("//ml:t", {});
  cc.rule_class = "cc_test";
  REQUIRE(classify_one(cc, rules).tests.at(0).bucket == Bucket::cpu);
}

TEST_CASE("a rule can mark tests CPU-only") {
  Rules rules;
  Rule rule;
  rule.label = "//docs:*";
  rule.set = {{"cpu_only", "true"}};
  rules.rules.push_back(rule);
  REQUIRE(classify_one(make_target("//docs:lint_test", {"gpu"}), rules).tests.at(0).bucket == Bucket::cpu);
}

TEST_CASE("a rule value that is wrong once its capture is put in is a diagnostic, not a crash") {
  Rules rules;
  Rule rule;
  rule.tag = "team-gpus-(.*)";
  rule.set = {{"gpus", "$1"}};
  rule.where = Position{"r.yaml", 3, 5};
  rules.rules.push_back(rule);
  auto c = classify_one(make_target("//t:t", {"team-gpus-many"}), rules);
  REQUIRE(c.tests.at(0).bucket == Bucket::cpu);
  REQUIRE(c.diagnostics.at(0).source == "rule r.yaml:3:5 (tag team-gpus-many)");
  REQUIRE_THAT(c.diagnostics[0].message, Catch::Contains("gpus: \"many\" is not a GPU count"));
}

TEST_CASE("tests come out sorted by label, the same whatever the input order") {
  TargetList forward, backward;
  for (std::string label : {"//b:t", "@//a:t", "//c:t"})
    forward.tests.push_back(make_target(label, {"gpu:0"}));
  backward.tests.assign(forward.tests.rbegin(), forward.tests.rend());
  auto a = classify(forward, {}, {}), b = classify(backward, {}, {});
  REQUIRE(a.tests.at(0).target.label == "@//a:t");
  REQUIRE(a.tests.at(2).target.label == "//c:t");
  for (size_t i = 0; i < 3; ++i) {
    REQUIRE(a.tests[i].target.label == b.tests[i].target.label);
    REQUIRE(a.diagnostics[i].label == b.diagnostics[i].label);
  }
  REQUIRE(a.diagnostics[0].label == "//a:t");
}

TEST_CASE("tests added in any order give what sorted input gives, findings following their tests") {
  // Tests with no finding, one, and two (each kind of tag set twice, so that some outcomes are
  // replayed), added sorted and then in a scrambled order: the results must agree entry by entry.
  std::vector<std::vector<std::string>> tag_sets{
      {"gpu"}, {}, {"gpu:2", "resources:gpu:4"}, {"gpu:x"}, {"cpu-only", "gpu:2", "gpu-mem:x"}, {"manual"}};
  TargetList sorted;
  for (int i = 0; i < 24; ++i) {
    auto target =
        make_target(fmt::format("//p{:02}:t", i), tag_sets[static_cast<size_t>(i) % tag_sets.size()]);
    target.location = fmt::format("p{:02}/BUILD:1:1", i);
    sorted.tests.push_back(target);
  }
  TargetList scrambled;
  for (int i = 0; i < 24; ++i) scrambled.tests.push_back(sorted.tests[static_cast<size_t>(i * 7 % 24)]);
  scrambled.dropped.source_files = 2;
  sorted.dropped.source_files = 2;
  auto a = classify(sorted, {}, {});
  Rules rules;  // the classifier holds on to its rules: they outlive it
  Classifier classifier(rules, {.annotations = false, .inputs = false});
  for (auto& target : scrambled.tests) classifier.add(std::move(target));
  auto b = classifier.finish(scrambled.dropped);
  REQUIRE(a.tests.size() == b.tests.size());
  for (size_t i = 0; i < a.tests.size(); ++i) {
    REQUIRE(a.tests[i].target.label == b.tests[i].target.label);
    REQUIRE(a.tests[i].reason == b.tests[i].reason);
    REQUIRE(describe(a.tests[i].requirement) == describe(b.tests[i].requirement));
    REQUIRE(!a.tests[i].target.location.empty());
    REQUIRE(b.tests[i].target.location.empty());  // inputs = false: freed once classified
  }
  bool two_findings = false;  // some test has two
  for (size_t i = 1; i < a.diagnostics.size(); ++i)
    two_findings = two_findings || a.diagnostics[i].label == a.diagnostics[i - 1].label;
  REQUIRE(two_findings);
  REQUIRE(a.diagnostics.size() == b.diagnostics.size());
  for (size_t i = 0; i < a.diagnostics.size(); ++i) {
    REQUIRE(a.diagnostics[i].label == b.diagnostics[i].label);
    REQUIRE(a.diagnostics[i].message == b.diagnostics[i].message);
  }
  REQUIRE(b.diagnostics.back().source == "input");  // the dropped targets' note stays last
}

// classify and plan hold every test of a query at once: 150,000 tests were 407 bytes a test of
// peak memory with a 264-byte ClassifiedTest, over the 400-byte target (README "Performance").
// Its exec_properties and annotations, empty in nearly every test held, cost one pointer each.
// What a test's env and args say of how it starts (env's GPU choice and WORLD_SIZE, the args of
// JAX's multi-process tests), set in few tests, is one pointer too (Target::launch_settings):
// 232 bytes, where three fields of their own in every test made 248.
TEST_CASE("a classified test's rare lists cost one pointer each until they hold something") {
  REQUIRE(sizeof(ExecProperties) == sizeof(void*));
  REQUIRE(sizeof(Target) <= 192);
  REQUIRE(sizeof(ClassifiedTest) <= 232);
  ClassifiedTest test = testing::classified({"gpu:2", "nvlink"}, ExecProperties{{"pool", "gpu"}});
  REQUIRE(test.annotations.size() >= 2);  // kept, copied and freed as a vector would be
  ClassifiedTest copy = test;
  test.annotations.clear();
  test.target.exec_properties.clear();
  REQUIRE(test.annotations.empty());
  REQUIRE(test.target.exec_properties.empty());
  REQUIRE(copy.annotations.at(0).source == "tag gpu:2");
  REQUIRE(copy.annotations[1].source == "tag nvlink");
  REQUIRE(copy.target.exec_properties == ExecProperties{{"pool", "gpu"}});
}

TEST_CASE("the label sort agrees with a comparison sort on labels that share long prefixes") {
  // The classifier sorts by seven label bytes a round (label_order): labels that are prefixes of
  // each other, end at a round's edge, repeat with other configurations, or spell the main
  // repository three ways must come out as std::stable_sort orders them.
  std::vector<Target> added;
  std::uint32_t seed = 12345;
  auto next = [&](std::uint32_t bound) {
    seed = seed * 1664525u + 1013904223u;
    return (seed >> 8) % bound;
  };
  const char* repository[] = {"//", "@//", "@@//", "@x//"};
  for (int i = 0; i < 3000; ++i) {
    std::string label = repository[next(4)];
    for (std::uint32_t n = next(16) + (next(2) ? 6 : 12); label.size() < n;)
      label += "ab:/"[next(next(3) ? 2 : 4)];
    Target target = make_target(label, {});
    target.configuration = std::string(next(2) ? "" : next(2) ? "k8-opt" : "k8-fastbuild");
    added.push_back(std::move(target));
  }
  std::vector<std::size_t> expected(added.size());
  std::iota(expected.begin(), expected.end(), 0);
  std::stable_sort(expected.begin(), expected.end(), [&](std::size_t a, std::size_t b) {
    auto key = [&](std::size_t i) {
      return std::tuple(canonical_label(added[i].label),
                        std::string(std::string_view(added[i].configuration)), added[i].label);
    };
    return key(a) < key(b);
  });
  // A label listed twice, in one configuration or two, is planned once: the first listing (all
  // alike here).
  auto same = [&](std::size_t a, std::size_t b) {
    return canonical_label(added[a].label) == canonical_label(added[b].label);
  };
  expected.erase(std::unique(expected.begin(), expected.end(), same), expected.end());
  Rules rules;
  Classifier classifier(rules, {});
  for (std::size_t i = 0; i < added.size(); ++i) {
    Target target = added[i];
    target.location = std::to_string(i);  // which one it was
    classifier.add(std::move(target));
  }
  auto c = classifier.finish({});
  REQUIRE(c.tests.size() == expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i)
    REQUIRE(c.tests[i].target.location == std::to_string(expected[i]));
}

TEST_CASE("non-test targets left out of the input are counted in a note") {
  TargetList list;
  list.dropped.source_files = 3;
  list.dropped.test_suites = 1;
  auto c = classify(list, {}, {});
  REQUIRE(c.dropped.total() == 4);
  REQUIRE(c.diagnostics.at(0).severity == Severity::note);
  REQUIRE(c.diagnostics[0].message == "4 targets that are not tests left out: 1 test_suite, 3 source files");
}

TEST_CASE("a labels-only test says why it has no GPU annotation") {
  Target t;
  t.label = "//ml:train_test";
  auto c = classify_one(t);
  REQUIRE(c.tests.at(0).reason == "no GPU annotation (the input has labels only: no tags to read)");
}

TEST_CASE("explain's annotation list records every annotation read, in order") {
  auto t = classify_tags({"gpu:2", "nvlink", "gpu-mem:lots"}).tests.at(0);
  REQUIRE(t.annotations.size() == 3);
  REQUIRE(t.annotations[0].source == "tag gpu-mem:lots");
  REQUIRE(t.annotations[0].meaning.starts_with("ignored: \"lots\" is not a memory size"));
  REQUIRE(t.annotations[1].source == "tag gpu:2");
  REQUIRE(t.annotations[1].meaning == "2 GPUs");
  REQUIRE(t.annotations[2].meaning == "NVLink between all its GPUs");
}

TEST_CASE("a test that asks for NVLink with no GPU count is planned on 1 GPU with a warning") {
  // An NCCL test tagged gpu, exclusive and nvlink saw 1 GPU, and passed on one rank, without a word;
  // without nvlink, exclusive gives it every GPU of its node.
  for (auto tags : {std::vector<std::string>{"gpu", "nvlink"},
                    {"exclusive", "gpu", "nvlink"},
                    {"nvlink", "requires-gpu-nvidia"}}) {
    INFO(tags.front() << " " << tags.back());
    auto c = classify_tags(tags);
    REQUIRE(c.tests.at(0).requirement->gpus.value == 1);
    REQUIRE(c.diagnostics.size() == 1);
    const auto& d = c.diagnostics[0];
    REQUIRE(d.severity == Severity::warning);
    REQUIRE(d.source == "tag nvlink");
    REQUIRE_THAT(d.message, Catch::StartsWith("tag nvlink asks for NVLink between the test's GPUs, but no "
                                              "annotation gives it a GPU count, so it is planned on 1 GPU"));
    REQUIRE_THAT(d.message,
                 Catch::EndsWith("Tag it with its count (gpu:N); if 1 GPU is what it needs, drop nvlink"));
    REQUIRE(has_errors(classify_tags(tags, true).diagnostics));
  }
  REQUIRE(classify_tags({"gpu:2", "nvlink"}).diagnostics.empty());
  REQUIRE(classify_tags({"gpu:1", "nvlink"}).diagnostics.empty());  // 1 GPU, as written
}

TEST_CASE("a rule saying no NVLink against a tag asking for it: NVLink, with a warning") {
  Rules rules;
  Rule rule;
  rule.label = "//ml/...";
  rule.set = {{"nvlink", "false"}};
  rule.where = Position{"r.yaml", 2, 5};
  rules.rules.push_back(rule);
  auto c = classify_one(make_target("//ml:t", {"gpu:2", "nvlink"}), rules);
  REQUIRE(c.tests.at(0).requirement->nvlink == Sourced<bool>{true, "tag nvlink"});
  REQUIRE(c.diagnostics.at(0).source == "rule r.yaml:2:5, tag nvlink");
  REQUIRE(classify_one(make_target("//ml:t", {"gpu:2"}), rules).tests.at(0).requirement->nvlink ==
          Sourced<bool>{false, "rule r.yaml:2:5"});
}

TEST_CASE(
    "tests with the same tags share their outcome, and each gets its own findings under its own label") {
  TargetList list;
  list.format = "xml";
  list.tests = {make_target("//a:one", {"gpu:2", "resources:gpu:4"}),
                make_target("//a:two", {"gpu:2", "nvlink"}),
                make_target("//a:three", {"resources:gpu:4", "gpu:2"})};
  auto c = classify(list, {}, {});
  REQUIRE(c.tests.size() == 3);
  const auto& one = c.tests[0];
  const auto& three = c.tests[1];
  const auto& two = c.tests[2];
  REQUIRE(one.target.label == "//a:one");
  REQUIRE(three.target.label == "//a:three");
  REQUIRE(one.requirement->gpus.value == 4);
  REQUIRE(three.requirement->gpus.value == 4);
  REQUIRE(two.requirement->gpus.value == 2);
  REQUIRE(two.requirement->needs_nvlink());
  REQUIRE(one.reason == three.reason);
  std::vector<std::string> warned;
  for (const auto& d : c.diagnostics)
    if (d.severity == Severity::warning) warned.push_back(d.label);
  REQUIRE(warned == std::vector<std::string>{"//a:one", "//a:three"});

  // The same tags again, in another classification with the same rules: the same result.
  auto again = classify(list, {}, {});
  REQUIRE(again.diagnostics.size() == c.diagnostics.size());
  for (std::size_t i = 0; i < c.diagnostics.size(); ++i)
    REQUIRE(again.diagnostics[i].message == c.diagnostics[i].message);
}

TEST_CASE("two tests with the same tags, one a labels-only target: classified apart") {
  TargetList list;
  list.format = "xml";
  list.tests = {make_target("//b:with", {}), make_target("//b:without", {})};
  list.tests[1].has_attributes = false;
  auto c = classify(list, {}, {});
  REQUIRE(c.tests.at(0).reason == "no GPU annotation");
  REQUIRE(c.tests.at(1).reason == "no GPU annotation (the input has labels only: no tags to read)");
}

TEST_CASE("a bzlmod test written with one @ or two is one test, planned once as its GPU listing") {
  // @rules_foo+//a:t and @@rules_foo+//a:t were two tests: the GPU one planned, the other on
  // the CPU runners, exit 0.
  TargetList list;
  list.format = "xml";
  for (bool gpu_first : {true, false}) {
    list.tests = {make_target("@rules_foo+//a:t_test", {"gpu"}), make_target("@@rules_foo+//a:t_test", {})};
    if (!gpu_first) std::swap(list.tests[0], list.tests[1]);
    auto c = classify(list, {}, {});
    REQUIRE(c.tests.size() == 1);
    REQUIRE(c.tests.at(0).bucket == Bucket::gpu);
    REQUIRE(c.diagnostics.at(0).label == "@@rules_foo+//a:t_test");  // as explain looks for it
  }
}

TEST_CASE("which listing of a test listed twice is planned does not depend on the input's order") {
  // Before, the first listing won where neither or both needed GPUs: a TPU listing and a
  // cpu-only one went to the skipped or the CPU tests, and 1 unit or 3 shards, by order.
  auto kept = [](std::vector<Target> tests) {
    TargetList list;
    list.format = "xml";
    list.tests = std::move(tests);
    auto c = classify(list, {}, {});
    REQUIRE(c.tests.size() == 1);
    return c.tests.at(0);
  };
  auto tpu = make_target("//b:t_test", {"jax_test_tpu"});
  auto cpu = make_target("@//b:t_test", {"cpu-only"});
  REQUIRE(kept({tpu, cpu}).bucket == Bucket::cpu);
  REQUIRE(kept({cpu, tpu}).bucket == Bucket::cpu);
  // Their findings too: two listings spelt alike, each with a conflict of its own.
  auto findings = [](std::vector<Target> tests) {
    TargetList list;
    list.format = "xml";
    list.tests = std::move(tests);
    std::vector<std::string> messages;
    for (const auto& d : classify(list, {}, {}).diagnostics) messages.push_back(d.message);
    return messages;
  };
  auto one = make_target("//d:t_test", {"no-gpu", "gpu:2"});
  auto other = make_target("//d:t_test", {"no-gpu", "gpu-mem:40G", "gpu"});
  REQUIRE(findings({one, other}) == findings({other, one}));
  auto whole = make_target("//c:t_test", {"gpu"});
  auto sharded = make_target("//c:t_test", {"gpu"});
  sharded.shard_count = 3;
  REQUIRE(kept({whole, sharded}).target.shard_count == 3);
  REQUIRE(kept({sharded, whole}).target.shard_count == 3);
}

TEST_CASE("an external test listed by its apparent and its canonical name is planned once") {
  // A query's and a cquery's output joined: before, one listing went to GPUs, one to CPU runners.
  TargetList list;
  list.format = "xml";
  list.tests = {make_target("@@rules_foo~//x:t", {"gpu"}), make_target("@rules_foo//x:t", {}),
                make_target("@@a~~ext~common//x:t", {"gpu"}), make_target("@@b~~ext~common//x:t", {"gpu"}),
                make_target("@common//x:t", {})};
  auto c = classify(list, {}, {});
  std::vector<std::string> labels;
  for (const auto& t : c.tests) labels.push_back(t.target.label);
  // Two repositories of one identity stay two tests, and the apparent name beside them is neither.
  REQUIRE(labels == std::vector<std::string>{"@@a~~ext~common//x:t", "@@b~~ext~common//x:t", "@common//x:t",
                                             "@@rules_foo~//x:t"});
  REQUIRE(c.tests.at(3).bucket == Bucket::gpu);
  REQUIRE(c.diagnostics.size() == 1);
  REQUIRE_THAT(c.diagnostics[0].message,
               Catch::StartsWith("listed twice in the input, as @rules_foo//x:t and @@rules_foo~//x:t"));
  REQUIRE(has_errors(classify(list, {}, {.strict = true}).diagnostics));
}

TEST_CASE("a test the input lists twice is planned once, as its listing that needs GPUs, with a warning") {
  TargetList list;
  list.format = "xml";
  list.tests = {make_target("//d:y_test", {}), make_target("//d:x_test", {"gpu"}),
                make_target("@//d:y_test", {"gpu"}), make_target("//d:x_test", {"gpu"})};
  auto c = classify(list, {}, {});
  REQUIRE(c.tests.size() == 2);
  REQUIRE(c.tests.at(1).target.label == "@//d:y_test");
  REQUIRE(c.tests.at(1).bucket == Bucket::gpu);
  REQUIRE(c.diagnostics.size() == 2);
  REQUIRE(c.diagnostics[0].label == "//d:x_test");
  REQUIRE(c.diagnostics[0].message ==
          "listed 2 times in the input; planned once, as the listings are the same");
  REQUIRE(c.diagnostics[1].label == "//d:y_test");
  REQUIRE_THAT(c.diagnostics[1].message, Catch::Contains("the listings differ"));
  REQUIRE(has_errors(classify(list, {}, {.strict = true}).diagnostics));
  // cquery's listings of one test in two configurations: bazel test runs it in one, and run-under
  // knows tests by label. Before, both were planned, with shard counts of their own.
  TargetList cquery;
  cquery.format = "jsonproto";
  cquery.tests = {make_target("//ml:train_test", {"gpu:2"}), make_target("//ml:train_test", {"gpu:2"})};
  cquery.tests[0].configuration = std::string("9f87702");
  cquery.tests[1].configuration = std::string("a1b2c3d");
  cquery.tests[1].shard_count = 4;
  auto two = classify(cquery, {}, {});
  REQUIRE(two.tests.size() == 1);
  REQUIRE(two.diagnostics.size() == 1);
  REQUIRE_THAT(two.diagnostics[0].message,
               Catch::StartsWith("listed 2 times in the input (in the configurations 9f87702, a1b2c3d: bazel "
                                 "test runs it in one); planned once"));
}

// A 2-GPU test whose env said CUDA_VISIBLE_DEVICES=0,1 ran under exec on the one GPU planned for it
// and passed; a CPU test that picks GPU 0 ran where there is none.
TEST_CASE("a test's env that chooses GPUs is a warning, except a CPU test hiding them all") {
  auto with_env = [](std::vector<std::string> tags, std::string env) {
    auto target = make_target("//t:t", std::move(tags));
    target.edit_launch().device_env = env;
    return classify_one(target);
  };
  auto gpu = with_env({"gpu:2"}, "CUDA_VISIBLE_DEVICES=0,1");
  REQUIRE(gpu.diagnostics.size() == 1);
  CHECK(gpu.diagnostics[0].severity == Severity::warning);
  CHECK(gpu.diagnostics[0].source == "env CUDA_VISIBLE_DEVICES=0,1");
  CHECK_THAT(gpu.diagnostics[0].message, Catch::Contains("in place of the GPUs gpuplan plans for it"));
  CHECK_THAT(with_env({"gpu"}, "CUDA_VISIBLE_DEVICES=-1").diagnostics.at(0).message,
             Catch::Contains("hides every GPU from it"));
  auto cpu = with_env({}, "CUDA_VISIBLE_DEVICES=0");
  REQUIRE(cpu.diagnostics.size() == 1);
  CHECK_THAT(cpu.diagnostics[0].message, Catch::Contains("planned as a CPU test, where it runs without one"));
  CHECK(cpu.tests[0].bucket == Bucket::cpu);
  CHECK(with_env({}, "CUDA_VISIBLE_DEVICES=").diagnostics.empty());
  CHECK(with_env({"cpu-only"}, "CUDA_VISIBLE_DEVICES=0").diagnostics.empty());
  ClassifyOptions strict;
  strict.strict = true;
  auto target = make_target("//t:t", {"gpu"});
  target.edit_launch().device_env = "CUDA_VISIBLE_DEVICES=0";
  CHECK(classify_one(target, {}, strict).diagnostics.at(0).severity == Severity::error);
}

// JSON query input by default (--proto:flatten_selects): the merge keeps each key's last branch's
// value, and the rule's $config_dependencies names the config_setting. The warning says so; it
// said nothing before.
TEST_CASE("a flattened JSON exec_properties that may be a select() is warned of as JSON merges it") {
  auto selected = make_target("//:selected_gpu_test", {}, {{"gpu", "4"}});
  SelectedExecProperties trace;
  trace.unexplained_input = "//:cuda_big";
  trace.trace = SelectedExecProperties::Trace::json_config_dependencies;
  selected.selected_exec_properties = std::make_shared<const SelectedExecProperties>(trace);
  TargetList list;
  list.tests = {selected};
  const auto diagnostics = classify(list, {}, {}).diagnostics;
  REQUIRE(diagnostics.size() == 1);
  CHECK(diagnostics[0].severity == Severity::warning);
  CHECK_THAT(diagnostics[0].message,
             Catch::StartsWith("exec_properties may be a select(): the test's $config_dependencies names "
                               "//:cuda_big") &&
                 Catch::Contains("bazel query's JSON output (by default, --proto:flatten_selects) prints") &&
                 Catch::Contains("each key with the last branch's value") &&
                 Catch::Contains("it is planned by exec_properties gpu=4"));
}

// JSON query input under --noproto:flatten_selects: a select()ed env or constraint list, refused
// before, is read as --output=xml reads it, and branches that differ in what gpuplan plans by are
// warned of; a difference in labels nothing reads is not.
TEST_CASE("select()ed env and constraint lists whose branches differ in what gpuplan reads are warned of") {
  auto with = [](std::string label, SelectedAttribute attribute) {
    auto target = make_target(label, {});
    SelectedExecProperties selected;
    selected.other_attributes.push_back(std::move(attribute));
    target.selected_exec_properties = std::make_shared<const SelectedExecProperties>(selected);
    return target;
  };
  auto gpu_platform =
      with("//:platform_test", {.attribute = "target_compatible_with",
                                .branches = "//:cuda gives //:has_gpu, //conditions:default gives "
                                            "nothing",
                                .differing = {"//:has_gpu"}});
  auto other =
      with("//:os_test", {.attribute = "target_compatible_with",
                          .branches = "//:linux gives @platforms//os:linux, //conditions:default gives "
                                      "nothing",
                          .differing = {"@platforms//os:linux"}});
  auto env =
      with("//:env_test", {.attribute = "env",
                           .branches = "//:cuda gives CUDA_VISIBLE_DEVICES=0, //conditions:default gives "
                                       "nothing",
                           .differing = {"CUDA_VISIBLE_DEVICES=0", ""}});
  TargetList list;
  list.tests = {gpu_platform, other, env};
  std::map<std::string, Diagnostic> warnings;
  for (const auto& d : classify(list, {}, {}).diagnostics)
    if (d.source == "target_compatible_with" || d.source == "env") warnings.emplace(d.label, d);
  REQUIRE(warnings.size() == 2);
  CHECK(
      warnings.at("//:platform_test").message ==
      "target_compatible_with is a select() whose branches differ in what gpuplan plans by: //:cuda gives "
      "//:has_gpu, //conditions:default gives nothing; bazel query cannot tell which applies, and it is "
      "planned by every branch's labels, as --output=xml prints them (bazel cquery --output=jsonproto gives "
      "the value for a configuration)");
  CHECK_THAT(
      warnings.at("//:env_test").message,
      Catch::StartsWith("env is a select() whose branches differ") &&
          Catch::Contains("planned by no GPU choice from env, as --output=xml reads a select()ed env"));
  ClassifyOptions strict;
  strict.strict = true;
  CHECK(has_errors(classify(list, {}, strict).diagnostics));
}
