"""A model built on torch (examples/deps-repos stands in for it)."""
