#include <fmt/format.h>

#include <catch2/catch.hpp>

#include "gpuplan/graph.hpp"

using namespace gpuplan;

namespace {

bool is_gpu_by_default(std::string_view label) {
  for (const auto& pattern : GpuDepPatterns::defaults().gpu_deps)
    if (gpu_pattern_matches(pattern, label)) return true;
  return false;
}

}  // namespace

TEST_CASE("the built-in gpu_deps know how rules_python, hermetic CUDA and TensorFlow name GPU packages") {
  for (auto label :
       {"@pypi//torch:pkg", "@pypi//torch:torch", "@pip_deps_torch//:pkg", "@pypi_311_torch//:pkg",
        "@@rules_python~~pip~pypi_311_torch//:pkg", "@@rules_python++pip+pypi_311_torch//:pkg",
        "@pip//pypi__torch:pkg", "@pypi//jax_cuda12_plugin:pkg", "@pypi//jax_cuda12_pjrt:pkg",
        "@pypi//nvidia_cublas_cu12:pkg", "@pypi//tensorflow:pkg", "@local_config_cuda//cuda:cudart",
        "@cuda_cudart//:cudart", "@cuda_cudnn//:cudnn", "@local_config_rocm//rocm:rocm_headers",
        "//third_party/gpus/cuda:cuda_headers", "@local_tsl//third_party/gpus:x",
        "@local_cuda//:cuda_runtime", "@cuda//:cuda_runtime", "@@rules_cuda++toolchain+cuda//:cuda_runtime",
        "@cudnn//:cudnn", "@tensorrt//:nvinfer", "@libtorch//:libtorch", "@libtorch_pre_cxx11_abi//:caffe2",
        // Missed before: with --classify-by-deps their tests went to CPU runners.
        "@pip_deps_pypi__torch_1_4_0//:pkg", "@pypi//tf_nightly:pkg", "@pypi//tensorflow_rocm:pkg",
        "@pypi//pytorch_triton_rocm:pkg", "@pypi//cupy:pkg", "@pypi_cupy_rocm_5_0//:pkg",
        "@pypi//cuda_python:pkg", "@pypi//cuda_bindings:pkg", "@pypi//onnxruntime_gpu:pkg",
        "@pypi//tensorrt_cu12:pkg", "@pypi//paddlepaddle_gpu:pkg", "@pypi//pynvml:pkg",
        "@pypi//cudf_cu12:pkg", "@pypi//numba_cuda:pkg", "@pypi//mxnet_cu112:pkg", "@nccl//:nccl_shared",
        "@rocm//:rocm_headers", "@pytorch//:torch", "@nvidia_nvshmem//:nvshmem", "@rules_cuda//cuda:runtime",
        "@xla//xla/tsl/cuda:cudart", "@pypi//warp_lang:pkg", "@pypi_warp_lang//:pkg", "@pypi//cuda_core:pkg",
        "@pypi//cuda_cccl:pkg", "@pypi//nvmath_python:pkg", "@pypi//pynvjitlink_cu12:pkg",
        "@pypi//hip_python:pkg", "@pypi//onnxruntime_rocm:pkg",
        // The old pip_import's spelling of every wheel, not only torch's (requirement("X") is @pip//pypi__X).
        "@pip//pypi__jax_cuda12_plugin:pypi__jax_cuda12_plugin", "@pip//pypi__nvidia_cudnn_cu12:pkg",
        "@pip//pypi__tensorflow:pkg", "@pip//pypi__cupy_cuda12x:pkg", "@pip//pypi__triton:pkg",
        "@pip_deps_pypi__tensorflow_2_4_0//:pkg"})
    CHECK(is_gpu_by_default(label));
  for (auto label :
       {"@pypi//jax:pkg", "@pypi//jaxlib:pkg", "@pypi//numpy:pkg", "@pypi_numpy//:pkg", "//ml:torch_utils",
        "//torch:lib", "@org_tensorflow//tensorflow/core:lib", "@pypi//tensorflow_cpu:pkg",
        "@pypi//pytorch_lightning:pkg", "@cudalike//:x", "@my_cudnn_docs//:x", "@pypi//onnxruntime:pkg",
        "@rules_cuda//cuda:defs", "@pypi//numba:pkg", "@pip//pypi__numpy:pkg", "@pip//pypi__jaxlib:pkg",
        "@pypi//warp:pkg", "@pypi//cuda_pathfinder:pkg"})
    CHECK_FALSE(is_gpu_by_default(label));
}

