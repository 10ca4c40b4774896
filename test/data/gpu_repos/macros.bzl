# The test macros of the surveyed repositories, cut down to what reaches the test's attributes
# (its name, tags, args, exec_properties, exec_compatible_with), so that query prints their
# generator_function as it does upstream.

# google-ai-edge/mediapipe, mediapipe/framework/mediapipe_cc_test.bzl: in the open-source build one
# cc_test NAME with tags + linux_tags; wasm_tags, platforms and browsers are dropped.
def mediapipe_cc_test(name, srcs = [], tags = [], linux_tags = [], wasm_tags = [], platforms = None, **kwargs):
    native.cc_test(name = name, srcs = srcs, tags = tags + linux_tags, **kwargs)

# tensorflow/probability, tensorflow_probability/python/build_defs.bzl: one py_test per substrate,
# NAME.tf, NAME.numpy, NAME.jax, each with the macro's tags plus "multi_substrate".
def multi_substrate_py_test(name, srcs = [], main = None, tags = [], disabled_substrates = [], args = [], **kwargs):
    tags = tags + ["multi_substrate"]
    if "tf" not in disabled_substrates:
        native.py_test(name = name + ".tf", srcs = srcs, main = main or name + ".py", tags = tags, args = args, **kwargs)
    if "numpy" not in disabled_substrates:
        native.py_test(name = name + ".numpy", srcs = srcs, main = main or name + ".py", tags = tags + ["tfp_numpy"], args = args, **kwargs)
    if "jax" not in disabled_substrates:
        native.py_test(name = name + ".jax", srcs = srcs, main = main or name + ".py", tags = tags + ["tfp_jax"], args = args, **kwargs)

# RobotLocomotion/drake, tools/skylark/drake_cc.bzl and kwargs.bzl: rendering = True adds the tag
# no-sandbox (display = True adds env_inherit DISPLAY, XAUTHORITY, which Bazel 4 lacks).
def drake_cc_googletest(name, rendering = False, display = False, tags = [], **kwargs):
    native.cc_test(name = name, srcs = ["test/%s.cc" % name], size = "small",
                   tags = tags + (["no-sandbox"] if rendering else []), **kwargs)
