#include <fmt/format.h>

#include <catch2/catch.hpp>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "gpuplan/graph.hpp"

using namespace gpuplan;

namespace {

/// The graph of a query output given as text.
DepGraph graph_of(const std::string& text, TargetList* tests = nullptr) {
  DepGraph graph;
  std::istringstream in(text);
  TargetList read = read_targets(in, "input", std::nullopt, &graph);
  if (tests) *tests = std::move(read);
  return graph;
}

/// The text of a fixture under test/data/.
std::string fixture_text(const std::string& path) {
  std::ifstream in(std::string(GPUPLAN_SOURCE_DIR) + "/test/data/" + path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

const char* deps_xml = R"(<?xml version="1.1" encoding="UTF-8" standalone="no"?>
<query version="2">
    <rule class="py_test" location="/ws/ml/BUILD:1:8" name="//ml:train_test">
        <list name="tags"><string value="gpu"/></list>
        <rule-input name="//ml:model"/>
        <rule-input name="//ml:train_test.py"/>
    </rule>
    <rule class="py_library" location="/ws/ml/BUILD:9:8" name="//ml:model">
        <rule-input name="@pypi//torch:torch"/>
        <rule-input name="@local_config_cuda//cuda:using_nvcc"/>
    </rule>
    <rule class="alias" location="/ext/BUILD:1:6" name="@pypi//torch:torch">
        <rule-input name="@pypi_torch//:pkg"/>
    </rule>
    <rule class="py_library" location="/ext/BUILD:1:6" name="@pypi_torch//:pkg"/>
    <rule class="config_setting" location="/ext/BUILD:3:6" name="@local_config_cuda//cuda:using_nvcc"/>
    <rule class="sh_test" location="/ws/core/BUILD:1:8" name="@//core:unit_test">
        <rule-input name="//core:gen.txt"/>
    </rule>
    <generated-file generating-rule="//core:gen" location="/ws/core/BUILD:5:8" name="//core:gen.txt"/>
    <rule class="genrule" location="/ws/core/BUILD:5:8" name="//core:gen">
        <rule-input name="@local_config_cuda//cuda:using_nvcc"/>
    </rule>
    <source-file location="/ws/ml/BUILD:1:8" name="//ml:train_test.py"/>
</query>
)";

}  // namespace

TEST_CASE("the graph keeps every rule's inputs, each label once, and the tests are still read") {
  TargetList tests;
  DepGraph graph = graph_of(deps_xml, &tests);
  REQUIRE(tests.tests.size() == 2);
  REQUIRE(graph.rule_count() == 8);  // seven rules and one generated file
  REQUIRE(graph.edge_count() == 8);
  auto model = graph.find("//ml:model");
  REQUIRE(model);
  REQUIRE(graph.rule_class(*model) == "py_library");
  REQUIRE(graph.find("@@//ml:model") == model);
  REQUIRE(graph.find("//core:unit_test"));  // "@//core:unit_test" is the main repository's
  REQUIRE(graph.tests().size() == 2);
  REQUIRE(graph.dependents(*graph.find("@pypi//torch:torch")).size() == 1);
  REQUIRE(graph.dependents(*graph.find("@local_config_cuda//cuda:using_nvcc")).size() == 2);
  REQUIRE(graph.declared(*graph.find("//ml:train_test.py")));
}

TEST_CASE("a test reaches GPU code by its shortest path, through aliases but never through config_settings") {
  DepGraph graph = graph_of(deps_xml);
  GpuReach reach(graph, GpuDepPatterns::defaults());
  auto train = *graph.find("//ml:train_test");
  REQUIRE(reach.reaches(train));
  REQUIRE(reach.path_text(train) == "//ml:train_test → //ml:model → @pypi//torch:torch");
  REQUIRE(reach.matched_pattern(*graph.find("@pypi//torch:torch")) == "@*//torch:*");
  // unit_test's generated file comes from a genrule whose only input is a select() key.
  auto unit = *graph.find("//core:unit_test");
  REQUIRE_FALSE(reach.reaches(unit));
  REQUIRE_FALSE(reach.unknown(unit));
}

TEST_CASE("GPU code reached as rules_ml_toolchain, JAX's ROCm CI and RAPIDS' wheels name it") {
  // The shapes of the real graphs: rules_ml_toolchain's sycl_library and rocm_library add their
  // runtimes to a cc_library; jax.bzl's GPU test deps are py_imports of @rocm_wheels; a
  // cucim-cu12 hub alias reaches only its spoke. Before, none of these tests reached GPU code.
  DepGraph graph = graph_of(R"(<query version="2">
    <rule class="cc_test" location="/ws/sycl/BUILD:30:8" name="//sycl:vector_sycl_test">
        <list name="tags"><string value="gpu"/><string value="oneapi-only"/></list>
        <rule-input name="//sycl:vector_sycl"/>
    </rule>
    <rule class="cc_library" location="/ws/sycl/BUILD:20:13" name="//sycl:vector_sycl">
        <rule-input name="@oneapi//:headers"/>
        <rule-input name="@level_zero//:headers"/>
        <rule-input name="@zero_loader//:libze_loader"/>
    </rule>
    <rule class="cc_library" location="/ext/oneapi/BUILD:1:1" name="@oneapi//:headers"/>
    <rule class="cc_library" location="/ext/level_zero/BUILD:44:11" name="@level_zero//:headers"/>
    <rule class="cc_library" location="/ext/zero_loader/BUILD:56:11" name="@zero_loader//:libze_loader"/>
    <rule class="cc_test" location="/ws/oneapi/BUILD:1:1" name="//oneapi:solver_test">
        <list name="tags"><string value="gpu"/></list>
        <rule-input name="@local_config_sycl//sycl:sycl_headers"/>
    </rule>
    <rule class="alias" location="/ext/local_config_sycl/sycl/BUILD:7:6" name="@local_config_sycl//sycl:sycl_headers">
        <rule-input name="@oneapi//:headers"/>
    </rule>
    <rule class="cc_test" location="/ws/rocm/BUILD:31:12" name="//rocm:vector_hip_test">
        <list name="tags"><string value="gpu"/><string value="rocm-only"/></list>
        <rule-input name="@config_rocm_hipcc//rocm:hip_runtime"/>
    </rule>
    <rule class="cc_library" location="/ext/config_rocm_hipcc/rocm/BUILD:30:11" name="@config_rocm_hipcc//rocm:hip_runtime"/>
    <rule class="py_test" location="/ws/tests/BUILD:1:1" name="//tests:api_test_gpu">
        <list name="tags"><string value="gpu"/></list>
        <rule-input name="@rocm_wheels//:rocm_plugin_py_import"/>
    </rule>
    <rule class="py_import" location="/ext/rocm_wheels/BUILD.bazel:10:10" name="@rocm_wheels//:rocm_plugin_py_import">
        <rule-input name="@rocm_wheels//:plugin.whl"/>
    </rule>
    <source-file location="/ext/rocm_wheels/BUILD.bazel:5:13" name="@rocm_wheels//:plugin.whl"/>
    <rule class="py_test" location="/ws/img/BUILD:1:1" name="//img:cucim_test">
        <list name="tags"><string value="gpu"/></list>
        <rule-input name="@pypi//cucim_cu12:pkg"/>
    </rule>
    <rule class="alias" location="/ext/pypi/cucim_cu12/BUILD.bazel:1:6" name="@pypi//cucim_cu12:pkg">
        <rule-input name="@pypi_311_cucim_cu12//:pkg"/>
    </rule>
    <rule class="py_library" location="/ext/pypi_311_cucim_cu12/BUILD.bazel:1:6" name="@pypi_311_cucim_cu12//:pkg"/>
</query>
)");
  GpuReach reach(graph, GpuDepPatterns::defaults());
  const std::pair<const char*, const char*> expected[] = {
      {"//sycl:vector_sycl_test", "@level_zero//..."},
      {"//oneapi:solver_test", "@local_config_sycl//..."},
      {"//rocm:vector_hip_test", "@config_rocm_hipcc//..."},
      {"//tests:api_test_gpu", "@rocm_wheels//..."},
      {"//img:cucim_test", "@*//*_cu12:*"}};
  for (const auto& [test, pattern] : expected) {
    INFO(test);
    auto node = *graph.find(test);
    REQUIRE(reach.reaches(node));
    auto path = reach.path_text(node);
    auto last = path.substr(path.rfind(" → ") + std::string_view(" → ").size());
    CHECK(reach.matched_pattern(*graph.find(last)) == pattern);
  }
}

TEST_CASE("a rules_pycross wheel reaches torch through its lock repository's targets") {
  // requirement("lightning") is @pypi//:lightning, an alias of //_lock:lightning@2.2.0, whose
  // deps name torch as //_lock:torch@2.1.0; no label of the path has a rules_python spelling.
  DepGraph graph = graph_of(R"(<query version="2">
    <rule class="py_test" location="/ws/ml/BUILD:1:1" name="//ml:train_test">
        <list name="tags"><string value="gpu"/></list>
        <rule-input name="@pypi//:lightning"/>
    </rule>
    <rule class="alias" location="/ext/pypi/BUILD.bazel:10:6" name="@pypi//:lightning">
        <rule-input name="@pypi//_lock:lightning@2.2.0"/>
    </rule>
    <rule class="pycross_wheel_library" location="/ext/pypi/_lock/lock.bzl:40:35" name="@pypi//_lock:lightning@2.2.0">
        <rule-input name="@pypi//_lock:numpy@1.26.4"/>
        <rule-input name="@pypi//_lock:torch@2.1.0"/>
    </rule>
    <rule class="pycross_wheel_library" location="/ext/pypi/_lock/lock.bzl:50:35" name="@pypi//_lock:numpy@1.26.4"/>
    <rule class="pycross_wheel_library" location="/ext/pypi/_lock/lock.bzl:60:35" name="@pypi//_lock:torch@2.1.0"/>
</query>
)");
  GpuReach reach(graph, GpuDepPatterns::defaults());
  auto test = *graph.find("//ml:train_test");
  REQUIRE(reach.reaches(test));
  CHECK(reach.path_text(test) ==
        "//ml:train_test → @pypi//:lightning → @pypi//_lock:lightning@2.2.0 → @pypi//_lock:torch@2.1.0");
  CHECK(reach.matched_pattern(*graph.find("@pypi//_lock:torch@2.1.0")) == "@*//_lock:torch@*");
}

TEST_CASE("the reachability pass finds the first pattern a label matches, as matching each in turn does") {
  // GpuReach passes over a pattern whose literal text the label's repository or package lacks:
  // canonical names, "/..." packages and "//pkg" (= //pkg:pkg) must not be passed over wrongly.
  GpuDepPatterns patterns = GpuDepPatterns::defaults();
  patterns.gpu_deps.insert(patterns.gpu_deps.begin(),
                           {"@team//gpu/kernels", "@@rules_python~~pip~pypi_team//:*"});
  for (std::string label :
       {"@xla//xla/tsl/cuda:cudart", "@local_tsl//third_party/gpus:x",
        "@@rules_python++pip+pypi_311_torch//:pkg", "@@rules_cuda~//cuda:runtime",
        "@@rules_cuda++toolchain+cuda//:cuda_runtime", "@tsl//tsl/cuda:cudart", "@pypi//_lock:torch@2.1.0",
        "@pypi_312_torch_cp312_cp312_manylinux_2_28_x86_64_0a1b2c3d//:pkg", "@pip//pypi__triton:pkg",
        "@pip_deps_pypi__torch_1_4_0//:pkg", "@pypi//cucim_cu12:pkg", "@team//gpu/kernels:kernels",
        "@team//gpu/kernels:other", "@@rules_python~~pip~pypi_team//:pkg", "@pypi//numpy:pkg",
        "@com_google_absl//absl/strings:strings", "@@rules_python+//python:defs"}) {
    INFO(label);
    DepGraph graph = graph_of(fmt::format(
        R"(<query version="2"><rule class="py_library" location="/x/BUILD:1:1" name="{}"/></query>)", label));
    std::string first;
    for (const auto& pattern : patterns.gpu_deps)
      if (gpu_pattern_matches(pattern, label)) {
        first = pattern;
        break;
      }
    GpuReach reach(graph, patterns);
    auto node = *graph.find(label);
    CHECK(reach.reaches(node) == !first.empty());
    if (!first.empty()) CHECK(reach.matched_pattern(node) == first);
  }
}

TEST_CASE("gpu_free patterns stop a path; the test then reaches no GPU code") {
  DepGraph graph = graph_of(deps_xml);
  auto patterns = GpuDepPatterns::defaults();
  patterns.gpu_free = {"@pypi//torch:torch"};
  GpuReach reach(graph, patterns);
  REQUIRE_FALSE(reach.reaches(*graph.find("//ml:train_test")));
  // The spoke itself still counts: a path around the alias would find it.
  REQUIRE(reach.reaches(*graph.find("@pypi_torch//:pkg")));
}

TEST_CASE(
    "main-repository gpu_deps of every shape find their labels: @//, *, ..., :all, a package's own name") {
  DepGraph graph = graph_of(R"(<query version="2">
    <rule class="sh_test" location="/ws/BUILD:1:1" name="//t:a"><rule-input name="//gpu/kernels:fast"/></rule>
    <rule class="sh_test" location="/ws/BUILD:2:1" name="//t:b"><rule-input name="//vendor/cuda12/lib:x"/></rule>
    <rule class="sh_test" location="/ws/BUILD:3:1" name="//t:c"><rule-input name="//hw:anything"/></rule>
    <rule class="sh_test" location="/ws/BUILD:4:1" name="//t:d"><rule-input name="//nccl:nccl"/></rule>
    <rule class="sh_test" location="/ws/BUILD:5:1" name="//t:e"><rule-input name="//nccl:other"/></rule>
    <rule class="cc_library" location="/ws/BUILD:6:1" name="//gpu/kernels:fast"/>
    <rule class="cc_library" location="/ws/BUILD:7:1" name="//vendor/cuda12/lib:x"/>
    <rule class="cc_library" location="/ws/BUILD:8:1" name="//hw:anything"/>
    <rule class="cc_library" location="/ws/BUILD:9:1" name="//nccl:nccl"/>
    <rule class="cc_library" location="/ws/BUILD:10:1" name="//nccl:other"/>
</query>)");
  GpuDepPatterns patterns;
  patterns.gpu_deps = {"@//gpu/...", "//vendor/cuda*/lib:*", "//hw:all", "@@//nccl"};
  GpuReach reach(graph, patterns);
  REQUIRE(reach.matched_pattern(*graph.find("//gpu/kernels:fast")) == "@//gpu/...");
  REQUIRE(reach.matched_pattern(*graph.find("//vendor/cuda12/lib:x")) == "//vendor/cuda*/lib:*");
  REQUIRE(reach.matched_pattern(*graph.find("//hw:anything")) == "//hw:all");
  REQUIRE(reach.matched_pattern(*graph.find("//nccl:nccl")) == "@@//nccl");
  for (const char* test : {"//t:a", "//t:b", "//t:c", "//t:d"}) REQUIRE(reach.reaches(*graph.find(test)));
  REQUIRE_FALSE(reach.reaches(*graph.find("//t:e")));  // "//nccl" is //nccl:nccl only
}

TEST_CASE("rules_cuda's cuda_library is GPU code by its class, even when its runtime dep is left out") {
  // cuda_test makes a cc_test over a cuda_library, which reaches @cuda//:cuda_runtime only
  // through the implicit _builtin_deps: bazel query --noimplicit_deps leaves that edge out.
  DepGraph graph = graph_of(R"(<query version="2">
    <rule class="cc_test" location="/ws/cu/BUILD:3:10" name="//cu:kernel_test"><rule-input name="//cu:_kernel_test"/></rule>
    <rule class="cuda_library" location="/ws/cu/BUILD:3:10" name="//cu:_kernel_test"><rule-input name="//cu:kernel.cu"/></rule>
    <source-file location="/ws/cu/BUILD:3:10" name="//cu:kernel.cu"/>
    <rule class="cc_test" location="/ws/cu/BUILD:9:8" name="//cu:free_test"><rule-input name="//cu:_wrapper"/></rule>
    <rule class="cuda_library" location="/ws/cu/BUILD:12:13" name="//cu:_wrapper"/>
</query>)");
  auto patterns = GpuDepPatterns::defaults();
  patterns.gpu_free = {"//cu:_wrapper"};
  GpuReach reach(graph, patterns);
  auto test = *graph.find("//cu:kernel_test");
  REQUIRE(reach.path_text(test) == "//cu:kernel_test → //cu:_kernel_test");
  REQUIRE(reach.matched_pattern(*graph.find("//cu:_kernel_test")).empty());  // no pattern: its class
  REQUIRE_FALSE(reach.reaches(*graph.find("//cu:free_test")));               // gpu_free wins over the class
}

TEST_CASE("a CUDA source or runtime library is GPU code by its file name, in a repository of any name") {
  // A system CUDA imported under a name of the team's own, which no gpu_deps pattern knows, and
  // a kernel that a genrule compiles with nvcc.
  DepGraph graph = graph_of(R"(<query version="2">
    <rule class="cc_test" location="/ws/s/BUILD:1:8" name="//s:nvml_test"><rule-input name="@system_gpu//:cudart"/></rule>
    <rule class="cc_import" location="/ext/BUILD:1:10" name="@system_gpu//:cudart"><rule-input name="@system_gpu//:lib64/libcudart.so.12"/></rule>
    <source-file location="/ext/BUILD:1:10" name="@system_gpu//:lib64/libcudart.so.12"/>
    <rule class="cc_test" location="/ws/g/BUILD:1:8" name="//g:saxpy_test"><rule-input name="//g:saxpy.o"/></rule>
    <generated-file generating-rule="//g:nvcc" location="/ws/g/BUILD:5:8" name="//g:saxpy.o"/>
    <rule class="genrule" location="/ws/g/BUILD:5:8" name="//g:nvcc"><rule-input name="//g:saxpy.cu"/></rule>
    <source-file location="/ws/g/BUILD:5:8" name="//g:saxpy.cu"/>
    <rule class="cc_test" location="/ws/c/BUILD:1:8" name="//c:cuda_named_test"><rule-input name="//c:libcudart_stub.cc"/></rule>
    <source-file location="/ws/c/BUILD:1:8" name="//c:libcudart_stub.cc"/>
</query>)");
  GpuReach reach(graph, GpuDepPatterns::defaults());
  auto nvml = *graph.find("//s:nvml_test");
  REQUIRE(reach.path_text(nvml) ==
          "//s:nvml_test → @system_gpu//:cudart → @system_gpu//:lib64/libcudart.so.12");
  REQUIRE(reach.file_kind(*graph.find("@system_gpu//:lib64/libcudart.so.12")) == "a CUDA library");
  REQUIRE(reach.matched_pattern(*graph.find("@system_gpu//:lib64/libcudart.so.12")).empty());
  REQUIRE(reach.path_text(*graph.find("//g:saxpy_test")) ==
          "//g:saxpy_test → //g:saxpy.o → //g:nvcc → //g:saxpy.cu");
  REQUIRE_FALSE(reach.reaches(*graph.find("//c:cuda_named_test")));  // a C++ file named like a library
  auto walled = GpuDepPatterns::defaults();
  walled.gpu_free = {"@system_gpu//..."};  // a stub the team vouches for
  REQUIRE_FALSE(GpuReach(graph, walled).reaches(nvml));
}

TEST_CASE("file names that are GPU code, and near misses that are not") {
  for (const char* label :
       {"//k:saxpy.cu", "//k:common.cuh", "//tf:relu_op_gpu.cu.cc", "//tf:gpu_kernel_helper.cu.h",
        "@cuda//:lib64/libcudart_static.a", "@x//:libcublasLt.so", "@drv//:libcuda.so.1",
        "@x//:lib/libnvidia-ml.so.575.51.03", "@x//:libcudnn.so.9",
        // Missed before: the names real distributions ship (hashed copies, LibTorch's CUDA part,
        // cuDNN's split libraries, the toolkit's other libraries).
        "@pypi_torch//:torch/lib/libcudart-9335f6a2.so.12", "@t//:lib/libnvrtc-b51b459d.so.12",
        "@libtorch_dist//:lib/libtorch_cuda.so", "@t//:lib/libc10_cuda.so", "@x//:libcudnn_ops_infer.so.8",
        "@x//:libcudnn_graph.so.9", "@x//:libcupti.so.12", "@x//:libcusparseLt.so.0", "@x//:libnppc.so.12",
        "@x//:libcudadevrt.a", "@x//:libnvrtc-builtins.so.12.4"})
    REQUIRE_THAT(std::string(gpu_file_kind(label)), Catch::Contains("CUDA"));
  REQUIRE(gpu_file_kind("//k:vector_add.hip") == "a HIP source");
  // Missed before: rules_ml_toolchain's ROCm test (cc/tests/gpu/rocm/BUILD: a rocm_library of
  // vector_hip.hip.cc and vector_hip.hip.h), and hipcc's .hip.cpp.
  for (const char* label : {"//cc/tests/gpu/rocm:vector_hip.hip.cc", "//cc/tests/gpu/rocm:vector_hip.hip.h",
                            "//bench/hip:vector_add.hip.cpp"})
    REQUIRE(gpu_file_kind(label) == "a HIP source");
  // IREE's CUDA driver loads libcuda at run time: the graph shows only the SDK's headers.
  REQUIRE(gpu_file_kind("@iree_cuda//:include/cuda.h") == "a CUDA header");
  REQUIRE(gpu_file_kind("@nccl//:src/include/nccl.h") == "a CUDA header");
  REQUIRE(gpu_file_kind("@hip//:include/hip/hip_runtime.h") == "a ROCm header");
  REQUIRE(gpu_file_kind("@rocm//:lib/libamdhip64.so.6") == "a ROCm library");
  for (const char* label : {"//k:cuda.cc", "//k:libcudart_stub.cc", "//k:libcudart.so.txt.py",
                            "//k:cudart.so", "//k:libcudartx.so", "//k:menu.cuisine", "//k:libcuda.sox",
                            "//k:x.cub", "//k:my_cuda.h", "//k:cuda_utils.h", "//k:libcudart-stub.so",
                            "//k:libtorch.so", "//k:libc10.so", "//k:libnppx_tools_plugin.so", "//k:chip.h",
                            "//k:hip.cc", "//k:relationship.cc", "//k:flagship.cpp", "//k:x.hipcc"})
    REQUIRE(gpu_file_kind(label).empty());
}

TEST_CASE("linkopts that link a GPU library, and near misses that do not") {
  for (const char* flag :
       {"-lcudart", "-lcuda", "-lcublasLt", "-lnccl", "-lnvidia-ml", "-l:libcudart.so.12",
        "/usr/local/cuda/lib64/libcudart_static.a", "-Wl,--no-as-needed,-lcuda,--as-needed"})
    REQUIRE(gpu_linkopt_kind(flag) == "a CUDA library");
  REQUIRE(gpu_linkopt_kind("-lamdhip64") == "a ROCm library");
  // Missed before: XLA's third_party/gpus/sycl/BUILD.tpl (cc_library sycl, linkopts =
  // ["-lze_loader"]), Intel's ITEX pybind_extension (if_sycl(["-lsycl"])), libsycl.so.8 as torch's
  // XPU wheels bundle it.
  for (const char* flag : {"-lze_loader", "-lsycl", "-l:libze_loader.so.1", "-ltorch_xpu", "-lc10_xpu",
                           "/opt/intel/oneapi/compiler/latest/lib/libsycl.so.8"})
    REQUIRE(gpu_linkopt_kind(flag) == "an Intel GPU library");
  REQUIRE(gpu_file_kind("@pypi_torch//:torch/lib/libsycl.so.8") == "an Intel GPU library");
  for (const char* flag :
       {"-lm", "-lpthread", "-L/usr/local/cuda/lib64", "-Wl,-rpath,/usr/local/cuda/lib64", "-lcudart_stub",
        "-l", "", "-pthread", "$(location //x:libcudart.so)", "-lcurl", "-lcurses", "-lcudaxyz",
        "-lsycl_stub", "-lze", "-lOpenCL", "-ltorch", "-lmkl_sycl"})
    REQUIRE(gpu_linkopt_kind(flag).empty());
}

TEST_CASE("a rule that links the machine's CUDA through linkopts is GPU code, in every format") {
  // A cc_library wrapping the system's libcudart, and a cc_test linking libcuda itself.
  std::string xml = R"(<query version="2">
    <rule class="cc_test" location="/ws/c/BUILD:1:1" name="//c:driver_test">
        <list name="tags"><string value="gpu"/></list>
        <list name="linkopts"><string value="-lpthread"/><string value="-lcuda"/></list>
    </rule>
    <rule class="cc_library" location="/ws/c/BUILD:5:1" name="//c:cudart">
        <list name="linkopts"><string value="-L/usr/local/cuda/lib64"/><string value="-lcudart"/></list>
    </rule>
    <rule class="cc_test" location="/ws/c/BUILD:9:1" name="//c:kernel_test"><rule-input name="//c:cudart"/></rule>
    <rule class="cc_library" location="/ws/c/BUILD:12:1" name="//c:math"><list name="linkopts"><string value="-lm"/></list></rule>
    <rule class="cc_test" location="/ws/c/BUILD:15:1" name="//c:math_test"><rule-input name="//c:math"/></rule>
    <rule class="py_library" location="/ws/c/BUILD:18:1" name="//c:py"><list name="linkopts"><string value="-lcuda"/></list></rule>
    <rule class="py_test" location="/ws/c/BUILD:21:1" name="//c:py_test"><rule-input name="//c:py"/></rule>
</query>)";
  std::string streamed =
      R"({"type":"RULE","rule":{"name":"//c:driver_test","ruleClass":"cc_test","attribute":[)"
      R"({"name":"tags","type":"STRING_LIST","stringListValue":["gpu"],"explicitlySpecified":true},)"
      R"({"name":"linkopts","type":"STRING_LIST","stringListValue":["-lpthread","-lcuda"],"explicitlySpecified":true}]}})"
      "\n"
      R"({"type":"RULE","rule":{"name":"//c:cudart","ruleClass":"cc_library","attribute":[)"
      R"({"name":"alwayslink","type":"BOOLEAN","booleanValue":false},)"
      R"({"name":"linkopts","type":"STRING_LIST","stringListValue":["-L/usr/local/cuda/lib64","-lcudart"],"explicitlySpecified":true}]}})"
      "\n"
      R"({"type":"RULE","rule":{"name":"//c:kernel_test","ruleClass":"cc_test","ruleInput":["//c:cudart"]}})"
      "\n"
      R"({"type":"RULE","rule":{"name":"//c:math","ruleClass":"cc_library","attribute":[)"
      R"({"name":"linkopts","type":"STRING_LIST","stringListValue":["-lm"]}]}})"
      "\n"
      R"({"type":"RULE","rule":{"name":"//c:math_test","ruleClass":"cc_test","ruleInput":["//c:math"]}})"
      "\n"
      R"({"type":"RULE","rule":{"name":"//c:py","ruleClass":"py_library","attribute":[)"
      R"({"name":"linkopts","type":"STRING_LIST","stringListValue":["-lcuda"]}]}})"
      "\n"
      R"({"type":"RULE","rule":{"name":"//c:py_test","ruleClass":"py_test","ruleInput":["//c:py"]}})"
      "\n";
  for (const auto& text : {xml, streamed}) {
    DepGraph graph = graph_of(text);
    GpuReach reach(graph, GpuDepPatterns::defaults());
    REQUIRE(reach.path_text(*graph.find("//c:driver_test")) == "//c:driver_test");
    REQUIRE(reach.linkopt(*graph.find("//c:driver_test")) == "-lcuda");
    REQUIRE(reach.path_text(*graph.find("//c:kernel_test")) == "//c:kernel_test → //c:cudart");
    REQUIRE(reach.linkopt(*graph.find("//c:cudart")) == "-lcudart");
    REQUIRE_FALSE(reach.reaches(*graph.find("//c:math_test")));
    // Only C++ and CUDA rules link (may_have_linkopts): every format reads the same rules' linkopts.
    REQUIRE_FALSE(reach.reaches(*graph.find("//c:py_test")));
  }
}