TEST_CASE(
    "the built-in gpu_deps know Intel's SYCL and Level Zero, as XLA, JAX and rules_ml_toolchain name them") {
  // @local_config_sycl//sycl:sycl_headers: jax-ml/jax jaxlib/oneapi/BUILD.bazel; the Level Zero
  // repositories: google-ml-infra/rules_ml_toolchain gpu/sycl/build_defs.bzl.tpl (sycl_library).
  for (auto label :
       {"@local_config_sycl//sycl:sycl_headers", "@level_zero//:headers", "@zero_loader//:libze_loader",
        "@@rules_ml_toolchain++sycl_configure_ext+local_config_sycl//sycl:sycl_headers"})
    CHECK(is_gpu_by_default(label));
  // A local oneAPI install (@oneapi, /opt/intel/oneapi) holds MKL's and oneDNN's CPU libraries too.
  for (auto label : {"@oneapi//:headers", "@oneapi//:libs", "@sycl_docs//:x", "@pypi//level_zero_docs:pkg"})
    CHECK_FALSE(is_gpu_by_default(label));
}

TEST_CASE("the built-in gpu_free knows a CPU build of LibTorch by its name, whichever Bazel names it") {
  // ApolloAuto/apollo's @libtorch_cpu beside @libtorch_gpu (third_party/libtorch/workspace.bzl);
  // under Bzlmod a repository rule's canonical name ends in it.
  auto walled = [](std::string_view label) {
    for (const auto& pattern : GpuDepPatterns::defaults().gpu_free)
      if (gpu_pattern_matches(pattern, label)) return true;
    return false;
  };
  for (auto label : {"@libtorch_cpu//:libtorch_cpu", "@@_main~_repo_rules~libtorch_cpu//:libtorch_cpu",
                     "@@+_repo_rules+libtorch_cpu//:libtorch_cpu"}) {
    CHECK(is_gpu_by_default(label));  // @libtorch_* covers it: the wall is what keeps it out
    CHECK(walled(label));
  }
  for (auto label : {"@libtorch_gpu//:libtorch_gpu", "@libtorch//:libtorch", "@libtorch_cpu_docs//:x"})
    CHECK_FALSE(walled(label));
}

TEST_CASE("the built-in gpu_deps know rules_ml_toolchain's ROCm and JAX's prebuilt ROCm wheels") {
  // rocm_library's runtime (google-ml-infra/rules_ml_toolchain gpu/rocm/build_defs.bzl.tpl) and
  // the wheels jax-ml/jax's jaxlib/jax.bzl gives a GPU test with --//jax:build_jaxlib=false.
  for (auto label : {"@config_rocm_hipcc//rocm:hip_runtime", "@rocm_wheels//:rocm_plugin_py_import",
                     "@rocm_wheels//:plugin.whl"})
    CHECK(is_gpu_by_default(label));
  for (auto label :
       {"@rocm_wheels_docs//:x", "@config_rocm//:x", "@rocm_external_test_deps//:external_deps.bzl"})
    CHECK_FALSE(is_gpu_by_default(label));
}

TEST_CASE("the built-in gpu_deps know wheels built for one CUDA major version by their -cuNN suffix") {
  // RAPIDS' wheels (rapidsai/cucim python/cucim/pyproject.toml: cuCIM needs no other GPU wheel).
  for (auto label :
       {"@pypi//cucim_cu12:pkg", "@pypi//cuml_cu12:pkg", "@pypi//rmm_cu11:pkg", "@pypi//cugraph_cu13:pkg",
        "@pypi//cuquantum_python_cu12:pkg", "@pypi_311_cucim_cu12//:pkg", "@pip_deps_cuml_cu12//:pkg",
        "@@rules_python++pip+pypi_311_rmm_cu12//:pkg", "@pip//pypi__cuml_cu12:pkg",
        "@pip_deps_pypi__cuml_cu12_24_10_0//:pkg"})
    CHECK(is_gpu_by_default(label));
  for (auto label : {"@pypi//cu12:pkg", "@pypi//rapids_dask_dependency:pkg", "@pypi//cucim_cu12_docs:pkg",
                     "@pypi//my_cu120:pkg", "@cu12//:x", "//third_party/cucim_cu12:pkg"})
    CHECK_FALSE(is_gpu_by_default(label));
}

