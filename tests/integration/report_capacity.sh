#!/usr/bin/env bash
# report/capacity on a stored make capacity --quick run (the real kernels,
# virtual clock; no VM here): capacity.json carries the interface, the table is the same every time and ends with the
# headline, "none" (not 0) where no step met, the page is whole; broken
# input gets its exit status.
# timeout: 180
# lane: side
# variants: release
. "$(dirname "$0")/../lib.sh"
command -v gnuplot >/dev/null || skip "gnuplot not installed (mk/deps report)"
report=$top/report

cp -r "$FIXTURES/report/capacity" "$TEST_TMP/run"
"$report/capacity" "$TEST_TMP/run" >"$TEST_TMP/t1.txt" || fail "report/capacity exited $?"
cat "$TEST_TMP/t1.txt"
diff -u "$TEST_TMP/run/table.txt" "$TEST_TMP/t1.txt" || fail "table.txt is not what was printed"
tail -n 1 "$TEST_TMP/t1.txt" | grep -q '^headline: at quota 10%, p99.9 <= 2 ms: stock none, patched >= 10500 pps$' ||
	fail "the headline is not last, or not the expected one"
grep -Eq '^10% +30000 pps +none +>= 10500 pps$' "$TEST_TMP/t1.txt" || fail "a cell with no capacity is not 'none'"
# shellcheck disable=SC2016 # the $names are jq's
json_ok "$TEST_TMP/run/capacity.json" '
	.slo == {p99_9: 2000} and (.headline | length > 0)
	and ({stock: {"10": null, "100": 10500}, patched: {"10": 10500, "100": 10500}}) as $want
	| all(.kernels | to_entries[] | select(.key == "stock" or .key == "patched");
		.key as $k | .value.by_quota | length > 0 and all(.[];
			(["cpu_quota_pct", "capacity_pps", "steps"] - keys == [])
			and .capacity_pps == $want[$k][.cpu_quota_pct | tostring]
			and all(.steps[];
				(["p50", "p99", "p99_9", "max"] - (.latency_us | keys) == [])
				and has("lost") and has("throttled_periods")
				and (.hgrm | startswith($k + "/results/")))))' \
	"capacity.json lacks the interface names"
# the same run renders to the same table every time
cp -r "$FIXTURES/report/capacity" "$TEST_TMP/again"
"$report/capacity" "$TEST_TMP/again" >"$TEST_TMP/t2.txt" || fail "second render exited $?"
diff -u "$TEST_TMP/t1.txt" "$TEST_TMP/t2.txt" || fail "the table changed between two renders"
"$report/capacity" --check --no-screenshot "$TEST_TMP/run" || fail "the page is not whole"
for f in heatmap-stock heatmap-patched latency-q10 latency-q100; do
	[ -s "$TEST_TMP/run/plots/$f.svg" ] || fail "no $f.svg"
done
grep -q '>none<' "$TEST_TMP/run/capacity.html" || fail "the page does not say none"

mkdir "$TEST_TMP/empty"
"$report/capacity" "$TEST_TMP/empty" 2>"$TEST_TMP/err"; [ $? -eq 65 ] || fail "an empty directory should exit 65"
grep -q 'run.json: no such file' "$TEST_TMP/err" || fail "the error does not name run.json"
"$report/capacity" 2>/dev/null; [ $? -eq 64 ] || fail "no arguments should exit 64"
rm "$TEST_TMP/run/capacity.html"
"$report/capacity" --check --no-screenshot "$TEST_TMP/run" 2>/dev/null; [ $? -eq 1 ] ||
	fail "--check passed a run without its page"
pass "capacity.json, a stable table with the headline last, the page"
