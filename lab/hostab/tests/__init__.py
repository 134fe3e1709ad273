"""lab/hostab's unit tests."""
