"""pylib: the Python helpers of the shell tests (tests/lib.sh: pylib MODULE) and the Python unit tests."""
