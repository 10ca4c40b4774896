#include <catch2/catch.hpp>
#include <map>
#include <sstream>

#include "gpuplan/graph.hpp"

using namespace gpuplan;

namespace {

struct Audited {
  DepGraph graph;
  Classification tests;
};

/// Three tests: a GPU test that reaches torch, a GPU test that reaches only numpy, and an
/// unannotated test that reaches torch; plus a cpu-only test that reaches torch.
std::unique_ptr<Audited> audited() {
  auto a = std::make_unique<Audited>();
  std::istringstream in(R"(<query version="2">
    <rule class="sh_test" location="/ws/ml/BUILD:1:8" name="//ml:train_test">
        <list name="tags"><string value="gpu:2"/></list>
        <rule-input name="//ml:model"/>
    </rule>
    <rule class="sh_test" location="/ws/ml/BUILD:9:8" name="//ml:tokenize_test">
        <list name="tags"><string value="gpu"/><string value="gpu-mem:16G"/></list>
        <rule-input name="@pypi//numpy:pkg"/>
    </rule>
    <rule class="sh_test" location="/ws/core/BUILD:1:8" name="//core:unit_test">
        <rule-input name="//ml:model"/>
    </rule>
    <rule class="py_test" location="/ws/core/BUILD:9:8" name="//core:config_test">
        <list name="tags"><string value="cpu-only"/></list>
        <rule-input name="//ml:model"/>
    </rule>
    <rule class="py_library" location="/ws/ml/BUILD:20:8" name="//ml:model"><rule-input name="@pypi//torch:pkg"/></rule>
    <rule class="py_library" location="/ext/BUILD:1:1" name="@pypi//torch:pkg"/>
    <rule class="py_library" location="/ext/BUILD:1:1" name="@pypi//numpy:pkg"/>
</query>)");
  TargetList targets = read_targets(in, "input", std::nullopt, &a->graph);
  a->tests = classify(targets, Rules{}, {});
  return a;
}

}  // namespace

TEST_CASE(
    "audit lists GPU tests without GPU code with the tag change, and unannotated tests with their path") {
  auto a = audited();
  GpuReach reach(a->graph, GpuDepPatterns::defaults());
  Audit result = audit(a->tests, a->graph, reach);
  REQUIRE(result.tests == 4);
  REQUIRE(result.entries.size() == 2);
  REQUIRE(result.entries[0].kind == Disagreement::gpu_without_gpu_code);
  REQUIRE(result.entries[0].label == "//ml:tokenize_test");
  REQUIRE(result.entries[0].tag_change == "remove tags gpu, gpu-mem:16G");
  REQUIRE(result.entries[1].kind == Disagreement::gpu_code_without_annotation);
  REQUIRE(result.entries[1].label == "//core:unit_test");
  REQUIRE(result.entries[1].path == "//core:unit_test → //ml:model → @pypi//torch:pkg");
  REQUIRE(result.packages.size() == 2);
  REQUIRE(result.packages[1].package == "//ml");
  REQUIRE(result.packages[1].gpu_annotated == 2);
  REQUIRE(result.packages[1].reach_gpu_code == 1);
}

