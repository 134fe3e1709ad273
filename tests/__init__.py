"""tests: the tests' Python helpers and unit tests (pylib)."""
