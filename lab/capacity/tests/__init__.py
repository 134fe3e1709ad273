"""lab/capacity's unit tests."""
