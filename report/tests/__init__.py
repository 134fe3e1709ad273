"""report's unit tests."""
