#!/usr/bin/env bash
# A stalled loop, the way an RT stall looks from outside: a SCHED_FIFO hog
# above relay's priority on the loop's CPU for 2.5 s. The main thread runs
# on the other CPU, so /healthz keeps answering and says 503 while the loop
# makes no progress; afterwards the tick lateness shows the stall.
# timeout: 60
. "$(dirname "$0")/../lib.sh"
. "$FIXTURES/relay/relay.sh"
need_root "SCHED_FIFO"
[ "$(nproc)" -ge 2 ] || skip "needs 2 CPUs (the loop's and the admin thread's)"

p=$(free_udp_port)
start_relay --listen "udp://127.0.0.1:$p" --upstream echo --cpus 0 --rt-priority 10 \
	--tick-us 500
udptool ping --to "127.0.0.1:$p" --expect-prefix "" || fail "echo before the stall"
# The hog may take a while to start on a busy host: ask /healthz until it
# sees the stall, for as long as the hog runs (2.5 s from its start).
fifo_hog 0 2.5
hog=$HOG_PID
body=
while kill -0 "$hog" 2>/dev/null; do
	body=$(curl -s -m 2 -w ' %{http_code}' "http://127.0.0.1:$ADMIN_PORT/healthz")
	case $body in *" 503") break ;; esac
	sleep 0.1
done
wait "$hog"
case $body in
*"loop 0 (CPU 0) made no progress for"*" 503") ;;
*) fail "/healthz during the stall said: $body" ;;
esac
wait_for 5 curl -sf "http://127.0.0.1:$ADMIN_PORT/healthz" || fail "not healthy after the stall"
curl -sf "http://127.0.0.1:$ADMIN_PORT/stats" >"$TEST_TMP/stats.json"
s=$TEST_TMP/stats.json
json_ok "$s" '.tick_lateness_us.max >= 1000000' \
	"the stall is not in the tick lateness: $(jq -c .tick_lateness_us "$s")"
json_ok "$s" '.counters.ticks_missed >= 2000' \
	"the stall is not in the tick lateness: counters $(jq -c .counters "$s")"
udptool ping --to "127.0.0.1:$p" --expect-prefix "" || fail "echo after the stall"
stop_relay
pass "a stalled loop shows in /healthz and in the tick lateness"
