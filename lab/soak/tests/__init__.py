"""lab/soak's unit tests."""
