"""A team's own macro for GPU tests; examples/rules.yaml matches on its name."""

def gpu_test(name, gpus = 1, **kwargs):
    """An sh_test that needs `gpus` GPUs, told through a team-specific tag."""
    native.sh_test(
        name = name,
        srcs = ["//tools:gpu_probe.sh"],
        tags = kwargs.pop("tags", []) + ["team-gpus-%d" % gpus],
        **kwargs
    )
