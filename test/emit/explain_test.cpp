// explain's text and JSON, and classify --json, from tests the real classifier sorted.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "annotate/classify_helpers.hpp"
#include "gpuplan/emit.hpp"

using namespace gpuplan;
using gpuplan::testing::classified;
using gpuplan::testing::classify_one;
using gpuplan::testing::make_target;

namespace {

Estimator fixed(double seconds) {
  return [seconds](const ClassifiedTest&, std::optional<int>) {
    return Estimate{seconds, "size-default", 2048};
  };
}

/// What the graph says of a test: `present` with the rest of the fields left empty.
GpuPathView graph_says(bool reaches, std::vector<std::string> path = {}) {
  GpuPathView view;
  view.present = true;
  view.reaches = reaches;
  view.path = std::move(path);
  return view;
}

}  // namespace

TEST_CASE("explain names each requirement with the tag it came from, and the bucket with its reason") {
  auto test = classified({"gpu:2", "cuda>=12.4"});
  Explanation explanation{&test, planned_durations(test, fixed(90)), {}, {}};
  auto text = render_explanation(explanation);
  CHECK_THAT(text, Catch::StartsWith(
                       "//t:t\n  rule                py_test\n  tags                cuda>=12.4, gpu:2\n"));
  CHECK_THAT(text, Catch::Contains("  gpus                2               from tag gpu:2\n"));
  CHECK_THAT(text, Catch::Contains("from tag cuda>=12.4\n"));
  CHECK_THAT(text, Catch::Contains("\nbucket: gpu\n"));
  CHECK_THAT(
      text,
      Catch::Contains(
          "  whole test          90s             from size-default, VRAM 2GiB (peak plus 15% headroom)\n"));
  CHECK(text.find("dependency graph") == std::string::npos);
  CHECK(text.find("diagnostics") == std::string::npos);
}

TEST_CASE("explain plans each shard of a sharded GPU test, and nothing for a CPU test") {
  auto target = make_target("//t:sharded", {"gpu"});
  target.shard_count = 3;
  auto sharded = classify_one(target).tests.at(0);
  auto estimates = planned_durations(sharded, fixed(10));
  REQUIRE(estimates.size() == 3);
  CHECK(estimates[2].shard == 2);
  auto text = render_explanation({&sharded, estimates, {}, {}});
  CHECK_THAT(text, Catch::Contains("medium, 3 shards"));
  CHECK_THAT(text, Catch::Contains("  shard 2             10s"));
  auto cpu = classified({});
  CHECK(planned_durations(cpu, fixed(10)).empty());
  CHECK(render_explanation({&cpu, {}, {}, {}}).find("planned duration") == std::string::npos);
}

TEST_CASE("explain gives planned seconds to the millisecond, as the plan JSON does, and the pack slowdown") {
  auto test = classified({"gpu"});
  Explanation explanation{&test, planned_durations(test, fixed(236.28959999999998)), {}, {}};
  explanation.estimates[0].slowdown = 1.5;
  CHECK_THAT(
      render_explanation(explanation),
      Catch::Contains("  whole test          236.29s         from size-default, × pack_slowdown 1.5 (it "
                      "shares its GPU under pack), VRAM 2GiB (peak plus 15% headroom)\n"));
  auto json = nlohmann::ordered_json::parse(explanation_to_json(explanation));
  CHECK(json["planned_duration"][0]["seconds"] == 236.29);
  CHECK(json["planned_duration"][0]["pack_slowdown"] == 1.5);
  explanation.estimates[0].estimate.seconds = 1234.5678;
  CHECK_THAT(render_explanation(explanation), Catch::Contains("1234.568s"));
}

