"""A stand-in for rules_cuda's cuda_library and cuda_test (bazel-contrib/rules_cuda,
cuda/private/rules/cuda_library.bzl and cuda/private/macros/cuda_test.bzl), reduced to what
bazel query sees: the rule class, and the runtime as the implicit _builtin_deps."""

def _cuda_library_impl(ctx):
    return [DefaultInfo(files = depset(ctx.files.srcs))]

cuda_library = rule(
    implementation = _cuda_library_impl,
    attrs = {
        "srcs": attr.label_list(allow_files = True),
        "deps": attr.label_list(),
        "_builtin_deps": attr.label_list(default = [Label("//rules_cuda:runtime")]),
    },
)

def cuda_test(name, srcs, tags = [], **kwargs):
    """As rules_cuda's: the sources in a cuda_library "_NAME", and a cc_test that depends on it."""
    cuda_library(name = "_" + name, srcs = srcs, testonly = True)
    native.cc_test(name = name, deps = [":_" + name], tags = tags, **kwargs)
