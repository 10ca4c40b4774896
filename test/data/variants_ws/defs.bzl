"""Stand-ins for the test macros of JAX and XLA, written for gpuplan's tests.

Each expands one test into a test per backend with the tags the real macro gives it
(learnt from the public sources; no code copied):
- jax_multiplatform_test / jax_multiprocess_test mirror jax-ml/jax jaxlib/jax.bzl: a py_test
  NAME_cpu, NAME_gpu, NAME_tpu; the macro's tags on every one, plus jax_test_BACKEND; the gpu
  one also gets tf_cuda_tests_tags() (requires-gpu-cuda and gpu with CUDA configured);
  jax_multiprocess_test adds multiaccelerator (4 processes x 2 GPUs).
- iree_check_single_backend_test_suite mirrors iree-org/iree build_tools/bazel/iree_check_test.bzl:
  a test per source file, NAME_SRC, with the macro's tags plus driver=DRIVER, and a test_suite NAME.
- xla_test mirrors openxla/xla xla/tests/build_defs.bzl and xla/tests/xla_test_backends.bzl:
  a cc_test NAME_BACKEND tagged xla_BACKEND first; the NVIDIA backends get requires-gpu-nvidia
  (nvgpu_any) or requires-gpu-smXY-only[:N] (one per model), gpu and cuda-only; amdgpu_any gets
  gpu, requires-gpu-amd, rocm-only and, for multi_gpu tests, exclusive-if-local; intelgpu_any
  gets gpu, requires-gpu-intel and oneapi-only.
- cuda_py_test mirrors tensorflow/tensorflow tensorflow/tensorflow.bzl gpu_py_test: a py_test
  NAME_cpu with the macro's tags, NAME_gpu with tf_gpu_tests_tags() (requires-gpu-nvidia, gpu)
  added, and for multi_gpu tests NAME_2gpu with requires-gpu-nvidia:2, notap, manual and no_pip.
- cuda_test mirrors bazel-contrib/rules_cuda cuda/private/macros/cuda_test.bzl: a cc_test NAME
  over a library _NAME (rules_cuda's cuda_library, compiled with nvcc), and no tag.
"""

_SM = {"nvgpu_any": "", "a100": "80", "h100": "90"}

def jax_multiplatform_test(name, srcs, tags = [], backend_tags = {}):
    for backend in ["cpu", "gpu", "tpu"]:
        test_tags = list(tags) + ["jax_test_%s" % backend] + backend_tags.get(backend, [])
        if backend == "gpu":
            test_tags += ["requires-gpu-cuda", "gpu"]
        native.py_test(name = name + "_" + backend, srcs = srcs, main = srcs[0], tags = test_tags)

def jax_multiprocess_test(name, srcs, tags = []):
    jax_multiplatform_test(name = name, srcs = srcs, tags = tags + ["multiaccelerator"])

def xla_test(name, srcs, backends, tags = [], gpus = None):
    for backend in backends:
        test_tags = ["xla_%s" % backend] + tags
        if backend in _SM:
            sm = "requires-gpu-nvidia" if not _SM[backend] else "requires-gpu-sm%s-only" % _SM[backend]
            if gpus:
                sm += ":%d" % gpus
            test_tags += [sm, "gpu", "cuda-only"]
        elif backend == "amdgpu_any":
            test_tags += ["gpu", "requires-gpu-amd", "rocm-only"]
            if "multi_gpu" in test_tags:
                test_tags.append("exclusive-if-local")
        elif backend == "intelgpu_any":
            test_tags += ["gpu", "requires-gpu-intel", "oneapi-only"]
        native.cc_test(name = "%s_%s" % (name, backend), srcs = srcs, tags = test_tags)

def iree_check_single_backend_test_suite(name, srcs, driver, target_backend, tags = []):
    tests = []
    for src in srcs:
        test_name = "%s_%s" % (name, src)
        native.sh_test(
            name = test_name,
            srcs = ["check_module.sh"],
            args = ["--device=%s" % driver, "--module=%s.%s" % (src, target_backend)],
            data = [src],
            tags = tags + ["driver=%s" % driver],
        )
        tests.append(test_name)
    native.test_suite(name = name, tests = tests, tags = tags)

def cuda_py_test(name, srcs, tags = []):
    configs = ["cpu", "gpu"]
    if "multi_gpu" in tags or "multi_and_single_gpu" in tags:
        configs.append("2gpu")
    for config in configs:
        test_tags = list(tags)
        if config == "gpu":
            test_tags += ["requires-gpu-nvidia", "gpu"]
        if config == "2gpu":
            test_tags += ["requires-gpu-nvidia:2", "notap", "manual", "no_pip"]
        native.py_test(name = name + "_" + config, srcs = srcs, main = srcs[0], tags = test_tags)

def cuda_test(name, srcs, **attrs):
    native.cc_library(name = "_" + name, srcs = srcs, testonly = True, alwayslink = True)
    native.cc_test(name = name, deps = ["_" + name], **attrs)
