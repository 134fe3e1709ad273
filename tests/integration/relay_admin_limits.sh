#!/usr/bin/env bash
# The admin endpoint does not grow without bound: a request whose header
# never ends is cut off at 8 KiB (relay's RSS stays within a few MiB of
# where it was), a connection that stays silent is closed after 5 s, and at
# most 16 connections are open at once (the rest wait in the backlog).
# timeout: 90
. "$(dirname "$0")/../lib.sh"
. "$FIXTURES/relay/relay.sh"

p=$(free_udp_port)
start_relay --listen "udp://127.0.0.1:$p" --upstream echo --cpus 0 --allow-non-rt
rss() { awk '/^VmRSS/ { print $2 }' "/proc/$RELAY_PID/status"; }
rss0=$(rss)

# a header that never ends is cut off; a silent connection is closed
# within the timeout (5 s) and a margin
for check in long-header silent; do
	pylib admin_client "$check" "$ADMIN_PORT" >"$TEST_TMP/client.out" 2>&1 ||
		fail "$(cat "$TEST_TMP/client.out")"
	cat "$TEST_TMP/client.out"
done

# The connection cap: 40 idle connections hold at most 16 descriptors; the
# rest wait in the backlog and are served as slots free (the idle ones are
# closed after 5 s), and relay's descriptor count goes back down after.
# shellcheck disable=SC2012 # file descriptors: numbers
fds() { ls "/proc/$RELAY_PID/fd" | wc -l; }
fd0=$(fds)
pylib admin_client cap "$ADMIN_PORT" "$RELAY_PID" >"$TEST_TMP/cap.out" 2>&1 ||
	fail "$(cat "$TEST_TMP/cap.out")"
cat "$TEST_TMP/cap.out"
# every slot freed: the cap's count went back down, and accepting resumed
wait_metric 5 relay_admin_connections -le 1
expect_metric relay_admin_capped_total -ge 1
fd1=$(fds)
echo "descriptors ${fd0} -> ${fd1}"
[ "$fd1" -le $((fd0 + 1)) ] || fail "descriptors went from $fd0 to $fd1"

rss1=$(rss)
echo "RSS ${rss0} -> ${rss1} KiB"
[ $((rss1 - rss0)) -lt 8192 ] || fail "RSS grew from $rss0 to $rss1 KiB"
curl -sf "http://127.0.0.1:$ADMIN_PORT/healthz" >/dev/null || fail "admin after the abuse"
udptool ping --to "127.0.0.1:$p" --count 3 --expect-prefix "" || fail "relaying after the abuse"
stop_relay
pass "admin requests are bounded in size, time and number"