TEST_CASE("classify_by_deps moves only GPU tests that reach no GPU code, with a warning naming them") {
  auto a = audited();
  GpuReach reach(a->graph, GpuDepPatterns::defaults());
  REQUIRE(classify_by_deps(a->tests, a->graph, reach, {}) == 1);
  for (const auto& t : a->tests.tests) {
    if (t.target.label == "//ml:tokenize_test") {
      REQUIRE(t.bucket == Bucket::cpu);
      CHECK(t.requirement->gpus.value == 0);
      CHECK(t.requirement->gpus.source.str() ==
            "--classify-by-deps: no path to GPU code (gpu_deps), overruling tag gpu");
    }
    if (t.target.label == "//ml:train_test") REQUIRE(t.bucket == Bucket::gpu);
    if (t.target.label == "//core:unit_test") REQUIRE(t.bucket == Bucket::cpu);  // never the other way
  }
  auto said = [&](const std::string& label) {
    for (const auto& d : a->tests.diagnostics)
      if (d.label == label) return d.message;
    return std::string();
  };
  REQUIRE(said("//ml:tokenize_test").find("no path from //ml:tokenize_test to GPU code") == 0);
  // The CPU test that reaches torch stays one, and is named with its path (before, only by audit).
  REQUIRE(
      said("//core:unit_test") ==
      "reaches GPU code (//core:unit_test → //ml:model → @pypi//torch:pkg) but has no GPU annotation: "
      "planned "
      "as a CPU test, where that code fails or is skipped. Add tag gpu (or gpu:N), or cpu-only if it never "
      "uses the GPU");
}

TEST_CASE("a GPU test whose runs used a GPU stays one, however GPU-free the graph makes it look") {
  auto a = audited();
  GpuReach reach(a->graph, GpuDepPatterns::defaults());
  const std::map<std::string, std::string> used{{"//ml:tokenize_test", "GPU used in 1 of 3 measured runs"},
                                                {"//ml:train_test", "GPU used in 3 of 3 measured runs"}};
  BlindTests blind = blind_tests(a->tests, a->graph, reach, used);
  // train_test reaches torch: the graph already says so, its runs add nothing.
  REQUIRE(blind.used_gpu == std::map<std::string, std::string>{*used.begin()});
  REQUIRE(blind.count() == 1);
  CHECK(
      blind.reason("//ml:tokenize_test", "sh_test") ==
      "reaches no GPU code in the graph, but its runs used a GPU (GPU used in 1 of 3 measured runs): its GPU "
      "code is outside the graph");
  REQUIRE(blind.messages().size() == 1);
  CHECK_THAT(blind.messages()[0],
             Catch::StartsWith("1 GPU-annotated test reaches no GPU code in the dependency "
                               "graph, but its runs used a GPU (--history): //ml:tokenize_test."));
  REQUIRE(classify_by_deps(a->tests, a->graph, reach, blind) == 0);
  Audit result = audit(a->tests, a->graph, reach, used);
  REQUIRE(result.entries.back().label == "//ml:tokenize_test");
  REQUIRE(result.entries.back().kind == Disagreement::unknown);  // not a candidate for the CPU bucket
  REQUIRE(result.packages[1].unknown == 1);
}

TEST_CASE("audit lists each test whose GPU use is unknown with the label the input did not expand") {
  DepGraph graph;
  std::istringstream in(R"(<query version="2">
    <rule class="py_test" location="/ws/m/BUILD:1:1" name="//m:p_test">
        <list name="tags"><string value="gpu"/></list>
        <rule-input name="//m:lib"/>
    </rule>
    <rule class="py_library" location="/ws/m/BUILD:5:1" name="//m:lib"><rule-input name="@broken//:x"/></rule>
    <rule class="py_test" location="/ws/m/BUILD:9:1" name="//m:q_test"/>
</query>)");
  TargetList targets = read_targets(in, "input", std::nullopt, &graph);
  Classification tests = classify(targets, Rules{}, {});
  GpuReach reach(graph, GpuDepPatterns::defaults());
  Audit result = audit(tests, graph, reach);
  REQUIRE(result.entries.size() == 1);
  CHECK(result.entries[0].kind == Disagreement::unknown);
  CHECK(result.entries[0].label == "//m:p_test");
  CHECK(result.entries[0].undeclared == "@broken//:x");
  CHECK(result.packages.at(0).unknown == 1);
}

