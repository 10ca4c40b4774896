// The conventions of real repositories: backend variants (JAX, XLA), vendors, the rest of their
// vocabulary, and the near misses that must be loud. Each target below is written the way the
// named macro writes its expansion (tags as `bazel query --output=xml` shows them).
#include <fmt/format.h>

#include <catch2/catch.hpp>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>

#include "annotate/classify_helpers.hpp"
#include "annotate/conventions.hpp"
#include "gpuplan/fleet.hpp"
#include "ingest/ingest_helpers.hpp"

using namespace gpuplan;
using gpuplan::testing::classified;
using gpuplan::testing::classify_one;
using gpuplan::testing::make_target;

namespace {

Target generated(std::string label, std::vector<std::string> tags, std::string macro) {
  auto t = make_target(std::move(label), std::move(tags));
  t.generator_function = macro;
  return t;
}

/// Each JSON fixture is read as the XML one was (`xml`, classified): 1 NVIDIA GPU, the same
/// diagnostics word for word (severity, test, source and message), and an error under --strict.
void check_json_reads_as_xml(const Classification& xml, std::initializer_list<const char*> fixtures) {
  auto said = [](const Classification& c) {
    std::vector<std::string> out;
    for (const auto& d : c.diagnostics)
      out.push_back(fmt::format("{} {}: {}: {}", to_string(d.severity), d.label, d.source, d.message));
    return out;
  };
  for (const char* fixture : fixtures) {
    INFO(fixture);
    auto list = gpuplan::testing::read_fixture(fixture);
    auto c = classify(list, {}, {});
    REQUIRE(c.tests.at(0).bucket == Bucket::gpu);
    CHECK(c.tests[0].requirement->gpus.value == 1);
    CHECK(c.tests[0].requirement->vendor->value == "nvidia");
    CHECK(said(c) == said(xml));
    CHECK(has_errors(classify(list, {}, {.strict = true}).diagnostics));
  }
}

std::vector<Diagnostic> diagnostics_of(std::vector<std::string> tags, ClassifyOptions options = {}) {
  return classify_one(make_target("//t:t", std::move(tags)), {}, options).diagnostics;
}

}  // namespace

// jaxlib/jax.bzl jax_multiprocess_test: tags + ["multiaccelerator"] on every variant, jax_test_<backend>,
// and tf_cuda_tests_tags() (requires-gpu-nvidia-style tags plus "gpu") on the gpu variant only.
TEST_CASE("multiaccelerator on JAX's cpu and tpu variants does not make them GPU tests") {
  auto cpu = classified({"jax_test_cpu", "multiaccelerator"});
  REQUIRE(cpu.bucket == Bucket::cpu);
  REQUIRE(cpu.reason ==
          "tag jax_test_cpu → the cpu variant: a CPU test (tag multiaccelerator: the macro's, on every "
          "variant, and no GPU ask on this one)");
  auto tpu = classified({"jax_test_tpu", "multiaccelerator"});
  REQUIRE(tpu.bucket == Bucket::skipped);
  REQUIRE_THAT(tpu.reason, Catch::Contains("a TPU test"));
  auto gpu = classified({"gpu", "jax_test_gpu", "multiaccelerator", "requires-gpu-nvidia"});
  REQUIRE(gpu.bucket == Bucket::gpu);
  REQUIRE(gpu.requirement->gpus.value == 8);
  REQUIRE(gpu.requirement->vendor->value == "nvidia");
}

// TPU repositories' macros tag requires-tpu, requires-tpu-v5lite, ..., and their
// process_accelerator_tags adds the wild card requires-tpu: such a test must not land among the
// CPU tests, whose runners would run it without its TPU (JAX then falls back to its CPU backend).
TEST_CASE("requires-tpu and its generation variants make a TPU test: skipped, not a CPU test") {
  for (auto tags : {std::vector<std::string>{"requires-tpu"}, {"presubmit-v5", "requires-tpu-v5lite"}}) {
    auto tpu = classified(tags);
    CHECK(tpu.bucket == Bucket::skipped);
    CHECK_THAT(tpu.reason, Catch::Contains("a TPU test"));
  }
  CHECK(classified({"requires-tpu", "multiaccelerator"}).bucket == Bucket::skipped);
}

TEST_CASE("a CPU variant gives no warning for the macro's shared count tags, but does for a GPU ask") {
  auto quiet = classify_one(make_target("//t:t", {"jax_test_cpu", "multiaccelerator"}));
  REQUIRE(quiet.diagnostics.empty());
  auto loud = classify_one(make_target("//t:t", {"jax_test_cpu", "gpu:2"}));
  REQUIRE(loud.tests[0].bucket == Bucket::cpu);
  REQUIRE(loud.diagnostics.size() == 1);
  REQUIRE_THAT(loud.diagnostics[0].message, Catch::Contains("makes it the cpu variant"));
}

// xla/tests/build_defs.bzl xla_test: xla_<backend> first; nvgpu backends add tf_gpu_tests_tags()
// (requires-gpu-nvidia or requires-gpu-smXY-only[:N], gpu, cuda-only); amdgpu_any adds gpu,
// requires-gpu-amd, rocm-only (and exclusive-if-local with multi_gpu); intelgpu_any gpu,
// requires-gpu-intel, oneapi-only. The macro's own tags (multi_gpu here) land on every variant.
TEST_CASE("XLA's xla_test variants: cpu is CPU, each GPU backend names its vendor") {
  auto cpu = classified({"multi_gpu", "xla_cpu"});
  REQUIRE(cpu.bucket == Bucket::cpu);
  auto h100 = classified({"cuda-only", "gpu", "multi_gpu", "requires-gpu-sm90-only:2", "xla_h100"});
  REQUIRE(h100.bucket == Bucket::gpu);
  REQUIRE(h100.requirement->gpus.value == 2);
  REQUIRE(h100.requirement->vendor->value == "nvidia");
  REQUIRE(h100.requirement->compute_capability.at(0).value.str() == "==9.0");
  auto amd = classified(
      {"exclusive-if-local", "gpu", "multi_gpu", "requires-gpu-amd", "rocm-only", "xla_amdgpu_any"});
  REQUIRE(amd.requirement->vendor->value == "amd");
  REQUIRE(amd.requirement->gpus.value == 2);
  REQUIRE(amd.requirement->is_exclusive());
  auto intel = classified({"gpu", "oneapi-only", "requires-gpu-intel", "xla_intelgpu_any"});
  REQUIRE(intel.requirement->vendor->value == "intel");
  REQUIRE(intel.requirement->gpus.value == 1);
  REQUIRE(classified({"xla_interpreter"}).bucket == Bucket::cpu);
}

TEST_CASE("a variant without backend tags is known by its name when a multi-backend macro made it") {
  auto t = classify_one(generated("//jax:pmap_test_cpu", {"multiaccelerator"}, "jax_multiplatform_test"));
  REQUIRE(t.tests[0].bucket == Bucket::cpu);
  REQUIRE_THAT(t.tests[0].reason, Catch::StartsWith("name suffix _cpu (jax_multiplatform_test variant)"));
  auto amd = classify_one(generated("//xla/tests:dot_test_amdgpu_any", {}, "xla_test"));
  REQUIRE(amd.tests[0].requirement->vendor->value == "amd");
  // Any other macro's _cpu is just a name.
  auto other = classify_one(generated("//x:fast_cpu", {"multi_gpu"}, "py_test"));
  REQUIRE(other.tests[0].bucket == Bucket::gpu);
}

// tensorflow/tensorflow.bzl gpu_py_test (cuda_py_test calls it): NAME_cpu with the macro's tags,
// NAME_gpu with tf_gpu_tests_tags() added, and NAME_2gpu (manual) when the tags hold multi_gpu or
// multi_and_single_gpu. tf_gpu_cc_test and TSL's tsl_gpu_cc_test make NAME_cpu and NAME_gpu alike.
TEST_CASE("TensorFlow's cpu variant of a multi_gpu test is a CPU test, its gpu variants GPU tests") {
  auto cpu = classify_one(generated("//tensorflow/python/kernel_tests:collective_ops_test_cpu",
                                    {"multi_gpu", "no_windows"}, "cuda_py_test"));
  REQUIRE(cpu.tests[0].bucket == Bucket::cpu);
  REQUIRE_THAT(cpu.tests[0].reason, Catch::StartsWith("name suffix _cpu (cuda_py_test variant)"));
  REQUIRE(cpu.diagnostics.empty());
  auto gpu =
      classify_one(generated("//tensorflow/python/kernel_tests:collective_ops_test_gpu",
                             {"multi_gpu", "no_windows", "requires-gpu-nvidia", "gpu"}, "cuda_py_test"));
  REQUIRE(gpu.tests[0].bucket == Bucket::gpu);
  REQUIRE(gpu.tests[0].requirement->vendor->value == "nvidia");
  auto two = classify_one(
      generated("//tensorflow/python/kernel_tests:collective_ops_test_2gpu",
                {"multi_gpu", "requires-gpu-nvidia:2", "notap", "manual", "no_pip"}, "cuda_py_test"),
      {}, ClassifyOptions{.include_manual = true});
  REQUIRE(two.tests[0].requirement->gpus.value == 2);
  auto cc =
      classify_one(generated("//tensorflow/core/kernels:gpu_op_test_cpu", {"multi_gpu"}, "tf_gpu_cc_test"));
  REQUIRE(cc.tests[0].bucket == Bucket::cpu);
}

// TensorFlow's BUILD files call those macros through wrappers (cuda_py_strict_test from
// tensorflow.default.bzl; distribute_py_test in core/platform/distribute.bzl calls cuda_py_test),
// whose name is the generator_function; tf_py_test's TFRT copy appends _tfrt. And
// compiler/tests/build_defs.bzl's tf_xla_py_test tags each backend's copy tf_xla_BACKEND and adds
// an MLIR-bridge copy, NAME_BACKEND_mlir_bridge_test. Before, each CPU copy below got 2 GPUs.
TEST_CASE("TensorFlow's cpu copies made through wrappers, TFRT and tf_xla_py_test are CPU tests") {
  for (const char* macro : {"cuda_py_strict_test", "distribute_py_test", "distribute_py_strict_test"}) {
    INFO(macro);
    auto cpu = classify_one(generated("//tensorflow/python/distribute:cross_device_ops_test_cpu",
                                      {"multi_gpu", "no_oss"}, macro));
    REQUIRE(cpu.tests[0].bucket == Bucket::cpu);
    auto gpu = classify_one(generated("//tensorflow/python/distribute:cross_device_ops_test_gpu",
                                      {"multi_gpu", "no_oss", "requires-gpu-nvidia", "gpu"}, macro));
    REQUIRE(gpu.tests[0].requirement->gpus.value == 2);
  }
  auto tfrt = classify_one(
      generated("//tensorflow/python/ops:math_ops_test_cpu_tfrt", {"multi_gpu", "tfrt"}, "cuda_py_test"));
  REQUIRE(tfrt.tests[0].bucket == Bucket::cpu);
  auto xla_cpu = classify_one(
      generated("//tensorflow/compiler/tests:conv_test_cpu", {"multi_gpu", "tf_xla_cpu"}, "tf_xla_py_test"));
  REQUIRE(xla_cpu.tests[0].bucket == Bucket::cpu);
  REQUIRE(xla_cpu.diagnostics.empty());
  auto bridge = classify_one(generated("//tensorflow/compiler/tests:conv_test_cpu_mlir_bridge_test",
                                       {"multi_gpu", "tf_xla_cpu"}, "tf_xla_py_test"));
  REQUIRE(bridge.tests[0].bucket == Bucket::cpu);
  // A query without generator_function still has the tag.
  REQUIRE(classified({"multi_gpu", "tf_xla_cpu"}).bucket == Bucket::cpu);
  auto xla_gpu = classified({"multi_gpu", "tf_xla_gpu", "requires-gpu-nvidia", "gpu"});
  REQUIRE(xla_gpu.bucket == Bucket::gpu);
  REQUIRE(xla_gpu.requirement->gpus.value == 2);
}

