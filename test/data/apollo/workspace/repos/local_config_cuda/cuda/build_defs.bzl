# cuda_configure's if_cuda, as Apollo's third_party/gpus/cuda/build_defs.bzl.tpl writes it.
def if_cuda(if_true, if_false = []):
    return select({
        "@local_config_cuda//cuda:using_nvcc": if_true,
        "//conditions:default": if_false,
    })
