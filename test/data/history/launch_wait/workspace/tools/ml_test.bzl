"""ACME's test macro: one py_test per backend, NAME_cpu and NAME_gpu, like jax_test / tf cuda_py_test."""

_BACKEND_TAGS = {
    "cpu": ["cpu"],
    "gpu": ["gpu", "requires-gpu-nvidia"],
}

def ml_py_test(name, srcs, backends = ["cpu", "gpu"], gpus = 1, backend_tags = {}, tags = [], env = {}, **kwargs):
    """Makes NAME_<backend> for each backend. On gpu, `gpus` > 1 adds gpus:N for our CI."""
    for backend in backends:
        t = tags + _BACKEND_TAGS[backend] + backend_tags.get(backend, [])
        e = dict(env)
        if backend == "gpu" and gpus > 1:
            t = t + ["gpus:%d" % gpus]
        if backend == "cpu":
            e["CUDA_VISIBLE_DEVICES"] = ""
        native.py_test(
            name = "%s_%s" % (name, backend),
            srcs = srcs,
            main = srcs[0],
            tags = t,
            env = e,
            python_version = "PY3",
            **kwargs
        )
    native.test_suite(
        name = name,
        tests = [":%s_%s" % (name, b) for b in backends],
        tags = tags,
    )