TEST_CASE("linkopts that are not a list of strings are refused at their line") {
  for (const char* value : {R"(["-lcuda",])", "[1]", R"("-lcuda")"})
    REQUIRE_THROWS_WITH(
        graph_of(
            R"({"type":"RULE","rule":{"name":"//c:t","ruleClass":"cc_test"}})"
            "\n" +
            fmt::format(R"({{"type":"RULE","rule":{{"name":"//c:l","ruleClass":"cc_library","attribute":[)"
                        R"({{"name":"linkopts","type":"STRING_LIST","stringListValue":{}}}]}}}})",
                        value) +
            "\n"),
        Catch::Contains("input:2:") &&
            Catch::Contains("attribute linkopts of //c:l: \"stringListValue\" is not a list of strings"));
}

TEST_CASE("labels the input names but never declares make a test's reach unknown, not GPU-free") {
  DepGraph graph = graph_of(R"(<query version="2">
    <rule class="sh_test" location="/ws/BUILD:1:1" name="//a:t"><rule-input name="//a:lib"/></rule>
</query>)");
  GpuReach reach(graph, GpuDepPatterns::defaults());
  auto test = *graph.find("//a:t");
  REQUIRE_FALSE(reach.reaches(test));
  REQUIRE(reach.unknown(test));
  REQUIRE(graph.label(reach.first_undeclared(test)) == "//a:lib");
}