TEST_CASE("a backend variant's GPU tag or name comes from its macro: the change is one its call can make") {
  DepGraph graph;
  std::istringstream in(R"(<query version="2">
    <rule class="py_test" location="/ws/j/BUILD:1:1" name="//j:b_test">
        <list name="tags"><string value="jax_test_gpu"/></list>
        <string name="generator_function" value="jax_multiplatform_test"/>
        <rule-input name="@pypi//numpy:pkg"/>
    </rule>
    <rule class="py_test" location="/ws/j/BUILD:1:1" name="//j:api_test_gpu">
        <string name="generator_function" value="jax_multiplatform_test"/>
        <rule-input name="@pypi//numpy:pkg"/>
    </rule>
    <rule class="py_test" location="/ws/j/BUILD:9:1" name="//j:hand_test">
        <list name="tags"><string value="jax_test_gpu"/></list>
        <rule-input name="@pypi//numpy:pkg"/>
    </rule>
    <rule class="py_test" location="/ws/j/BUILD:9:1" name="//j:own_test">
        <list name="tags"><string value="gpu"/></list>
        <string name="generator_function" value="team_test"/>
        <rule-input name="@pypi//numpy:pkg"/>
    </rule>
    <rule class="py_test" location="/ws/j/BUILD:20:1" name="//j:torch_test">
        <list name="tags"><string value="gpu"/></list>
        <rule-input name="@pypi//torch:pkg"/>
    </rule>
    <rule class="py_library" location="/ext/BUILD:1:1" name="@pypi//torch:pkg"/>
    <rule class="py_library" location="/ext/BUILD:2:1" name="@pypi//numpy:pkg"/>
</query>)");
  TargetList targets = read_targets(in, "input", std::nullopt, &graph);
  Classification tests = classify(targets, Rules{}, {});
  GpuReach reach(graph, GpuDepPatterns::defaults());
  Audit result = audit(tests, graph, reach);
  std::map<std::string, std::string> change;
  for (const auto& e : result.entries) change[e.label] = e.tag_change;
  CHECK(change["//j:b_test"] ==
        "leave the GPU backend out of the call of macro jax_multiplatform_test, which gives this variant tag "
        "jax_test_gpu; or add tag cpu-only to the call, or a rule {label: //j:b_test, set: {cpu_only: true}} "
        "to "
        "the rules file");
  CHECK_THAT(change["//j:api_test_gpu"],
             Catch::StartsWith("leave the GPU backend out of the call of macro jax_multiplatform_test, which "
                               "gives this variant name suffix _gpu; "));
  CHECK(change["//j:hand_test"] == "remove tag jax_test_gpu");  // written by hand, the same tag
  // The call may not hold the tag (a team macro appends team-gpus-N itself): the other way is said.
  CHECK(change["//j:own_test"] ==
        "remove tag gpu (in the call of macro team_test; a tag the macro adds itself stays: then add tag "
        "cpu-only to the call)");
}

