// Every row of SPEC section 2's annotation table, read from tags and from exec_properties.
#include <catch2/catch.hpp>

#include "annotate/classify_helpers.hpp"

using namespace gpuplan;
using gpuplan::testing::classified;

namespace {

std::string constraints(const std::vector<Sourced<VersionConstraint>>& list) {
  std::vector<VersionConstraint> plain;
  for (const auto& c : list) plain.push_back(c.value);
  return to_string(plain);
}

}  // namespace

TEST_CASE("a plain gpu tag asks for one GPU and says so") {
  auto t = classified({"gpu"});
  REQUIRE(t.bucket == Bucket::gpu);
  REQUIRE(t.requirement->gpus == Sourced<int>{1, "tag gpu"});
  REQUIRE(t.reason == "tag gpu → 1 GPU");
}

TEST_CASE("gpu:N and resources:gpu:N ask for N GPUs") {
  REQUIRE(classified({"gpu:4"}).requirement->gpus == Sourced<int>{4, "tag gpu:4"});
  REQUIRE(classified({"resources:gpu:2"}).requirement->gpus == Sourced<int>{2, "tag resources:gpu:2"});
}

TEST_CASE("Bazel's resources:gpu exec_property asks for N GPUs and is named as the source") {
  auto t = classified({}, {{"resources:gpu", "4"}});
  REQUIRE(t.bucket == Bucket::gpu);
  REQUIRE(t.requirement->gpus == Sourced<int>{4, "exec_properties resources:gpu=4"});
}

TEST_CASE("gpu-mem sizes are binary in every spelling, and gpu_mem is an alias") {
  for (std::string size : {"40GiB", "40G", "40GB", "40g", "40960MiB", "40960M"}) {
    INFO(size);
    auto t = classified({"gpu", "gpu-mem:" + size});
    REQUIRE(t.requirement->gpu_mem_mib->value == 40960);
    REQUIRE(t.requirement->gpu_mem_mib->source == "tag gpu-mem:" + size);
  }
  REQUIRE(classified({"gpu", "gpu_mem:8GiB"}).requirement->gpu_mem_mib->value == 8192);
}

TEST_CASE("cuda constraints: >=, the colon form meaning >=, <, == and comma-joined") {
  REQUIRE(constraints(classified({"gpu", "cuda>=12.4"}).requirement->cuda) == ">=12.4");
  REQUIRE(constraints(classified({"gpu", "cuda:12.4"}).requirement->cuda) == ">=12.4");
  REQUIRE(constraints(classified({"gpu", "cuda<12.0"}).requirement->cuda) == "<12.0");
  REQUIRE(constraints(classified({"gpu", "cuda==12.2"}).requirement->cuda) == "==12.2");
  REQUIRE(constraints(classified({"gpu", "cuda>=12.0,<13"}).requirement->cuda) == ">=12.0,<13");
}

TEST_CASE("gpu-model lists models, stored lower-case for case-insensitive matching") {
  auto t = classified({"gpu", "gpu-model:L4|L40S"});
  REQUIRE(t.requirement->gpu_models->value == std::vector<std::string>{"l4", "l40s"});
  REQUIRE(t.requirement->gpu_models->source == "tag gpu-model:L4|L40S");
}

TEST_CASE("gpu-cc constrains the compute capability with >=, < or ==") {
  REQUIRE(constraints(classified({"gpu", "gpu-cc>=8.0"}).requirement->compute_capability) == ">=8.0");
  REQUIRE(constraints(classified({"gpu", "gpu-cc<9.0"}).requirement->compute_capability) == "<9.0");
  REQUIRE(constraints(classified({"gpu", "gpu-cc==8.9"}).requirement->compute_capability) == "==8.9");
}

