#!/usr/bin/env bash
# tests/step and tests/run on a tree of stub tests (a copy of the runner,
# no build): a step records its outcome and times and replaces its earlier
# record; tests/run --steps counts the steps among its results (a failed
# one with its log's end, once however many rounds --repeat runs) and adds
# their span to where the time went, and no record at all is a failure;
# --fast runs the unit tests and the tests marked "# check: fast" only; a
# unit test that is not built fails; --needs prints the images the chosen
# VM tests boot, in build order, and refuses an unknown one, which also
# fails a run of the tests; an experiment's shell tests in
# lab/<experiment>/tests/ are scheduled as the others; bad usage exits 64.
# timeout: 300
# lane: side
# variants: release
# check: fast
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"

tree=$TEST_TMP/tree
mkdir -p "$tree/tests/integration" "$tree/tests/unit" "$tree/tests/vm"
cp "$top/tests/run" "$top/tests/step" "$top/tests/runner.sh" "$tree/tests/"
# stub NAME BODY [HEADER...]: an integration test NAME running BODY.
stub() {
	local f=$tree/tests/integration/$1 body=$2; shift 2
	{ echo '#!/bin/sh'; printf '%s\n' "$@"; echo "$body"; } >"$f"
	chmod +x "$f"
}
stub pass.sh 'echo fine' '# variants: release' '# check: fast'
stub skip.sh 'echo "skipped: no such thing here"; exit 77' '# variants: release'
stub fail.sh 'echo "it broke here"; exit 3' '# variants: release'
touch "$tree/tests/unit/test_stub.c"

# expect_line FILE TEXT: FILE has a line with TEXT (a fixed string).
expect_line() { grep -qF -- "$2" "$1" || { cat "$1" >&2; fail "no '$2' in ${1##*/}"; }; }
# go NAME COMMAND...: COMMAND's status in $rc, its output in NAME.out
# and NAME.err.
go() {
	local name=$1; shift
	rc=0
	"$@" >"$TEST_TMP/$name.out" 2>"$TEST_TMP/$name.err" || rc=$?
}

# Steps: a pass, a failure (its log's end printed), a pass recorded again.
go ok "$tree/tests/step" build/ok true
[ "$rc" = 0 ] || fail "tests/step build/ok true: exit $rc"
go bad "$tree/tests/step" build/bad sh -c 'echo "no compiler today"; exit 3'
[ "$rc" = 3 ] || fail "tests/step build/bad: exit $rc, expected the command's 3"
expect_line "$TEST_TMP/bad.out" "FAIL  build/bad"
expect_line "$TEST_TMP/bad.out" "| no compiler today"
go ok2 "$tree/tests/step" build/ok sleep 0.2
steps=$tree/build/steps/steps.tsv
[ "$(grep -c '^build/ok	' "$steps")" = 1 ] || fail "build/ok recorded $(grep -c '^build/ok	' "$steps") times"
awk -F'\t' 'NF != 7 || $2 !~ /^[0-9]+$/ || $5 > $6 { bad = 1 } END { exit bad }' "$steps" ||
	fail "steps.tsv is not NAME STATUS WALL CPU START END LOG: $(cat "$steps")"
awk -F'\t' '$1 == "build/ok" && $3 >= 0.2 { ok = 1 } END { exit !ok }' "$steps" ||
	fail "build/ok's second record is not the one that slept 0.2 s: $(cat "$steps")"
go badname "$tree/tests/step" 'no good' true
[ "$rc" = 64 ] || fail "tests/step 'no good': exit $rc, expected 64"
pass "tests/step: records, replaces, returns the command's status"

# tests/run --steps: the steps count, the tests run, the summary adds up.
go run "$tree/tests/run" --steps "$steps" integration/
[ "$rc" = 1 ] || fail "tests/run with a failed step and test: exit $rc"
for want in "PASS  build/ok" "FAIL  build/bad" "| no compiler today" "PASS  integration/pass.sh[release]" \
	"SKIP  integration/skip.sh[release]" "FAIL  integration/fail.sh[release]" "| it broke here" \
	"s of steps before the tests, then " "2 passed, 2 failed, 1 skipped"; do
	expect_line "$TEST_TMP/run.out" "$want"
done
[ "$(tail -n 1 "$TEST_TMP/run.out")" = "2 passed, 2 failed, 1 skipped" ] || fail "the last line is not the count"
expect_line "$tree/build/test-logs/times.tsv" "build/bad"
pass "tests/run --steps: $(tail -n 1 "$TEST_TMP/run.out")"

go repeat "$tree/tests/run" --steps "$steps" --repeat 2 pass
expect_line "$TEST_TMP/repeat.out" "3 passed, 1 failed, 0 skipped"
expect_line "$TEST_TMP/repeat.out" "1 tests, 0 failed at least once"
pass "--repeat 2: the steps counted once, and not in the table of tests"

go nosteps "$tree/tests/run" --steps "$TEST_TMP/nothing.tsv" pass
[ "$rc" = 1 ] || fail "tests/run --steps with no record: exit $rc"
expect_line "$TEST_TMP/nosteps.out" "no step recorded in $TEST_TMP/nothing.tsv"
expect_line "$TEST_TMP/nosteps.out" "1 passed, 1 failed, 0 skipped"
pass "--steps with nothing recorded fails"