// xla/tests/build_defs.bzl before 2025: NVIDIA_GPU_BACKENDS gpu_any, gpu_p100 ... gpu_b200 and
// AMD_GPU_DEFAULT_BACKENDS gpu_amd_any, each copy tagged xla_BACKEND. Before, xla_gpu_a100 was a
// warning (a model not read), so --strict failed on every such query.
TEST_CASE("XLA's older backend tags xla_gpu_MODEL and xla_gpu_amd_any name their vendor, without a warning") {
  ClassifyOptions strict{.strict = true};
  auto a100 = classify_one(
      generated("//xla/service/gpu:gemm_test_gpu_a100",
                {"xla_gpu_a100", "requires-gpu-sm80-only", "cuda-only", "requires-gpu-nvidia", "gpu"},
                "xla_test"),
      {}, strict);
  REQUIRE(a100.diagnostics.empty());
  REQUIRE(a100.tests[0].requirement->vendor->value == "nvidia");
  REQUIRE(classified({"xla_gpu_any"}).requirement->vendor->value == "nvidia");
  REQUIRE(classified({"xla_gpu_amd_any"}).requirement->vendor->value == "amd");
  REQUIRE(classify_one(generated("//xla/tests:dot_test_gpu_amd_any", {}, "xla_test"))
              .tests[0]
              .requirement->vendor->value == "amd");
}

TEST_CASE("vendor tags: requires-gpu-amd/-intel/-nvidia/-cuda/-rocm ask for a GPU of that vendor") {
  REQUIRE(classified({"requires-gpu-amd"}).requirement->vendor->value == "amd");
  REQUIRE(classified({"requires-gpu-rocm"}).requirement->vendor->value == "amd");
  REQUIRE(classified({"requires-gpu-intel:2"}).requirement->gpus.value == 2);
  REQUIRE(classified({"requires-gpu-cuda"}).requirement->vendor->value == "nvidia");
  REQUIRE(classified({"requires-gpu-sm80"}).requirement->vendor->value == "nvidia");
  REQUIRE_FALSE(classified({"requires-gpu"}).requirement->vendor);
  REQUIRE(classified({"requires-gpu"}).bucket == Bucket::gpu);
}

// TensorFlow's dtensor_test (tensorflow/dtensor/build_defs.bzl): NAME_2gpus ("2 Physical GPUs")
// is tagged requires-gpu:2 beside gpu. Before, requires-gpu:2 was a near miss and the test had the
// 1 GPU gpu gives.
TEST_CASE("requires-gpu:N asks for N GPUs of any vendor, as TensorFlow's dtensor_test writes it") {
  auto two = classify_one(make_target("//t:t_2gpus", {"gpu", "requires-gpu:2"}));
  REQUIRE(two.tests[0].bucket == Bucket::gpu);
  REQUIRE(two.tests[0].requirement->gpus.value == 2);
  REQUIRE_FALSE(two.tests[0].requirement->vendor);
  REQUIRE(two.diagnostics.empty());
  auto bad = classify_one(make_target("//t:t", {"requires-gpu:two"}));
  REQUIRE(bad.tests[0].bucket == Bucket::cpu);
  REQUIRE(bad.diagnostics.at(0).severity == Severity::warning);
}

// TensorFlow's TF-TRT tests (tftrt_py_test's TFTRT_PY_TEST_TAGS) carry no_rocm, which its and XLA's
// ROCm CI filter out (-no_rocm); the GPU variant's tf_gpu_tests_tags() names no vendor where no GPU
// is configured. Before, no_rocm was a note and the TensorRT test was planned on AMD GPUs too.
TEST_CASE("TensorFlow's no_rocm keeps a GPU test off AMD GPUs, and makes none alone") {
  auto gpu =
      classify_one(make_target("//tensorrt:trt_mode_test_gpu", {"no_cuda_on_cpu_tap", "no_rocm", "no_windows",
                                                                "nomac", "requires-gpu", "gpu", "local"}));
  REQUIRE(gpu.tests[0].bucket == Bucket::gpu);
  REQUIRE(gpu.tests[0].requirement->vendor->value == "nvidia");
  for (const auto& d : gpu.diagnostics) CHECK(d.source != "tag no_rocm");
  auto cpu = classified({"no_cuda_on_cpu_tap", "no_rocm", "no_windows", "nomac"});
  REQUIRE(cpu.bucket == Bucket::cpu);
}

// PyTorch's //c10/cuda/test:test (c10/cuda/test/build.bzl): target_compatible_with =
// requires_cuda_enabled(), rules_cuda's select() on @rules_cuda//cuda:is_cuda_enabled whose default
// is @platforms//:incompatible; no tag names a GPU. Query prints the list merged, and the
// config_setting only among the rule-inputs. Before, a note, and the CUDA test was planned as a
// CPU test, on runners with no GPU.
TEST_CASE(
    "rules_cuda's requires_cuda_enabled() on PyTorch's c10 CUDA test reads as 1 NVIDIA GPU, with a warning") {
  auto list = gpuplan::testing::read_fixture("pytorch/c10_cuda_test.query.xml");
  auto c = classify(list, {}, {});
  REQUIRE(c.tests.at(0).bucket == Bucket::gpu);
  REQUIRE(c.tests[0].requirement->gpus.value == 1);
  REQUIRE(c.tests[0].requirement->vendor->value == "nvidia");
  auto warnings = gpuplan::testing::warnings_of(c);
  REQUIRE(warnings.size() == 1);
  CHECK(warnings[0].label == "//c10/cuda/test:test");
  CHECK(warnings[0].source == "target_compatible_with select() on @rules_cuda//cuda:is_cuda_enabled");
  CHECK_THAT(warnings[0].message,
             Catch::Contains("read as 1 NVIDIA GPU") &&
                 Catch::Contains("Tag it requires-gpu-nvidia (or requires-gpu-nvidia:N)"));
  auto strict = classify(list, {}, {.strict = true});
  CHECK(has_errors(strict.diagnostics));

  // A tag that asks for GPUs keeps its count and gets the vendor, without a warning; a CPU tag,
  // or a select() on a setting that names no GPU stack, leaves the test on the CPU runners.
  auto with = [&](std::vector<std::string> tags, std::string condition) {
    Target t = list.tests.at(0);
    t.tags.assign(tags.begin(), tags.end());
    t.constraints.back().label = condition;
    return classify_one(t);
  };
  auto tagged = with({"gpu:2"}, "@rules_cuda//cuda:is_cuda_enabled");
  REQUIRE(tagged.tests[0].requirement->gpus.value == 2);
  REQUIRE(tagged.tests[0].requirement->vendor->value == "nvidia");
  for (const auto& d : tagged.diagnostics) CHECK(d.severity == Severity::note);
  CHECK(with({"cpu-only"}, "@rules_cuda//cuda:is_cuda_enabled").tests[0].bucket == Bucket::cpu);
  auto linux_only = with({}, "//tools/config:linux");
  CHECK(linux_only.tests[0].bucket == Bucket::cpu);
  for (const auto& d : linux_only.diagnostics) CHECK(d.severity == Severity::note);
}

// The same test from JSON query output (Bazel 4's --output=proto reprinted, test/data/pytorch/):
// flattened, target_compatible_with is @platforms//:incompatible alone and the condition is in
// $config_dependencies; under --noproto:flatten_selects it is the select() itself. Before, a CPU
// test with a note (flattened), or with a warning that its branches differ (unflattened).
TEST_CASE("rules_cuda's requires_cuda_enabled() reads the same from JSON as from XML, flattened or not") {
  auto xml = classify(gpuplan::testing::read_fixture("pytorch/c10_cuda_test.query.xml"), {}, {});
  REQUIRE(gpuplan::testing::warnings_of(xml).size() == 1);
  check_json_reads_as_xml(xml, {"pytorch/c10_cuda_test.jsonproto", "pytorch/c10_cuda_test.streamed_jsonproto",
                                "pytorch/c10_cuda_test_unflattened.jsonproto"});
}