TEST_CASE("nvlink and gpu-exclusive are needs of the test") {
  auto t = classified({"gpu:4", "nvlink", "gpu-exclusive"});
  REQUIRE(t.requirement->needs_nvlink());
  REQUIRE(t.requirement->is_exclusive());
  REQUIRE(t.requirement->nvlink->source == "tag nvlink");
  REQUIRE(describe(t.requirement) == "4 GPUs, NVLink, whole node");
}

TEST_CASE("a qualifier without a count still makes a one-GPU test, and the reason says so") {
  auto t = classified({"gpu-mem:16G"});
  REQUIRE(t.bucket == Bucket::gpu);
  REQUIRE(t.requirement->gpus.value == 1);
  REQUIRE(t.reason == "tag gpu-mem:16G → ≥ 16GiB on each GPU; no GPU count given, so 1 GPU");
}

TEST_CASE("every CPU-only spelling puts a test in the CPU bucket") {
  for (std::string tag : {"cpu-only", "no_gpu", "nogpu", "no-gpu"}) {
    INFO(tag);
    auto t = classified({tag});
    REQUIRE(t.bucket == Bucket::cpu);
    REQUIRE(t.requirement->gpus.value == 0);
    REQUIRE(t.reason == "tag " + tag + " → CPU only");
  }
}

TEST_CASE("a test without any GPU annotation is a CPU test") {
  auto t = classified({"small", "requires-network"});
  REQUIRE(t.bucket == Bucket::cpu);
  REQUIRE(t.reason == "no GPU annotation");
}

TEST_CASE("manual tests are skipped unless --include-manual") {
  auto target = gpuplan::testing::make_target("//t:bench", {"gpu:8", "manual"});
  auto skipped = gpuplan::testing::classify_one(target).tests.at(0);
  REQUIRE(skipped.bucket == Bucket::skipped);
  REQUIRE(skipped.reason == "tagged manual");
  REQUIRE(skipped.requirement->gpus.value == 8);
  auto included = gpuplan::testing::classify_one(target, {}, {.include_manual = true}).tests.at(0);
  REQUIRE(included.bucket == Bucket::gpu);
}

TEST_CASE("TensorFlow's requires-gpu-nvidia asks for 1 GPU, or N with :N") {
  REQUIRE(classified({"requires-gpu-nvidia"}).requirement->gpus ==
          Sourced<int>{1, "tag requires-gpu-nvidia"});
  REQUIRE(classified({"requires-gpu-nvidia:2"}).requirement->gpus.value == 2);
}

TEST_CASE("multi_gpu asks for 2 GPUs, or what the rules file says") {
  REQUIRE(classified({"multi_gpu"}).requirement->gpus.value == 2);
  Rules rules;
  rules.multi_gpu_count = 4;
  REQUIRE(classified({"multi_gpu"}, {}, rules).requirement->gpus.value == 4);
}

TEST_CASE("XLA's requires-gpu-smXY is a compute capability floor and -only an exact match") {
  auto floor = classified({"requires-gpu-sm80"});
  REQUIRE(floor.requirement->gpus.value == 1);
  REQUIRE(constraints(floor.requirement->compute_capability) == ">=8.0");
  REQUIRE(floor.reason == "tag requires-gpu-sm80 → 1 GPU with compute capability ≥ 8.0");
  auto counted_first = classified({"cuda>=12.4", "gpu:2"});
  REQUIRE(counted_first.reason == "tag gpu:2 → 2 GPUs; tag cuda>=12.4 → CUDA ≥ 12.4");
  REQUIRE(constraints(classified({"requires-gpu-sm90-only"}).requirement->compute_capability) == "==9.0");
  REQUIRE(constraints(classified({"requires-gpu-sm100"}).requirement->compute_capability) == ">=10.0");
}

TEST_CASE("CUDA's target suffixes: smXYa is that architecture only, smXYf its family") {
  // Before, requires-gpu-sm90a was malformed: ignored, and the test a CPU test.
  CHECK(constraints(classified({"requires-gpu-sm90a"}).requirement->compute_capability) == "==9.0");
  CHECK(constraints(classified({"requires-gpu-sm100a-only:2"}).requirement->compute_capability) == "==10.0");
  auto family = classified({"requires-gpu-sm100f"});
  CHECK(family.requirement->gpus.value == 1);
  CHECK(constraints(family.requirement->compute_capability) == ">=10.0,<11.0");
}

