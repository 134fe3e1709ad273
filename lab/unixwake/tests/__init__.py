"""lab/unixwake's unit tests."""