TEST_CASE("streamed_jsonproto and cquery jsonproto carry the same graph as xml") {
  std::string streamed =
      R"({"type":"RULE","rule":{"name":"//ml:t","ruleClass":"py_test","ruleInput":["//ml:model"]}})"
      "\n"
      R"({"type":"RULE","rule":{"name":"//ml:model","ruleClass":"py_library","ruleInput":["@pypi_torch//:pkg"]}})"
      "\n"
      R"({"type":"RULE","rule":{"name":"@pypi_torch//:pkg","ruleClass":"py_library"}})"
      "\n"
      R"({"type":"GENERATED_FILE","generatedFile":{"name":"//ml:x.txt","generatingRule":"//ml:gen"}})"
      "\n";
  DepGraph graph = graph_of(streamed);
  REQUIRE(graph.edge_count() == 3);
  GpuReach reach(graph, GpuDepPatterns::defaults());
  REQUIRE(reach.path_text(*graph.find("//ml:t")) == "//ml:t → //ml:model → @pypi_torch//:pkg");

  std::string cquery =
      R"({"results": [{"target": {"type": "RULE", "rule": {"name": "//ml:t", "ruleClass": "py_test",
      "configuredRuleInput": [{"label": "@cuda_cudart//:cudart", "configurationChecksum": "abc"}]}},
      "configurationId": 1}, {"target": {"type": "RULE", "rule": {"name": "@cuda_cudart//:cudart",
      "ruleClass": "cc_library"}}, "configurationId": 1}], "configurations": [{"id": 1, "checksum": "abcdef0123"}]})";
  DepGraph configured = graph_of(cquery);
  REQUIRE(configured.edge_count() == 1);
  GpuReach configured_reach(configured, GpuDepPatterns::defaults());
  REQUIRE(configured_reach.path_text(*configured.find("//ml:t")) == "//ml:t → @cuda_cudart//:cudart");
}

