# Trimmed from openxla/xla's xla/tests/backend_defs.bzl and xla/tests/build_defs.bzl (Apache-2.0;
# as mirrored in ROCm/xla's main branch, commit 183fa00c): the backend lists and the tags
# prepare_*_gpu_backend_data and xla_test give each backend's cc_test, with CUDA configured
# (tf_gpu_tests_tags() is then requires-gpu-cuda, gpu and gpu_test_tags()'s local). Deps, copts,
# env and the fast-compile and test_suite targets are left out; dict union is spelled for Bazel 4.

NVIDIA_GPU_BACKENDS = ["nvgpu_any", "p100", "v100", "a100", "h100", "b200", "gb200", "gb300", "rtx6000pro"]
NVIDIA_GPU_DEFAULT_BACKENDS = ["nvgpu_any", "a100", "h100", "b200", "gb200", "gb300", "rtx6000pro"]
AMD_GPU_DEFAULT_BACKENDS = ["amdgpu_any"]
INTEL_GPU_DEFAULT_BACKENDS = ["intelgpu_any"]
_DEFAULT_BACKENDS = ["cpu"] + NVIDIA_GPU_DEFAULT_BACKENDS + AMD_GPU_DEFAULT_BACKENDS + INTEL_GPU_DEFAULT_BACKENDS

def tf_gpu_tests_tags():
    return ["requires-gpu-cuda", "gpu", "local"]

def _union(*dicts):
    out = {}
    for d in dicts:
        out.update(d)
    return out

def prepare_nvidia_gpu_backend_data(backends, disabled_backends, backend_tags, backend_args, common_tags):
    new_backends = [name for name in backends if name != "gpu"]
    if len(new_backends) < len(backends) and "rocm-only" not in common_tags and "oneapi-only" not in common_tags:
        new_backends.extend(NVIDIA_GPU_DEFAULT_BACKENDS)
    new_disabled_backends = [name for name in disabled_backends if name != "gpu"]
    if len(new_disabled_backends) < len(disabled_backends):
        new_disabled_backends.extend(NVIDIA_GPU_BACKENDS)
    new_backend_tags = {key: value for key, value in backend_tags.items() if key != "gpu"}
    gpu_backend_tags = backend_tags.get("gpu", tf_gpu_tests_tags())
    for key in NVIDIA_GPU_BACKENDS:
        new_backend_tags.setdefault(key, gpu_backend_tags[:])
    sm_requirements = {
        "nvgpu_any": (0, 0),
        "p100": (6, 0),
        "v100": (7, 0),
        "a100": (8, 0),
        "h100": (9, 0),
        "b200": (10, 0),
        "gb200": (10, 0),
        "gb300": (10, 3),
        "rtx6000pro": (12, 0),
    }
    for gpu_backend in NVIDIA_GPU_BACKENDS:
        all_tags = new_backend_tags[gpu_backend]
        requires_gpu = [t for t in all_tags if t.startswith("requires-gpu-")]
        requires_sm, only = None, False
        num_gpus = None
        for tag in requires_gpu:
            if ":" in tag:
                tag, suffix = tag.split(":")
                num_gpus = int(suffix)
            if tag.startswith("requires-gpu-sm"):
                version = tag.split("-")[2][2:]
                sm = (int(version[:-1]), int(version[-1]))
                if not requires_sm or sm < requires_sm:
                    requires_sm = sm
                if tag.endswith("-only"):
                    only = True
        if only:
            disable = requires_sm != sm_requirements[gpu_backend]
        else:
            disable = requires_sm and requires_sm > sm_requirements[gpu_backend]
        if disable:
            new_disabled_backends.append(gpu_backend)
        else:
            sm_major, sm_minor = sm_requirements[gpu_backend]
            sm_tag = "requires-gpu-nvidia" if sm_major == 0 else "requires-gpu-sm%s%s-only" % (sm_major, sm_minor)
            if num_gpus:
                sm_tag += ":%d" % num_gpus
            new_backend_tags[gpu_backend] = [t for t in all_tags if t not in requires_gpu]
            new_backend_tags[gpu_backend].append(sm_tag)
            new_backend_tags[gpu_backend].append("cuda-only")
    return new_backends, new_disabled_backends, new_backend_tags

