#!/usr/bin/env bash
# loadgen sweep: one run per step, the capacity (the highest rate up to
# which every step met the SLO), JSON and CSV with a row per step; an SLO
# nothing meets says so.
# timeout: 120
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
check_py "$TEST_TMP/s.json" "(j['capacity'] or {}).get('target_rate') == max([r for r
	in (1000.0, 2000.0, 3000.0) if all(s['meets_slo'] for s in j['steps']
	if s['target_rate'] <= r)], default=None)" \
	"capacity is not the highest step up to which every run met"
check_py "$TEST_TMP/s.json" "all(s['meets_slo'] == (s['result']['rate_ok'] and
	s['result']['lost'] == 0 and
	s['result']['latency_us']['corrected']['p50'] <= 200000 and
	s['result']['latency_us']['corrected']['max'] <= 2000000) for s in j['steps'])" \
	"a step's verdict does not follow its numbers"
check_py "$TEST_TMP/s.json" "j['capacity'] is not None" \
	"1000 pps did not meet a 200 ms p50"
cap=$(jget "$TEST_TMP/s.json" "int(j['capacity']['target_rate'])")
grep -Eq "^capacity: $cap pps" "$TEST_TMP/s.txt" || fail "verdict line"
check_py "$TEST_TMP/s.json" "[s['target_rate'] for s in j['steps'] if s['pass'] == 0] ==
	[1000.0, 2000.0, 3000.0]" "step rates"
check_py "$TEST_TMP/s.json" "j['slo'] == {'p50': 200000, 'max': 2000000}" "slo"
check_py "$TEST_TMP/s.json" "all(s['result']['sent'] == 2 * s['target_rate'] for s
	in j['steps'])" "a step did not send its rate for 2 s"
[ "$(grep -c '^[0-9]' "$TEST_TMP/s.csv")" = "$(jget "$TEST_TMP/s.json" "len(j['steps'])")" ] ||
	fail "csv rows"
head -n 1 "$TEST_TMP/s.csv" | grep -q '^target_rate,quota_pct,achieved_rate,p50_us' \
	|| fail "csv header"

"$LOADGEN" sweep --target "udp://127.0.0.1:$ECHO_PORT" --from 500 --to 1000 \
	--steps 2 --duration 0.5 --slo p50=1us --pause 0 \
	--json "$TEST_TMP/n.json" >"$TEST_TMP/n.txt" || fail "sweep 2 exited $?"
grep -q "^capacity: none: the easiest step (500 pps) did not meet the SLO (.*p50 .* > 1 us)" \
	"$TEST_TMP/n.txt" || fail "impossible SLO verdict"
check_py "$TEST_TMP/n.json" "j['capacity'] is None and j['monotonic']" \
	"capacity should be null, the sweep monotonic"

# a quota sweep: what quota does 2000 pps need (root: cgroups)
if [ "$(id -u)" = 0 ]; then
	"$LOADGEN" sweep --quota --rate 2000 --target "udp://127.0.0.1:$ECHO_PORT" \
		--from 50% --to 100% --steps 2 --duration 1 --slo max=2s \
		--pause 0 --json "$TEST_TMP/q.json" >"$TEST_TMP/q.txt" \
		|| fail "quota sweep exited $?"
	cat "$TEST_TMP/q.txt"
	check_py "$TEST_TMP/q.json" "j['capacity'] is not None" \
		"quota 100% did not meet a 2 s max at 2000 pps"
	check_py "$TEST_TMP/q.json" "j['capacity']['quota_pct'] == min(q for q in (50.0, 100.0)
		if all(s['meets_slo'] for s in j['steps'] if s['quota_pct'] >= q))" \
		"capacity is not the lowest quota down to which every run met"
	q=$(jget "$TEST_TMP/q.json" "'%.1f' % j['capacity']['quota_pct']")
	grep -q "^capacity: quota $q%" "$TEST_TMP/q.txt" || fail "quota verdict line"
	check_py "$TEST_TMP/q.json" "j['mode'] == 'quota' and
		[s['result']['cgroup']['quota_us'] for s in j['steps'] if s['pass'] == 0] ==
		[100000, 50000]" "quota steps (easiest first)"
fi
pass "rate and quota sweeps with SLO verdict, JSON and CSV"
