// What GPU code is: gpu_deps / gpu_free label patterns with `*`, and the built-in set.
#include <fmt/format.h>

#include <algorithm>
#include <string>

#include "gpuplan/graph.hpp"
#include "util/text.hpp"

namespace gpuplan {

namespace {

/// A label or pattern in parts: "@repo//pkg/sub:name" → repo "repo", package "pkg/sub", name "name".
struct Parts {
  std::string_view repo;  ///< without "@"/"@@"; empty for the main repository
  std::string_view package;
  std::string_view name;  ///< empty when the label has no ":" (pattern "//pkg" or "//pkg/...")
  bool has_name = false;
};

std::optional<Parts> split(std::string_view text) {
  Parts parts;
  if (text.starts_with('@')) {
    text.remove_prefix(text.starts_with("@@") ? 2 : 1);
    auto slashes = text.find("//");
    if (slashes == std::string_view::npos) return std::nullopt;
    parts.repo = text.substr(0, slashes);
    text.remove_prefix(slashes);
  }
  if (!util::strip_prefix(text, "//")) return std::nullopt;
  auto colon = text.find(':');
  parts.package = text.substr(0, colon);
  if (colon != std::string_view::npos) {
    parts.name = text.substr(colon + 1);
    parts.has_name = true;
  }
  return parts;
}

/// Whether `text` matches `glob`, where `*` matches any run of characters and, with `digit`
/// (repository names, which cannot hold a "#"), `#` one digit: the built-in spoke patterns'
/// version ("@*_torch_#*", see defaults), which no rules file's pattern may use.
bool glob_matches(std::string_view glob, std::string_view text, bool digit = false) {
  std::size_t g = 0, t = 0, star = std::string_view::npos, resume = 0;
  while (t < text.size()) {
    if (g < glob.size() && glob[g] == '*') {
      star = g++;
      resume = t;
    } else if (g < glob.size() &&
               (glob[g] == text[t] || (digit && glob[g] == '#' && text[t] >= '0' && text[t] <= '9'))) {
      ++g, ++t;
    } else if (star != std::string_view::npos) {
      g = star + 1;
      t = ++resume;
    } else {
      return false;
    }
  }
  while (g < glob.size() && glob[g] == '*') ++g;
  return g == glob.size();
}

/// A repository pattern against a repository name; Bzlmod's canonical names also match by their
/// apparent name: an extension's last part ("rules_python~~pip~pypi_311_torch",
/// "rules_python++pip+pypi_311_torch"), a module's own name ("rules_cuda~", "rules_cuda+").
bool repo_matches(std::string_view glob, std::string_view repo) {
  if (glob.empty() || repo.empty()) return glob == repo;
  if (glob_matches(glob, repo, true)) return true;
  auto apparent = apparent_repo_name(repo);
  return apparent != repo && glob_matches(glob, apparent, true);
}

/// Package segments of `glob` (ending in "..." or not) against a package.
bool package_matches(std::string_view glob, std::string_view package) {
  bool recursive = glob == "..." || glob.ends_with("/...");
  if (recursive) glob.remove_suffix(glob == "..." ? 3 : 4);
  while (!glob.empty()) {
    auto g_end = glob.find('/');
    auto p_end = package.find('/');
    if (package.empty() && !glob.empty()) return false;
    if (!glob_matches(glob.substr(0, g_end), package.substr(0, p_end))) return false;
    glob = g_end == std::string_view::npos ? std::string_view() : glob.substr(g_end + 1);
    package = p_end == std::string_view::npos ? std::string_view() : package.substr(p_end + 1);
  }
  return recursive || package.empty();
}

/// What every pattern problem ends with: the forms a pattern takes.
constexpr std::string_view pattern_forms =
    "a pattern is @repo//pkg/..., //pkg/..., //pkg:name or //pkg:* (:all and :all-targets mean the same), "
    "with * inside a repository name or one segment, as in @cuda_*//...";

/// Repository names are letters, digits, "-", "_" and "." (Bzlmod's canonical names add "~" and
/// "+"); a pattern adds "*".
bool valid_repo(std::string_view repo) {
  return std::all_of(repo.begin(), repo.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           std::string_view("-_.~+*").find(c) != std::string_view::npos;
  });
}

/// The problem with one "/"-separated part of a package or name; empty when there is none.
std::string_view segment_problem(std::string_view segment) {
  if (segment.empty()) return "an empty segment (\"//\" inside, or \"/\" at either end)";
  if (segment == "." || segment == "..") return "a \".\" or \"..\" segment, which Bazel labels never have";
  return {};
}

/// A target name that stands for every target of the package.
bool every_target(std::string_view name) { return name == "*" || name == "all" || name == "all-targets"; }

}  // namespace