TEST_CASE("XLA's tags take :N for N GPUs") {
  auto t = classified({"requires-gpu-sm80:4"});
  REQUIRE(t.requirement->gpus == Sourced<int>{4, "tag requires-gpu-sm80:4"});
  REQUIRE(constraints(t.requirement->compute_capability) == ">=8.0");
  auto only = classified({"requires-gpu-sm90-only:2"});
  REQUIRE(only.requirement->gpus.value == 2);
  REQUIRE(constraints(only.requirement->compute_capability) == "==9.0");
}

TEST_CASE("JAX's multiaccelerator asks for 8 GPUs, or what the rules file says") {
  REQUIRE(classified({"multiaccelerator"}).requirement->gpus.value == 8);
  Rules rules;
  rules.multiaccelerator_count = 4;
  REQUIRE(classified({"multiaccelerator"}, {}, rules).requirement->gpus.value == 4);
}

TEST_CASE("remote-execution exec_properties mark GPU tests") {
  REQUIRE(classified({}, {{"gpu", "2"}}).requirement->gpus == Sourced<int>{2, "exec_properties gpu=2"});
  REQUIRE(classified({}, {{"gpu_count", "3"}}).requirement->gpus.value == 3);
  // Written as a float it is the same count; before, "2.0" was malformed and the test a CPU test.
  REQUIRE(classified({}, {{"gpu_count", "2.0"}}).requirement->gpus.value == 2);
  REQUIRE(classified({}, {{"gpu_count", "2.5"}}).bucket == Bucket::cpu);
  auto model = classified({}, {{"gpu_model", "A100"}});
  REQUIRE(model.requirement->gpus.value == 1);
  REQUIRE(model.requirement->gpu_models->value == std::vector<std::string>{"a100"});
  REQUIRE(classified({}, {{"Pool", "gpu-pool"}}).requirement->gpus ==
          Sourced<int>{1, "exec_properties Pool=gpu-pool"});
  // A pool that names a GPU model runs the test on that model.
  auto h100 = classified({}, {{"Pool", "gpu-h100"}});
  CHECK(h100.requirement->gpu_models->value == std::vector<std::string>{"h100"});
  CHECK(classified({}, {{"Pool", "h100-pool"}}).bucket == Bucket::gpu);
  REQUIRE(classified({}, {{"dockerRuntime", "nvidia"}}).bucket == Bucket::gpu);
  // A model, a vendor or a worker class where gpu's count goes (alibaba/rtp-llm routes its smoke
  // tests with {"gpu": "H20"}): a GPU test, where "not a GPU count" made it a CPU test.
  CHECK(classified({}, {{"gpu", "A10"}}).requirement->gpu_models->value == std::vector<std::string>{"a10"});
  CHECK(classified({}, {{"gpu", "nvidia"}}).requirement->vendor->value == "nvidia");
  auto worker = classified({}, {{"gpu", "L20D"}, {"gpu_count", "2"}});
  CHECK(worker.requirement->gpus.value == 2);
  CHECK(classified({}, {{"gpu", "false"}}).bucket == Bucket::cpu);
  for (const char* none : {"none", "off", "cpu", ""})
    CHECK(classified({}, {{"gpu", none}}).bucket == Bucket::cpu);
  auto counted = classified({}, {{"gpu", "2xA100"}});
  CHECK(counted.requirement->gpus.value == 2);
  CHECK(counted.requirement->gpu_models->value == std::vector<std::string>{"a100"});
}