// The faiss module of the Bazel Central Registry (modules/faiss/1.14.1.bcr.1/overlay/tests/BUILD.bazel):
// //tests:test_c_api_gpu is tagged requires-gpu and has target_compatible_with = requires_cuda(),
// rules_cuda's current spelling, whose two select()s query prints merged as constraint values no
// platform has (@rules_cuda//cuda:rules_are_enabled, @rules_cuda//cuda:valid_toolchain_is_configured).
// Before, two warnings that the constraints were not read, and the test was planned on a GPU of any
// vendor (an AMD GPU, where Bazel skips it and passes); without the tag it was a CPU test.
TEST_CASE("rules_cuda's requires_cuda() on the faiss module's GPU test keeps it to NVIDIA GPUs") {
  auto list = gpuplan::testing::read_fixture("faiss/tests.query.xml");
  auto c = classify(list, {}, {});
  REQUIRE(c.tests.size() == 2);
  const auto& gpu = c.tests[0].target.label == "//tests:test_c_api_gpu" ? c.tests[0] : c.tests[1];
  const auto& cpu = c.tests[0].target.label == "//tests:test_c_api_gpu" ? c.tests[1] : c.tests[0];
  REQUIRE(gpu.bucket == Bucket::gpu);
  REQUIRE(gpu.requirement->gpus.value == 1);
  REQUIRE(gpu.requirement->vendor);
  REQUIRE(gpu.requirement->vendor->value == "nvidia");
  REQUIRE(cpu.bucket == Bucket::cpu);
  for (const auto& d : c.diagnostics) CHECK(d.severity == Severity::note);

  // Without the tag, requires_cuda() alone: 1 NVIDIA GPU, with one warning (an error under --strict).
  Target untagged = list.tests.at(0).label == "//tests:test_c_api_gpu" ? list.tests[0] : list.tests[1];
  untagged.tags.clear();
  auto alone = classify_one(untagged);
  REQUIRE(alone.tests[0].bucket == Bucket::gpu);
  REQUIRE(alone.tests[0].requirement->gpus.value == 1);
  REQUIRE(alone.tests[0].requirement->vendor->value == "nvidia");
  auto warnings = gpuplan::testing::warnings_of(alone);
  REQUIRE(warnings.size() == 1);
  CHECK(warnings[0].source == "target_compatible_with @rules_cuda//cuda:rules_are_enabled");
  CHECK_THAT(warnings[0].message, Catch::Contains("rules_cuda's requires_cuda()") &&
                                      Catch::Contains("read as 1 NVIDIA GPU") &&
                                      Catch::Contains("Tag it requires-gpu-nvidia"));
  CHECK(has_errors(classify_one(untagged, {}, {.strict = true}).diagnostics));

  // A CPU tag decides; cquery output that still holds the values (CUDA off in that configuration)
  // is a test Bazel skips there.
  Target cpu_only = untagged;
  cpu_only.tags.assign({"cpu-only"});
  CHECK(classify_one(cpu_only).tests[0].bucket == Bucket::cpu);
  Target configured = untagged;
  configured.configuration = "f5527a6";
  CHECK(classify_one(configured).tests[0].bucket == Bucket::skipped);
}

// The same requires_cuda() left unflattened (--noproto:flatten_selects, test/data/faiss/README.md):
// its two select()s' branches differ only in rules_cuda's constraint values, which it reads as
// NVIDIA. Before, each test also had a warning that the branches differ, so --strict refused the
// tagged GPU test, which XML and flattened JSON plan without a word.
TEST_CASE("rules_cuda's requires_cuda() left unflattened in JSON reads as from XML") {
  auto c = classify(gpuplan::testing::read_fixture("faiss/tests_unflattened.streamed_jsonproto"), {}, {});
  REQUIRE(c.tests.size() == 3);
  std::map<std::string, const ClassifiedTest*> by_label;
  for (const auto& t : c.tests) by_label[t.target.label] = &t;
  for (const char* label : {"//tests:test_c_api_gpu", "//tests:test_c_api_gpu_untagged"}) {
    INFO(label);
    const auto& t = *by_label.at(label);
    REQUIRE(t.bucket == Bucket::gpu);
    CHECK(t.requirement->gpus.value == 1);
    CHECK(t.requirement->vendor->value == "nvidia");
  }
  auto warnings = gpuplan::testing::warnings_of(c);
  REQUIRE(warnings.size() == 1);
  CHECK(warnings[0].label == "//tests:test_c_api_gpu_untagged");
  CHECK_THAT(warnings[0].message, Catch::Contains("rules_cuda's requires_cuda()"));
}

// A select() on target_compatible_with whose named branch is the incompatible one, with
// //conditions:default compatible: bazel-skylib's compatibility.none_of(":no_cuda")
// (test/data/bazel/no_cuda.BUILD). XML prints only @platforms//:incompatible and the condition as a
// rule-input, and cannot tell which branch it is; JSON under --noproto:flatten_selects can. Before,
// XML and flattened JSON planned 1 NVIDIA GPU with a warning, and unflattened JSON a CPU test with a
// warning that the select()'s branches differ.
TEST_CASE("a select() whose named branch is the incompatible one reads the same from JSON as from XML") {
  auto xml = classify(gpuplan::testing::read_fixture("bazel/no_cuda.query.xml"), {}, {});
  REQUIRE(xml.tests.at(0).bucket == Bucket::gpu);
  REQUIRE(xml.tests[0].requirement->vendor->value == "nvidia");
  REQUIRE(gpuplan::testing::warnings_of(xml).size() == 1);
  CHECK(gpuplan::testing::warnings_of(xml)[0].source == "target_compatible_with select() on //t:no_cuda");
  // Query output does not say which branch is the incompatible one, so the warning does not claim
  // one (it said "where //t:no_cuda does not apply, the test is incompatible": here, the opposite).
  CHECK_THAT(
      gpuplan::testing::warnings_of(xml)[0].message,
      Catch::Contains("a select() on //t:no_cuda makes the test incompatible in one of its branches") &&
          !Catch::Contains("does not apply"));
  check_json_reads_as_xml(xml, {"bazel/no_cuda.jsonproto", "bazel/no_cuda_unflattened.streamed_jsonproto"});
}

// google/android-cuttlefish's e2etests/cvd/*/BUILD.bazel: tags = ["exclusive", ..., "requires_gpu"] on
// its GPU e2e tests; its CI (tools/testutils/runcvde2etests.sh -g) runs
// --test_tag_filters=requires_gpu on GPU machines. Before, requires_gpu was a near miss of
// requires-gpu: CPU tests with a warning.
TEST_CASE("Cuttlefish's requires_gpu is a GPU test, with exclusive beside it the whole node") {
  auto c = classify_one(make_target("//cvd/graphics_tests/gfxstream:graphics_tests",
                                    {"exclusive", "external", "no-sandbox", "requires_ab", "requires_gpu",
                                     "supports-graceful-termination"}));
  REQUIRE(c.tests[0].bucket == Bucket::gpu);
  REQUIRE(c.tests[0].requirement->is_exclusive());
  REQUIRE(c.tests[0].requirement->every_node_gpu);
  REQUIRE_FALSE(c.tests[0].requirement->vendor);
  REQUIRE(c.diagnostics.empty());
  REQUIRE(classified({"requires_gpu"}).requirement->gpus.value == 1);
}

// alibaba/rtp-llm's tests that need several GPUs say how many only in their env's WORLD_SIZE, beside
// exec_properties {"gpu": "H20"} (torch_symm_mem_test spawns one rank a GPU and runs 1 when it sees
// one GPU) or {"gpu": "SM100_ARM"} (a perf target "of these 4-GPU DSV4-Flash perf targets", its
// comment says). Before, each was planned on 1 GPU, with no word.
TEST_CASE("a GPU test's env WORLD_SIZE gives its GPU count where no annotation does, with a warning") {
  for (const char* fixture : {"rtp_llm/world_size.query.xml", "rtp_llm/world_size.streamed_jsonproto"}) {
    INFO(fixture);
    auto list = gpuplan::testing::read_fixture(fixture);
    auto c = classify(list, {}, {.include_manual = true});
    REQUIRE(c.tests.size() == 4);
    std::map<std::string, const ClassifiedTest*> by_label;
    for (const auto& t : c.tests) by_label[t.target.label] = &t;
    const auto& symm = *by_label.at("//rtp_llm/models_py/modules/base/cuda/test:torch_symm_mem_test");
    const auto& perf = *by_label.at("//rtp_llm/test/perf_test:v4_flash_dp4_decode_grid_perf");
    const auto& one = *by_label.at("//rtp_llm/models_py/modules/base/cuda/test:get_topk_ragged_cp_test");
    for (const auto* t : {&symm, &perf}) {
      INFO(t->target.label);
      REQUIRE(t->bucket == Bucket::gpu);
      REQUIRE(t->requirement->gpus.value == 4);
      REQUIRE(t->requirement->gpus.source == "env WORLD_SIZE=4");
      REQUIRE(t->requirement->vendor->value == "nvidia");
    }
    REQUIRE(one.requirement->gpus.value == 1);
    REQUIRE(by_label.at("//rtp_llm/test/perf_test:test_perf_config_and_runners")->bucket == Bucket::cpu);
    std::vector<std::string> warned;
    for (const auto& d : c.diagnostics)
      if (d.severity == Severity::warning && d.source == "env WORLD_SIZE=4") {
        warned.push_back(d.label);
        CHECK_THAT(d.message,
                   Catch::Contains("it is planned with 4 GPUs") && Catch::Contains("tag it gpu:4"));
      }
    REQUIRE(warned.size() == 2);
    REQUIRE(has_errors(classify(list, {}, {.include_manual = true, .strict = true}).diagnostics));
  }
  // With a rule that reads rtp-llm's worker classes, the WORLD_SIZE warnings are all there is to
  // say: before, nothing was said, and each test was planned on 1 GPU.
  Rules rules;
  Rule worker;
  worker.tag = "^gpu:(H20|SM100_ARM)$";
  worker.set = {{"vendor", "nvidia"}};
  rules.rules.push_back(worker);
  auto ruled = classify(gpuplan::testing::read_fixture("rtp_llm/world_size.query.xml"), rules,
                        {.include_manual = true});
  std::vector<std::string> said;
  for (const auto& d : ruled.diagnostics)
    if (d.severity != Severity::note) said.push_back(d.source);
  REQUIRE(said == std::vector<std::string>{"env WORLD_SIZE=4", "env WORLD_SIZE=4"});
  // A count given is kept, with a note; a CPU test's WORLD_SIZE (gloo's processes need no GPU) is a note.
  Target counted = make_target("//t:t", {"gpu:2"});
  counted.edit_launch().world_size_env = "WORLD_SIZE=4";
  auto two = classify_one(counted);
  REQUIRE(two.tests[0].requirement->gpus.value == 2);
  REQUIRE(two.diagnostics.size() == 1);
  REQUIRE(two.diagnostics[0].severity == Severity::note);
  Target cpu = make_target("//t:cpu", {});
  cpu.edit_launch().world_size_env = "WORLD_SIZE=4";
  auto gloo = classify_one(cpu);
  REQUIRE(gloo.tests[0].bucket == Bucket::cpu);
  REQUIRE(gloo.diagnostics.size() == 1);
  REQUIRE(gloo.diagnostics[0].severity == Severity::note);
  REQUIRE_THAT(gloo.diagnostics[0].message, Catch::Contains("if they use NCCL, tag it gpu:4"));
}

