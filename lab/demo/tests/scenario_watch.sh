#!/usr/bin/env bash
# demo-scenario --watch: the scenario's watchdog around a relay and a
# cgroup that others made (a test host's relay.service and loadgen.slice).
# A relay stopped with SIGSTOP for 0.6 s is a stall: recorded in
# scenario.json on the relay's clock (t0_mono_ns its heartbeat's start),
# the quota lifted and put back (events.csv), the cgroup's quota as it was
# afterwards; SIGTERM ends the watch with exit 0. A cgroup whose quota is
# not the parameters' is refused (78) naming both, a missing heartbeat
# too (69).
# timeout: 120
# variants: release
. "$(dirname "$0")/../../../tests/lib.sh"
need_scenario

# The cpu controller's hierarchy: cgroup v2's mount, or v1's cpu one.
root=$(awk '$9 == "cgroup2" { print $5; exit } $9 == "cgroup" && $NF ~ /(^|,)cpu(,|$)/ { print $5; exit }' \
	/proc/self/mountinfo)
[ -n "$root" ] || skip "no cgroup hierarchy with the cpu controller"
cg=$root/relay-test-watch-$$
mkdir "$cg" || fail "cannot make $cg"
trap 'rmdir "$cg" 2>/dev/null; cleanup_bg' EXIT
# set_quota QUOTA PERIOD; quota_of: "QUOTA PERIOD"
if [ -f "$cg/cpu.max" ]; then
	set_quota() { echo "$1 $2" >"$cg/cpu.max"; }
	quota_of() { cat "$cg/cpu.max"; }
else
	set_quota() { echo "$2" >"$cg/cpu.cfs_period_us" && echo "$1" >"$cg/cpu.cfs_quota_us"; }
	quota_of() { echo "$(cat "$cg/cpu.cfs_quota_us") $(cat "$cg/cpu.cfs_period_us")"; }
fi
set_quota 2000 20000 || fail "cannot set the quota of $cg"

beat=$TEST_TMP/relay.heartbeat
bg "$RELAY" --listen "udp://127.0.0.1:$(free_udp_port)" --upstream echo --admin off \
	--cpus 1 --rt-priority 50 --rt-budget 100 --heartbeat "$beat" >"$TEST_TMP/relay.log" 2>&1
relay=$!
wait_for 10 test -s "$beat" || fail "relay wrote no heartbeat: $(cat "$TEST_TMP/relay.log")"

# watch OUT ARGS...: demo-scenario --watch in the background, $watch its pid
watch() {
	local out=$1
	shift
	"$scenario" --watch --heartbeat "$beat" --cgroup "$cg" --out "$out" --cpu 1 \
		--watchdog-cpu 0 --cpu-quota-pct 10 --period-us 20000 --stall-ms 200 \
		--poll-ms 10 --duration-s 30 "$@" >"$out.log" 2>&1 &
	watch=$!
}
watch "$TEST_TMP/run"
wait_for 10 grep -q 'watching' "$TEST_TMP/run.log" || fail "the watch did not start: $(cat "$TEST_TMP/run.log")"
sleep 0.5
kill -STOP "$relay"
sleep 0.6
kill -CONT "$relay"
sleep 0.5
kill -TERM "$watch"
st=0
wait "$watch" || st=$?
[ $st = 0 ] || fail "the watch exited $st after SIGTERM: $(tail -n 5 "$TEST_TMP/run.log")"
s=$TEST_TMP/run/scenario.json
json_ok "$s" '.mode == "watch" and .params.cpu_quota_pct == 10 and .params.period_us == 20000 and
	.problems == []' "scenario.json has not the watch's parameters, or has problems"
json_ok "$s" '.stalls | length == 1' "the SIGSTOP was not one stall"
json_ok "$s" '.stalls[0] | .ended and .cleared and .start_s > 0 and .length_ms >= 450 and
	.length_ms < 2000 and .lift_s > .start_s and .restore_s >= .end_s' \
	"the stall is not the 0.6 s the relay stood still"
# t0 is the relay's start on CLOCK_MONOTONIC: before the watch's first poll,
# within the seconds this test took.
json_ok "$s" '.t0_mono_ns > 0 and .elapsed_s > 1' "no t0_mono_ns"
for e in 'quota_lift,' 'quota_restore,.*cpu.max 2000 20000'; do
	grep -q "^[0-9.]*,$e" "$TEST_TMP/run/events.csv" ||
		fail "events.csv has no $e: $(cat "$TEST_TMP/run/events.csv")"
done
[ "$(quota_of)" = "2000 20000" ] || fail "the quota of $cg is '$(quota_of)' after the watch"

# Another quota than the parameters': refused, both named.
watch "$TEST_TMP/other" --cpu-quota-pct 15
st=0
wait "$watch" || st=$?
[ $st = 78 ] || fail "a quota of 2000/20000 against 15 % exited $st, not 78"
grep -q "$cg has a quota of 2000 us every 20000 us, the parameters 3000 of 20000" "$TEST_TMP/other.log" ||
	fail "the refusal does not name both quotas: $(cat "$TEST_TMP/other.log")"

# No relay: no heartbeat.
beat=$TEST_TMP/none.heartbeat
watch "$TEST_TMP/none"
st=0
wait "$watch" || st=$?
[ $st = 69 ] || fail "a missing heartbeat exited $st, not 69: $(cat "$TEST_TMP/none.log")"
pass "--watch: a stopped relay is a stall on its clock, the quota lifted and restored; other quotas and no relay refused"