TEST_CASE("explain shows the path to GPU code only when the graph was read") {
  auto test = classified({});
  auto path = graph_says(true, {"//t:t", "//lib:kernels", "@cuda//:cudart"});
  path.pattern = "@cuda//...";
  auto text = render_explanation({&test, {}, {}, path});
  CHECK_THAT(
      text, Catch::Contains("\ndependency graph\n  reaches GPU code: //t:t → //lib:kernels → @cuda//:cudart\n"
                            "  (@cuda//:cudart matches gpu_deps @cuda//...)\n"));
  auto json = nlohmann::ordered_json::parse(explanation_to_json({&test, {}, {}, path}));
  CHECK(json["gpu_code"]["path"].size() == 3);
  CHECK(json["gpu_code"]["gpu_deps_pattern"] == "@cuda//...");
  auto none = render_explanation({&test, {}, {}, graph_says(false)});
  CHECK_THAT(none, Catch::Contains("reaches no GPU code (no path to a gpu_deps label)"));
  auto by_class = graph_says(true, {"//cu:kernel_test", "//cu:_kernel_test"});
  by_class.rule_class = "cuda_library";
  CHECK_THAT(render_explanation({&test, {}, {}, by_class}),
             Catch::Contains("  (//cu:_kernel_test is a cuda_library: CUDA code by its rule class)\n"));
  CHECK(nlohmann::ordered_json::parse(
            explanation_to_json({&test, {}, {}, by_class}))["gpu_code"]["gpu_rule_class"] == "cuda_library");
  auto by_file =
      graph_says(true, {"//s:nvml_test", "@system_gpu//:cudart", "@system_gpu//:lib64/libcudart.so"});
  by_file.file_kind = "a CUDA library";
  CHECK_THAT(
      render_explanation({&test, {}, {}, by_file}),
      Catch::Contains("  (@system_gpu//:lib64/libcudart.so is a CUDA library: GPU code by its file name)\n"));
  CHECK(nlohmann::ordered_json::parse(
            explanation_to_json({&test, {}, {}, by_file}))["gpu_code"]["gpu_file_kind"] == "a CUDA library");
}

TEST_CASE("explain says a test's GPU use is unknown when it reaches a label the input did not expand") {
  auto test = classified({"gpu"});
  auto partial = graph_says(false);
  partial.undeclared = "@broken//:x";
  CHECK_THAT(
      render_explanation({&test, {}, {}, partial}),
      Catch::Contains("\ndependency graph\n  unknown: reaches @broken//:x, which the input did not expand "
                      "(run bazel query 'deps(//t:t)')\n"));
  auto json = nlohmann::ordered_json::parse(explanation_to_json({&test, {}, {}, partial}));
  CHECK(json["gpu_code"]["unknown"] == true);
  CHECK(json["gpu_code"]["undeclared"] == "@broken//:x");
  CHECK(json["gpu_code"]["reaches"].is_null());
}

TEST_CASE("explain --json carries classify's form of the test, its annotations, durations and diagnostics") {
  auto test = classified({"gpu:2"});
  Diagnostics diagnostics{{Severity::warning, "//t:t", "history", "no past runs"}};
  auto json = nlohmann::ordered_json::parse(
      explanation_to_json({&test, planned_durations(test, fixed(5)), diagnostics, {}}));
  CHECK(json["label"] == "//t:t");
  CHECK(json["bucket"] == "gpu");
  CHECK(json["sources"]["gpus"] == "tag gpu:2");
  CHECK(json["annotations"][0]["source"] == "tag gpu:2");
  CHECK(json["planned_duration"][0]["shard_index"].is_null());
  CHECK(json["planned_duration"][0]["seconds"] == 5);
  CHECK(json["diagnostics"][0]["message"] == "no past runs");
  CHECK_FALSE(json.contains("gpu_code"));
}

TEST_CASE("classify --json counts the buckets and lists GPU tests whole, the others with their reason") {
  TargetList list;
  list.format = "xml";
  list.tests = {make_target("//a:gpu_test", {"gpu"}), make_target("//a:cpu_test", {}),
                make_target("//a:manual_test", {"manual"})};
  auto c = classify(list, {}, {});
  std::string text;
  write_classification_json(c, [&](std::string_view piece) { text += piece; });
  REQUIRE(text.back() == '\n');
  auto json = nlohmann::ordered_json::parse(text);
  CHECK(json["summary"]["tests"] == 3);
  CHECK(json["summary"]["gpu_tests"] == 1);
  CHECK(json["summary"]["skipped_tests"] == 1);
  CHECK(json["gpu_tests"][0]["label"] == "//a:gpu_test");
  CHECK(json["gpu_tests"][0].contains("requirements"));
  CHECK(json["cpu_tests"][0] ==
        nlohmann::ordered_json{{"label", "//a:cpu_test"}, {"reason", c.tests[0].reason}});
  CHECK(json["skipped_tests"][0]["label"] == "//a:manual_test");
}