TEST_CASE("where no test of a rule class reaches GPU code, its GPU tests are unknown, never GPU-free") {
  // As in Ray: py_tests tagged gpu that import the torch of the Python that runs them, which the
  // graph never names; beside them cc_tests whose CUDA the graph does show.
  DepGraph graph;
  std::istringstream in(R"(<query version="2">
    <rule class="py_test" location="/ws/train/BUILD:1:8" name="//train:gpu_test">
        <list name="tags"><string value="gpu"/></list><rule-input name="//:ray_lib"/>
    </rule>
    <rule class="py_test" location="/ws/train/BUILD:9:8" name="//train:cpu_test"><rule-input name="//:ray_lib"/></rule>
    <rule class="py_library" location="/ws/BUILD:1:8" name="//:ray_lib"/>
    <rule class="cc_test" location="/ws/cu/BUILD:1:8" name="//cu:kernel_test">
        <list name="tags"><string value="gpu"/></list><rule-input name="//cu:kernel"/>
    </rule>
    <rule class="cc_library" location="/ws/cu/BUILD:5:8" name="//cu:kernel"><rule-input name="//cu:kernel.cu"/></rule>
    <source-file location="/ws/cu/BUILD:5:8" name="//cu:kernel.cu"/>
    <rule class="cc_test" location="/ws/cu/BUILD:9:8" name="//cu:host_test">
        <list name="tags"><string value="gpu"/></list>
    </rule>
</query>)");
  Classification tests = classify(read_targets(in, "input", std::nullopt, &graph), Rules{}, {});
  GpuReach reach(graph, GpuDepPatterns::defaults());
  auto blind = blind_tests(tests, graph, reach);
  REQUIRE(blind.classes == std::map<std::string, long>{{"py_test", 1}});
  CHECK(blind.unsupplied.empty());  // the cc_tests' GPU code is the main repository's own
  REQUIRE(blind.messages().size() == 1);
  CHECK_THAT(blind.messages()[0],
             Catch::StartsWith("no py_test of the dependency graph reaches GPU code (gpu_deps), so the graph "
                               "cannot tell whether its 1 GPU-annotated py_test needs a GPU"));
  Audit result = audit(tests, graph, reach);
  REQUIRE(result.entries.size() == 2);
  CHECK(result.entries[0].label == "//cu:host_test");  // a cc_test reaches CUDA: this one is a candidate
  CHECK(result.entries[0].kind == Disagreement::gpu_without_gpu_code);
  CHECK(result.entries[1].label == "//train:gpu_test");
  CHECK(result.entries[1].kind == Disagreement::unknown);
  CHECK(result.entries[1].reason ==
        "no py_test of the graph reaches GPU code: its own may be outside the graph");
  REQUIRE(classify_by_deps(tests, graph, reach, blind) == 1);
  for (const auto& test : tests.tests)
    CHECK((test.bucket == Bucket::gpu) ==
          (test.target.label != "//cu:host_test" && test.target.label != "//train:cpu_test"));
  // Once gpu_deps names the code a py_test reaches, the graph can tell for the class.
  auto patterns = GpuDepPatterns::defaults();
  patterns.gpu_deps.push_back("//:ray_lib");
  CHECK(blind_tests(tests, graph, GpuReach(graph, patterns)).count() == 0);
}

