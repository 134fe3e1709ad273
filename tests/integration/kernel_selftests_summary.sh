#!/usr/bin/env bash
# kernel/selftests/summarize.py on result directories made here: a test
# that failed in the full run and passed alone is flaky (counted passed,
# listed, exit 0); one that failed alone too fails the patched kernel; so
# does a run that reported fewer tests than it planned. The stock kernel's
# failures are reported, never fatal.
# timeout: 120
# check: fast
# lane: side
# variants: release
. "$(dirname "$0")/../lib.sh"

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

summarize() { "$top/mk/py" kernel.selftests.summarize --line 6.12 --manifest "$TEST_TMP/manifest.json" "$out"; }

field() {	# field KERNEL KEY: a value of selftests.json, as JSON
	jq -c --arg k "$1" --arg f "$2" '.kernels[$k][$f]' "$out/selftests.json"
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

# The cost side: every figure gets an interval from the rounds of all boots
# of a kernel (cost-<i>-<kernel>); one whose interval holds 1.0 is
# inconclusive. perf bench: patched clearly slower; epoll-stress at one
# producer: the same spread on both kernels.
# cost_boot I KERNEL WAIT-OPS... : a cost boot's perf bench rounds, and
# epoll-stress rounds at 1 producer that alternate 400 and 600 on either kernel.
cost_boot() {
	local d=$out/cost-$1-$2 i=0 v
	shift 2
	mkdir -p "$d/results"
	echo ok >"$d/outcome"
	echo '{"clock": "host"}' >"$d/boot.json"
	echo "1.0 1.0" >"$d/host-loadavg"
	for v in "$@"; do
		i=$((i + 1))
		printf '# Running epoll wait\n[thread  0] ...\nAveraged %d operations/sec (+- 1.50%%), total secs = 5\n' \
			"$v" >"$d/results/perf-epoll-wait-$i.txt"
		printf '{"threads": 1, "events_per_ms": %d}\n' $((400 + i % 2 * 200)) >>"$d/results/epoll-stress.jsonl"
	done
}
cost_boot 1 stock 5000 5100
cost_boot 2 patched 3900 3950
cost_boot 3 patched 4000 3920
cost_boot 4 stock 5050 4950
summarize >"$TEST_TMP/cost.out" 2>&1 || true
cat "$TEST_TMP/cost.out"
# shellcheck disable=SC2016 # the $names are jq's
json_ok "$out/cost.json" '
	(.kernels.stock.perf_bench_epoll_wait.runs | length) == 4
	and [.kernels.stock.boots[].dir] == ["cost-1-stock", "cost-4-stock"]
	and (.comparison | map({(.name): .}) | add) as $by
	| ($by["perf bench epoll wait -t 4"]
		| .verdict == "patched slower" and .high < 1.0 and .samples == [4, 4]
		and (.ratio - 3935 / 5025 | fabs) < 1e-9)
	and ($by["epoll-stress 1 producers"]
		| .verdict == "inconclusive" and .low <= 1.0 and 1.0 <= .high)' \
	"cost.json's intervals are wrong"
"$top/mk/py" report.formats check "$out/cost.json" "$out/selftests.json" >/dev/null ||
	fail "cost.json or selftests.json does not fit its reader (docs/formats.md)"
grep -Eq '^perf bench epoll wait -t 4 ops/s +5025 +3935 +0\.78 .*patched slower' "$TEST_TMP/cost.out" ||
	fail "the cost table lacks the perf bench row"
grep -q 'inconclusive' "$TEST_TMP/cost.out" || fail "the cost table does not say inconclusive"
pass "each cost figure has an interval; one that holds 1.0 is inconclusive"

# A round of epoll-stress that is not JSON (cut short) is left out; one
# that does not fit its record is refused, naming the file, its line and
# the field, and nothing is written.
echo '{"threads": 1, "events_per' >>"$out/cost-1-stock/results/epoll-stress.jsonl"
rm "$out/cost.json"
summarize >"$TEST_TMP/cut.out" 2>&1 || true
json_ok "$out/cost.json" '(.kernels.stock.epoll_stress.runs | length) == 4' "a round cut short was not left out"
echo '{"threads": "one", "events_per_ms": 5}' >>"$out/cost-4-stock/results/epoll-stress.jsonl"
rm "$out/cost.json"
rc=0
summarize >"$TEST_TMP/bad.out" 2>&1 || rc=$?
[ "$rc" = 65 ] || { cat "$TEST_TMP/bad.out"; fail "a round that does not fit: exit $rc, expected 65"; }
grep -q "cost-4-stock/results/epoll-stress.jsonl:3: threads: expected a whole number" "$TEST_TMP/bad.out" ||
	{ cat "$TEST_TMP/bad.out"; fail "the refusal does not name the line and the field"; }
[ ! -e "$out/cost.json" ] || fail "cost.json written from a round that does not fit"
pass "a round cut short is left out, one that does not fit refused by name (65)"