// WORLD_SIZE values that are no plain count (test/data/bazel/world_size_values.*, real Bazel 4
// output). Before, a value other than 1 to 255 was not read, with no word: WORLD_SIZE=512 planned
// a 512-process test on 1 GPU, and "$(WORLD_SIZE)" or "0" on a GPU test with no count said nothing.
TEST_CASE("a GPU test's WORLD_SIZE that is too large or no count is said, never read as 1 GPU silently") {
  for (const char* fixture :
       {"bazel/world_size_values.query.xml", "bazel/world_size_values.streamed_jsonproto"}) {
    INFO(fixture);
    auto c = classify(gpuplan::testing::read_fixture(fixture), {}, {});
    REQUIRE(c.tests.size() == 9);
    std::map<std::string, const ClassifiedTest*> by_name;
    for (const auto& t : c.tests) by_name[t.target.label.substr(t.target.label.find(':') + 1)] = &t;
    std::map<std::string, std::string> warned;  // test name → message
    for (const auto& d : c.diagnostics) {
      INFO(d.label << ": " << d.message);
      REQUIRE(d.severity == Severity::warning);
      REQUIRE(d.source.starts_with("env WORLD_SIZE="));
      warned[d.label.substr(d.label.find(':') + 1)] = d.message;
    }
    // A count beyond any node's GPUs: that many GPUs, which the planner finds no node for.
    REQUIRE(by_name.at("ranks_512")->requirement->gpus.value == 512);
    REQUIRE(by_name.at("ranks_512")->requirement->gpus.source == "env WORLD_SIZE=512");
    CHECK_THAT(warned.at("ranks_512"), Catch::Contains("it is planned with 512 GPUs"));
    // Beyond the most one test may ask for: that most, and the message keeps the real count.
    REQUIRE(by_name.at("ranks_5000")->requirement->gpus.value == 1024);
    CHECK_THAT(warned.at("ranks_5000"), Catch::Contains("WORLD_SIZE=5000, 5000 processes") &&
                                            Catch::Contains("planned with 1024 GPUs, the most gpuplan plans "
                                                            "for one test, which no node has"));
    // No count: 1 GPU, as before, but with a warning naming the value.
    for (const char* name : {"ranks_make_variable", "ranks_zero", "ranks_negative", "ranks_empty"}) {
      INFO(name);
      REQUIRE(by_name.at(name)->requirement->gpus.value == 1);
      CHECK_THAT(warned.at(name),
                 Catch::Contains("it is planned with 1 GPU, as no annotation gives a count"));
    }
    CHECK_THAT(warned.at("ranks_make_variable"),
               Catch::StartsWith("the test's env sets WORLD_SIZE=$(WORLD_SIZE), which is a Make variable"));
    CHECK_THAT(warned.at("ranks_zero"),
               Catch::StartsWith("the test's env sets WORLD_SIZE=0, which is no count of processes"));
    CHECK_THAT(warned.at("ranks_empty"),
               Catch::StartsWith("the test's env sets WORLD_SIZE=\"\", which is no count of processes"));
    // "4 " is 4 to Python's int(), as torch.distributed reads it.
    REQUIRE(by_name.at("ranks_blank")->requirement->gpus.value == 4);
    CHECK_THAT(warned.at("ranks_blank"), Catch::Contains("it is planned with 4 GPUs"));
    // A count given, or a CPU test: nothing to warn of.
    REQUIRE(by_name.at("ranks_counted")->requirement->gpus.value == 2);
    REQUIRE(by_name.at("ranks_cpu")->bucket == Bucket::cpu);
    REQUIRE(warned.size() == 7);
    REQUIRE(has_errors(classify(gpuplan::testing::read_fixture(fixture), {}, {.strict = true}).diagnostics));
  }
}

// google/gapid's (and google/agi's) test/integration/*/BUILD.bazel: tags = ["integration", "needs_gpu"]
// on the tests that replay on the machine's GPU; its CI (kokoro/linux-test/test.sh) runs
// --test_tag_filters=-needs_gpu on GPU-less machines. Before, needs_gpu was a near miss of gpu: CPU
// tests with a warning, which a CPU runner failed.
TEST_CASE("GAPID's needs_gpu is a GPU test of any vendor") {
  auto c = classify(gpuplan::testing::read_fixture("gapid/integration.query.xml"), {},
                    {.include_manual = true, .strict = true});
  REQUIRE(c.tests.size() == 3);
  for (const auto& t : c.tests) {
    INFO(t.target.label);
    bool needs_gpu = t.target.label != "//core/java/jdwp:go_default_test";
    REQUIRE(t.bucket == (needs_gpu ? Bucket::gpu : Bucket::cpu));
    if (!needs_gpu) continue;
    REQUIRE(t.requirement->gpus.value == 1);
    REQUIRE_FALSE(t.requirement->vendor);
  }
  REQUIRE(c.diagnostics.empty());
  // The near miss with a hyphen stays one: GAPID writes it with an underscore.
  REQUIRE(classified({"needs-gpu"}).bucket == Bucket::cpu);
}

// openxla/xla's lit_device_test (xla/lit.bzl) tags each backend's tests xla_device_BACKEND beside
// xla_BACKEND and the requires-gpu-smXY-only tag its CI follows (test/data/xla/). Before, the
// xla_device_ tag was a GPU model no convention read: a warning on every such test, and --strict
// refused XLA's Triton lit tests.
TEST_CASE("XLA's xla_device_BACKEND is the backend, as xla_BACKEND is, not a model to warn of") {
  auto c = classify(gpuplan::testing::read_fixture("xla/tests.query.xml"), {}, {.strict = true});
  int lit = 0;
  for (const auto& t : c.tests) {
    if (!t.target.label.starts_with("//xla/backends/gpu/codegen/triton/tests:")) continue;
    INFO(t.target.label);
    ++lit;
    REQUIRE(t.bucket == Bucket::gpu);
    REQUIRE(t.requirement->vendor->value == "nvidia");
    REQUIRE_FALSE(t.requirement->gpu_models);
    REQUIRE(t.requirement->compute_capability.size() == 1);
  }
  REQUIRE(lit == 4);
  REQUIRE(c.diagnostics.empty());
  REQUIRE(classified({"xla_device_amdgpu_any"}).requirement->vendor->value == "amd");
  REQUIRE(classified({"xla_device_cpu", "multi_gpu"}).bucket == Bucket::cpu);
}

// XLA tags tests "not configured for the oneAPI backend" no-oneapi (build_tools/lint/tags.py),
// and its oneAPI CI leaves them out (build_tools/sycl/ci_test_xla.sh), but xla_test still makes
// their intelgpu_any copy (test/data/xla/: xla/stream_executor/gpu's gpu_kernel_test). Before,
// that copy was planned on an Intel GPU, where it fails, with no word said.
TEST_CASE("XLA's no-oneapi skips a test's Intel copy and leaves its other vendors' copies as they are") {
  auto c = classify(gpuplan::testing::read_fixture("xla/tests.query.xml"), {}, {.strict = true});
  std::map<std::string, const ClassifiedTest*> by_label;
  for (const auto& t : c.tests) by_label[t.target.label] = &t;
  const auto* intel = by_label.at("//xla/stream_executor/gpu:gpu_kernel_test_intelgpu_any");
  REQUIRE(intel->bucket == Bucket::skipped);
  REQUIRE_THAT(intel->reason.str(), Catch::Contains("tag no-oneapi → not for Intel GPUs"));
  REQUIRE(by_label.at("//xla/stream_executor/gpu:gpu_kernel_test_amdgpu_any")->bucket == Bucket::gpu);
  REQUIRE(by_label.at("//xla/stream_executor/gpu:gpu_kernel_test_h100")->bucket == Bucket::gpu);
  // The same macro's test without the tag keeps its Intel copy.
  const auto* memcpy = by_label.at("//xla/stream_executor/gpu:memcpy_test_intelgpu_any");
  REQUIRE(memcpy->bucket == Bucket::gpu);
  REQUIRE(memcpy->requirement->vendor->value == "intel");
  REQUIRE(c.diagnostics.empty());
  // On a CPU copy (int4_test_cpu) it says nothing; on a GPU test of no vendor
  // (gpu_test_kernels_fatbin_test: gpu, no-oneapi) it is a note, any vendor's GPU being kept.
  auto cpu = classify_one(make_target("//t:int4_test_cpu", {"xla_cpu", "no-oneapi"}));
  REQUIRE(cpu.tests[0].bucket == Bucket::cpu);
  REQUIRE(cpu.diagnostics.empty());
  auto any = classify_one(make_target("//t:t", {"gpu", "no-oneapi"}));
  REQUIRE(any.tests[0].bucket == Bucket::gpu);
  REQUIRE_FALSE(any.tests[0].requirement->vendor);
  REQUIRE(any.diagnostics.size() == 1);
  REQUIRE(any.diagnostics[0].severity == Severity::note);
  REQUIRE_THAT(any.diagnostics[0].message, Catch::Contains("may be planned on an Intel GPU"));
}

// tensorflow/lingvo's lingvo_cuda_py_test (lingvo/lingvo.bzl) tags its tests requires-gpu, of any
// vendor, but lingvo runs them only on TensorFlow's CUDA build (nvidia/cuda images with
// --runtime=nvidia). Before, such a test could be planned on an AMD GPU, where TensorFlow sees none.
TEST_CASE("lingvo's lingvo_cuda_py_test keeps its requires-gpu tests on NVIDIA GPUs") {
  auto c = classify(gpuplan::testing::read_fixture("lingvo/core.query.xml"), {}, {.strict = true});
  REQUIRE(c.tests.size() == 2);
  const auto& cuda = c.tests[0];
  REQUIRE(cuda.target.label == "//lingvo/core:activations_test");
  REQUIRE(cuda.bucket == Bucket::gpu);
  REQUIRE(cuda.requirement->gpus.value == 1);
  REQUIRE(cuda.requirement->vendor);
  REQUIRE(cuda.requirement->vendor->value == "nvidia");
  REQUIRE(c.tests[1].bucket == Bucket::cpu);
  REQUIRE(c.diagnostics.empty());
}

// alibaba/rtp-llm routes its GPU tests to worker classes by exec_properties gpu: H20, MI308X-ROCM7,
// SM100_ARM, RTX_5000_PRO. No catalog model matches them (a warning says so), but their names say
// the vendor: read as any vendor's, the MI308X tests were planned on NVIDIA GPUs, the H20 ones on
// AMD GPUs.
TEST_CASE("a GPU worker class gpuplan does not know keeps the vendor its name says, with the warning") {
  for (auto [worker, vendor] : {std::pair{"MI308X-ROCM7", "amd"},
                                {"H20", "nvidia"},
                                {"SM100_ARM", "nvidia"},
                                {"RTX_5000_PRO", "nvidia"},
                                {"L20D", "nvidia"}}) {
    INFO(worker);
    auto c = classify_one(make_target("//t:t", {}, {{"gpu", worker}, {"gpu_count", "2"}}));
    REQUIRE(c.tests[0].bucket == Bucket::gpu);
    REQUIRE(c.tests[0].requirement->gpus.value == 2);
    REQUIRE(c.tests[0].requirement->vendor->value == vendor);
    REQUIRE(c.diagnostics.size() == 1);
    REQUIRE(c.diagnostics[0].severity == Severity::warning);
    REQUIRE_THAT(c.diagnostics[0].message,
                 Catch::Contains(fmt::format("read as 1 {} GPU of any model, as its name is written",
                                             vendor_display(vendor))));
  }
  auto unknown = classified({}, {{"gpu", "big-worker"}});
  REQUIRE(unknown.bucket == Bucket::gpu);
  REQUIRE_FALSE(unknown.requirement->vendor);
}