TEST_CASE("the built-in gpu_deps know TSL's CUDA stubs before XLA took TSL in") {
  // jax-ml/jax jaxlib/cuda/BUILD named @tsl//tsl/cuda:cudart until be3e39ad3b (Feb. 2024).
  for (auto label : {"@tsl//tsl/cuda:cudart", "@local_tsl//tsl/cuda:cublas_stub"})
    CHECK(is_gpu_by_default(label));
  for (auto label : {"@tsl//tsl/platform:cuda_root_path", "@tsl//tsl/cudax:x"})
    CHECK_FALSE(is_gpu_by_default(label));
}

TEST_CASE("the built-in gpu_deps know the wheels of a rules_pycross lock repository by their _lock targets") {
  // jvolkman/rules_pycross: @pypi//:torch (requirement("torch"), 2024's layout) and @pypi//torch
  // (2026's) are aliases of @pypi//_lock:torch@2.1.0 (PEP 503 names, with "-"), and one wheel's
  // deps on another are such targets (pycross/private/package_repo.bzl, resolved_lock_renderer).
  for (auto label :
       {"@pypi//_lock:torch@2.1.0", "@pdm_deps//_lock:nvidia-cublas-cu12@12.1.3.1",
        "@ws__pkgs//_lock:jax-cuda12-plugin@0.4.30", "@pypi//_lock:cucim-cu12@24.8.0",
        "@pypi//_lock:cupy-cuda12x@13.0.0", "@@rules_pycross++lock_repos+pypi//_lock:triton@2.1.0"})
    CHECK(is_gpu_by_default(label));
  for (auto label : {"@pypi//_lock:numpy@1.26.4", "@pypi//_lock:tensorflow-cpu@2.15.0",
                     "@pypi//_lock:jaxlib@0.4.30", "@pypi//_lock:torchvision@0.16.0",
                     "@pypi//_lock:_env_python_3.11_x86_64-unknown-linux-gnu", "//_lock:torch@2.1.0"})
    CHECK_FALSE(is_gpu_by_default(label));
}

TEST_CASE("the built-in gpu_deps know rules_python's spokes named by the wheel's file name") {
  // bazelbuild/rules_python python/private/pypi/whl_repo_name.bzl (pip.parse with the wheels'
  // hashes): HUB_PYVER + NAME_PYTAG_ABITAG_PLATFORM_SHA8, an sdist's NAME_sdist_SHA8.
  for (auto label : {"@pypi_312_torch_cp312_cp312_manylinux_2_28_x86_64_0a1b2c3d//:pkg",
                     "@@rules_python++pip+pypi_312_torch_cp312_cp312_manylinux_2_28_x86_64_0a1b2c3d//:pkg",
                     "@pypi_311_triton_cp311_cp311_manylinux_2_17_x86_64_9f8e7d6c//:pkg",
                     "@pypi_312_cucim_cu12_py3_none_manylinux_2_17_x86_64_12345678//:pkg",
                     "@pypi_312_cuml_cu12_cp312_cp312_manylinux_2_28_x86_64_abcdef01//:whl",
                     "@pypi_312_warp_lang_py3_none_manylinux_2_28_x86_64_0badf00d//:pkg",
                     "@pypi_312_pycuda_sdist_0a1b2c3d//:pkg",
                     "@pypi_312_tensorflow_cp312_cp312_manylinux_2_17_x86_64_0a1b2c3d//:pkg",
                     "@pypi_310_cuda_python_cp310_cp310_manylinux_2_17_x86_64_0a1b2c3d//:pkg"})
    CHECK(is_gpu_by_default(label));
  // CPU wheels whose names begin or end like a GPU wheel's: tensorflow-cpu, torchvision,
  // torch-geometric, tritonclient, jaxlib, numpy.
  for (auto label : {"@pypi_312_tensorflow_cpu_cp312_cp312_manylinux_2_17_x86_64_0a1b2c3d//:pkg",
                     "@pypi_312_torchvision_cp312_cp312_manylinux_2_28_x86_64_0a1b2c3d//:pkg",
                     "@pypi_312_torch_geometric_py3_none_any_0a1b2c3d//:pkg",
                     "@pypi_312_tritonclient_py3_none_manylinux1_x86_64_0a1b2c3d//:pkg",
                     "@pypi_312_jaxlib_cp312_cp312_manylinux2014_x86_64_0a1b2c3d//:pkg",
                     "@pypi_312_numpy_cp312_cp312_manylinux_2_17_x86_64_0a1b2c3d//:pkg",
                     "@pypi_312_numba_sdist_0a1b2c3d//:pkg"})
    CHECK_FALSE(is_gpu_by_default(label));
}