TEST_CASE("Modular's resources:gpu-N exec_properties ask for a machine of N GPUs, the most of them") {
  // modular/modular's bazel/internal/config.bzl: //:has_4_gpus adds test.resources:gpu-4. Before,
  // each was a note and the test had 1 GPU.
  auto four = classified(
      {"gpu"},
      {{"test.resources:gpu-1", "0"}, {"test.resources:gpu-2", "0.01"}, {"test.resources:gpu-4", "0.01"}});
  CHECK(four.requirement->gpus == Sourced<int>{4, "exec_properties test.resources:gpu-4=0.01"});
  CHECK(classified({}, {{"test.resources:gpu-1", "0"}}).bucket == Bucket::cpu);  // not asked for
}

TEST_CASE("an exec_property for the test action's exec group, test.KEY, is read as KEY") {
  REQUIRE(classified({}, {{"test.Pool", "gpu-pool"}}).requirement->gpus ==
          Sourced<int>{1, "exec_properties test.Pool=gpu-pool"});
  REQUIRE(classified({}, {{"test.resources:gpu", "2"}}).requirement->gpus.value == 2);
  REQUIRE(classified({}, {{"test.gpu-mem", "40G"}}).requirement->gpu_mem_mib->value == 40960);
  // Another exec group's property is not the test's (cpp_link links it).
  REQUIRE(classified({}, {{"cpp_link.Pool", "gpu-pool"}}).bucket == Bucket::cpu);
}

namespace {

/// The rules of a rules.yaml whose one rule, on line 3, sets `field` to `value` where `regex` matches.
Rules one_rule(std::string regex, std::string field = "gpus", std::string value = "$1") {
  Rules rules;
  rules.source = "rules.yaml";
  Rule rule;
  rule.tag = std::move(regex);
  rule.set = {{std::move(field), std::move(value)}};
  rule.where = {"rules.yaml", 3, 5};
  rules.rules.push_back(rule);
  return rules;
}

}  // namespace

// Modular's bazel/internal/config.bzl: multi-GPU tests are tagged gpu, and ask remote execution
// for a machine with the resource gpu-2 (or gpu-4) through the test action's exec_properties.
TEST_CASE("a rules file's tag regex reads an exec_property as KEY:VALUE, captures and all") {
  Rules rules = one_rule(R"(resources:gpu-(\d+):.*)");
  auto t = classified({"gpu"}, {{"test.resources:gpu-2", "0.01"}}, rules);
  REQUIRE(t.requirement->gpus ==
          Sourced<int>{2, "rule rules.yaml:3:5 (exec_properties test.resources:gpu-2=0.01)"});
  using gpuplan::testing::classify_one;
  using gpuplan::testing::make_target;
  auto target = make_target("//t:t", {"gpu"}, {{"test.resources:gpu-2", "0.01"}});
  REQUIRE(classify_one(target, rules).diagnostics.empty());  // the rule reads it: no "ignored" note
  // Without the rule the built-in reading gives the same (it was 1 GPU and a note).
  auto unread = classify_one(target);
  REQUIRE(unread.tests[0].requirement->gpus.value == 2);
  REQUIRE(unread.diagnostics.empty());
}

