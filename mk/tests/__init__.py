"""mk's unit tests."""
