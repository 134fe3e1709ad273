#!/usr/bin/env bash
# The scheduling choice: --sched fifo (the default) runs each loop
# SCHED_FIFO at --rt-priority, --sched other (or sched = other in the file)
# runs them SCHED_OTHER, as the kernel shows in /proc/TID/sched, and /metrics
# says which. A bad value exits 64 naming the flag, 78 naming file:line.
# The rt_budget's round trip, in every build (relay_overload judges what it
# buys in the release build): a loop flooded with its sink on its CPU drops
# to SCHED_OTHER, and gets SCHED_FIFO back once the flood stops.
# timeout: 180
. "$(dirname "$0")/../lib.sh"
. "$FIXTURES/relay/relay.sh"
need_root "SCHED_FIFO"
[ "$(nproc)" -ge 2 ] || skip "needs 2 CPUs (the loop's thread is told apart by its CPU)"

p=$(free_udp_port)
expect_exit 64 "--sched: 'rr' is not a policy (fifo or other)" "$RELAY" \
	--listen "udp://127.0.0.1:$p" --upstream echo --sched rr
expect_exit 64 "--rt-budget: 5 out of range 10..100" "$RELAY" \
	--listen "udp://127.0.0.1:$p" --upstream echo --rt-budget 5
conf=$TEST_TMP/sched.ini
printf '[relay]\nlisten = udp://127.0.0.1:%s\nupstream = echo\nsched = fast\n' "$p" >"$conf"
expect_exit 78 "sched.ini:4: sched: 'fast' is not a policy" "$RELAY" --check-config --config "$conf"

# loop_sched CPU: "POLICY PRIO" of relay's thread pinned to CPU, from
# /proc/TID/sched (policy 1 is SCHED_FIFO, 0 SCHED_OTHER; prio 99 - rt
# priority for FIFO, 120 + nice for OTHER).
loop_sched() {
	local t tid
	for t in "/proc/$RELAY_PID/task"/*; do
		tid=${t##*/}
		taskset -pc "$tid" | grep -q "list: $1\$" || continue
		awk '$1 == "policy" { p = $3 } $1 == "prio" { q = $3 } END { print p, q }' \
			"$t/sched"
		return
	done
	echo none
}

cpu=$(($(nproc) - 1))
# relay inherits the nice value this test runs at.
other="0 $((120 + $(nice)))"
start_relay --listen "udp://127.0.0.1:$p" --upstream echo --cpus $cpu --rt-priority 42
[ "$(loop_sched $cpu)" = "1 57" ] || fail "default: loop is '$(loop_sched $cpu)', expected SCHED_FIFO 42 (1 57)"
expect_metric 'relay_realtime{policy="SCHED_FIFO"}' -eq 1
udptool ping --to "127.0.0.1:$p" --expect-prefix "" || fail "echo as SCHED_FIFO"
stop_relay

start_relay --listen "udp://127.0.0.1:$p" --upstream echo --cpus $cpu --sched other
[ "$(loop_sched $cpu)" = "$other" ] || fail "--sched other: loop is '$(loop_sched $cpu)', expected SCHED_OTHER ($other)"
expect_metric 'relay_realtime{policy="SCHED_OTHER"}' -eq 0
grep -q "sched other" "$TEST_TMP/relay.log" || fail "the ready line does not say sched other: $(cat "$TEST_TMP/relay.log")"
grep -q "not real-time" "$TEST_TMP/relay.log" && fail "a chosen SCHED_OTHER is reported as a refusal"
udptool ping --to "127.0.0.1:$p" --expect-prefix "" || fail "echo as SCHED_OTHER"
stop_relay

printf '[relay]\nlisten = udp://127.0.0.1:%s\nupstream = echo\ncpus = %s\nsched = other\n' "$p" $cpu >"$conf"
start_relay --config "$conf"
[ "$(loop_sched $cpu)" = "$other" ] || fail "sched = other: loop is '$(loop_sched $cpu)'"
# A flag overrides the file.
stop_relay
start_relay --config "$conf" --sched fifo
[ "$(loop_sched $cpu)" = "1 49" ] || fail "--sched fifo over the file: loop is '$(loop_sched $cpu)'"
stop_relay
pass "loops run SCHED_FIFO or SCHED_OTHER as configured"

blast=$TEST_TMP/relay_blast
cc -O2 -pthread -o "$blast" "$top/bench/relay_blast.c" || fail "cannot build relay_blast"
sink=$(free_udp_port)
bg taskset -c $cpu "$blast" count "$sink" 60 "$TEST_TMP/count"
wait_for 5 test -s "$TEST_TMP/count" || fail "the sink did not start"
start_relay --listen "udp://127.0.0.1:$p" --upstream "udp://127.0.0.1:$sink" --cpus $cpu --batch 1
taskset -c 0 "$blast" send 127.0.0.1 "$p" 2 64 2 64 0 >/dev/null || fail "the flood could not be sent"
expect_metric relay_rt_demotions_total -ge 1
expect_metric relay_ticks_demoted_total -ge 1
# shellcheck disable=SC2016 # eval expands it, each try
wait_for 5 eval '[ "$(loop_sched $cpu)" = "1 49" ]' ||
	fail "after the flood the loop is '$(loop_sched $cpu)', not SCHED_FIFO 50 again"
n=$(metric relay_rt_demotions_total)
stop_relay
pass "flooded, the loop dropped to SCHED_OTHER $n time(s) and got SCHED_FIFO back"
