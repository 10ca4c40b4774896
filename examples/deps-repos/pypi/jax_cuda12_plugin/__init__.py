"""jax-cuda12-plugin stand-in."""