TEST_CASE("a GPU test that reaches none of the repositories its class gets GPU code from is unknown") {
  // py_tests that get torch through rules_python (a hub, and a hub's spokes), one that takes numpy
  // from the hub (GPU-free: its torch would come from there too), and one whose packages come from
  // the machine's Python (nothing of the hub); cc_tests of @cuda beside one linking CUDA through
  // linkopts (no label at all).
  DepGraph graph;
  std::istringstream in(R"(<query version="2">
    <rule class="py_test" location="/ws/a/BUILD:1:1" name="//a:torch_test">
        <list name="tags"><string value="gpu"/></list><rule-input name="@pip_deps_torch//:pkg"/>
    </rule>
    <rule class="py_test" location="/ws/a/BUILD:2:1" name="//a:numpy_test">
        <list name="tags"><string value="gpu"/></list><rule-input name="//a:lib"/>
    </rule>
    <rule class="py_library" location="/ws/a/BUILD:3:1" name="//a:lib"><rule-input name="@pip_deps_numpy//:pkg"/></rule>
    <rule class="py_test" location="/ws/a/BUILD:4:1" name="//a:system_python_test">
        <list name="tags"><string value="gpu"/></list><rule-input name="//a:own"/>
    </rule>
    <rule class="py_library" location="/ws/a/BUILD:5:1" name="//a:own"/>
    <rule class="py_library" location="/ext/BUILD:1:1" name="@pip_deps_torch//:pkg"/>
    <rule class="py_library" location="/ext/BUILD:1:1" name="@pip_deps_numpy//:pkg"/>
    <rule class="cc_test" location="/ws/c/BUILD:1:1" name="//c:cuda_test">
        <list name="tags"><string value="gpu"/></list><rule-input name="@cuda//:cuda_runtime"/>
    </rule>
    <rule class="cc_test" location="/ws/c/BUILD:2:1" name="//c:linkopts_test">
        <list name="tags"><string value="gpu"/></list><rule-input name="//c:config"/>
    </rule>
    <rule class="config_setting" location="/ws/c/BUILD:3:1" name="//c:config"><rule-input name="@cuda//:is_set"/></rule>
    <rule class="cc_library" location="/ext/BUILD:1:1" name="@cuda//:cuda_runtime"/>
    <rule class="config_setting" location="/ext/BUILD:2:1" name="@cuda//:is_set"/>
</query>)");
  Classification tests = classify(read_targets(in, "input", std::nullopt, &graph), Rules{}, {});
  GpuReach reach(graph, GpuDepPatterns::defaults());
  auto blind = blind_tests(tests, graph, reach);
  CHECK(blind.classes.empty());
  // A select() key of @cuda is configuration, not code of it: the linkopts test reaches none.
  CHECK(blind.unsupplied == std::map<std::string, std::string>{{"//a:system_python_test", "py_test"},
                                                               {"//c:linkopts_test", "cc_test"}});
  CHECK(blind.suppliers ==
        std::map<std::string, std::vector<std::string>>{{"cc_test", {"cuda"}}, {"py_test", {"pip_deps"}}});
  Audit result = audit(tests, graph, reach);
  std::map<std::string, std::pair<Disagreement, std::string>> listed;
  for (const auto& e : result.entries) listed[e.label] = {e.kind, e.reason};
  CHECK(listed.size() == 3);
  CHECK(listed["//a:numpy_test"].first == Disagreement::gpu_without_gpu_code);
  CHECK(
      listed["//a:system_python_test"] ==
      std::pair{Disagreement::unknown,
                std::string("reaches no label of @pip_deps, where the other py_tests get their GPU code: its "
                            "own may be outside the graph")});
  CHECK(listed["//c:linkopts_test"].first == Disagreement::unknown);
  for (const auto& e : result.entries)  // for --json and the Markdown's code spans
    CHECK(e.suppliers == (e.label == "//a:system_python_test" ? std::vector<std::string>{"pip_deps"}
                          : e.label == "//c:linkopts_test"    ? std::vector<std::string>{"cuda"}
                                                              : std::vector<std::string>{}));
  REQUIRE(blind.messages().size() == 2);
  CHECK_THAT(
      blind.messages()[1],
      Catch::StartsWith("1 GPU-annotated py_test reaches no label of @pip_deps, where the other py_tests "
                        "of the dependency graph get their GPU code, so the graph cannot tell whether it "
                        "needs a GPU"));
  CHECK_THAT(blind.messages()[1], Catch::Contains("(//a:system_python_test)"));
  REQUIRE(classify_by_deps(tests, graph, reach, blind) == 1);
  for (const auto& test : tests.tests)
    CHECK((test.bucket == Bucket::cpu) == (test.target.label == "//a:numpy_test"));
}

TEST_CASE("a GPU dep's supplier is its repository, or a spoke's hub") {
  CHECK(gpu_supplier("@pypi//torch:pkg", "@*//torch:*") == "pypi");
  CHECK(gpu_supplier("@pypi_311_torch//:pkg", "@*_torch//:*") == "pypi_311");
  CHECK(gpu_supplier("@@rules_python~~pip~pip_nvidia_cublas_cu12//:pkg", "@*_nvidia_*//:*") == "pip");
  // A -cuNN wheel's name may hold "_" anywhere: its spoke's hub is what comes before the first.
  CHECK(gpu_supplier("@pypi_311_cucim_cu12//:pkg", "@*_*_cu12//:*") == "pypi");
  CHECK(gpu_supplier("@pypi//cucim_cu12:pkg", "@*//*_cu12:*") == "pypi");
  CHECK(gpu_supplier("@pypi_312_torch_cp312_cp312_manylinux_2_28_x86_64_0a1b2c3d//:pkg",
                     "@*_torch_cp3*//:*") == "pypi_312");
  CHECK(gpu_supplier("@system_gpu//:lib64/libcudart.so", "") == "system_gpu");
  CHECK(gpu_supplier("//third_party/gpus:cuda_headers", "//third_party/gpus/...") == "");
  CHECK(from_supplier("pypi", "@pypi//numpy:pkg"));
  CHECK(from_supplier("pypi", "@@rules_python++pip+pypi_311_numpy//:pkg"));
  CHECK_FALSE(from_supplier("pypi", "@pypi2//numpy:pkg"));
  CHECK_FALSE(from_supplier("pypi", "//pypi:numpy"));
  CHECK_FALSE(from_supplier("", "//a:b"));
}

