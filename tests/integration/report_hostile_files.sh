#!/usr/bin/env bash
# Type-confused result files: every case of tests/fixtures/hostile/reports
# (summary.json, scenario.json, chains.json, cell.json and spec.json of
# recorded runs, each with one value of the wrong type, out of range, of
# 4300 digits, deleted, or the whole file replaced) run through the
# command that reads it (report/render, report/summarize,
# report/capacity) ends with 0, or with 65 and one line naming the file
# and the field: never a traceback (tests/pylib/hostile_reports.py). The
# corpus is the one the module writes. Then two of them as the commands
# themselves, to see their exit status and words from outside.
# check: fast
# variants: release
# timeout: 400
. "$(dirname "$0")/../lib.sh"
command -v gnuplot >/dev/null || skip "gnuplot not installed (mk/deps report)"
corpus=$FIXTURES/hostile/reports
"$top/mk/py" tests.pylib.hostile_reports write "$TEST_TMP/corpus" || fail "the corpus could not be written"
cmp -s "$TEST_TMP/corpus/expect.tsv" "$corpus/expect.tsv" ||
	fail "tests/fixtures/hostile/reports is not what hostile_reports.py writes (mk/py tests.pylib.hostile_reports write $corpus)"
"$top/mk/py" tests.pylib.hostile_reports replay "$corpus" >"$TEST_TMP/replay" 2>&1 ||
	fail "$(cat "$TEST_TMP/replay")"

# refused COMMAND DIR WORDS: COMMAND DIR exits 65 with one line holding WORDS.
refused() {
	local status=0
	"$1" "$2" >/dev/null 2>"$TEST_TMP/err" || status=$?
	[ $status = 65 ] || fail "$1 exited $status, not 65: $(cat "$TEST_TMP/err")"
	grep -q Traceback "$TEST_TMP/err" && fail "$1: a traceback: $(cat "$TEST_TMP/err")"
	[ "$(wc -l <"$TEST_TMP/err")" = 1 ] || fail "$1: not one line: $(cat "$TEST_TMP/err")"
	grep -qF "$3" "$TEST_TMP/err" || fail "$1: the error does not say '$3': $(cat "$TEST_TMP/err")"
}
dir=$TEST_TMP/demo
cp -r "$FIXTURES/report/demo-virtual" "$dir"
jq '.rule.text = 1e300' "$FIXTURES/report/expected/demo-virtual/summary.json" >"$dir/summary.json"
refused "$top/report/render" "$dir" "$dir/summary.json: rule.text: expected text, got 1e+300"
dir=$TEST_TMP/capacity
cp -r "$FIXTURES/report/capacity" "$dir"
cell=$dir/stock/r1/results/grid/q10-c30000/cell.json
printf '{"cpu_quota_pct": %s, "cotenant_rate_pps": 30000, "cotenant_spin_us": 5}\n' \
	"$(printf '9%.0s' $(seq 4301))" >"$cell"
refused "$top/report/capacity" "$dir" "$cell: cpu_quota_pct: expected a whole number, got a number of 4301 digits"
pass "$(tail -1 "$TEST_TMP/replay")"
