# lingvo_cuda_py_test of tensorflow/lingvo's lingvo/lingvo.bzl (commit e0be5dc4, Apache-2.0),
# as written there; the file's other macros are left out.

def lingvo_cuda_py_test(name, tags = [], deps = [], **kwargs):
    native.py_test(
        name = name,
        tags = tags + ["requires-gpu"],
        deps = deps,
        **kwargs
    )
