# jax_multiplatform_test and jax_multiprocess_test of jax-ml/jax's jaxlib/jax.bzl (commit
# cec06d11, Apache-2.0), trimmed to what decides each test's name, args and tags: deps, env,
# data, shard counts and visibility are left out, and tf_cuda_tests_tags() is what it returns
# with CUDA configured (requires-gpu-cuda, gpu).

ALL_BACKENDS = ["cpu", "gpu", "tpu"]

def tf_cuda_tests_tags():
    return ["requires-gpu-cuda", "gpu"]

def jax_multiplatform_test(
        name,
        srcs,
        args = [],
        enable_backends = None,
        backend_variant_args = {},
        backend_tags = {},
        enable_configs = [],
        tags = [],
        main = None):
    # enable_configs and disable_configs do not do anything in OSS, only in Google's CI.
    if main == None:
        main = srcs[0]
    for backend in ALL_BACKENDS:
        test_args = list(args) + [
            "--jax_test_dut=" + backend,
            "--jax_platform_name=" + backend,
        ]
        test_args += backend_variant_args.get(backend, [])
        test_tags = list(tags) + ["jax_test_%s" % backend] + backend_tags.get(backend, [])
        if enable_backends != None and backend not in enable_backends and not any([config.startswith(backend) for config in enable_configs]):
            test_tags.append("manual")
        if backend == "gpu":
            test_tags += tf_cuda_tests_tags()
        native.py_test(
            name = name + "_" + backend,
            srcs = srcs,
            args = test_args,
            tags = test_tags,
            main = main,
        )

def jax_multiprocess_test(
        name,
        srcs,
        args = [],
        enable_backends = None,
        backend_variant_args = {},
        backend_tags = {},
        enable_configs = [],
        tags = [],
        main = None):
    multiprocess_backend_args = {
        "cpu": backend_variant_args.get("cpu", []) + [
            "--num_processes=4",
        ],
        "gpu": backend_variant_args.get("gpu", []) + [
            "--num_processes=4",
            "--gpus_per_process=2",
        ],
        "tpu": backend_variant_args.get("tpu", []) + [
            "--num_processes=4",
            "--tpu_chips_per_process=1",
        ],
    }
    tags = tags + ["multiaccelerator"]
    return jax_multiplatform_test(
        name = name,
        srcs = srcs,
        args = args,
        enable_backends = enable_backends,
        backend_variant_args = multiprocess_backend_args,
        backend_tags = backend_tags,
        enable_configs = enable_configs,
        tags = tags,
        main = main,
    )