std::string gpu_pattern_problem(std::string_view pattern) {
  auto problem = [&](std::string_view what) {
    return fmt::format("\"{}\" {}; {}", pattern, what, pattern_forms);
  };
  auto parts = split(pattern);
  if (!parts) return problem("is not a label pattern");
  if (!valid_repo(parts->repo))
    return problem("has a repository name Bazel cannot have (letters, digits, \"-\", \"_\", \".\" only)");
  if (parts->package.empty() && !parts->has_name) return problem("names no package");
  std::string_view package = parts->package;
  bool recursive = package == "..." || package.ends_with("/...");
  if (recursive) package.remove_suffix(package == "..." ? 3 : 4);
  for (std::size_t begin = 0; !package.empty() && begin <= package.size();) {
    auto end = std::min(package.find('/', begin), package.size());
    auto segment = package.substr(begin, end - begin);
    if (segment.find("...") != std::string_view::npos)
      return problem("has \"...\" inside: it may only end a pattern, as in @repo//pkg/...");
    if (auto what = segment_problem(segment); !what.empty()) return problem(fmt::format("has {}", what));
    begin = end + 1;
  }
  if (!parts->has_name) return {};
  if (parts->name.empty()) return problem("has nothing after \":\"");
  if (recursive && !every_target(parts->name))
    return problem("has a target name after \"...\" (only :all, :* or :all-targets may follow it)");
  std::string_view name = parts->name;
  for (std::size_t begin = 0; begin <= name.size();) {
    auto end = std::min(name.find('/', begin), name.size());
    auto segment = name.substr(begin, end - begin);
    if (segment == "...")
      return problem("has \"...\" in the target name: it belongs to the package, as in //pkg/...");
    if (auto what = segment_problem(segment); !what.empty())
      return problem(fmt::format("has {} in the target name", what));
    begin = end + 1;
  }
  return {};
}

bool gpu_pattern_matches(std::string_view pattern, std::string_view label) {
  auto want = split(pattern);
  auto have = split(label);
  if (!want || !have || !repo_matches(want->repo, have->repo)) return false;
  if (!package_matches(want->package, have->package)) return false;
  if (want->package == "..." || want->package.ends_with("/...")) return true;
  if (!want->has_name) {  // "//pkg" means "//pkg:pkg"
    auto last = want->package.rfind('/');
    auto name = last == std::string_view::npos ? want->package : want->package.substr(last + 1);
    return have->has_name ? glob_matches(name, have->name) : true;
  }
  if (every_target(want->name)) return true;
  return glob_matches(want->name, have->name);
}

namespace {

/// The apparent name of a label's repository ("pypi_311_torch" for
/// "@@rules_python~~pip~pypi_311_torch//:pkg"); empty in the main repository.
std::string_view apparent_repo(std::string_view label) {
  auto parts = split(label);
  return parts ? apparent_repo_name(parts->repo) : std::string_view();
}

}  // namespace

std::string gpu_supplier(std::string_view label, std::string_view pattern) {
  std::string_view repo = apparent_repo(label);
  auto want = split(pattern);
  // A spoke's pattern leaves the hub's name to its leading "*": "@*_torch//:*" on
  // @pypi_311_torch is the hub pypi_311, whose spoke @pypi_311_numpy a test of numpy reaches; a
  // versioned spoke's "*#" is the hub up to its Python version's last digit ("@*#_torch_#*//:*"
  // on @pypi_312_torch_2_5_1_... is pypi_312's).
  if (want && (want->repo.starts_with("*_") || want->repo.starts_with("*#_"))) {
    const auto hub = want->repo.substr(0, want->repo.find('_'));
    const auto spoke = want->repo.substr(hub.size());
    for (std::size_t k = 1; k < repo.size(); ++k)
      if (glob_matches(hub, repo.substr(0, k), true) && glob_matches(spoke, repo.substr(k), true))
        return std::string(repo.substr(0, k));
  }
  return std::string(repo);
}

bool from_supplier(std::string_view supplier, std::string_view label) {
  std::string_view repo = apparent_repo(label);
  return !supplier.empty() && repo.starts_with(supplier) &&
         (repo.size() == supplier.size() || repo[supplier.size()] == '_');
}

