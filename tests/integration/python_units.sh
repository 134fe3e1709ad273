#!/usr/bin/env bash
# The Python unit tests: every tests/pylib/test_*.py (the tests' helpers,
# report/relayreport, lab/labkit, lab/soak, bench/summary.py and
# kernel/selftests).
# variants: release
# lane: side
# timeout: 120
. "$(dirname "$0")/../lib.sh"
out=$TEST_TMP/unittest.out
# No __pycache__ left in the tree.
export PYTHONDONTWRITEBYTECODE=1
python3 -m unittest discover -s "$top/tests/pylib" -p 'test_*.py' -v >"$out" 2>&1 ||
	{ cat "$out"; fail "the Python unit tests failed"; }
# Found none is no pass (Python 3.11 exits 0 then).
ran=$(sed -n 's/^Ran \([0-9]*\) tests\{0,1\} in .*/\1/p' "$out")
[ "${ran:-0}" -gt 0 ] || { cat "$out"; fail "no Python unit test ran"; }
pass "$ran Python unit tests"
