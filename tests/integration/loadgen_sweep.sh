#!/usr/bin/env bash
# loadgen sweep: one run per step, the capacity (the highest rate up to
# which every step met the SLO), JSON and CSV with a row per step; an SLO
# nothing meets says so.
# timeout: 120
# shellcheck disable=SC2016 # the $names in the filters are jq's
. "$(dirname "$0")/../lib.sh"
. "$FIXTURES/loadgen/lib.sh"

start_echo
"$LOADGEN" sweep --target "udp://127.0.0.1:$ECHO_PORT" --from 1000 --to 3000 \
	--steps 3 --duration 2 --slo p50=200ms,max=2s --pause 100 \
	--json "$TEST_TMP/s.json" --csv "$TEST_TMP/s.csv" >"$TEST_TMP/s.txt" \
	|| fail "sweep exited $?"
cat "$TEST_TMP/s.txt"
# the capacity is the highest step up to which every run met the SLO (on a
# loaded machine a step may fall behind its rate; then it must not count)
json_ok "$TEST_TMP/s.json" '.steps as $s | .capacity.target_rate == ([1000, 2000, 3000
	| . as $r | select(all($s[] | select(.target_rate <= $r); .meets_slo))] | max)' \
	"capacity is not the highest step up to which every run met"
json_ok "$TEST_TMP/s.json" 'all(.steps[]; .meets_slo == (.result | .rate_ok and
	.lost == 0 and
	(.latency_us.corrected.p50 | type == "number" and . <= 200000) and
	(.latency_us.corrected.max | type == "number" and . <= 2000000)))' \
	"a step's verdict does not follow its numbers"
json_ok "$TEST_TMP/s.json" '.capacity != null' \
	"1000 pps did not meet a 200 ms p50"
cap=$(jq '.capacity.target_rate | floor' "$TEST_TMP/s.json")
grep -Eq "^capacity: $cap pps" "$TEST_TMP/s.txt" || fail "verdict line"
json_ok "$TEST_TMP/s.json" '[.steps[] | select(.pass == 0) | .target_rate] ==
	[1000, 2000, 3000]' "step rates"
json_ok "$TEST_TMP/s.json" '.slo == {"p50": 200000, "max": 2000000}' "slo"
json_ok "$TEST_TMP/s.json" 'all(.steps[]; .result.sent == 2 * .target_rate)' \
	"a step did not send its rate for 2 s"
[ "$(grep -c '^[0-9]' "$TEST_TMP/s.csv")" = "$(jq '.steps | length' "$TEST_TMP/s.json")" ] ||
	fail "csv rows"
head -n 1 "$TEST_TMP/s.csv" | grep -q '^target_rate,cpu_quota_pct,achieved_rate,p50_us' \
	|| fail "csv header"

"$LOADGEN" sweep --target "udp://127.0.0.1:$ECHO_PORT" --from 500 --to 1000 \
	--steps 2 --duration 0.5 --slo p50=1us --pause 0 \
	--json "$TEST_TMP/n.json" >"$TEST_TMP/n.txt" || fail "sweep 2 exited $?"
grep -q "^capacity: none: the easiest step (500 pps) did not meet the SLO (.*p50 .* > 1 us)" \
	"$TEST_TMP/n.txt" || fail "impossible SLO verdict"
json_ok "$TEST_TMP/n.json" 'has("capacity") and .capacity == null and .monotonic == true' \
	"capacity should be null, the sweep monotonic"

# a quota sweep: what quota does 2000 pps need (root: cgroups)
if [ "$(id -u)" = 0 ]; then
	"$LOADGEN" sweep --quota --rate 2000 --target "udp://127.0.0.1:$ECHO_PORT" \
		--from 50% --to 100% --steps 2 --duration 1 --slo max=2s \
		--pause 0 --json "$TEST_TMP/q.json" >"$TEST_TMP/q.txt" \
		|| fail "quota sweep exited $?"
	cat "$TEST_TMP/q.txt"
	json_ok "$TEST_TMP/q.json" '.capacity != null' \
		"quota 100% did not meet a 2 s max at 2000 pps"
	json_ok "$TEST_TMP/q.json" '.steps as $s | .capacity.cpu_quota_pct == ([50, 100
		| . as $q | select(all($s[] | select(.cpu_quota_pct >= $q); .meets_slo))]
		| select(length > 0) | min)' \
		"capacity is not the lowest quota down to which every run met"
	q=$(printf '%.1f' "$(jq .capacity.cpu_quota_pct "$TEST_TMP/q.json")")
	grep -q "^capacity: quota $q%" "$TEST_TMP/q.txt" || fail "quota verdict line"
	json_ok "$TEST_TMP/q.json" '.mode == "quota" and
		[.steps[] | select(.pass == 0) | .result.cgroup.quota_us] ==
		[100000, 50000]' "quota steps (easiest first)"
fi
pass "rate and quota sweeps with SLO verdict, JSON and CSV"