// ZKX (fractalyze/zkx) zkx/backends/gpu/codegen/BUILD.bazel: tags = ["cuda_only", "gpu"] on its CUDA
// tests; its .bazelrc leaves -cuda_only,-gpu out of builds without --config=cuda. Before, cuda_only
// was a near miss of cuda-only: 1 GPU of any vendor, with a warning.
TEST_CASE("ZKX's cuda_only keeps a GPU test on NVIDIA GPUs, as cuda-only does, and makes none alone") {
  auto cuda = classify_one(make_target("//t:t", {"cuda_only", "gpu"}));
  REQUIRE(cuda.tests[0].bucket == Bucket::gpu);
  REQUIRE(cuda.tests[0].requirement->vendor->value == "nvidia");
  REQUIRE(cuda.diagnostics.empty());
  REQUIRE(classified({"cuda_only"}).bucket == Bucket::cpu);
}

// SGLang's bazel/integration/BUILD.bazel: tags = ["local", "manual", "requires-cuda",
// "requires-gpu"] on its CUDA tests; its CI (bazel/ci/affected_tests.py) runs requires-cuda tests
// on CUDA machines and requires-rocm ones on ROCm machines. Before, each was a near miss of
// requires-gpu: the CUDA tests were planned on AMD GPUs too, a ROCm test alone on the CPU runners.
TEST_CASE("SGLang's requires-cuda and requires-rocm ask for an NVIDIA and an AMD GPU, without a warning") {
  auto cuda = classify_one(make_target("//t:t", {"local", "manual", "requires-cuda", "requires-gpu"}), {},
                           {.include_manual = true});
  REQUIRE(cuda.tests[0].bucket == Bucket::gpu);
  REQUIRE(cuda.tests[0].requirement->vendor->value == "nvidia");
  REQUIRE(cuda.diagnostics.empty());
  auto rocm = classify_one(make_target("//t:t", {"requires-rocm"}));
  REQUIRE(rocm.tests[0].bucket == Bucket::gpu);
  REQUIRE(rocm.tests[0].requirement->vendor->value == "amd");
  REQUIRE(rocm.diagnostics.empty());
}

// IREE (build_tools/bazel/iree_check_test.bzl) tags each check test driver=DRIVER, and its CI
// (build_test_all.sh) leaves out driver=cuda, hip, amdgpu and vulkan, requires-gpu-vulkan and
// the AMD architecture tags (requires-gpu-rdna4, ...) where there is no such GPU. Its HIP suites
// carry no other tag: before these rows, they were CPU tests with no word said.
TEST_CASE("IREE's driver tags and requires-gpu-vulkan make GPU tests; its CPU drivers stay CPU tests") {
  REQUIRE(classified({"driver=cuda", "noasan", "requires-gpu-nvidia"}).requirement->vendor->value ==
          "nvidia");
  REQUIRE(classified({"driver=cuda"}).requirement->vendor->value == "nvidia");
  auto hip = classify_one(make_target("//t:t", {"driver=hip"}));
  REQUIRE(hip.tests[0].bucket == Bucket::gpu);
  REQUIRE(hip.tests[0].requirement->vendor->value == "amd");
  REQUIRE(hip.diagnostics.empty());
  REQUIRE_FALSE(hip.tests[0].requirement->is_exclusive());
  // Vulkan, and IREE's amdgpu driver on the HSA runtime, do not read CUDA_VISIBLE_DEVICES: such a
  // test would use the node's first GPU whatever it was given, so it holds the node, and says why.
  auto amdgpu = classify_one(make_target("//t:t", {"driver=amdgpu", "nodocker"}));
  REQUIRE(amdgpu.tests[0].requirement->vendor->value == "amd");
  REQUIRE(amdgpu.tests[0].requirement->is_exclusive());
  REQUIRE(amdgpu.diagnostics.size() == 1);
  REQUIRE_THAT(amdgpu.diagnostics[0].message,
               Catch::StartsWith("tag driver=amdgpu holds the whole node: IREE's amdgpu driver (the HSA "
                                 "runtime) does not read CUDA_VISIBLE_DEVICES"));
  auto vulkan = classified({"driver=vulkan", "requires-gpu-vulkan"});
  REQUIRE(vulkan.bucket == Bucket::gpu);
  REQUIRE(vulkan.requirement->gpus.value == 1);
  REQUIRE(vulkan.requirement->is_exclusive());
  REQUIRE_FALSE(vulkan.requirement->vendor);
  for (std::string cpu : {"driver=local-task", "driver=local-sync", "driver=vmvx"}) {
    INFO(cpu);
    REQUIRE(classified({cpu}).bucket == Bucket::cpu);
    REQUIRE(diagnostics_of({cpu}).empty());
  }
  Rules rules;
  rules.disabled_conventions = {"iree-driver"};
  REQUIRE(classified({"driver=hip"}, {}, rules).bucket == Bucket::cpu);
}

TEST_CASE("an AMD architecture tag asks for an AMD GPU: CDNA as its Instinct models, RDNA with a note") {
  auto cdna3 = classify_one(make_target("//t:t", {"driver=hip", "requires-gpu-cdna3"}));
  REQUIRE(cdna3.tests[0].requirement->vendor->value == "amd");
  REQUIRE(cdna3.tests[0].requirement->gpu_models->value ==
          std::vector<std::string>{"mi300a", "mi300x", "mi325x"});
  REQUIRE(cdna3.diagnostics.empty());
  REQUIRE(classified({"requires-gpu-gfx90a:2"}).requirement->gpus.value == 2);
  REQUIRE(classified({"requires-gpu-gfx90a"}).requirement->gpu_models->value ==
          std::vector<std::string>{"mi210", "mi250", "mi250x"});
  auto rdna4 = classify_one(make_target("//t:t", {"requires-gpu-rdna4"}));
  REQUIRE(rdna4.tests[0].bucket == Bucket::gpu);
  REQUIRE(rdna4.tests[0].requirement->vendor->value == "amd");
  REQUIRE_FALSE(rdna4.tests[0].requirement->gpu_models);
  REQUIRE(rdna4.diagnostics.size() == 1);
  REQUIRE(rdna4.diagnostics[0].severity == Severity::note);
  REQUIRE_THAT(rdna4.diagnostics[0].message,
               Catch::StartsWith("tag requires-gpu-rdna4 asks for an AMD GPU of architecture rdna4, which no "
                                 "fleet field says"));
  REQUIRE(classified({"requires-gpu-gfx1250"}).requirement->vendor->value == "amd");
}

TEST_CASE("a requires-gpu- tag gpuplan does not know is 1 GPU of any vendor, with a warning") {
  auto guessed = classify_one(make_target("//t:t", {"requires-gpu-xe-hpc"}));
  REQUIRE(guessed.tests[0].bucket == Bucket::gpu);
  REQUIRE(guessed.tests[0].requirement->gpus.value == 1);
  REQUIRE_FALSE(guessed.tests[0].requirement->vendor);
  REQUIRE(guessed.diagnostics.size() == 1);
  REQUIRE(guessed.diagnostics[0].severity == Severity::warning);
  REQUIRE_THAT(guessed.diagnostics[0].message,
               Catch::StartsWith("tag requires-gpu-xe-hpc is not a requires-gpu- tag gpuplan knows"));
  REQUIRE(diagnostics_of({"requires-gpu-xe-hpc"}, {.strict = true}).at(0).severity == Severity::error);
  // A typo of a known one too: its author meant a GPU test as much.
  auto typo = classify_one(make_target("//t:t", {"requires-gpu-nvida"}));
  REQUIRE(typo.tests[0].bucket == Bucket::gpu);
  REQUIRE(typo.diagnostics.size() == 1);
  REQUIRE_THAT(typo.diagnostics[0].message,
               Catch::Contains("(did you mean \"requires-gpu-nvidia\"?), so it is "
                               "read as 1 GPU of any vendor"));
  Rules rules;
  rules.disabled_conventions = {"requires-gpu"};
  REQUIRE(classified({"requires-gpu-xe-hpc"}, {}, rules).bucket == Bucket::cpu);
  // One that names a GPU model (XLA's macros adjust requires-gpu-a100) is 1 GPU of that model:
  // of any vendor, the test could run on an L4 where it needs an A100.
  auto model = classify_one(make_target("//t:t", {"requires-gpu-a100"}));
  REQUIRE(model.tests[0].requirement->gpu_models->value == std::vector<std::string>{"a100"});
  REQUIRE(classified({"requires-gpu-mi300"}).requirement->gpu_models->value ==
          std::vector<std::string>{"mi300a", "mi300x"});
  REQUIRE(model.diagnostics.size() == 1);
  REQUIRE_THAT(model.diagnostics[0].message,
               Catch::Contains("is not a requires-gpu- tag gpuplan knows, so it is read as 1 GPU of the "
                               "model it names, a100"));
}

// Remote-execution pools named after a vendor's GPU stack, not "gpu" ({"Pool": "cuda"}, "rocm-pool"),
// and tags hip and xpu: before, CPU tests without a word, which CPU runners would run without a GPU.
TEST_CASE("a pool named after a GPU stack is that vendor's GPU, with a warning; strict makes it an error") {
  for (auto [pool, vendor] : {std::pair{"cuda", "nvidia"},
                              {"rocm-pool", "amd"},
                              {"hip", "amd"},
                              {"xpu", "intel"},
                              {"NVIDIA", "nvidia"}}) {
    INFO(pool);
    auto c = classify_one(make_target("//t:t", {}, {{"Pool", pool}}));
    REQUIRE(c.tests[0].bucket == Bucket::gpu);
    REQUIRE(c.tests[0].requirement->gpus.value == 1);
    REQUIRE(c.tests[0].requirement->vendor->value == vendor);
    REQUIRE(c.diagnostics.size() == 1);
    REQUIRE(c.diagnostics[0].severity == Severity::warning);
    REQUIRE(c.diagnostics[0].label == "//t:t");
    REQUIRE_THAT(c.diagnostics[0].message,
                 Catch::StartsWith(fmt::format("exec_properties Pool={} names ", pool)) &&
                     Catch::Contains("GPU stack but not a GPU, so it is read as 1 "));
    auto strict = classify_one(make_target("//t:t", {}, {{"Pool", pool}}), {}, {.strict = true});
    REQUIRE(strict.diagnostics.at(0).severity == Severity::error);
  }
  // A pool that says GPU and names a vendor is that vendor's, as plainly as gpu-pool is a GPU's.
  auto amd = classify_one(make_target("//t:t", {}, {{"Pool", "amd-gpu"}}));
  REQUIRE(amd.tests[0].requirement->vendor->value == "amd");
  REQUIRE(amd.diagnostics.empty());
  auto plain = classify_one(make_target("//t:t", {}, {{"Pool", "gpu"}}));
  REQUIRE(plain.tests[0].bucket == Bucket::gpu);
  REQUIRE_FALSE(plain.tests[0].requirement->vendor);
  REQUIRE(plain.diagnostics.empty());
  // CPU vendors and words that only contain a stack's name are no GPU pool.
  for (auto pool : {"amd-epyc", "intel", "chip-design", "default", "linux_x64_xlarge"})
    CHECK(classify_one(make_target("//t:t", {}, {{"Pool", pool}})).tests[0].bucket == Bucket::cpu);
}

