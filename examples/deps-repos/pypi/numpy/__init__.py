"""numpy stand-in."""
