#!/usr/bin/env bash
# relay under ThreadSanitizer: two loop threads relaying, the admin thread
# reading their statistics, reloads adding and removing listeners, a drain;
# then reloads binding a unix:///PATH listener again while admin reads;
# the late-tick ring of a loop and its reader (test_watch).
# Any data race report fails the test. It builds its own TSan binary, so
# it runs once.
# timeout: 300
# lane: side
# variants: release
# shellcheck disable=SC2154 # NAME_PORT, NAME_PID: set by start_upstream NAME
. "$(dirname "$0")/../lib.sh"
. "$FIXTURES/relay/relay.sh"
cd "$top" || exit 1
make --no-print-directory -j"$(nproc)" VARIANT=tsan build/tsan/bin/relay \
	>"$TEST_TMP/build.log" 2>&1 || { tail -n 30 "$TEST_TMP/build.log"; fail "TSan build"; }
RELAY=$top/build/tsan/bin/relay
export TSAN_OPTIONS="halt_on_error=1 exitcode=66 report_signal_unsafe=0"

start_upstream up
pA=$(free_udp_port)
pB=$(free_udp_port)
cpus=0
[ "$(nproc)" -ge 2 ] && cpus=0-1
conf=$TEST_TMP/r.ini
# sched = other: this test runs in the side lane at nice 10, and a
# SCHED_FIFO loop would ignore that and preempt the timed tests beside it.
printf '[relay]\nlisten = udp://127.0.0.1:%s\nupstream = udp://127.0.0.1:%s\ncpus = %s\nsched = other\ntick_us = 200\n' \
	"$pA" "$up_PORT" $cpus >"$conf"
start_relay --config "$conf" --stats-file "$TEST_TMP/r.json"
for round in 1 2 3; do
	pings=()
	for _ in 1 2 3 4; do
		udptool ping --to "127.0.0.1:$pA" --count 20 >/dev/null &
		pings+=($!)
	done
	for _ in 1 2 3 4 5; do
		curl -sf "http://127.0.0.1:$ADMIN_PORT/metrics" >/dev/null
		curl -sf "http://127.0.0.1:$ADMIN_PORT/stats" >/dev/null
	done
	printf 'listen = udp://127.0.0.1:%s\n' "$pB" >>"$conf"
	kill -HUP "$RELAY_PID"
	for pid in "${pings[@]}"; do
		wait "$pid" || fail "round $round: a client lost replies"
	done
	wait_for 5 udptool ping --to "127.0.0.1:$pB" --count 2 || fail "round $round: added listener"
	sed -i "/:$pB\$/d" "$conf"
	kill -HUP "$RELAY_PID"
	sleep 0.3
done
udptool ping --to "127.0.0.1:$pA" --count 5 || fail "after the reloads"
# stopped: relay exits 0 with no race reported, or the test fails
stopped() {
	kill -TERM "$RELAY_PID"
	wait "$RELAY_PID"
	local rc=$?
	if grep -q "ThreadSanitizer" "$TEST_TMP/relay.log" || [ $rc -ne 0 ]; then
		sed -n '/WARNING: ThreadSanitizer/,/SUMMARY/p' "$TEST_TMP/relay.log" | head -n 60
		fail "relay under TSan exited $rc"
	fi
}
stopped

# A unix:///PATH listener (one loop): the reload thread binds it again
# (its own umask, sockfile.c) while admin looks at its file and clients
# send through it.
sock=$TEST_TMP/tsan.sock
printf '[relay]\nlisten = unix://%s\nupstream = echo\ncpus = 0\nsched = other\nunix_mode = 0660\n' \
	"$sock" >"$conf"
start_relay --config "$conf"
for round in 1 2 3; do
	udptool ping --to "unix://$sock" --count 20 --expect-prefix "" >/dev/null &
	ping=$!
	rm -f "$sock"
	kill -HUP "$RELAY_PID"
	for _ in 1 2 3 4 5; do
		curl -s "http://127.0.0.1:$ADMIN_PORT/healthz" >/dev/null
		curl -sf "http://127.0.0.1:$ADMIN_PORT/metrics" >/dev/null
	done
	wait "$ping"	# it may lose its socket's file: not what is tested
	wait_for 5 udptool ping --to "unix://$sock" --count 2 --expect-prefix "" ||
		fail "round $round: the listener bound again"
done
stopped
pass "no data race reported"

# The late-tick ring a loop fills and the main thread empties (watch.h):
# its unit test's writer and reader threads under TSan, since a relay here
# watches a group only where the cpu controller is on cgroup v2.
make --no-print-directory -j"$(nproc)" VARIANT=tsan build/tsan/tests/test_watch \
	>"$TEST_TMP/build-watch.log" 2>&1 || { tail -n 30 "$TEST_TMP/build-watch.log"; fail "TSan build of test_watch"; }
"$top/build/tsan/tests/test_watch" >"$TEST_TMP/watch.log" 2>&1 || { tail -n 40 "$TEST_TMP/watch.log"; fail "test_watch under TSan"; }
pass "the late-tick ring: no data race reported"