TEST_CASE("tags hip and xpu name a GPU: a warning whose advice keeps the vendor, as cuda and rocm do") {
  for (auto [tag, advice] : {std::pair{"hip", "requires-gpu-amd"},
                             {"xpu", "requires-gpu-intel"},
                             {"rocm", "requires-gpu-amd"},
                             {"cuda", "requires-gpu-nvidia"}}) {
    INFO(tag);
    auto c = classify_one(make_target("//t:t", {tag}));
    REQUIRE(c.tests[0].bucket == Bucket::cpu);
    REQUIRE(c.diagnostics.size() == 1);
    REQUIRE(c.diagnostics[0].severity == Severity::warning);
    REQUIRE_THAT(
        c.diagnostics[0].message,
        Catch::StartsWith(fmt::format("tag {} names a GPU, but no convention or rule reads it", tag)) &&
            Catch::Contains(fmt::format("tag the test {} or give a rule", advice)) &&
            Catch::Contains(fmt::format("vendor: {}}}", annotate::gpu_stack_vendor(tag))));
    REQUIRE(diagnostics_of({tag}, {.strict = true}).at(0).severity == Severity::error);
  }
  REQUIRE_THAT(classify_one(make_target("//t:t", {"hip_gpu_2"})).diagnostics.at(0).message,
               Catch::Contains("tag the test requires-gpu-amd:2 or"));
  REQUIRE_THAT(classify_one(make_target("//t:t", {"rocm6"})).diagnostics.at(0).message,
               Catch::Contains("tag the test requires-gpu-amd or"));
  // Words that only contain them stay quiet; negated ones are notes.
  for (auto tag : {"chip", "relationship", "xpus_total"}) CHECK(diagnostics_of({tag}).empty());
  for (const auto& d : diagnostics_of({"no_hip"})) CHECK(d.severity == Severity::note);
}

// A pool of 80 GB A100s read as any A100 put its tests on 40 GB ones, and gpu-t4 as any GPU.
TEST_CASE("a name that says it is a GPU's gives its model with the memory and count written with it") {
  auto named = [](std::string_view text, bool short_names) {
    auto n = annotate::named_gpus(text, short_names);
    return std::pair{n.models, n.count.value_or(0)};
  };
  CHECK(named("gpu-a100-80gb", true) == std::pair{std::string("a100-80gb"), 0});
  CHECK(named("h100_80g", true) == std::pair{std::string("h100-80gb"), 0});
  CHECK(named("gpu-t4", true) == std::pair{std::string("t4"), 0});
  CHECK(named("gpu-t4", false) == std::pair{std::string(), 0});
  CHECK(named("8xh100-pool", true) == std::pair{std::string("h100"), 8});
  CHECK(named("4x_a100_40gb", false) == std::pair{std::string("a100-40gb"), 4});
  CHECK(named("mi300-192gb", true) == std::pair{std::string("mi300a-192gb|mi300x-192gb"), 0});
  CHECK(named("a100-80gbps", true) == std::pair{std::string("a100"), 0});  // not a memory
  CHECK(named("a100-1g.5gb", true) == std::pair{std::string("a100"), 0});  // a MIG profile, not 1 GB
  CHECK(named("t4g-arm64", true) == std::pair{std::string(), 0});          // AWS Graviton: no GPU
  CHECK(named("gpu-t4x2", true) == std::pair{std::string("t4"), 0});
  CHECK(named("gpu-l4-spot", true) == std::pair{std::string("l4"), 0});
  CHECK(named("highmem", true) == std::pair{std::string(), 0});
  auto pool = classified({}, {{"Pool", "gpu-a100-80gb"}});
  CHECK(pool.requirement->gpu_models->value == std::vector<std::string>{"a100-80gb"});
  auto machine = classified({}, {{"Pool", "8xh100-pool"}});
  CHECK(machine.requirement->gpus.value == 8);
  CHECK(machine.requirement->gpu_models->value == std::vector<std::string>{"h100"});
  CHECK(classified({}, {{"Pool", "gpu-t4"}}).requirement->gpu_models->value ==
        std::vector<std::string>{"t4"});
  CHECK(classified({"requires-gpu-a100-80gb"}).requirement->gpu_models->value ==
        std::vector<std::string>{"a100-80gb"});
  CHECK(classified({"requires-gpu-8xh100"}).requirement->gpus.value == 8);
}

TEST_CASE("GPU model names are words of their own; those other words share are not read") {
  CHECK(annotate::named_gpu_model("h100") == "h100");
  CHECK(annotate::named_gpu_model("requires_a100") == "a100");
  CHECK(annotate::named_gpu_model("mi300x_only") == "mi300x");
  CHECK(annotate::named_gpu_model("H100-SXM") == "h100");
  CHECK(annotate::named_gpu_model("h100sxm") == "h100");
  CHECK(annotate::named_gpu_model("//:h100_gpu") == "h100");
  CHECK(annotate::named_gpu_model("gpu_type:l40s") == "l40s");
  CHECK(annotate::named_gpu_model("8xh100") == "h100");  // a count first, as machine types write it
  CHECK(annotate::named_gpu_model("4xA100-80GB") == "a100");
  CHECK(annotate::named_gpu_model("xh100") == "");
  CHECK(annotate::named_gpu_model("max1100") == "max1100");
  CHECK(annotate::named_gpu_model("t4") == "");
  CHECK(annotate::named_gpu_model("l4") == "");
  CHECK(annotate::named_gpu_model("a10") == "");
  CHECK(annotate::named_gpu_model("p100") == "");
  CHECK(annotate::named_gpu_model("data100") == "");
  CHECK(annotate::named_gpu_model("batch100") == "");
  CHECK(annotate::named_gpu_model("train_v2_gpu") == "");
  CHECK(annotate::named_gpu_model("sm80") == "");
  CHECK(annotate::named_gpu_model("//:mi355_gpu") == "mi355x");
  CHECK(annotate::named_gpu_model("mi300_only") == "mi300a|mi300x");
  CHECK(annotate::named_gpu_model("rtx3060") == "");
  CHECK(annotate::named_gpu_vendor("//:amd_gpu") == "amd");
  CHECK(annotate::named_gpu_vendor("//:nvidia_gpu") == "nvidia");
  CHECK(annotate::named_gpu_vendor("@x//gpu:intel") == "intel");
  CHECK(annotate::named_gpu_vendor("//:has_gpu") == "");
  CHECK(annotate::named_gpu_vendor("//:apple_gpu") == "apple");
  CHECK(annotate::named_gpu_vendor("//:amdahl") == "");
  // Every family of the fleet's catalog that is not also a common word is read; in a name that
  // says it is a GPU's, every one.
  for (const auto& entry : gpu_catalog()) {
    if (entry.family != "t4" && entry.family != "l4" && entry.family != "a10")
      CHECK(annotate::named_gpu_model(entry.family) == entry.family);
    CHECK(annotate::named_gpus("gpu-" + entry.family, true).models == entry.family);
  }
}

TEST_CASE("cuda-only, rocm-only and oneapi-only restrict a GPU test but never make one") {
  REQUIRE(classified({"cuda-only"}).bucket == Bucket::cpu);
  REQUIRE(classified({"gpu", "rocm-only"}).requirement->vendor->value == "amd");
  auto both = classify_one(make_target("//t:t", {"cuda-only", "requires-gpu-amd"}));
  REQUIRE(both.diagnostics.size() == 1);
  REQUIRE_THAT(
      both.diagnostics[0].message,
      Catch::Contains(
          "tag requires-gpu-amd asks for an AMD GPU but tag cuda-only for an NVIDIA GPU; using AMD"));
}

// tensorflow/python/tpu/tpu_test_wrapper.bzl: tags = ["tpu", "no_pip", "no_gpu", "nomac", "local"] + tags.
// TensorFlow's CPU suites filter -tpu, its GPU suites -no_gpu: the test is neither's.
TEST_CASE("TensorFlow's tpu_py_test is a TPU test, not a CPU test for its no_gpu") {
  for (auto tags : {std::vector<std::string>{"tpu", "no_pip", "no_gpu", "nomac", "local"},
                    {"tpu", "no_pip", "nogpu", "nomac"},
                    {"tpu"}}) {
    INFO(tags.size());
    auto tpu = classified(tags);
    REQUIRE(tpu.bucket == Bucket::skipped);
    REQUIRE_THAT(tpu.reason.str(), Catch::Contains("a TPU test"));
    REQUIRE(diagnostics_of(tags).empty());
  }
}

TEST_CASE("Bazel's exclusive gives a GPU test the whole node and leaves a CPU test alone") {
  REQUIRE(classified({"exclusive", "gpu"}).requirement->is_exclusive());
  REQUIRE(classified({"exclusive"}).bucket == Bucket::cpu);
  REQUIRE(classified({"exclusive-if-local"}).bucket == Bucket::cpu);
}

// Ray's python/ray/train/BUILD: `tags = ["team:ml", "exclusive", "gpu"]` on tests that start two
// GPU workers (ray.init(num_gpus=2)), run by Ray's CI with every GPU of the machine visible, as
// Bazel leaves them to an exclusive test. Given the 1 GPU `gpu` implies, they saw 1 of the 8 the
// plan kept for them.
TEST_CASE("an exclusive GPU test with no GPU count is given every GPU of the node it holds") {
  for (auto tags : {std::vector<std::string>{"team:ml", "exclusive", "gpu"},
                    {"exclusive", "gpu_only"},
                    {"exclusive-if-local", "requires-gpu-nvidia"}}) {
    INFO(tags.front() << " " << tags.back());
    auto ray = classified(tags);
    REQUIRE(ray.requirement->takes_every_node_gpu());
    REQUIRE(ray.requirement->gpus.value == 1);  // the least: a 1-GPU node can run it
    REQUIRE_THAT(describe(*ray.requirement), Catch::StartsWith("every GPU of its node"));
    REQUIRE_THAT(ray.reason.str(),
                 Catch::EndsWith("no GPU count given and it holds the node, so every GPU of it"));
  }
  // A count, even of 1, is what it sees; an NVLink ask would not hold of every GPU of a node; and
  // gpuplan's own gpu-exclusive keeps SPEC's count (`gpu`: 1), as do the drivers that hold the node.
  for (auto tags : {std::vector<std::string>{"exclusive", "gpu:1"},
                    {"gpu-exclusive", "gpu:2"},
                    {"gpu-exclusive", "gpu"},
                    {"driver=vulkan"},
                    {"exclusive-if-local", "multi_gpu", "requires-gpu-amd"},
                    {"gpu-exclusive", "gpu", "nvlink"},
                    {"gpu"}}) {
    INFO(tags.front() << " " << tags.back());
    REQUIRE_FALSE(classified(tags).requirement->takes_every_node_gpu());
  }
}