GpuDepPatterns GpuDepPatterns::defaults() {
  GpuDepPatterns patterns;
  patterns.gpu_deps = {
      // CUDA toolkits: TF/XLA/JAX's configured CUDA, hermetic CUDA (@cuda_cudart, @cuda_cublas,
      // @cuda_cudnn, @cuda_nccl, ...), NCCL and TensorRT, rules_cuda's toolkit (@cuda since its
      // rename of 2025, @local_cuda before), TF's //third_party/gpus.
      "@local_config_cuda//...",
      "@cuda//...",
      "@cuda_*//...",
      "@local_config_nccl//...",
      "@nccl_archive//...",
      "@local_config_tensorrt//...",
      "@local_cuda//...",
      // What Torch-TensorRT's WORKSPACE names: the local CUDA (@cuda, above), cuDNN, TensorRT and
      // the CUDA build of LibTorch (@libtorch, @libtorch_pre_cxx11_abi).
      "@cudnn//...",
      "@tensorrt//...",
      "@libtorch//...",
      "@libtorch_*//...",
      "//third_party/gpus/...",
      "@*//third_party/gpus/...",
      // NCCL, ROCm, PyTorch's C++ and NVSHMEM as C++ repositories name them (nccl-tests' and
      // IREE's @nccl, a system ROCm as @rocm, LibTorch as @pytorch), rules_cuda's runtime target,
      // and XLA's CUDA stubs (@xla//xla/tsl/cuda:cudart).
      "@nccl//...",
      "@rocm//...",
      "@pytorch//...",
      "@nvidia_nvshmem//...",
      "@rules_cuda//cuda:runtime",
      "@*//xla/tsl/cuda/...",
      "@*//tsl/cuda/...",  // the same stubs before XLA took TSL in (Feb. 2024): @tsl//tsl/cuda:cudart
      // ROCm: rocm_configure's, rules_ml_toolchain's (the ROCm its rocm_library links,
      // @config_rocm_hipcc//rocm:hip_runtime) and JAX's prebuilt ROCm plugin wheels (@rocm_wheels).
      "@local_config_rocm//...",
      "@config_rocm_hipcc//...",
      "@rocm_wheels//...",
      // Intel GPUs: sycl_configure's SYCL (@local_config_sycl//sycl:sycl_headers, which XLA's and
      // JAX's oneAPI backends use) and the Level Zero runtime rules_ml_toolchain's sycl_library adds.
      // Not @oneapi: a local oneAPI install holds MKL's and oneDNN's CPU libraries too.
      "@local_config_sycl//...",
      "@level_zero//...",
      "@zero_loader//...",
      // Python wheels through rules_python, each in the one package a wheel gets: the hub
      // repository (@pypi//torch:pkg, bzlmod pip.parse; never @org_tensorflow//tensorflow/...),
      // a whl_library spoke (@pypi_torch//:pkg, @pip_deps_torch//:pkg, @pypi_311_torch//:pkg)
      // and the old pip_import (below). PyTorch and what it loads on GPUs:
      "@*//torch:*",
      "@*_torch//:*",
      "@*//triton:*",
      "@*_triton//:*",
      "@*//pytorch_triton*:*",  // PyTorch's own index: pytorch-triton, pytorch-triton-rocm
      "@*_pytorch_triton*//:*",
      // NVIDIA's CUDA wheels (nvidia-cublas-cu12, nvidia-cudnn-cu12, ...) that torch, jax[cuda12]
      // and tensorflow[and-cuda] pull in; CuPy and PyCUDA.
      "@*//nvidia_*:*",
      "@*_nvidia_*//:*",
      "@*//cupy*:*",  // cupy-cuda12x, cupy-rocm-5-0, and cupy built from source
      "@*_cupy*//:*",
      "@*//pycuda:*",
      "@*_pycuda//:*",
      // Other wheels whose code runs on GPUs: NVIDIA's CUDA Python, TensorRT, RAPIDS, Numba's CUDA
      // target, NVML's bindings, and frameworks' GPU builds.
      "@*//cuda_python:*",
      "@*_cuda_python//:*",
      "@*//cuda_bindings:*",
      "@*_cuda_bindings//:*",
      "@*//tensorrt*:*",
      "@*_tensorrt*//:*",
      "@*//cudf_cu*:*",
      "@*_cudf_cu*//:*",
      "@*//numba_cuda:*",
      "@*_numba_cuda//:*",
      "@*//pynvml:*",
      "@*_pynvml//:*",
      "@*//onnxruntime_gpu:*",
      "@*_onnxruntime_gpu//:*",
      "@*//paddlepaddle_gpu:*",
      "@*_paddlepaddle_gpu//:*",
      "@*//mxnet_cu*:*",
      "@*_mxnet_cu*//:*",
      // Wheels built for one CUDA major version carry it as a suffix, as NVIDIA's and RAPIDS' do
      // (cuml-cu12, cucim-cu12, rmm-cu12, cuquantum-python-cu12): cuCIM's wheel needs no other
      // GPU wheel, so nothing else in the graph gives it away. A spoke's hub is then the part
      // before its first "_" (@pypi_311_cucim_cu12 is @pypi's).
      "@*//*_cu11:*",
      "@*_*_cu11//:*",
      "@*//*_cu12:*",
      "@*_*_cu12//:*",
      "@*//*_cu13:*",
      "@*_*_cu13//:*",
      // NVIDIA's newer CUDA Python (cuda-core, cuda-cccl, nvmath-python, pynvjitlink-cu12), Warp
      // (warp-lang: its CUDA kernels need no other GPU wheel) and ROCm's (hip-python,
      // onnxruntime-rocm). Not jaxlib: its CPU and older CUDA builds share the name.
      "@*//cuda_core:*",
      "@*_cuda_core//:*",
      "@*//cuda_cccl:*",
      "@*_cuda_cccl//:*",
      "@*//nvmath_python:*",
      "@*_nvmath_python//:*",
      "@*//pynvjitlink*:*",
      "@*_pynvjitlink*//:*",
      "@*//warp_lang:*",
      "@*_warp_lang//:*",
      "@*//hip_python:*",
      "@*_hip_python//:*",
      "@*//onnxruntime_rocm:*",
      "@*_onnxruntime_rocm//:*",
      // JAX: jax and jaxlib run on CPUs; its GPU backends are the plugin wheels
      // (jax-cuda12-plugin, jax-cuda12-pjrt, jax-rocm60-plugin, ...).
      "@*//jax_cuda*:*",
      "@*_jax_cuda*//:*",
      "@*//jax_rocm*:*",
      "@*_jax_rocm*//:*",
      // TensorFlow: the Linux `tensorflow` wheel carries CUDA kernels since 2.1; tensorflow-gpu before.
      "@*//tensorflow:*",
      "@*_tensorflow//:*",
      "@*//tensorflow_gpu:*",
      "@*_tensorflow_gpu//:*",
      "@*//tensorflow_rocm:*",
      "@*_tensorflow_rocm//:*",
      "@*//tf_nightly*:*",  // tf-nightly, like tensorflow, and tf-nightly-gpu before it
      "@*_tf_nightly*//:*",
  };
  // The old pip_import names every wheel so (requirement("torch") is @pip//pypi__torch), and its
  // per-wheel repository carries the version (@pip_deps_pypi__torch_1_4_0): each wheel's hub
  // pattern gets both (before, torch's alone had them). rules_pycross names each wheel
  // NAME@VERSION in its lock repository's _lock package, by its PEP 503 name ("-" where
  // rules_python writes "_"): requirement("torch") is @pypi//:torch, an alias of
  // @pypi//_lock:torch@2.1.0, and one wheel's deps on another are such targets.
  const auto wheels = patterns.gpu_deps.size();
  for (std::size_t i = 0; i < wheels; ++i) {
    const std::string pattern = patterns.gpu_deps[i];  // a copy: push_back moves the strings
    if (!pattern.starts_with("@*//") || !pattern.ends_with(":*")) continue;
    const std::string name = pattern.substr(4, pattern.size() - 6);
    patterns.gpu_deps.push_back(fmt::format("@*//pypi__{}:*", name));
    patterns.gpu_deps.push_back(fmt::format("@*pypi__{}_*//:*", name));
    std::string pep503 = name;
    std::ranges::replace(pep503, '_', '-');
    patterns.gpu_deps.push_back(fmt::format("@*//_lock:{}@*", pep503));
  }
  // rules_python's pip.parse with the wheels' hashes (experimental_index_url, a lock file's
  // --hash) names a spoke by the wheel's file name, not the package alone (whl_repo_name.bzl):
  // HUB_PYVER_NAME_PYTAG_ABITAG_PLATFORM_SHA8, @pypi_312_torch_cp312_cp312_manylinux_2_28_x86_64_
  // 0a1b2c3d, and an sdist's HUB_PYVER_NAME_sdist_SHA8. Each spoke pattern gets these forms,
  // with the tags of the GPU wheels (cp3*, py3); a pattern whose name ends in "*" has them already.
  // The version is not in the name, so torch's +cpu wheel is named as its CUDA wheel is.
  for (std::size_t i = 0; i < wheels; ++i) {
    const std::string pattern = patterns.gpu_deps[i];
    if (!pattern.starts_with("@*_") || !pattern.ends_with("//:*") || pattern.ends_with("*//:*")) continue;
    const std::string repo = pattern.substr(1, pattern.size() - 5);
    for (std::string_view tail : {"_cp3*", "_py3_*", "_sdist_*"})
      patterns.gpu_deps.push_back(fmt::format("@{}{}//:*", repo, tail));
  }
  // Without a hash (a wheel whose hash no lock file gives, which pip.parse names so since April
  // 2025), whl_repo_name puts the version second, lower-cased with
  // "-.+@!:/?=&%,~" as "_": HUB_PYVER_NAME_VERSION_PYTAG_ABITAG_PLATFORM
  // (@pypi_312_torch_2_5_1_cp312_cp312_manylinux_2_28_x86_64), an sdist's HUB_PYVER_NAME_VERSION.
  // A version begins with a digit (PEP 440: N!, N.N...), which the rest of a longer package's
  // name never does: "#" is one digit here, so "_torch_#" is torch 2.5.1's and never
  // torch_geometric's or torch_xla's. The pattern's "*#" is the hub and its Python version, which
  // ends in a digit: a hub named pypi_torch has the spoke pypi_torch_312_numpy_2_1_3_..., whose
  // "_torch_3" "*_torch_#*" took for torch's, each CPU package of the hub a GPU one. A
  // pip-installed spoke of a package with requirements per platform (pypi_repo_name) gets each
  // target platform's OS and architecture instead: @pypi_312_torch_linux_x86_64.
  for (std::size_t i = 0; i < wheels; ++i) {
    const std::string pattern = patterns.gpu_deps[i];
    if (!pattern.starts_with("@*_") || !pattern.ends_with("//:*") || pattern.ends_with("*//:*")) continue;
    const std::string repo = pattern.substr(1, pattern.size() - 5);
    patterns.gpu_deps.push_back(fmt::format("@*#{}_#*//:*", repo.substr(1)));
    for (std::string_view tail : {"_linux_*", "_osx_*", "_windows_*"})
      patterns.gpu_deps.push_back(fmt::format("@{}{}//:*", repo, tail));
  }
  // rules_cuda compiles CUDA with these rules, and reaches its runtime (@cuda//:cuda_runtime)
  // only through the implicit _builtin_deps, which --noimplicit_deps leaves out of the graph.
  patterns.gpu_rule_classes = {"cuda_library", "cuda_objects"};
  // A name that says it is a CPU build, which "@libtorch_*" would take for GPU code: Apollo's
  // LibTorch is @libtorch_cpu beside @libtorch_gpu (third_party/libtorch/workspace.bzl), and
  // --define USE_GPU=true picks one.
  patterns.gpu_free = {"@libtorch_cpu//..."};
  return patterns;
}

