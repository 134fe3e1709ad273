#!/usr/bin/env bash
# The Python unit tests: every test_*.py of the package tree, each beside
# what it tests (lab/<experiment>/tests/, lab/labkit/tests/,
# lab/ktrace/tests/, report/tests/; tests/pylib/ for the tests' helpers,
# bench and kernel/selftests), imported as the installed package is
# (mk/py: from the top of the tree).
# variants: release
# lane: side
# timeout: 300
. "$(dirname "$0")/../lib.sh"
out=$TEST_TMP/unittest.out
# No __pycache__ left in the tree.
export PYTHONDONTWRITEBYTECODE=1
"$top/mk/py" unittest discover -s "$top" -t "$top" -p 'test_*.py' -v >"$out" 2>&1 ||
	{ cat "$out"; fail "the Python unit tests failed"; }
# Found none is no pass (Python 3.11 exits 0 then).
ran=$(sed -n 's/^Ran \([0-9]*\) tests\{0,1\} in .*/\1/p' "$out")
[ "${ran:-0}" -gt 0 ] || { cat "$out"; fail "no Python unit test ran"; }
pass "$ran Python unit tests"