namespace {
/// A cquery jsonproto output of these rules, each {"name", "ruleClass", "ruleInput"...}.
std::string cquery_of(const std::vector<std::string>& rules) {
  std::string results;
  for (const auto& rule : rules)
    results += fmt::format(R"({}{{"target": {{"type": "RULE", "rule": {}}}, "configurationId": 1}})",
                           results.empty() ? "" : ", ", rule);
  return fmt::format(R"({{"results": [{}], "configurations": [{{"id": 1, "checksum": "abcdef0123"}}]}})",
                     results);
}
}  // namespace

TEST_CASE("cquery of tests only names libraries it never lists: their tests are unknown, never GPU-free") {
  // `bazel cquery 'tests(//...)'`: the test's library is named, not listed (a real capture:
  // test/data/bazel/tests.cquery.jsonproto). Read as a whole graph, it moved every GPU test to CPUs.
  DepGraph graph =
      graph_of(cquery_of({R"({"name": "//ml:t", "ruleClass": "py_test", "ruleInput": ["//ml:model"]})"}));
  GpuReach reach(graph, GpuDepPatterns::defaults());
  REQUIRE_FALSE(graph.is_configured_closure());
  REQUIRE(reach.unknown(*graph.find("//ml:t")));
}

TEST_CASE(
    "cquery of deps(...) lists every configured dep: a label it only names under a select() is a branch not "
    "taken") {
  // if_cuda's select(): its key, a config_setting, is listed; the branch's cudart is not.
  DepGraph graph = graph_of(cquery_of(
      {R"({"name": "//k:t", "ruleClass": "py_test", "ruleInput": ["//k:kernel"]})",
       R"({"name": "//k:kernel", "ruleClass": "cc_library", "ruleInput": ["@local_config_cuda//cuda:cudart", "@local_config_cuda//cuda:using_nvcc"]})",
       R"({"name": "@local_config_cuda//cuda:using_nvcc", "ruleClass": "config_setting"})"}));
  GpuReach reach(graph, GpuDepPatterns::defaults());
  REQUIRE(graph.is_configured_closure());
  auto test = *graph.find("//k:t");
  REQUIRE_FALSE(reach.reaches(test));  // cudart is if_cuda's branch, not taken in this configuration
  REQUIRE_FALSE(reach.unknown(test));
}

TEST_CASE(
    "a build setting a rule names by an implicit attribute is no select(): its unlisted inputs stay "
    "unknown") {
  // rules_python's py rules name //python/config_settings:precompile (a string_flag) by
  // _precompile_flag; in deps(..., 1) the library's torch is unlisted, and no select() is there.
  DepGraph graph = graph_of(cquery_of(
      {R"({"name": "//m:t", "ruleClass": "py_test", "ruleInput": ["//m:model", "//python/config_settings:precompile"]})",
       R"({"name": "//m:model", "ruleClass": "py_library", "ruleInput": ["@pypi//torch:pkg", "//python/config_settings:precompile"]})",
       R"({"name": "//python/config_settings:precompile", "ruleClass": "string_flag"})"}));
  GpuReach reach(graph, GpuDepPatterns::defaults());
  REQUIRE(reach.unknown(*graph.find("//m:t")));
}

TEST_CASE(
    "where rules name their configured inputs (configuredRuleInput), an unlisted one was not expanded") {
  // Bazel 7's cquery names a rule's configured inputs apart: none of them is a branch not taken,
  // even beside a select()'s key.
  DepGraph graph = graph_of(cquery_of(
      {R"({"name": "//m:t", "ruleClass": "py_test", "configuredRuleInput": [{"label": "//m:model"}]})",
       R"({"name": "//m:model", "ruleClass": "py_library", "configuredRuleInput": [{"label": "@pypi//torch:pkg"}, {"label": "//m:cuda"}]})",
       R"({"name": "//m:cuda", "ruleClass": "config_setting"})"}));
  GpuReach reach(graph, GpuDepPatterns::defaults());
  REQUIRE(reach.unknown(*graph.find("//m:t")));
}

TEST_CASE("a label cquery names without a select() but never lists was not expanded: its tests are unknown") {
  // cquery 'deps(tests(//...), 1)': //m:model is listed, the jax plugin it depends on is not.
  // Read as a branch not taken, the GPU test was moved to CPU runners.
  DepGraph graph = graph_of(cquery_of(
      {R"({"name": "//m:t", "ruleClass": "py_test", "ruleInput": ["//m:model"]})",
       R"({"name": "//m:model", "ruleClass": "py_library", "ruleInput": ["@pypi//jax_cuda12_plugin:pkg"]})"}));
  GpuReach reach(graph, GpuDepPatterns::defaults());
  auto test = *graph.find("//m:t");
  REQUIRE_FALSE(reach.reaches(test));
  REQUIRE(reach.unknown(test));
}

TEST_CASE(
    "a GPU label the input names but never declares makes its tests unknown: it may be a select() key") {
  // `bazel query 'tests(//...)'` lists select() keys among a test's inputs, undeclared.
  DepGraph graph = graph_of(R"(<query version="2">
    <rule class="py_test" location="/ws/BUILD:1:1" name="//u:t"><rule-input name="@local_config_cuda//cuda:using_nvcc"/></rule>
</query>)");
  GpuReach reach(graph, GpuDepPatterns::defaults());
  auto test = *graph.find("//u:t");
  REQUIRE_FALSE(reach.reaches(test));
  REQUIRE(reach.unknown(test));
}

TEST_CASE("plain ingest keeps no graph: the same tests with or without one") {
  std::istringstream in(deps_xml);
  TargetList plain = read_targets(in, "input");
  TargetList with_graph;
  graph_of(deps_xml, &with_graph);
  REQUIRE(plain.tests.size() == with_graph.tests.size());
  REQUIRE(plain.dropped.total() == with_graph.dropped.total());
}

TEST_CASE("a graph of many labels keeps each once while its label table grows, long labels too") {
  DepGraph graph;
  std::vector<std::string> labels;
  for (int i = 0; i < 5000; ++i)
    labels.push_back("//pkg" + std::to_string(i % 7) + ":lib_" + std::to_string(i));
  labels.push_back("//long:" + std::string(70000, 'x'));  // longer than a slot gives the length of
  labels.push_back("//long:" + std::string(70001, 'x'));
  std::size_t edges = 0;
  for (std::size_t r = 0; r < labels.size(); r += 50) {
    graph.rule("//rules:r" + std::to_string(r), "py_library");
    // A rule's inputs in one batch: fifty labels, a new one twice, and labels read long before.
    std::vector<std::string_view> inputs;
    for (std::size_t k = r; k < std::min(r + 50, labels.size()); ++k) inputs.push_back(labels[k]);
    inputs.push_back(labels[r]);
    inputs.push_back(labels[r / 3]);
    graph.inputs(inputs);
    edges += inputs.size();
  }
  REQUIRE(graph.edge_count() == edges);
  REQUIRE(graph.node_count() == labels.size() + (labels.size() + 49) / 50);
  for (const std::string& label : labels) {
    auto node = graph.find(label);
    REQUIRE(node);
    REQUIRE(graph.label(*node) == label);
    REQUIRE_FALSE(graph.declared(*node));
  }
  REQUIRE_FALSE(graph.find("//long:" + std::string(70002, 'x')));
  REQUIRE_FALSE(graph.find("//pkg0:lib_5000"));
}

TEST_CASE("among equal paths a test steps to the input with the smallest label, whatever the input's order") {
  const std::vector<std::string> rules = {
      R"(<rule class="cc_library" location="/ws/BUILD:1:1" name="//gpu:one"/>)",
      R"(<rule class="cc_library" location="/ws/BUILD:2:1" name="//gpu:two"/>)",
      R"(<rule class="sh_test" location="/ws/BUILD:3:1" name="//t:a"><rule-input name="//a:y"/><rule-input name="//a:x"/></rule>)",
      R"(<rule class="sh_test" location="/ws/BUILD:4:1" name="//t:b"><rule-input name="//b:q"/><rule-input name="//b:p"/></rule>)",
      R"(<rule class="py_library" location="/ws/BUILD:5:1" name="//a:y"><rule-input name="//gpu:one"/></rule>)",
      R"(<rule class="py_library" location="/ws/BUILD:6:1" name="//a:x"><rule-input name="//gpu:two"/></rule>)",
      R"(<rule class="py_library" location="/ws/BUILD:7:1" name="//b:q"><rule-input name="//gpu:one"/></rule>)",
      R"(<rule class="py_library" location="/ws/BUILD:8:1" name="//b:p"><rule-input name="//gpu:one"/></rule>)"};
  for (bool reversed : {false, true}) {
    std::string xml = "<query version=\"2\">\n";
    for (std::size_t i = 0; i < rules.size(); ++i) xml += rules[reversed ? rules.size() - 1 - i : i] + "\n";
    DepGraph graph = graph_of(xml + "</query>");
    GpuDepPatterns patterns;
    patterns.gpu_deps = {"//gpu/..."};
    GpuReach reach(graph, patterns);
    INFO("rules reversed: " << reversed);
    REQUIRE(reach.path_text(*graph.find("//t:a")) == "//t:a → //a:x → //gpu:two");
    REQUIRE(reach.path_text(*graph.find("//t:b")) == "//t:b → //b:p → //gpu:one");
  }
}

TEST_CASE("a cycle, which Bazel never prints, neither hangs the reachability pass nor hides a path") {
  DepGraph graph = graph_of(R"(<query version="2">
    <rule class="sh_test" location="/ws/BUILD:1:1" name="//t:a"><rule-input name="//c:p"/></rule>
    <rule class="py_library" location="/ws/BUILD:2:1" name="//c:p"><rule-input name="//c:q"/></rule>
    <rule class="py_library" location="/ws/BUILD:3:1" name="//c:q">
        <rule-input name="//c:p"/><rule-input name="//c:r"/>
    </rule>
    <rule class="py_library" location="/ws/BUILD:4:1" name="//c:r"><rule-input name="@pypi//torch:pkg"/></rule>
    <rule class="py_library" location="/ws/BUILD:5:1" name="@pypi//torch:pkg"/>
    <rule class="sh_test" location="/ws/BUILD:6:1" name="//t:self"><rule-input name="//t:self"/></rule>
</query>)");
  GpuReach reach(graph, GpuDepPatterns::defaults());
  REQUIRE(reach.path_text(*graph.find("//t:a")) == "//t:a → //c:p → //c:q → //c:r → @pypi//torch:pkg");
  REQUIRE(reach.path_text(*graph.find("//c:q")) == "//c:q → //c:r → @pypi//torch:pkg");
  REQUIRE_FALSE(reach.reaches(*graph.find("//t:self")));
  REQUIRE_FALSE(reach.unknown(*graph.find("//t:self")));
}

TEST_CASE("a rule listed twice, as cquery lists one per configuration, reaches through either listing") {
  DepGraph graph;
  graph.rule("//t:a", "sh_test");
  graph.input("//a:cpu");
  graph.rule("//a:cpu", "py_library");
  graph.rule("//t:a", "sh_test");
  graph.input("@pypi//torch:pkg");
  graph.rule("@pypi//torch:pkg", "py_library");
  GpuReach reach(graph, GpuDepPatterns::defaults());
  REQUIRE(reach.path_text(*graph.find("//t:a")) == "//t:a → @pypi//torch:pkg");
}

TEST_CASE("a chain of 200,000 rules listed dependents first is walked without deep recursion") {
  DepGraph graph;
  constexpr int length = 200000;
  for (int i = 0; i < length; ++i) {
    graph.rule("//chain:r" + std::to_string(i), i == 0 ? "sh_test" : "py_library");
    graph.input(i + 1 < length ? "//chain:r" + std::to_string(i + 1) : std::string("@pypi//torch:pkg"));
  }
  graph.rule("@pypi//torch:pkg", "py_library");
  GpuReach reach(graph, GpuDepPatterns::defaults());
  auto path = reach.path(*graph.find("//chain:r0"));
  REQUIRE(path.size() == length + 1);
  REQUIRE(graph.label(path.back()) == "@pypi//torch:pkg");
}

TEST_CASE("Skylib's flags and a config_setting_group's alias are configuration, never GPU code") {
  DepGraph graph = graph_of(R"(<query version="2">
    <rule class="config_setting" location="/ws/BUILD:1:1" name="@local_config_cuda//cuda:using_nvcc"/>
    <rule class="alias" location="/ws/BUILD:2:1" name="@local_config_cuda//cuda:any_cuda"><rule-input name="@local_config_cuda//cuda:using_nvcc"/></rule>
    <rule class="string_list_flag" location="/ws/BUILD:3:1" name="@local_config_cuda//cuda:archs"/>
    <rule class="py_test" location="/ws/BUILD:4:1" name="//u:t"><rule-input name="@local_config_cuda//cuda:any_cuda"/><rule-input name="@local_config_cuda//cuda:archs"/></rule>
</query>)");
  GpuReach reach(graph, GpuDepPatterns::defaults());
  auto test = *graph.find("//u:t");
  REQUIRE_FALSE(reach.reaches(test));
  REQUIRE_FALSE(reach.unknown(test));
}

namespace {
/// What reading `text` for its graph throws, "(read)" when it reads.
std::string graph_error(const std::string& text) {
  try {
    graph_of(text);
  } catch (const InputError& error) {
    return error.what();
  }
  return "(read)";
}
}  // namespace

TEST_CASE(
    "an empty label among a rule's JSON inputs is an error at it, never a node the audit names as \"\"") {
  // `audit --strict` once said "e.g. )" and "//a:t reaches , which the input did not expand".
  REQUIRE(
      graph_error(R"({"type":"RULE","rule":{"name":"//a:t","ruleClass":"sh_test","ruleInput":["//a:x",""]}})"
                  "\n") ==
      "input:1:82: an empty label \"\" in the ruleInput of //a:t: Bazel names every input of a rule "
      "(//pkg:name)");
  REQUIRE(graph_error("{\n  \"type\": \"RULE\",\n  \"rule\": {\n    \"name\": \"//a:t\",\n    \"ruleClass\": "
                      "\"sh_test\",\n    \"ruleInput\": [\"//a:x\",\n      \"\"\n    ]\n  }\n}\n") ==
          "input:7:7: an empty label \"\" in the ruleInput of //a:t: Bazel names every input of a rule "
          "(//pkg:name)");
  REQUIRE_THAT(graph_error(cquery_of({R"({"name": "//a:t", "ruleClass": "sh_test", "configuredRuleInput": )"
                                      R"([{"label": "", "configurationChecksum": "abc"}]})"})),
               Catch::StartsWith("input:1:126: an empty label \"\" in the configuredRuleInput of //a:t: "));
}

TEST_CASE("a rule-input with an empty name or none is an error at it when the graph is read") {
  REQUIRE(graph_error("<query version=\"2\">\n<rule class=\"sh_test\" name=\"//a:t\">\n"
                      "  <rule-input name=\"//a:x\"/>\n  <rule-input name=\"\"/>\n</rule>\n</query>") ==
          "input:4:3: a <rule-input> with an empty name: Bazel names every input of a rule (//pkg:name)");
  REQUIRE_THAT(graph_error("<query version=\"2\">\n<rule class=\"sh_test\" name=\"//a:t\">\n"
                           "  <rule-input/>\n</rule>\n</query>"),
               Catch::StartsWith("input:3:3: a <rule-input> with no name"));
}

TEST_CASE("a rule-input outside any rule is an error for the graph reader too, at its position") {
  REQUIRE(
      graph_error("<query version=\"2\">\n<rule class=\"sh_test\" name=\"//a:t\">\n"
                  "  <rule-input name=\"//a:x\"/>\n</rule>\n<rule-input name=\"//a:stray\"/>\n</query>") ==
      "input:5:1: a <rule-input> outside any <rule>: Bazel writes a rule's inputs and outputs inside it");
  REQUIRE_THAT(graph_error("<query version=\"2\">\n<source-file name=\"//a:x\" location=\"a/BUILD\">\n"
                           "  <rule-input name=\"//a:y\"/>\n</source-file>\n</query>"),
               Catch::StartsWith("input:3:3: a <rule-input> outside any <rule>"));
}

TEST_CASE("a rule's inputs reach the graph in the input's order, across reads and however they are spelt") {
  // Most inputs are taken out before expat reads them; those with an entity, and those the reader
  // cannot place inside the rule (after a tag cut at the end of a read), come through expat.
  // The graph's paths depend on the order (it picks the first of equal paths).
  std::string text = "<query version=\"2\">\n<rule class=\"py_library\" name=\"//a:lib\">\n";
  constexpr int count = 100000;  // about 4 MB: every kind of element straddles the 1 MiB reads
  for (int i = 0; i < count; ++i) {
    if (i % 7 == 3)
      text += fmt::format("  <rule-input name=\"//in&#58;{}\"/>\n", i);
    else
      text += fmt::format("  <rule-input name=\"//in:{}\"/>\n", i);
    if (i % 5 == 0) text += "  <list name=\"deps\"><label value=\"//in:0\"/></list>\n";
  }
  DepGraph graph = graph_of(text + "</rule>\n</query>\n");
  REQUIRE(graph.rule_count() == 1);
  auto inputs = graph.rule_inputs(0);
  REQUIRE(inputs.size() == count);
  for (int i = 0; i < count; ++i) {
    INFO(i);
    REQUIRE(graph.label(inputs[static_cast<std::size_t>(i)]) == fmt::format("//in:{}", i));
  }
}

TEST_CASE("a rule-input nested deeper in its rule is read alike however it is spelt") {
  // Bazel never nests one; read from such input, with or without an entity (which leaves it to
  // expat), it is the enclosing rule's input either way, never dropped by one path only.
  DepGraph graph = graph_of(
      "<query version=\"2\">\n<rule class=\"py_library\" name=\"//a:lib\">\n"
      "  <list name=\"deps\"><rule-input name=\"//in:plain\"/><rule-input name=\"//in&#58;entity\"/></list>\n"
      "</rule>\n</query>\n");
  REQUIRE(graph.rule_count() == 1);
  auto inputs = graph.rule_inputs(0);
  REQUIRE(inputs.size() == 2);
  CHECK(graph.label(inputs[0]) == "//in:plain");
  CHECK(graph.label(inputs[1]) == "//in:entity");
}

// --noproto:flatten_selects prints a select()ed linkopts as its branches (SELECTOR_LIST, as
// AttributeFormatter.writeSelectorListToBuilder writes it), which were dropped without a word, so
// a library linking CUDA only under a condition was GPU-free. Every branch's flags are read, as
// query's default flattened output lists them and as query's deps follow every branch.
TEST_CASE("a select()ed linkopts left unflattened links every branch's libraries") {
  auto library = [](std::string_view name, std::string_view attribute) {
    return fmt::format(
        R"({{"type":"RULE","rule":{{"name":"//c:{}","ruleClass":"cc_library","attribute":[{}]}}}})"
        "\n",
        name, attribute);
  };
  const std::string selected =
      R"({"name":"linkopts","type":"SELECTOR_LIST","explicitlySpecified":true,"selectorList":{"type":"STRING_LIST",)"
      R"("elements":[{"entries":[{"label":"//:cuda","stringListValue":["-lcudart"],"isDefaultValue":false},)"
      R"({"label":"//conditions:default","isDefaultValue":false}],"hasDefaultValue":true,"noMatchError":""}]}})";
  const std::string concatenated =
      R"({"name":"linkopts","type":"SELECTOR_LIST","selectorList":{"type":"STRING_LIST","elements":[)"
      R"({"entries":[{"label":"//conditions:default","stringListValue":["-lm"]}]},)"
      R"({"entries":[{"label":"//conditions:default"},{"label":"//:rocm","stringListValue":["-lamdhip64"]}]}]}})";
  std::string text =
      library("cudart", selected) + library("hip", concatenated) +
      R"({"type":"RULE","rule":{"name":"//c:t","ruleClass":"cc_test","ruleInput":["//c:cudart"]}})"
      "\n"
      R"({"type":"RULE","rule":{"name":"//c:u","ruleClass":"cc_test","ruleInput":["//c:hip"]}})"
      "\n";
  DepGraph graph = graph_of(text);
  GpuReach reach(graph, GpuDepPatterns::defaults());
  REQUIRE(reach.path_text(*graph.find("//c:t")) == "//c:t → //c:cudart");
  REQUIRE(reach.linkopt(*graph.find("//c:cudart")) == "-lcudart");
  REQUIRE(reach.linkopt(*graph.find("//c:hip")) == "-lamdhip64");
  REQUIRE_THROWS_WITH(
      graph_of(library("bad", R"({"name":"linkopts","type":"SELECTOR_LIST","selectorList":{}})")),
      Catch::Contains("attribute linkopts of //c:bad is a select() whose \"selectorList\" has no "
                      "\"elements\" list"));
}

TEST_CASE("Apollo's untagged GPU tests reach GPU code, and its CPU build of LibTorch is none") {
  // ApolloAuto/apollo tags no GPU test (test/data/apollo/): audit finds them by their CUDA kernels,
  // cuda_configure's CUDA and the PyTorch build that --define USE_GPU=true picks.
  DepGraph graph = graph_of(fixture_text("apollo/deps.query.xml"));
  GpuReach reach(graph, GpuDepPatterns::defaults());
  const std::string tensorrt = "//modules/perception/common/inference/tensorrt";
  CHECK(reach.path_text(*graph.find(tensorrt + ":slice_plugin_test")) ==
        tensorrt + ":slice_plugin_test → " + tensorrt +
            ":apollo_perception_common_inference_tensorrt_plugins → " + tensorrt +
            ":plugins/slice_plugin.cu");
  CHECK(reach.reaches(*graph.find(tensorrt + ":rt_common_test")));
  CHECK(reach.reaches(*graph.find("//modules/prediction/evaluator/vehicle:junction_mlp_evaluator_test")));
  CHECK_FALSE(reach.reaches(*graph.find("//modules/prediction/evaluator/vehicle:cost_evaluator_test")));
  // LibTorch is @libtorch_gpu or @libtorch_cpu by the same define: the CPU build, which
  // "@libtorch_*" would take for GPU code, is a built-in gpu_free.
  CHECK(reach.path_text(*graph.find("//third_party/libtorch:libtorch_test")) ==
        "//third_party/libtorch:libtorch_test → //third_party/libtorch:libtorch → "
        "@libtorch_gpu//:libtorch_gpu");
  DepGraph cpu_build = graph_of(fixture_text("apollo/libtorch_cpu.cquery.jsonproto"));
  GpuReach cpu_reach(cpu_build, GpuDepPatterns::defaults());
  auto test = *cpu_build.find("//third_party/libtorch:libtorch_test");
  CHECK_FALSE(cpu_reach.reaches(test));
  CHECK_FALSE(cpu_reach.unknown(test));
}
