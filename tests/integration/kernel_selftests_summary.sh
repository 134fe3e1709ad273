#!/usr/bin/env bash
# kernel/selftests/summarize.py on result directories made here: a test
# that failed in the full run and passed alone is flaky (counted passed,
# listed, exit 0); one that failed alone too fails the patched kernel; so
# does a run that reported fewer tests than it planned. The stock kernel's
# failures are reported, never fatal.
# timeout: 30
. "$(dirname "$0")/../lib.sh"

sum=$top/kernel/selftests/summarize.py
out=$TEST_TMP/st
echo '{"package": "linux-source-6.12", "version": "6.12.0-1", "preempt_rt": true}' \
	>"$TEST_TMP/manifest.json"

# tap PLAN LINE...: a kselftest TAP document.
tap() {
	local plan=$1
	shift
	printf 'TAP version 13\n1..%s\n# Starting %s tests from 1 test cases.\n' "$plan" "$plan"
	printf '%s\n' "$@"
}

# guest KERNEL: a finished guest whose full run failed epoll2 of three.
guest() {
	local r=$out/$1/results
	mkdir -p "$r"
	echo ok >"$out/$1/outcome"
	echo 1 >"$r/selftest.rc"
	tap 3 "ok 1 global.epoll1" "#          FAIL  global.epoll2" "not ok 2 global.epoll2" \
		"ok 3 global.epoll3 # SKIP needs more CPUs" >"$r/selftest.tap"
}

summarize() { python3 "$sum" --line 6.12 --manifest "$TEST_TMP/manifest.json" "$out"; }

field() {	# field KERNEL KEY: a value of selftests.json, as JSON
	python3 -c 'import json, sys; print(json.dumps(json.load(open(sys.argv[1]))["kernels"][sys.argv[2]][sys.argv[3]]))' \
		"$out/selftests.json" "$1" "$2"
}

# Flaky: failed in the full run, then passed at its second run alone.
guest stock
guest patched
tap 1 "not ok 1 global.epoll2" >"$out/patched/results/rerun-epoll2-1.tap"
tap 1 "ok 1 global.epoll2" >"$out/patched/results/rerun-epoll2-2.tap"
summarize >"$TEST_TMP/flaky.out" 2>&1 || { cat "$TEST_TMP/flaky.out"; fail "a flaky test failed the run"; }
grep -q 'flaky: global.epoll2 failed in the full run, then passed alone' "$TEST_TMP/flaky.out" ||
	{ cat "$TEST_TMP/flaky.out"; fail "the flaky test is not listed"; }
[ "$(field patched flaky_tests)" = '["global.epoll2"]' ] || fail "flaky_tests: $(field patched flaky_tests)"
[ "$(field patched passed)/$(field patched failed)/$(field patched skipped)" = 2/0/1 ] ||
	fail "patched counts $(field patched passed)/$(field patched failed)/$(field patched skipped)"
# The stock kernel's epoll2 never ran alone: it failed, and that is reported only.
[ "$(field stock failed_tests)" = '["global.epoll2"]' ] || fail "stock failed_tests: $(field stock failed_tests)"
pass "a failure that passes alone is flaky, not fatal"

# Failed alone as well: the patched kernel fails.
tap 1 "not ok 1 global.epoll2" >"$out/patched/results/rerun-epoll2-2.tap"
if summarize >"$TEST_TMP/fail.out" 2>&1; then
	cat "$TEST_TMP/fail.out"
	fail "a test that failed every time passed the run"
fi
grep -q 'FAIL: the patched kernel did not pass the epoll selftests' "$TEST_TMP/fail.out" ||
	{ cat "$TEST_TMP/fail.out"; fail "no FAIL line"; }
[ "$(field patched failed_tests)" = '["global.epoll2"]' ] || fail "failed_tests: $(field patched failed_tests)"
pass "a test that fails every time fails the patched kernel"

# Fewer results than planned (the run died): fails, though nothing failed.
rm "$out/patched/results/"rerun-*
tap 3 "ok 1 global.epoll1" "ok 2 global.epoll2" >"$out/patched/results/selftest.tap"
if summarize >"$TEST_TMP/short.out" 2>&1; then
	cat "$TEST_TMP/short.out"
	fail "an incomplete run passed"
fi
grep -q 'incomplete: 3 tests planned, 2 reported' "$TEST_TMP/short.out" ||
	{ cat "$TEST_TMP/short.out"; fail "the incomplete run is not reported"; }
pass "an incomplete run fails"