def prepare_amd_gpu_backend_data(backends, disabled_backends, backend_tags, common_tags):
    new_backends = [name for name in backends if name != "gpu"]
    if len(new_backends) < len(backends) and "cuda-only" not in common_tags and "oneapi-only" not in common_tags:
        new_backends.extend(AMD_GPU_DEFAULT_BACKENDS)
    new_disabled_backends = [name for name in disabled_backends if name != "gpu"]
    if len(new_disabled_backends) < len(disabled_backends):
        new_disabled_backends.extend(AMD_GPU_DEFAULT_BACKENDS)
    new_backend_tags = {
        key: value
        for key, value in backend_tags.items()
        if key not in ["gpu"] + NVIDIA_GPU_BACKENDS
    }
    gpu_backend_tags = [t for t in backend_tags.get("gpu", []) if not t.startswith("requires-")]
    for key in AMD_GPU_DEFAULT_BACKENDS:
        new_backend_tags.setdefault(key, gpu_backend_tags[:])
    for backend in AMD_GPU_DEFAULT_BACKENDS:
        new_backend_tags[backend].append("requires-gpu-amd")
        new_backend_tags[backend].append("rocm-only")
    return new_backends, new_disabled_backends, new_backend_tags

def prepare_intel_gpu_backend_data(backends, disabled_backends, backend_tags, common_tags):
    new_backends = [name for name in backends if name != "gpu"]
    if len(new_backends) < len(backends) and "cuda-only" not in common_tags and "rocm-only" not in common_tags:
        new_backends.extend(INTEL_GPU_DEFAULT_BACKENDS)
    new_disabled_backends = [name for name in disabled_backends if name != "gpu"]
    if len(new_disabled_backends) < len(disabled_backends):
        new_disabled_backends.extend(INTEL_GPU_DEFAULT_BACKENDS)
    new_backend_tags = {
        key: value
        for key, value in backend_tags.items()
        if key not in ["gpu"] + NVIDIA_GPU_BACKENDS + AMD_GPU_DEFAULT_BACKENDS
    }
    gpu_backend_tags = [t for t in backend_tags.get("gpu", []) if not t.startswith("requires-")]
    for key in INTEL_GPU_DEFAULT_BACKENDS:
        new_backend_tags.setdefault(key, gpu_backend_tags[:])
    for backend in INTEL_GPU_DEFAULT_BACKENDS:
        new_backend_tags[backend].append("requires-gpu-intel")
        new_backend_tags[backend].append("oneapi-only")
    return new_backends, new_disabled_backends, new_backend_tags

def prepare_gpu_backend_data(backends, disabled_backends, backend_tags, common_tags):
    nvidia = [b for b in backends if b in ["gpu"] + NVIDIA_GPU_BACKENDS]
    amd = [b for b in backends if b in ["gpu"] + AMD_GPU_DEFAULT_BACKENDS]
    intel = [b for b in backends if b in ["gpu"] + INTEL_GPU_DEFAULT_BACKENDS]
    other = [b for b in backends if b not in ["gpu"] + NVIDIA_GPU_BACKENDS + AMD_GPU_DEFAULT_BACKENDS + INTEL_GPU_DEFAULT_BACKENDS]
    nvidia, nvidia_disabled, nvidia_tags = prepare_nvidia_gpu_backend_data(nvidia, disabled_backends, backend_tags, {}, common_tags)
    amd, amd_disabled, amd_tags = prepare_amd_gpu_backend_data(amd, disabled_backends, backend_tags, common_tags)
    intel, intel_disabled, intel_tags = prepare_intel_gpu_backend_data(intel, disabled_backends, backend_tags, common_tags)
    return (nvidia + amd + intel + other, nvidia_disabled + amd_disabled + intel_disabled,
            _union(nvidia_tags, amd_tags, intel_tags))

def xla_test(name, srcs, deps = [], backends = [], disabled_backends = [], tags = [], backend_tags = {}, **kwargs):
    if not backends:
        backends = _DEFAULT_BACKENDS
    backends, disabled_backends, backend_tags = prepare_gpu_backend_data(backends, disabled_backends, backend_tags, tags)
    for backend in [b for b in backends if b not in disabled_backends]:
        this_backend_tags = ["xla_%s" % backend] + tags + backend_tags.get(backend, [])
        if backend in NVIDIA_GPU_BACKENDS:
            this_backend_tags += tf_gpu_tests_tags()
        if backend in AMD_GPU_DEFAULT_BACKENDS:
            this_backend_tags.append("gpu")
            if "multi_gpu" in this_backend_tags:
                this_backend_tags.append("exclusive-if-local")
        if backend in INTEL_GPU_DEFAULT_BACKENDS:
            this_backend_tags.append("gpu")
        native.cc_test(
            name = "%s_%s" % (name, backend),
            srcs = srcs,
            tags = this_backend_tags,
            deps = deps,
            **kwargs
        )