// Modular's mojo tests say target_compatible_with = ["//:has_gpu", "//:amd_gpu"] beside tag gpu.
TEST_CASE("a GPU-looking constraint on a CPU test is a warning, on a GPU test a note; a rule may read it") {
  using gpuplan::testing::classify_one;
  using gpuplan::testing::make_target;
  auto untagged = make_target("//t:t", {});
  untagged.constraints = {{"//:has_4_gpus", false}, {"@platforms//os:linux", false}};
  auto cpu = classify_one(untagged);
  REQUIRE(cpu.tests[0].bucket == Bucket::cpu);
  REQUIRE(cpu.diagnostics.size() == 1);
  CHECK(cpu.diagnostics[0].severity == Severity::warning);
  CHECK_THAT(
      cpu.diagnostics[0].message,
      Catch::StartsWith("target_compatible_with //:has_4_gpus looks like a GPU platform's constraint") &&
          Catch::Contains("Bazel skips the test as incompatible and passes"));
  CHECK(classify_one(untagged, {}, {.strict = true}).diagnostics[0].severity == Severity::error);
  auto tagged = untagged;
  tagged.tags = {"gpu"};
  auto gpu = classify_one(tagged);
  REQUIRE(gpu.diagnostics.size() == 1);
  CHECK(gpu.diagnostics[0].severity == Severity::note);
  Rules rules = one_rule(R"(//:has_(\d+)_gpus)");
  auto read = classify_one(untagged, rules);
  CHECK(read.diagnostics.empty());
  CHECK(read.tests[0].requirement->gpus ==
        Sourced<int>{4, "rule rules.yaml:3:5 (target_compatible_with //:has_4_gpus)"});
  // Bazel 7's --consistent_labels and cquery print "@@//:has_4_gpus": the same rule reads it (before,
  // the test became a CPU test with a warning); a regex written for that spelling still matches.
  auto consistent = untagged;
  consistent.constraints = {{"@@//:has_4_gpus", false}};
  CHECK(classify_one(consistent, rules).tests[0].requirement->gpus.value == 4);
  CHECK(classify_one(consistent, one_rule(R"(@@//:has_(\d+)_gpus)")).tests[0].requirement->gpus.value == 4);
  auto amd = tagged;
  amd.constraints = {{"//:amd_gpu", false}};
  CHECK(classify_one(amd, one_rule("//:amd_gpu", "vendor", "amd")).tests[0].requirement->vendor->value ==
        "amd");
  // Modular's //:h100_gpu names a model: planned on another, the test is skipped there as
  // incompatible and passes.
  auto h100 = tagged;
  h100.constraints = {{"//:h100_gpu", false}};
  auto unread = classify_one(h100);
  REQUIRE(unread.diagnostics.size() == 1);
  CHECK(unread.diagnostics[0].severity == Severity::warning);
  CHECK_THAT(unread.diagnostics[0].message,
             Catch::StartsWith("target_compatible_with //:h100_gpu names the GPU model h100") &&
                 Catch::Contains("Bazel skips the test there as incompatible and passes") &&
                 Catch::Contains("{tag: '^//:h100_gpu$', set: {gpu_models: h100}}"));
  auto read_model = classify_one(h100, one_rule("//:h100_gpu", "gpu_models", "h100"));
  CHECK(read_model.diagnostics.empty());
  CHECK(read_model.tests[0].requirement->gpu_models->value == std::vector<std::string>{"h100"});
  h100.tags = {};
  CHECK_THAT(classify_one(h100).diagnostics.at(0).message, Catch::Contains("Tag it gpu-model:h100, or"));
  // //:amd_gpu names a vendor: planned on an NVIDIA GPU, the test is skipped there and passes.
  auto vendor = classify_one(amd);
  REQUIRE(vendor.diagnostics.size() == 1);
  CHECK(vendor.diagnostics[0].severity == Severity::warning);
  CHECK_THAT(vendor.diagnostics[0].message,
             Catch::StartsWith("target_compatible_with //:amd_gpu names the GPU vendor amd") &&
                 Catch::Contains("tag it rocm-only or give a rule whose tag regex matches it, such as "
                                 "{tag: '^//:amd_gpu$', set: {vendor: amd}}"));
  // Modular's //:apple_gpu: no fleet gpuplan plans has one, so Bazel skips the test on any node.
  auto apple = tagged;
  apple.constraints = {{"//:apple_gpu", false}};
  auto metal = classify_one(apple);
  REQUIRE(metal.diagnostics.size() == 1);
  CHECK(metal.diagnostics[0].severity == Severity::warning);
  CHECK_THAT(metal.diagnostics[0].message,
             Catch::StartsWith("target_compatible_with //:apple_gpu names Apple's GPUs") &&
                 Catch::Contains("{tag: '^//:apple_gpu$', set: {cpu_only: true}}"));
  // A test that already asks for that vendor (or any model): the note.
  amd.tags = {"requires-gpu-amd"};
  CHECK(classify_one(amd).diagnostics.at(0).severity == Severity::note);
}

