#!/usr/bin/env bash
# demo-scenario --spin-us: a co-tenant that fills its quota whatever the
# quota. At 400 pps from 2 senders and a 10 % quota the senders use a
# fraction of it and are never throttled; spinning their whole 5 ms
# interval before each send they want the CPU all the time and are
# throttled nearly every period (cpu.stat in scenario.json), with the same
# datagrams sent. (10 %: a share the spinning senders get even when make
# test's other lanes load their CPU.)
# timeout: 120
# variants: release
. "$(dirname "$0")/../../../tests/lib.sh"
need_scenario

# run NAME SPIN: 3 s of the scenario, the quota 10 % of 10 ms periods
run() {
	"$scenario" --relay "$RELAY" --loadgen "$LOADGEN" --out "$TEST_TMP/$1" \
		--port "$(free_udp_port)" --duration-s 3 --rate-pps 400 --senders 2 \
		--cpu-quota-pct 10 --period-us 10000 --ticker-us 0 --spin-us "$2" \
		--run-dir "$TEST_TMP" >"$TEST_TMP/$1.log" 2>&1 ||
		fail "the scenario with --spin-us $2 exited $?: $(tail -n 5 "$TEST_TMP/$1.log")"
}
# throttled NAME: "periods throttled" of the run's cgroup
throttled() {
	jq -r '"\(.cgroup.nr_periods) \(.cgroup.nr_throttled)"' "$TEST_TMP/$1/scenario.json"
}
run still 0
run spin 5000
grep -q "its senders spin 5000 us before each send" "$TEST_TMP/spin.log" ||
	fail "the scenario does not say its senders spin"
read -r p0 t0 < <(throttled still)
read -r p1 t1 < <(throttled spin)
echo "no spin: throttled in $t0 of $p0 periods; spinning 5000 us: $t1 of $p1"
[ "$p1" -ge 100 ] || fail "only $p1 quota periods in 3 s"
[ "$t0" -le $((p0 / 10)) ] || fail "without the spin the co-tenant was throttled in $t0 of $p0 periods"
[ "$t1" -ge $((p1 / 2)) ] || fail "spinning, the co-tenant was throttled in only $t1 of $p1 periods"
for n in still spin; do
	sent=$(jq -r '.sent' "$TEST_TMP/$n/loadgen.json")
	[ "$sent" -ge 1000 ] || fail "$n: loadgen sent $sent datagrams in 3 s at 400 pps"
done
pass "the spinning co-tenant fills a 10 % quota (throttled in $t1 of $p1 periods, $t0 of $p0 without)"
