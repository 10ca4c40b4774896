# Trimmed from openxla/xla's xla/lit.bzl (Apache-2.0; as mirrored in ROCm/xla's main branch,
# commit 183fa00c): lit_device_test makes one test per source file and backend, named
# FILE.test_BACKEND and tagged xla_BACKEND and xla_device_BACKEND beside the tags
# prepare_gpu_backend_data gives that backend. lit_test's runner script, tools, data, env and the
# test_suite per backend are left out: the test is a plain sh_test here.

load("//xla/tests:build_defs.bzl", "prepare_gpu_backend_data")

def lit_device_test(name, srcs, tags = [], backends = [], cfg = None, tags_override = {}, backend_tags = {}, **kwargs):
    backends, disabled_backends, backend_tags = prepare_gpu_backend_data(backends, [], backend_tags, tags)
    for backend in [b for b in backends if b not in disabled_backends]:
        this_backend_tags = ["xla_%s" % backend, "xla_device_%s" % backend] + tags + backend_tags.get(backend, [])
        for test_file in srcs:
            native.sh_test(
                name = "%s.test_%s" % (test_file, backend),
                srcs = ["lit_runner.sh"],
                args = [test_file],
                data = [test_file],
                tags = this_backend_tags + tags_override.get(test_file, []),
                **kwargs
            )