# --fast: unit tests (the stub's program is not built: it fails) and the
# marked test only.
go fast "$tree/tests/run" --fast
expect_line "$TEST_TMP/fast.out" "PASS  integration/pass.sh[release]"
expect_line "$TEST_TMP/fast.out" "FAIL  unit/test_stub[release]"
expect_line "$TEST_TMP/fast.out" "build/release/tests/test_stub is not built"
expect_line "$TEST_TMP/fast.out" "1 passed, 2 failed, 0 skipped"
! grep -q 'fail\.sh\|skip\.sh' "$TEST_TMP/fast.out" || fail "--fast ran an unmarked test"
pass "--fast: the unit tests and the marked test; a unit test not built fails"

# --needs: what the chosen VM tests boot, in build order.
printf '#!/bin/sh\n# needs: %s\n' "fleetimg kernel-debs" >"$tree/tests/vm/fleet.sh"
printf '#!/bin/sh\n# needs: %s\n' "hostimg" >"$tree/tests/vm/host.sh"
printf '#!/bin/sh\n# needs: %s\n' "kernels" >"$tree/tests/vm/kern.sh"
chmod +x "$tree"/tests/vm/*.sh
go needs "$tree/tests/run" --needs
if [ "$rc" != 0 ] || [ "$(paste -sd' ' "$TEST_TMP/needs.out")" != "kernels kernel-debs hostimg fleetimg" ]; then
	fail "--needs: exit $rc, '$(paste -sd' ' "$TEST_TMP/needs.out")'"
fi
go needs-host "$tree/tests/run" --needs vm/host
[ "$(paste -sd' ' "$TEST_TMP/needs-host.out")" = "kernel-debs hostimg" ] ||
	fail "--needs vm/host: '$(paste -sd' ' "$TEST_TMP/needs-host.out")'"
go needs-none "$tree/tests/run" --needs integration/
if [ "$rc" != 0 ] || [ -s "$TEST_TMP/needs-none.out" ]; then
	fail "--needs integration/: exit $rc, '$(cat "$TEST_TMP/needs-none.out")'"
fi
# An experiment's own tests, lab/<experiment>/tests/*.sh: named
# <experiment>/<file>, an integration test in both variants (and in
# --fast when marked), one that names images a VM test, run once.
mkdir -p "$tree/lab/exp/tests"
printf '#!/bin/sh\n# check: fast\necho both\n' >"$tree/lab/exp/tests/both.sh"
printf '#!/bin/sh\n# needs: kernels\necho boots\n' >"$tree/lab/exp/tests/boots.sh"
printf 'import unittest\n' >"$tree/lab/exp/tests/test_exp.py"
chmod +x "$tree"/lab/exp/tests/*.sh
go lab "$tree/tests/run" exp/
for want in "PASS  exp/both.sh[release]" "PASS  exp/both.sh[asan]" "== vm" "PASS  exp/boots.sh" \
	"3 passed, 0 failed, 0 skipped"; do
	expect_line "$TEST_TMP/lab.out" "$want"
done
go lab-fast "$tree/tests/run" --fast exp/
expect_line "$TEST_TMP/lab-fast.out" "2 passed, 0 failed, 0 skipped"
! grep -q 'exp/boots' "$TEST_TMP/lab-fast.out" || fail "--fast ran an experiment's VM test"
go lab-needs "$tree/tests/run" --needs exp/
[ "$(paste -sd' ' "$TEST_TMP/lab-needs.out")" = kernels ] ||
	fail "--needs exp/: '$(paste -sd' ' "$TEST_TMP/lab-needs.out")'"
rm -r "$tree/lab"
pass "an experiment's tests: integration in both variants, VM once, their images needed"

printf '#!/bin/sh\n# needs: %s\n' "kernels floppy" >"$tree/tests/vm/odd.sh"
chmod +x "$tree/tests/vm/odd.sh"
go needs-odd "$tree/tests/run" --needs
[ "$rc" = 65 ] || fail "--needs with an unknown image: exit $rc, expected 65"
expect_line "$TEST_TMP/needs-odd.err" "tests/vm/odd.sh: '# needs: floppy': no such image"
go run-odd "$tree/tests/run" vm/odd
expect_line "$TEST_TMP/run-odd.out" "FAIL  vm/# needs:"
expect_line "$TEST_TMP/run-odd.out" "| tests/run: tests/vm/odd.sh: '# needs: floppy': no such image"
expect_line "$TEST_TMP/run-odd.out" "1 passed, 1 failed, 0 skipped"
pass "--needs: build order, hostimg brings kernel-debs, an unknown image is refused"

go badopt "$tree/tests/run" --fats
[ "$rc" = 64 ] || fail "--fats: exit $rc, expected 64"
expect_line "$TEST_TMP/badopt.err" "unknown option '--fats'"
go badrepeat "$tree/tests/run" --repeat 0
[ "$rc" = 64 ] || fail "--repeat 0: exit $rc"
pass "bad usage exits 64"
