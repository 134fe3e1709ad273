"""lab/falseneg's unit tests."""