TEST_CASE("the rest of the vocabulary: -full, multi_gpu_h100, multigpu, gpu_only, remote-gpu") {
  auto full = classified({"requires-gpu-sm90-full-only:4"});
  REQUIRE(full.requirement->gpus.value == 4);
  REQUIRE(full.requirement->compute_capability.at(0).value.str() == "==9.0");
  auto h100 = classified({"multi_gpu_h100"});
  REQUIRE(h100.requirement->gpus.value == 2);
  REQUIRE(h100.requirement->gpu_models->value == std::vector<std::string>{"h100"});
  REQUIRE(classified({"multigpu"}).requirement->gpus.value == 2);
  REQUIRE(classified({"gpu_only"}).bucket == Bucket::gpu);
  REQUIRE(classified({"remote-gpu"}).bucket == Bucket::gpu);
}

TEST_CASE("PyTorch's gpu-required is a GPU test, with exclusive beside it the whole node") {
  // pytorch/pytorch BUILD.bazel: tags = ["exclusive", "gpu-required"] on its CUDA cc_tests.
  // Before, a near miss of gpu: a CPU test with a warning.
  auto t = classified({"exclusive", "gpu-required"});
  REQUIRE(t.bucket == Bucket::gpu);
  REQUIRE(t.requirement->gpus.value == 1);
  REQUIRE(t.requirement->is_exclusive());
}

TEST_CASE("JAX's config-cuda-only keeps a GPU test on NVIDIA GPUs and leaves its CPU variant alone") {
  // jax-ml/jax tests/BUILD; its ROCm CI runs --test_tag_filters=jax_test_gpu,-config-cuda-only.
  auto gpu = classified({"config-cuda-only", "jax_test_gpu"});
  REQUIRE(gpu.bucket == Bucket::gpu);
  REQUIRE(gpu.requirement->vendor->value == "nvidia");
  REQUIRE(classified({"config-cuda-only", "jax_test_cpu"}).bucket == Bucket::cpu);
}

TEST_CASE("near misses are warnings with a did-you-mean, and errors under --strict") {
  std::vector<std::pair<std::string, std::string>> cases = {
      {"gpus:2", "gpu:2"},
      {"GPU", "gpu"},
      {"multi-gpu", "multi_gpu"},
      {"gpu_exclusive", "gpu-exclusive"},
      {"nvlnk", "nvlink"},
      {"gpu-mem:40GB ", "gpu-mem:40GB"},
      {"GPU:2", "gpu:2"},
      {"Multiaccelerator", "multiaccelerator"},
      {"gpu_test", "gpu"},
      {"uses_gpu", "gpu"},         // other words for a GPU test
      {"needs-gpu", "needs_gpu"},  // GAPID's spelling, one slip away
      {"GPU_REQUIRED", "gpu-required"},
  };
  for (const auto& [tag, meant] : cases) {
    INFO(tag);
    auto c = classify_one(make_target("//t:t", {tag}));
    REQUIRE(c.tests[0].bucket == Bucket::cpu);
    REQUIRE(c.diagnostics.size() == 1);
    REQUIRE(c.diagnostics[0].severity == Severity::warning);
    REQUIRE_THAT(c.diagnostics[0].message, Catch::Contains(fmt::format("did you mean \"{}\"?", meant)));
    REQUIRE(diagnostics_of({tag}, {.strict = true}).at(0).severity == Severity::error);
  }
}

// An exec_property key one case or hyphen away from a remote-execution key gpuplan reads
// ({"gpu-count": "2"} for NativeLink's gpu_count). Before, beside a gpu_model that made the test a GPU
// test, a note: planned on 1 GPU, and --strict passed; alone, a warning whose rule said gpus: 1.
TEST_CASE("an exec_property key a hyphen or case away from one gpuplan reads is a near miss") {
  auto with = [](std::vector<std::pair<std::string, std::string>> properties) {
    auto t = make_target("//t:t", {});
    for (const auto& entry : properties) t.exec_properties.set(entry.first, entry.second);
    return t;
  };
  auto counted = with({{"gpu-count", "2"}, {"gpu_model", "a100"}});
  auto c = classify_one(counted);
  REQUIRE(c.tests[0].bucket == Bucket::gpu);
  CHECK(c.tests[0].requirement->gpus.value == 1);
  auto warned = gpuplan::testing::warnings_of(c);
  REQUIRE(warned.size() == 1);
  CHECK(warned[0].source == "exec_properties gpu-count=2");
  CHECK_THAT(warned[0].message, Catch::Contains("did you mean \"gpu_count=2\"?"));
  CHECK(has_errors(classify_one(counted, {}, {.strict = true}).diagnostics));
  for (const auto& [key, meant] : std::vector<std::pair<std::string, std::string>>{
           {"gpu-count", "gpu_count=2"}, {"GPU_MODEL", "gpu_model=2"}, {"test.Gpu-Count", "gpu_count=2"}}) {
    INFO(key);
    auto alone = classify_one(with({{key, "2"}}));
    CHECK(alone.tests[0].bucket == Bucket::cpu);
    REQUIRE(alone.diagnostics.size() == 1);
    CHECK_THAT(alone.diagnostics[0].message, Catch::Contains(fmt::format("did you mean \"{}\"?", meant)));
  }
  // The keys as written stay read, pool as Pool.
  CHECK(classify_one(with({{"gpu_count", "2"}})).tests[0].requirement->gpus.value == 2);
  CHECK(classify_one(with({{"pool", "gpu-pool"}})).diagnostics.empty());
  // BuildBuddy's CPU pool, under either key gpuplan reads: no near miss of the other one.
  CHECK(classify_one(with({{"Pool", "default"}})).diagnostics.empty());
  CHECK(classify_one(with({{"pool", "default"}})).diagnostics.empty());
}

// A count after a vendor's tag that takes none: the did-you-mean was the closest spelling,
// requires-gpu:2, which asks for 2 GPUs of any vendor.
TEST_CASE("a count after requires-cuda or requires-rocm is a near miss that keeps the vendor") {
  std::vector<std::pair<std::string, std::string>> cases = {
      {"requires-cuda:2", "requires-gpu-nvidia:2"},
      {"requires-rocm:4", "requires-gpu-amd:4"},
      {"requires-gpu-cuda:2", "requires-gpu-nvidia:2"},
      {"requires_cuda:2", "requires-gpu-nvidia:2"},
      {"gpu_only:2", "gpu:2"},
  };
  for (const auto& [tag, meant] : cases) {
    INFO(tag);
    auto c = classify_one(make_target("//t:t", {tag}));
    REQUIRE(c.diagnostics.size() == 1);
    REQUIRE(c.diagnostics[0].severity == Severity::warning);
    REQUIRE_THAT(c.diagnostics[0].message, Catch::Contains(fmt::format("did you mean \"{}\"?", meant)));
    // What it suggests reads as the vendor's GPUs, the count kept.
    auto suggested = classified({meant});
    REQUIRE(suggested.requirement->gpus.value == std::stoi(meant.substr(meant.find(':') + 1)));
  }
}

TEST_CASE(
    "look-alike characters, blanks inside and flags given a value are near misses too, on GPU tests too") {
  // Before, each was nothing at all (gрu:2 left a CPU test) or a note that --strict let through,
  // and the GPU ask, constraint or NVLink was lost.
  std::vector<std::pair<std::string, std::string>> cases = {
      {"gрu:2", "gpu:2"},            // Cyrillic р
      {"сuda>=12.4", "cuda>=12.4"},  // Cyrillic с
      {"cuda≥12.4", "cuda>=12.4"},
      {"gpu：4", "gpu:4"},    // full-width colon
      {"nv‐link", "nvlink"},  // U+2010 hyphen
      {"cuda >=12.4", "cuda>=12.4"},
      {"nvlink:true", "nvlink"},
      {"gpu-exclusive=1", "gpu-exclusive"},
  };
  for (const auto& [tag, meant] : cases) {
    INFO(tag);
    auto found = diagnostics_of({"gpu:2", tag});
    REQUIRE(found.size() == 1);
    REQUIRE(found[0].severity == Severity::warning);
    REQUIRE_THAT(found[0].message, Catch::Contains(fmt::format("did you mean \"{}\"?", meant)));
  }
  auto t = make_target("//t:t", {"gpu:2"});
  t.exec_properties = {{"nvlink", "1"}};
  REQUIRE(classify_one(t).tests[0].requirement->needs_nvlink());
  t.exec_properties = {{"nvlink", "yes please"}};
  auto odd = classify_one(t);
  REQUIRE_FALSE(odd.tests[0].requirement->needs_nvlink());
  REQUIRE_THAT(odd.diagnostics.at(0).message,
               Catch::Contains("nvlink is a flag, set by true, yes, 1 or nothing"));
  t.exec_properties = {{"nvlink", "false"}};
  REQUIRE(classify_one(t).diagnostics.empty());
}

TEST_CASE("constraints that no version meets together are a conflict naming them") {
  for (std::vector<std::string> tags :
       std::vector<std::vector<std::string>>{{"gpu", "cuda>=12.4", "cuda<12.0"},
                                             {"gpu", "cuda>=12.4,<12.0"},
                                             {"gpu", "cuda==12.4", "cuda==12.2"},
                                             {"gpu", "cuda>12.4", "cuda==12.4"},
                                             {"requires-gpu-sm80-only", "gpu-cc>=9.0"}}) {
    INFO(tags[1]);
    auto found = diagnostics_of(tags);
    REQUIRE(found.size() == 1);
    REQUIRE_THAT(found[0].message,
                 Catch::Contains("allow no") && Catch::Contains("no node can run the test"));
  }
  for (std::vector<std::string> tags :
       std::vector<std::vector<std::string>>{{"gpu", "cuda>=12.4", "cuda<13"},
                                             {"gpu", "cuda>12.4", "cuda<12.5"},
                                             {"gpu", "cuda>=12.4", "cuda<=12.4"}}) {
    INFO(tags[1]);
    REQUIRE(diagnostics_of(tags).empty());
  }
}

