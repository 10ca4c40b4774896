"""torch stand-in."""