TEST_CASE("the suppliers' pass ends on a cycle, a rule its own input and a rule listed twice") {
  // //a:x and //a:y depend on each other, //a:self on itself; //a:twice is listed twice (as cquery
  // lists a rule per configuration), reaching numpy only in its second entry.
  DepGraph graph;
  std::istringstream in(R"(<query version="2">
    <rule class="py_test" location="/ws/a/BUILD:1:1" name="//a:torch_test"><rule-input name="@pypi//torch:pkg"/></rule>
    <rule class="py_test" location="/ws/a/BUILD:2:1" name="//a:cycle_test">
        <list name="tags"><string value="gpu"/></list><rule-input name="//a:x"/><rule-input name="//a:self"/>
    </rule>
    <rule class="py_library" location="/ws/a/BUILD:3:1" name="//a:x"><rule-input name="//a:y"/></rule>
    <rule class="py_library" location="/ws/a/BUILD:4:1" name="//a:y"><rule-input name="//a:x"/><rule-input name="//a:twice"/></rule>
    <rule class="py_library" location="/ws/a/BUILD:5:1" name="//a:self"><rule-input name="//a:self"/></rule>
    <rule class="py_library" location="/ws/a/BUILD:6:1" name="//a:twice"/>
    <rule class="py_library" location="/ws/a/BUILD:6:1" name="//a:twice"><rule-input name="@pypi//numpy:pkg"/></rule>
    <rule class="py_test" location="/ws/a/BUILD:7:1" name="//a:loop_test">
        <list name="tags"><string value="gpu"/></list><rule-input name="//a:self"/>
    </rule>
    <rule class="py_library" location="/ext/BUILD:1:1" name="@pypi//torch:pkg"/>
    <rule class="py_library" location="/ext/BUILD:2:1" name="@pypi//numpy:pkg"/>
</query>)");
  Classification tests = classify(read_targets(in, "input", std::nullopt, &graph), Rules{}, {});
  GpuReach reach(graph, GpuDepPatterns::defaults());
  auto blind = blind_tests(tests, graph, reach);
  CHECK(blind.unsupplied == std::map<std::string, std::string>{{"//a:loop_test", "py_test"}});
}

TEST_CASE("a select() branch cquery's configuration did not take supplies nothing") {
  // cquery of deps(...): @pypi//numpy:pkg is named by //p:gpu_test, under a select() keyed on
  // //p:use_numpy, but never listed, so it is no dependency in this configuration, and the test
  // reaches nothing of @pypi.
  DepGraph graph;
  std::istringstream in(R"({"results": [
    {"target": {"type": "RULE", "rule": {"name": "//p:torch_test", "ruleClass": "py_test",
      "ruleInput": ["@pypi//torch:pkg"]}}, "configurationId": 1},
    {"target": {"type": "RULE", "rule": {"name": "//p:gpu_test", "ruleClass": "py_test",
      "attribute": [{"name": "tags", "type": "STRING_LIST", "stringListValue": ["gpu"], "explicitlySpecified": true}],
      "ruleInput": ["@pypi//numpy:pkg", "//p:use_numpy"]}}, "configurationId": 1},
    {"target": {"type": "RULE", "rule": {"name": "//p:use_numpy", "ruleClass": "config_setting"}}, "configurationId": 1},
    {"target": {"type": "RULE", "rule": {"name": "@pypi//torch:pkg", "ruleClass": "py_library"}}, "configurationId": 1}],
    "configurations": [{"id": 1, "checksum": "abcdef0123"}]})");
  Classification tests = classify(read_targets(in, "input", std::nullopt, &graph), Rules{}, {});
  REQUIRE(graph.is_configured_closure());
  GpuReach reach(graph, GpuDepPatterns::defaults());
  CHECK(blind_tests(tests, graph, reach).unsupplied ==
        std::map<std::string, std::string>{{"//p:gpu_test", "py_test"}});
}

