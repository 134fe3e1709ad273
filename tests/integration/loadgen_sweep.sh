#!/usr/bin/env bash
# loadgen sweep: one run per step, the highest rate meeting the SLO, JSON
# and CSV with a row per step; an SLO nothing meets says so.
# timeout: 120
. "$(dirname "$0")/../lib.sh"
. "$FIXTURES/loadgen/lib.sh"

start_echo
"$LOADGEN" sweep --target "udp://127.0.0.1:$ECHO_PORT" --from 1000 --to 3000 \
	--steps 3 --duration 2 --slo p50=200ms,max=2s --pause 100 \
	--json "$TEST_TMP/s.json" --csv "$TEST_TMP/s.csv" >"$TEST_TMP/s.txt" \
	|| fail "sweep exited $?"
cat "$TEST_TMP/s.txt"
# the verdict is the highest step that met the SLO (on a loaded machine a
# step may fall behind its rate; then it must not count)
check_py "$TEST_TMP/s.json" "(j['best'] or {}).get('target_rate') == max([s['target_rate']
	for s in j['steps'] if s['meets_slo']], default=None)" \
	"best is not the highest passing step"
check_py "$TEST_TMP/s.json" "all(s['meets_slo'] == (s['result']['rate_ok'] and
	s['result']['lost'] * 1000 <= s['result']['sent'] and
	s['result']['latency_us']['corrected']['p50'] <= 200000 and
	s['result']['latency_us']['corrected']['max'] <= 2000000) for s in j['steps'])" \
	"a step's verdict does not follow its numbers"
check_py "$TEST_TMP/s.json" "sum(s['meets_slo'] for s in j['steps']) >= 1" \
	"no step at 1000-3000 pps met a 200 ms p50"
best=$(jget "$TEST_TMP/s.json" "int(j['best']['target_rate'])")
grep -q "highest rate meeting the SLO: $best pps" "$TEST_TMP/s.txt" || fail "verdict line"
check_py "$TEST_TMP/s.json" "[s['target_rate'] for s in j['steps']] ==
	[1000.0, 2000.0, 3000.0]" "step rates"
check_py "$TEST_TMP/s.json" "j['slo'] == {'p50': 200000, 'max': 2000000}" "slo"
check_py "$TEST_TMP/s.json" "all(s['result']['sent'] == 2 * s['target_rate'] for s
	in j['steps'])" "a step did not send its rate for 2 s"
[ "$(grep -c '^[0-9]' "$TEST_TMP/s.csv")" = 3 ] || fail "csv rows"
head -n 1 "$TEST_TMP/s.csv" | grep -q '^target_rate,quota_pct,achieved_rate,p50_us' \
	|| fail "csv header"

"$LOADGEN" sweep --target "udp://127.0.0.1:$ECHO_PORT" --from 500 --to 1000 \
	--steps 2 --duration 0.5 --slo p50=1us --pause 0 \
	--json "$TEST_TMP/n.json" >"$TEST_TMP/n.txt" || fail "sweep 2 exited $?"
grep -q "no step met the SLO" "$TEST_TMP/n.txt" || fail "impossible SLO verdict"
check_py "$TEST_TMP/n.json" "j['best'] is None" "best should be null"

# a quota sweep: what quota does 2000 pps need (root: cgroups)
if [ "$(id -u)" = 0 ]; then
	"$LOADGEN" sweep --quota --rate 2000 --target "udp://127.0.0.1:$ECHO_PORT" \
		--from 50% --to 100% --steps 2 --duration 1 --slo max=2s \
		--pause 0 --json "$TEST_TMP/q.json" >"$TEST_TMP/q.txt" \
		|| fail "quota sweep exited $?"
	cat "$TEST_TMP/q.txt"
	check_py "$TEST_TMP/q.json" "sum(s['meets_slo'] for s in j['steps']) >= 1" \
		"no quota step met a 2 s max at 2000 pps"
	check_py "$TEST_TMP/q.json" "j['best']['quota_pct'] == min(s['quota_pct']
		for s in j['steps'] if s['meets_slo'])" "best is not the lowest passing quota"
	q=$(jget "$TEST_TMP/q.json" "'%.1f' % j['best']['quota_pct']")
	grep -q "lowest quota meeting the SLO at 2000 pps: $q%" "$TEST_TMP/q.txt" \
		|| fail "quota verdict line"
	check_py "$TEST_TMP/q.json" "j['mode'] == 'quota' and
		[s['result']['cgroup']['quota_us'] for s in j['steps']] ==
		[50000, 100000]" "quota steps"
fi
pass "rate and quota sweeps with SLO verdict, JSON and CSV"