TEST_CASE("ordinary tags that are not near a GPU annotation stay quiet") {
  for (std::string tag : {"cpu", "no_tpu", "local", "requires-network", "noasan", "large", "exclusive",
                          "team:ml", "xla_some_plugin", "jax_test_cpu"}) {
    INFO(tag);
    REQUIRE(diagnostics_of({tag}).empty());
  }
}

TEST_CASE("disable: switches off a vocabulary row by its name") {
  Rules rules;
  rules.disabled_conventions = {"jax-backend"};
  REQUIRE(classified({"jax_test_cpu", "multiaccelerator"}, {}, rules).bucket == Bucket::gpu);
}

TEST_CASE("the README's annotation table names exactly the built-in conventions") {
  std::ifstream in(GPUPLAN_SOURCE_DIR "/README.md");
  std::stringstream text;
  text << in.rdbuf();
  auto readme = text.str();
  auto start = readme.find("| annotation | example | means | where it comes from | name (for `disable`) |");
  REQUIRE(start != std::string::npos);
  std::set<std::string> named;
  std::istringstream lines(readme.substr(start));
  std::string line;
  std::getline(lines, line);
  std::getline(lines, line);
  static const std::regex last_cell(R"(\| `([^`]+)` \|$)");
  while (std::getline(lines, line) && line.starts_with("|")) {
    std::smatch m;
    if (std::regex_search(line, m, last_cell)) named.insert(m[1]);
  }
  std::set<std::string> known(convention_names().begin(), convention_names().end());
  REQUIRE(named == known);
}

TEST_CASE("the rules schema's disable list is the conventions' names") {
  std::ifstream in(GPUPLAN_SOURCE_DIR "/schemas/rules.schema.json");
  std::stringstream text;
  text << in.rdbuf();
  auto schema = nlohmann::json::parse(text.str());
  auto listed = schema["properties"]["disable"]["items"]["enum"].get<std::vector<std::string>>();
  std::vector<std::string> known(convention_names().begin(), convention_names().end());
  REQUIRE(listed == known);
}

// jax-ml/jax's multi-process tests start --num_processes=N processes with --gpus_per_process=M
// GPUs each (jax/_src/test_multiprocess.py), and with fewer GPUs start fewer processes and skip
// what needs the others. jax_multiplatform_test's 2-process tests (tests/mosaic/BUILD) carry the
// tag multiaccelerator, whose 8 GPUs they do not use; jax_multiprocess_test's 4 × 2 need 8 whatever
// the rules file's multiaccelerator_count says. Before, both were planned with that count.
TEST_CASE("JAX's multi-process tests get the GPUs their args start, not multiaccelerator's count") {
  auto list = gpuplan::testing::read_fixture("jax/tests.query.xml");
  auto find = [](const Classification& c, std::string_view label) {
    auto it = std::find_if(c.tests.begin(), c.tests.end(),
                           [&](const ClassifiedTest& t) { return t.target.label == label; });
    REQUIRE(it != c.tests.end());
    return *it;
  };
  auto c = classify(list, {}, {.strict = true});
  REQUIRE_FALSE(has_errors(c.diagnostics));
  auto mosaic = find(c, "//tests/mosaic:gpu_distributed_test_gpu");
  REQUIRE(mosaic.bucket == Bucket::gpu);
  REQUIRE(mosaic.requirement->gpus.value == 2);
  REQUIRE(mosaic.requirement->vendor->value == "nvidia");
  REQUIRE_THAT(mosaic.reason, Catch::Contains("args --num_processes=2 --gpus_per_process=1 → 2 GPUs"));
  REQUIRE(c.diagnostics.size() == 1);
  REQUIRE(c.diagnostics[0].severity == Severity::note);
  REQUIRE(c.diagnostics[0].message ==
          "the test's args start 2 processes with 1 GPU each: it is planned with 2 GPUs, not the 8 GPUs "
          "that tag multiaccelerator gives");
  REQUIRE(find(c, "//tests/multiprocess:all_reduce_test_gpu").requirement->gpus.value == 8);
  REQUIRE(find(c, "//tests/multiprocess:all_reduce_test_cpu").bucket == Bucket::cpu);
  REQUIRE(find(c, "//tests/mosaic:gpu_distributed_test_cpu").bucket == Bucket::skipped);

  Rules four;
  four.multiaccelerator_count = 4;
  auto fewer = classify(list, four, {});
  REQUIRE(find(fewer, "//tests/multiprocess:all_reduce_test_gpu").requirement->gpus.value == 8);
  REQUIRE(find(fewer, "//tests/mosaic:gpu_distributed_test_gpu").requirement->gpus.value == 2);
}

TEST_CASE("a count the annotations give wins over the args' processes, with a note") {
  auto t = make_target("//t:t", {"gpu:4", "jax_test_gpu"});
  t.edit_launch().process_args = "--num_processes=2 --gpus_per_process=1";
  auto c = classify_one(t);
  REQUIRE(c.tests[0].requirement->gpus.value == 4);
  REQUIRE(c.diagnostics.size() == 1);
  REQUIRE(c.diagnostics[0].severity == Severity::note);
  REQUIRE_THAT(c.diagnostics[0].message, Catch::Contains("but tag gpu:4 gives it 4 GPUs"));
  auto last = make_target("//t:t", {"jax_test_gpu"});
  last.edit_launch().process_args = "--num_processes=4 --gpus_per_process=2 --num_processes=3";
  REQUIRE(classify_one(last).tests[0].requirement->gpus.value == 6);
}

TEST_CASE("args whose process count is no count are a warning where no annotation gives the count") {
  // A Make variable Bazel expands only when it runs the test: the runner may start more processes
  // than the planned GPUs hold, and with fewer GPUs it starts fewer and passes.
  auto made = make_target("//t:t", {"jax_test_gpu", "multiaccelerator"});
  made.edit_launch().process_args = "--num_processes=$(NPROC) --gpus_per_process=2";
  auto c = classify_one(made);
  REQUIRE(c.tests[0].requirement->gpus.value == 8);
  REQUIRE(c.diagnostics.size() == 1);
  CHECK(c.diagnostics[0].severity == Severity::warning);
  CHECK_THAT(c.diagnostics[0].message, Catch::Contains("--num_processes=$(NPROC), which is no count") &&
                                           Catch::Contains("it is planned with 8 GPUs"));
  CHECK(classify_one(made, {}, {.strict = true}).diagnostics.at(0).severity == Severity::error);
  // --gpus_per_process=0 (absl's default when left out): the processes share the GPUs they see.
  for (const auto* args : {"--num_processes=4 --gpus_per_process=0", "--num_processes=4"}) {
    auto shared = make_target("//t:t", {"jax_test_gpu"});
    shared.edit_launch().process_args = args;
    auto s = classify_one(shared);
    CHECK(s.diagnostics.empty());
    CHECK(s.tests[0].requirement->gpus.value == 1);
  }
  // A count an annotation gives stands, whatever the args say.
  auto given = make_target("//t:t", {"gpu:4", "jax_test_gpu"});
  given.edit_launch().process_args = "--num_processes=$(N) --gpus_per_process=1";
  CHECK(classify_one(given).diagnostics.empty());
}

// Repositories whose GPU tests gpuplan reads right as they are (test/data/gpu_repos/, Bazel's own
// output of their BUILD text): MediaPipe's GL tests and the TFLite GPU delegate's kernel tests
// (requires-gpu-nvidia, or tf_gpu_tests_tags()), TensorFlow Probability's _gpu tests (its CPU CI
// filters -gpu,-requires-gpu-nvidia), NativeLink's and BuildBuddy's GPU routing (exec_properties
// gpu = a100, gpu_count + gpu_model, a Pool named by the team), TensorFlow's older remote-gpu
// tests with their gpu_test exec constraint; and what is no GPU test to plan: MediaPipe's
// SwiftShader GL tests, Drake's OpenGL rendering tests, TF Serving's GPU Docker test (manual).
TEST_CASE("The GPU tests of MediaPipe, TFLite, TFP, NativeLink and BuildBuddy are read as they run") {
  auto c = classify(gpuplan::testing::read_fixture("gpu_repos/tests.query.xml"), {}, {.strict = true});
  REQUIRE_FALSE(has_errors(c.diagnostics));
  std::map<std::string, const ClassifiedTest*> by_label;
  for (const auto& t : c.tests) by_label[std::string(t.target.label)] = &t;
  REQUIRE(by_label.size() == 17);
  auto gpus = [&](const std::string& label, int count, const char* vendor, const char* model) {
    INFO(label);
    const auto& t = *by_label.at(label);
    REQUIRE(t.bucket == Bucket::gpu);
    CHECK(t.requirement->gpus.value == count);
    if (vendor) {
      REQUIRE(t.requirement->vendor);
      CHECK(t.requirement->vendor->value == vendor);
    }
    if (model) {
      REQUIRE(t.requirement->gpu_models);
      CHECK(t.requirement->gpu_models->value == std::vector<std::string>{model});
    } else {
      CHECK_FALSE(t.requirement->gpu_models);
    }
  };
  gpus("//mediapipe/calculators/image:mask_overlay_calculator_test", 1, "nvidia", nullptr);
  gpus("//mediapipe/framework/formats:tensor_test", 1, "nvidia", nullptr);
  gpus("//tensorflow/lite/delegates/gpu/cl/kernels:add_test", 1, "nvidia", nullptr);
  gpus("//tensorflow/lite/delegates/gpu/cl/kernels:lstm_full_test", 1, "nvidia", nullptr);
  gpus("//tensorflow/lite/delegates/gpu/gl/kernels:add_test", 1, "nvidia", nullptr);
  gpus("//tensorflow_probability/python/distributions:binomial_test_gpu", 1, "nvidia", nullptr);
  gpus("//tensorflow_probability/python/distributions:sample_test_gpu.tf", 1, "nvidia", nullptr);
  gpus("//tensorflow_probability/python/distributions:sample_test_gpu.jax", 1, "nvidia", nullptr);
  gpus("//nativelink:kernel_test", 1, nullptr, "a100");
  gpus("//nativelink:kernel_vendor_test", 1, nullptr, "a100");
  gpus("//nativelink:kernel_counted_test", 2, nullptr, "a100");
  gpus("//buildbuddy:gpu_pool_test", 1, nullptr, nullptr);
  gpus("//third_party/toolchains:remote_gpu_test", 1, "nvidia", nullptr);
  for (const char* cpu : {"//mediapipe/gpu:gpu_buffer_to_image_frame_calculator_test",
                          "//mediapipe/gpu/webgpu:webgpu_texture_buffer_test",
                          "//geometry/render_gl:internal_render_engine_gl_test"}) {
    INFO(cpu);
    CHECK(by_label.at(cpu)->bucket == Bucket::cpu);
  }
  CHECK(by_label.at("//tensorflow_serving/tools/docker/tests:unittest_dockerfile_gpu")->bucket ==
        Bucket::skipped);
}