TEST_CASE("without implicit deps, a GPU test of a rule class of its own is unknown, never GPU-free") {
  // A torch_test rule whose private attribute brings torch: --noimplicit_deps leaves that out, so
  // its test that lists only numpy looked GPU-free and was moved to CPU runners. A py_test's
  // implicit deps are Bazel's test support and Python's toolchain, never GPU code.
  auto graph_of = [](const std::string& implicit) {
    return R"(<query version="2">
    <rule class="torch_test" location="/ws/a/BUILD:1:1" name="//a:explicit_test">
        <list name="tags"><string value="gpu"/></list><rule-input name="@pypi//torch:pkg"/>)" +
           implicit + R"(
    </rule>
    <rule class="torch_test" location="/ws/a/BUILD:2:1" name="//a:runtime_test">
        <list name="tags"><string value="gpu"/></list><rule-input name="@pypi//numpy:pkg"/>)" +
           implicit + R"(
    </rule>
    <rule class="py_test" location="/ws/a/BUILD:3:1" name="//a:numpy_test">
        <list name="tags"><string value="gpu"/></list><rule-input name="@pypi//numpy:pkg"/>)" +
           implicit + R"(
    </rule>
    <rule class="py_test" location="/ws/a/BUILD:4:1" name="//a:torch_py_test">
        <list name="tags"><string value="gpu"/></list><rule-input name="@pypi//torch:pkg"/>
    </rule>
    <rule class="py_library" location="/ext/BUILD:1:1" name="@pypi//torch:pkg"/>
    <rule class="py_library" location="/ext/BUILD:2:1" name="@pypi//numpy:pkg"/>)" +
           (implicit.empty()
                ? ""
                : R"(<rule class="sh_library" location="/t/BUILD:1:1" name="@bazel_tools//tools/test:test_setup"/>)") +
           "</query>";
  };
  for (bool implicit : {false, true}) {
    DepGraph graph;
    std::istringstream in(
        graph_of(implicit ? R"(<rule-input name="@bazel_tools//tools/test:test_setup"/>)" : ""));
    Classification tests = classify(read_targets(in, "input", std::nullopt, &graph), Rules{}, {});
    GpuReach reach(graph, GpuDepPatterns::defaults());
    auto blind = blind_tests(tests, graph, reach);
    CHECK(blind.without_implicit ==
          (implicit ? std::map<std::string, std::string>{}
                    : std::map<std::string, std::string>{{"//a:runtime_test", "torch_test"}}));
    if (!implicit) {
      CHECK(blind.reason("//a:runtime_test", "torch_test") ==
            "the graph has no implicit deps (--noimplicit_deps), and a torch_test may get its GPU code from "
            "its rule");
      REQUIRE(blind.messages().size() == 1);
      CHECK_THAT(blind.messages()[0],
                 Catch::Contains("queried with --noimplicit_deps") &&
                     Catch::Contains("(//a:runtime_test). Query without --noimplicit_deps"));
    }
    REQUIRE(classify_by_deps(tests, graph, reach, blind) == (implicit ? 2 : 1));
    for (const auto& test : tests.tests)
      CHECK((test.bucket == Bucket::cpu) ==
            (test.target.label == "//a:numpy_test" || (implicit && test.target.label == "//a:runtime_test")));
  }
}
