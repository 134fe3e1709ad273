"""lab/labkit's unit tests."""
