#!/usr/bin/env bash
# report/capacity on a stored make capacity run (the real kernels, virtual
# clock, two quotas, two repeats each; no VM here): capacity.json carries
# the interface (every repeat's search's end and what bounded it, every
# rate's runs, the interval over the repeats, the stalls and what held the
# relay, the tightest quota for the planned rate), the table is the same
# every time and ends with the headline, "none" (not 0) where no repeat
# found a capacity, the page is whole; broken input gets its exit status.
# timeout: 180
# lane: side
# variants: release
. "$(dirname "$0")/../../../tests/lib.sh"
command -v gnuplot >/dev/null || skip "gnuplot not installed (mk/deps report)"
report=$top/report

cp -r "$FIXTURES/report/capacity" "$TEST_TMP/run"
"$report/capacity" "$TEST_TMP/run" >"$TEST_TMP/t1.txt" || fail "report/capacity exited $?"
cat "$TEST_TMP/t1.txt"
diff -u "$TEST_TMP/run/table.txt" "$TEST_TMP/t1.txt" || fail "table.txt is not what was printed"
want="headline: at quota 10%, p99.9 <= 2 ms: stock none (2 repeats; lock), patched >= 468 pps (468 over 2 repeats;"
want="$want a ceiling of loadgen's). Co-tenant quota for 117 pps: stock none of 10-25 %, patched 10 % (the tightest tried)"
[ "$(tail -n 1 "$TEST_TMP/t1.txt")" = "$want" ] || fail "the headline is not last, or not the expected one"
grep -Eq '^10% +30000 pps, spin 5 us +none \(2 repeats; lock\) +>= 468 pps' "$TEST_TMP/t1.txt" ||
	fail "a cell with no capacity is not 'none', with what bounded it"
grep -q '^  stock at 10%: r1: none at 117 pps (lock); r2: none at 117 pps (lock)$' "$TEST_TMP/t1.txt" ||
	fail "each repeat's search's end is not in the table"
grep -q '^  stock at 10%: 40 stalls, the longest 231 ms, 40 explained by the trace$' "$TEST_TMP/t1.txt" ||
	fail "the stalls and what held the relay are not in the table"
# shellcheck disable=SC2016 # the $names are jq's
json_ok "$TEST_TMP/run/capacity.json" '
	.slo == {p99_9: 2000} and (.headline | length > 0)
	and .quota_for_rate == {rt_rate_pps: 117, cotenant_rate_pps: 30000, stock: null,
		patched: {cpu_quota_pct: 10, tightest_tried: true}}
	and ({stock: {"10": null, "25": null}, patched: {"10": 468, "25": 468}}) as $want
	| all(.kernels | to_entries[] | select(.key == "stock" or .key == "patched");
		.key as $k | .value.by_quota | length == 2 and all(.[];
			(["cpu_quota_pct", "cotenant_spin_us", "capacity_pps", "capacity", "limit",
			  "searches", "rates", "steps", "stalls"] - keys == [])
			and .capacity_pps == $want[$k][.cpu_quota_pct | tostring]
			and .capacity.repeats == 2 and .capacity.unstable == false
			and (.searches | length == 2 and all(.[]; .limit != null))
			and all(.stalls[]; .explained)
			and ([.rates[].runs] | add) == (.steps | length)
			and all(.steps[];
				(["p50", "p99", "p99_9", "max"] - (.latency_us | keys) == [])
				and (.repeat == 1 or .repeat == 2)
				and has("lost") and has("throttled_periods") and has("trace")
				and (.repeat as $r | .hgrm | startswith($k + "/r" + ($r | tostring) + "/results/")))))' \
	"capacity.json lacks the interface names"
# the same run renders to the same table every time
cp -r "$FIXTURES/report/capacity" "$TEST_TMP/again"
"$report/capacity" "$TEST_TMP/again" >"$TEST_TMP/t2.txt" || fail "second render exited $?"
diff -u "$TEST_TMP/t1.txt" "$TEST_TMP/t2.txt" || fail "the table changed between two renders"
"$report/capacity" --check --no-screenshot "$TEST_TMP/run" || fail "the page is not whole"
for f in capacity heatmap-stock heatmap-patched latency-q10 latency-q25; do
	[ -s "$TEST_TMP/run/plots/$f.svg" ] || fail "no $f.svg"
done
grep -q '>none (2 repeats; lock)<' "$TEST_TMP/run/capacity.html" || fail "the page does not say none, with what bounded it"

mkdir "$TEST_TMP/empty"
"$report/capacity" "$TEST_TMP/empty" 2>"$TEST_TMP/err"; [ $? -eq 65 ] || fail "an empty directory should exit 65"
grep -q 'run.json: no such file' "$TEST_TMP/err" || fail "the error does not name run.json"
"$report/capacity" 2>/dev/null; [ $? -eq 64 ] || fail "no arguments should exit 64"
rm "$TEST_TMP/run/capacity.html"
"$report/capacity" --check --no-screenshot "$TEST_TMP/run" 2>/dev/null; [ $? -eq 1 ] ||
	fail "--check passed a run without its page"
pass "capacity.json, a stable table with the headline last, the page"