std::string_view gpu_file_kind(std::string_view label) {
  // One look at the last character turns most labels away (.py, .h, a rule's name): every node
  // of a graph of millions is asked.
  char last = label.empty() ? ' ' : label.back();
  if (std::string_view("uhcpao0123456789").find(last) == std::string_view::npos) return {};
  std::string_view name = label.substr(label.rfind(':') + 1);
  name = name.substr(name.rfind('/') + 1);
  // nvcc's sources and headers; TensorFlow's .cu.cc and .cu.h, compiled as CUDA (-x cuda).
  for (std::string_view suffix : {".cu", ".cuh", ".cu.cc", ".cu.cpp", ".cu.h"})
    if (name.ends_with(suffix)) return "a CUDA source";
  // hipcc's sources; rules_ml_toolchain's rocm_library names them .hip.cc and .hip.h.
  for (std::string_view suffix : {".hip", ".hip.cc", ".hip.cpp", ".hip.h"})
    if (name.ends_with(suffix)) return "a HIP source";
  // The APIs' own headers: a library that loads CUDA at run time (IREE's HAL drivers dlopen it)
  // shows the graph no library, only the SDK's headers (IREE's @iree_cuda//:headers).
  static constexpr std::string_view cuda_headers[] = {
      "cuda.h",   "cuda_runtime.h", "cuda_runtime_api.h", "cublas_v2.h", "cublasLt.h", "cudnn.h", "cufft.h",
      "curand.h", "cusolverDn.h",   "cusparse.h",         "nvrtc.h",     "nccl.h",     "nvml.h"};
  static constexpr std::string_view rocm_headers[] = {"hip_runtime.h", "hip_runtime_api.h", "rccl.h",
                                                      "rocblas.h", "miopen.h"};
  if (std::ranges::find(cuda_headers, name) != std::end(cuda_headers)) return "a CUDA header";
  if (std::ranges::find(rocm_headers, name) != std::end(rocm_headers)) return "a ROCm header";
  // A runtime library, however its repository is named: lib{NAME}[_static].{a,so[.VERSION]}.
  if (!name.starts_with("lib")) return {};
  name.remove_prefix(3);
  auto dot = name.find('.');
  if (dot == std::string_view::npos) return {};
  std::string_view stem = name.substr(0, dot), kind = name.substr(dot);
  auto version =
      kind.starts_with(".so.") ? kind.substr(4) : std::string_view("x");  // libcuda.so.1, .so.575.51.03
  bool is_version = std::ranges::all_of(version, [](char c) { return (c >= '0' && c <= '9') || c == '.'; });
  if (kind != ".a" && kind != ".so" && !is_version) return {};
  if (stem.ends_with("_static")) stem.remove_suffix(7);
  // auditwheel and libtorch's wheels ship their copies with a hash: libcudart-9335f6a2.so.12.
  if (auto dash = stem.rfind('-'); dash != std::string_view::npos && stem.size() - dash == 9 &&
                                   std::ranges::all_of(stem.substr(dash + 1), [](char c) {
                                     return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
                                   }))
    stem = stem.substr(0, dash);
  static constexpr std::string_view cuda[] = {
      "cuda",         "cudart",      "cublas",         "cublasLt",   "cudnn",    "cufft",
      "cufftw",       "curand",      "cusolver",       "cusolverMg", "cusparse", "cusparseLt",
      "nccl",         "nvrtc",       "nvrtc-builtins", "nvJitLink",  "nvinfer",  "nvidia-ml",
      "nvToolsExt",   "cupti",       "cufile",         "nvjpeg",     "nvblas",   "cudadevrt",
      "culibos",      "nvperf_host", "nvptxcompiler",  "torch_cuda", "c10_cuda", "torch_cuda_cpp",
      "torch_cuda_cu"};  // LibTorch's CUDA parts
  static constexpr std::string_view rocm[] = {"amdhip64",  "rocblas", "MIOpen", "rccl",      "hipblas",
                                              "hipblaslt", "hipfft",  "rocfft", "torch_hip", "c10_hip"};
  if (std::ranges::find(cuda, stem) != std::end(cuda)) return "a CUDA library";
  // cuDNN 8 and 9 split into libcudnn_ops_infer, libcudnn_graph, ...; NPP into libnppc, libnppial, ...
  if (stem.starts_with("cudnn_") || (stem.starts_with("npp") && stem.size() <= 8)) return "a CUDA library";
  if (std::ranges::find(rocm, stem) != std::end(rocm)) return "a ROCm library";
  // Intel GPUs: the Level Zero loader (XLA's @local_config_sycl//sycl:sycl links -lze_loader),
  // DPC++'s SYCL runtime (libsycl.so.8 in torch's XPU wheels) and LibTorch's XPU parts.
  static constexpr std::string_view intel[] = {"ze_loader", "sycl", "torch_xpu", "c10_xpu"};
  if (std::ranges::find(intel, stem) != std::end(intel)) return "an Intel GPU library";
  return {};
}

std::string_view gpu_linkopt_kind(std::string_view flag) {
  if (util::strip_prefix(flag, "-Wl,")) {  // the linker's own flags, comma-separated
    for (std::size_t begin = 0; begin <= flag.size();) {
      auto end = std::min(flag.find(',', begin), flag.size());
      if (auto kind = gpu_linkopt_kind(flag.substr(begin, end - begin)); !kind.empty()) return kind;
      begin = end + 1;
    }
    return {};
  }
  if (flag.starts_with("-l:")) return gpu_file_kind(flag.substr(3));  // -l:libcudart.so.12
  if (flag.starts_with("-l")) {
    // -lcudart: libcudart.so, whichever of .so and .a the linker takes.
    std::string library = "lib" + std::string(flag.substr(2)) + ".so";
    return gpu_file_kind(library);
  }
  return flag.starts_with('-') ? std::string_view() : gpu_file_kind(flag);  // a library's path
}

}  // namespace gpuplan
