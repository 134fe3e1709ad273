#!/usr/bin/env bash
# One definition per parameter: lab/README.md's names table is the one
# lab/lab names makes from the parameters' tables (demo-scenario's and
# epmodel's --describe, the drivers' Param rows), no two tables disagree
# on a parameter's unit or range, every default lies in its range, the
# flags tables of lab/demo/README.md and lab/model/README.md give their
# program's defaults, and the names given for loadgen and deploy/ are
# theirs. Then the same check on copies made to disagree, which it must
# refuse.
# check: fast
# variants: release
# timeout: 120
. "$(dirname "$0")/../lib.sh"
lab=$top/lab/lab
"$lab" names --check 2>"$TEST_TMP/err" || fail "$(cat "$TEST_TMP/err")"

# The README as it was before a change to a table: said so, exit 1.
readme=$TEST_TMP/README.md
sed 's/^\(| .period_us. | .--period-us\)/\1s/' "$top/lab/README.md" >"$readme"
cmp -s "$readme" "$top/lab/README.md" && fail "the copy of lab/README.md was not changed"
rc=0
"$lab" names --check "$readme" 2>"$TEST_TMP/err" || rc=$?
[ $rc = 1 ] || fail "a stale names table was not found (exit $rc)"
grep -q "README.md's names table is not the one the tables make" "$TEST_TMP/err" ||
	fail "the stale table is not named: $(cat "$TEST_TMP/err")"
pass "the names table is the tables', and no two tables disagree"