// A test cquery resolves to @platforms//:incompatible (rules' requires_cuda()-style selects, or a
// test switched off) is skipped by Bazel, and `bazel test` naming it (as exec does) refuses to
// start: planned, it would stop every test of its node. Bazel 4's @platforms has no :incompatible,
// so this is a unit test; the labels are as Bazel 4 and (canonical) Bazel 7 and 8 print them.
TEST_CASE("cquery's @platforms//:incompatible skips the test; query's is a note, the test planned") {
  using gpuplan::testing::classify_one;
  using gpuplan::testing::make_target;
  for (std::string label : {"@platforms//:incompatible", "@@platforms//:incompatible",
                            "@@platforms~//:incompatible", "@@platforms+//:incompatible"}) {
    INFO(label);
    auto configured = make_target("//t:t", {"gpu"});
    configured.configuration = "9f87702";
    configured.constraints = {{"@platforms//os:linux", false}, {label, false}};
    auto skipped = classify_one(configured);
    REQUIRE(skipped.tests[0].bucket == Bucket::skipped);
    REQUIRE_THAT(skipped.tests[0].reason,
                 Catch::StartsWith("incompatible in the queried configuration (target_compatible_with "
                                   "resolves to " +
                                   label + ")"));
    REQUIRE(skipped.diagnostics.empty());
    auto queried = configured;
    queried.configuration = "";
    auto planned = classify_one(queried);
    REQUIRE(planned.tests[0].bucket == Bucket::gpu);
    REQUIRE(planned.diagnostics.size() == 1);
    REQUIRE(planned.diagnostics[0].severity == Severity::note);
    REQUIRE_THAT(planned.diagnostics[0].message,
                 Catch::Contains("bazel cquery with the nodes' flags resolves it"));
  }
  auto other = make_target("//t:t", {"gpu"});
  other.configuration = "9f87702";
  other.constraints = {{"//:incompatible", false}, {"@platforms//:incompatible", true}};  // not the marker
  REQUIRE(classify_one(other).tests[0].bucket == Bucket::gpu);
}

TEST_CASE("exec_properties that say nothing about GPUs leave a CPU test alone") {
  REQUIRE(classified({}, {{"Pool", "highmem"}}).bucket == Bucket::cpu);
  REQUIRE(classified({}, {{"dockerRuntime", "runc"}}).bucket == Bucket::cpu);
  REQUIRE(classified({}, {{"OSFamily", "Linux"}}).bucket == Bucket::cpu);
}

TEST_CASE("any tag convention may arrive through exec_properties") {
  auto t = classified({}, {{"gpu-mem", "40G"}, {"cuda", ">=12.4"}, {"nvlink", "true"}, {"gpu", "2"}});
  REQUIRE(t.requirement->gpus.value == 2);
  REQUIRE(t.requirement->gpu_mem_mib->value == 40960);
  REQUIRE(t.requirement->gpu_mem_mib->source == "exec_properties gpu-mem=40G");
  REQUIRE(constraints(t.requirement->cuda) == ">=12.4");
  REQUIRE(t.requirement->needs_nvlink());
  REQUIRE(classified({}, {{"no_gpu", "true"}}).reason == "exec_properties no_gpu=true → CPU only");
}

TEST_CASE("a switched-off convention is read as nothing") {
  Rules rules;
  rules.source = "rules.yaml";
  rules.disabled_conventions = {"multi_gpu"};
  auto t = classified({"multi_gpu"}, {}, rules);
  REQUIRE(t.bucket == Bucket::cpu);
  REQUIRE(t.annotations.at(0).meaning == "ignored: the convention multi_gpu is switched off in rules.yaml");
}