TEST_CASE("the built-in gpu_deps know rules_python's spokes named without a hash, by version") {
  // bazel-contrib/rules_python python/private/pypi/whl_repo_name.bzl: with no digest the version
  // goes second, lower-cased with "-.+@!:/?=&%,~" as "_" (HUB_PYVER + NAME_VERSION_PYTAG_ABITAG_
  // PLATFORM, an sdist's NAME_VERSION); pypi_repo_name appends the target platforms instead.
  for (auto label : {"@pypi_312_torch_2_5_1_cp312_cp312_manylinux_2_28_x86_64//:pkg",
                     "@pypi_312_torch_2_5_1_cu124_cp312_cp312_linux_x86_64//:pkg",
                     "@@rules_python++pip+pypi_312_torch_2_5_1_cp312_cp312_manylinux_2_28_x86_64//:pkg",
                     "@pypi_311_jax_cuda12_plugin_0_4_35_cp311_cp311_manylinux2014_x86_64//:pkg",
                     "@pypi_311_jax_cuda12_pjrt_0_4_35_py3_none_manylinux2014_x86_64//:pkg",
                     "@pypi_312_triton_3_1_0_cp312_cp312_manylinux_2_17_x86_64//:pkg",
                     "@pypi_312_tensorflow_2_18_0_cp312_cp312_manylinux_2_17_x86_64//:pkg",
                     "@pypi_312_cuml_cu12_25_2_0_cp312_cp312_manylinux_2_28_x86_64//:whl",
                     "@pypi_312_pycuda_2024_1_2//:pkg", "@pypi_312_torch_linux_x86_64//:pkg",
                     "@pypi_312_tensorflow_osx_aarch64//:pkg"})
    CHECK(is_gpu_by_default(label));
  // CPU packages whose names begin like a GPU package's, in the same forms: the version's digit
  // tells torch 2.5.1 from torch-geometric, torch-xla and tensorflow-cpu.
  for (auto label : {"@pypi_312_torch_geometric_2_6_1_py3_none_any//:pkg",
                     "@pypi_312_torch_xla_2_5_1_cp312_cp312_manylinux_2_28_x86_64//:pkg",
                     "@pypi_312_tensorflow_cpu_2_18_0_cp312_cp312_manylinux_2_17_x86_64//:pkg",
                     "@pypi_312_torchvision_0_20_1_cp312_cp312_linux_x86_64//:pkg",
                     "@pypi_312_tritonclient_2_51_0_py3_none_manylinux1_x86_64//:pkg",
                     "@pypi_312_jaxlib_0_4_35_cp312_cp312_manylinux2014_x86_64//:pkg",
                     "@pypi_312_numpy_2_1_3_cp312_cp312_manylinux_2_17_x86_64//:pkg",
                     "@pypi_312_numpy_linux_x86_64//:pkg", "@pypi_312_torch_audio_linux//:pkg",
                     // a hub named for a GPU package: its CPU spokes' Python version is no torch's
                     "@pypi_torch_312_numpy_2_1_3_cp312_cp312_manylinux_2_17_x86_64//:pkg",
                     "@@rules_python++pip+pip_tensorflow_311_six_1_16_0_py2_py3_none_any//:pkg",
                     "@pypi_torch_312_pyyaml_6_0_2//:pkg"})
    CHECK_FALSE(is_gpu_by_default(label));
  CHECK(is_gpu_by_default("@pypi_torch_312_torch_2_5_1_cp312_cp312_manylinux_2_28_x86_64//:pkg"));
  // A spoke's hub is still the part before the package: pypi_312 supplies torch.
  CHECK(gpu_supplier("@pypi_312_torch_2_5_1_cp312_cp312_manylinux_2_28_x86_64//:pkg", "@*#_torch_#*//:*") ==
        "pypi_312");
  // "#" is no digit in a rules file's pattern: a target name may hold one.
  CHECK(gpu_pattern_matches("//pkg:a#b", "//pkg:a#b"));
  CHECK_FALSE(gpu_pattern_matches("//pkg:a#b", "//pkg:a1b"));
}

