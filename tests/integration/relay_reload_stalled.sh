#!/usr/bin/env bash
# A reload that a loop cannot take: loop 1 is starved by a SCHED_FIFO hog
# above relay's priority on its CPU (what a runaway real-time task does
# to it) while two reloads come, each of which gives up on it after its
# deadline. Neither reload's command may leak (its new listener sockets
# would stay bound, unread, in their port's SO_REUSEPORT group), loop 0
# must have taken both, and relay must say loop 1 was not updated rather
# than record it as running the new listeners. Once the hog is gone the
# descriptors are back at the baseline, and the next reload brings loop 1
# up to date: every source port is answered on the new listener, the old
# ones are closed on both loops.
# timeout: 120
. "$(dirname "$0")/../lib.sh"
. "$FIXTURES/relay/relay.sh"
need_root "SCHED_FIFO"
[ "$(nproc)" -ge 2 ] || skip "needs 2 CPUs (two loops)"

pA=$(free_udp_port)
pB=$(free_udp_port)
pC=$(free_udp_port)
conf=$TEST_TMP/relay.ini
write_conf() {
	printf '[relay]\nlisten = udp://127.0.0.1:%s\nupstream = echo\ncpus = 0,1\nrt_priority = 10\n' \
		"$1" >"$conf"
}
# relay's descriptors but its admin connections: the admin endpoint lets go
# of a finished connection within 100 ms (relay.8, ADMIN ENDPOINT), and
# this test's own requests are not what it counts.
fds() {
	local all admin
	# shellcheck disable=SC2012 # file descriptors: numbers
	all=$(ls "/proc/$RELAY_PID/fd" | wc -l)
	admin=$(ss -Htanp "( sport = :$ADMIN_PORT )" | grep -v '^LISTEN' | grep -c "pid=$RELAY_PID,")
	echo $((all - admin))
}
at_base() { [ "$(fds)" -eq "$base" ]; }
reloaded() { [ "$(grep -c "relay: reloaded (" "$TEST_TMP/relay.log")" -ge "$1" ]; }

# probe PORT: how many of 64 client sockets (64 source ports, spread over
# the loops' sockets by the SO_REUSEPORT hash) get their datagram back.
probe() { pylib net udp-probe "$1" --sources 64 --wait 2; }

# port_free PORT: nothing holds the UDP port (bound without SO_REUSEPORT).
port_free() { pylib ports unbound udp "$1"; }

write_conf "$pA"
start_relay --config "$conf"
[ "$(probe "$pA")" = 64 ] || fail "not every source port answered before the stall"
# The baseline: the fewest seen in half a second (a sanitizer or libc may
# hold a descriptor for a moment, e.g. to read /proc/self/maps).
base=$(fds)
for _ in 1 2 3 4 5; do
	sleep 0.1
	n=$(fds)
	[ "$n" -ge "$base" ] || base=$n
done

# The hog: above the loops' FIFO 10 on loop 1's CPU, for as long as the
# two reloads take (it is stopped then), 60 s at most.
fifo_hog 1 60
hog=$HOG_PID
stalled() { curl -s -m 2 "http://127.0.0.1:$ADMIN_PORT/healthz" | grep -q "loop 1 (CPU 1) made no progress"; }
wait_for 10 stalled || fail "loop 1 did not stall under the hog"
kill -0 "$hog" 2>/dev/null || skip "a SCHED_FIFO hog could not run here"

# Reload 1: A goes, B comes. Reload 2 while loop 1 still cannot run: B
# goes, C comes. Each gives up on loop 1 after its deadline.
write_conf "$pB"
kill -HUP "$RELAY_PID"
wait_for 20 reloaded 1 || { cat "$TEST_TMP/relay.log"; fail "reload 1 did not end"; }
write_conf "$pC"
kill -HUP "$RELAY_PID"
wait_for 20 reloaded 2 || { cat "$TEST_TMP/relay.log"; fail "reload 2 did not end"; }
stalled || fail "loop 1 ran during the reloads: the test proves nothing"
kill "$hog"
wait "$hog" 2>/dev/null
wait_for 10 curl -sf "http://127.0.0.1:$ADMIN_PORT/healthz" || fail "not healthy after the stall"
sleep 0.5	# loop 1 runs what was queued for it

# Loop 1 has A still (it took no command), loop 0 has C: as many sockets
# as at the start, none of B's left bound.
wait_for 2 at_base ||
	{ ls -l "/proc/$RELAY_PID/fd"; fail "$(fds) descriptors after the stalled reloads, $base before"; }
port_free "$pB" || fail "a socket of B (added by reload 1, removed by reload 2) is still bound"
[ "$(grep -c "loop 1 (CPU 1) did not take it" "$TEST_TMP/relay.log")" -eq 2 ] ||
	{ cat "$TEST_TMP/relay.log"; fail "the log does not say loop 1 missed both reloads"; }
grep -q "reloaded (1 added, 1 removed; 1 of 2 loops not updated)" "$TEST_TMP/relay.log" ||
	{ cat "$TEST_TMP/relay.log"; fail "the reload's summary does not say a loop was not updated"; }
expect_metric relay_reload_loops_behind -eq 1
expect_metric 'relay_reloads_total{result="partial"}' -eq 2
expect_metric 'relay_reloads_total{result="applied"}' -eq 0
# Each loop serves what it has: A on loop 1 alone, C on loop 0 alone.
[ "$(probe "$pA")" = 64 ] || fail "loop 1 does not serve A, which it still has"
[ "$(probe "$pC")" = 64 ] || fail "loop 0 does not serve C, which it took"

# The next reload reaches loop 1: it drops A and takes C.
kill -HUP "$RELAY_PID"
wait_for 20 reloaded 3 || { cat "$TEST_TMP/relay.log"; fail "reload 3 did not end"; }
expect_metric relay_reload_loops_behind -eq 0
expect_metric 'relay_reloads_total{result="applied"}' -eq 1
wait_for 2 at_base || fail "$(fds) descriptors after reload 3, $base at the start"
[ "$(probe "$pC")" = 64 ] || fail "not every source port answered on C after reload 3"
port_free "$pA" || fail "A is still bound after reload 3"
port_free "$pB" || fail "B is still bound after reload 3"
stop_relay
pass "two reloads a stalled loop missed leaked nothing and said so; the next one reached it"
