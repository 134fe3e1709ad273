#!/usr/bin/env bash
# The Python modules' unit tests (tests/py/test_*.py), with unittest.
# timeout: 120
# lane: side
# variants: release
. "$(dirname "$0")/../lib.sh"
cd "$top" || fail "no source tree"
python3 -m unittest discover -s tests/py -t tests/py 2>&1 || fail "the Python unit tests failed"
pass "Python unit tests"