TEST_CASE("a pattern is a target pattern with * inside a repository name or a package segment") {
  CHECK(gpu_pattern_matches("@cuda_*//...", "@cuda_nccl//:nccl"));
  CHECK(gpu_pattern_matches("//third_party/gpus/...", "//third_party/gpus:x"));
  CHECK_FALSE(gpu_pattern_matches("//third_party/gpus/...", "//third_party/gpusx:x"));
  CHECK(gpu_pattern_matches("//ml:model", "//ml:model"));
  CHECK(gpu_pattern_matches("@repo//pkg", "@repo//pkg:pkg"));
  CHECK_FALSE(gpu_pattern_matches("@repo//pkg", "@repo//pkg:other"));
  CHECK(gpu_pattern_matches("@*//nvidia_*:*", "@pypi//nvidia_cudnn_cu12:whl"));
  CHECK_FALSE(gpu_pattern_matches("@*//x:*", "//x:y"));  // * names some repository, not the main one
  // A module's own repository by its canonical name (Bazel 7, 8): the module's name, not the
  // empty part after its ~ or +.
  CHECK(gpu_pattern_matches("@rules_cuda//cuda:runtime", "@@rules_cuda~//cuda:runtime"));
  CHECK(gpu_pattern_matches("@xla//xla/stream_executor/cuda/...",
                            "@@xla+//xla/stream_executor/cuda:cuda_driver"));
  CHECK_FALSE(gpu_pattern_matches("@xla//...", "@@rules_xla+//x:y"));
  CHECK(gpu_pattern_problem("//a/...:x").find("only :all, :* or :all-targets may follow") !=
        std::string::npos);
  CHECK_FALSE(gpu_pattern_problem("torch").empty());
  CHECK(gpu_pattern_problem("@pypi//torch:*").empty());
}

TEST_CASE("a pattern that can never match a label is refused, saying what a pattern looks like") {
  for (auto pattern : {"//g:...", "//a:b/...", "@/bad//x", "///a:b", "//a/../b:c", "//a/./b:c", "//a//b:c",
                       "//a/:c", "//a:b//c", "//a/.../b:c", "//a...", "//"}) {
    INFO(pattern);
    auto problem = gpu_pattern_problem(pattern);
    CHECK_THAT(problem, Catch::StartsWith(fmt::format("\"{}\" ", pattern)));
    CHECK_THAT(problem, Catch::EndsWith("as in @cuda_*//..."));
  }
  CHECK_THAT(gpu_pattern_problem("//a/../b:c"), Catch::Contains("\"..\" segment"));
  CHECK_THAT(gpu_pattern_problem("//g:..."), Catch::Contains("belongs to the package"));
}

TEST_CASE("a pattern for every target of a package is written as Bazel writes it") {
  for (auto pattern :
       {"//g:all-targets", "//g:all", "//g:*", "//g/...:all", "//g/...:*", "@r//...:all-targets", "@//g:x",
        "@@rules_python~~pip~pypi_torch//:pkg", "@pypi_*//:*"}) {
    INFO(pattern);
    CHECK(gpu_pattern_problem(pattern).empty());
  }
  CHECK(gpu_pattern_matches("//g:all-targets", "//g:kern.cu"));
  CHECK_FALSE(gpu_pattern_matches("//g:all-targets", "//g/sub:kern"));
  CHECK(gpu_pattern_matches("//g/...:all", "//g/sub:kern"));
}

TEST_CASE("the patterns that match no label of a graph are found, whichever repository they name") {
  DepGraph graph;
  graph.rule("//ml:train_test", "py_test");
  graph.input("//ml:model");
  graph.input("@@rules_python++pip+pypi//torch:pkg");
  graph.rule("//ml:model", "py_library");
  std::vector<std::string> patterns = {"@pypi//torch:pkg",                     // the apparent name
                                       "@@rules_python~~pip~pypi//torch:pkg",  // Bazel 7's spelling
                                       "//ml/...", "//third_party/gpuz/...", "@cuda_*//..."};
  CHECK(unmatched_patterns(graph, patterns) == std::vector<std::string>{"@@rules_python~~pip~pypi//torch:pkg",
                                                                        "//third_party/gpuz/...",
                                                                        "@cuda_*//..."});
  CHECK(unmatched_patterns(graph, {}).empty());
}
