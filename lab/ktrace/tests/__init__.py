"""lab/ktrace's unit tests."""
