#!/usr/bin/env bash
# Flow expiry after flow_idle_ms (a new upstream socket afterwards), and the
# flow limit: max_flows reached, the oldest idle flow is evicted and counted,
# every client is still answered.
# timeout: 60
# shellcheck disable=SC2154 # NAME_PORT, NAME_PID: set by start_upstream NAME
. "$(dirname "$0")/../lib.sh"
. "$FIXTURES/relay/relay.sh"

start_upstream up --log "$TEST_TMP/up.log"
p=$(free_udp_port)
start_relay --listen "udp://127.0.0.1:$p" --upstream "udp://127.0.0.1:$up_PORT" \
	--cpus 0 --allow-non-rt --flow-idle-ms 1000 --tick-us 1000

udptool ping --to "127.0.0.1:$p" --count 3 || fail "first flow"
expect_metric relay_flows_active -eq 1
wait_for 5 sh -c "[ \"\$(curl -sf http://127.0.0.1:$ADMIN_PORT/metrics | awk '\$1 == \"relay_flows_active\" { print \$2 }')\" = 0 ]" ||
	fail "the idle flow did not expire"
expect_metric relay_flows_expired_total -eq 1
udptool ping --to "127.0.0.1:$p" --count 3 || fail "after expiry"
n=$(awk '{ print $1 }' "$TEST_TMP/up.log" | sort -u | wc -l)
[ "$n" -eq 2 ] || fail "expected a new upstream socket after expiry, upstream saw $n ports"
stop_relay

# A client that keeps talking is not expired: it talks every 100 ms for
# three idle limits (a loaded host may stretch a gap, but not tenfold).
start_relay --listen "udp://127.0.0.1:$p" --upstream "udp://127.0.0.1:$up_PORT" \
	--cpus 0 --allow-non-rt --flow-idle-ms 1000
udptool ping --to "127.0.0.1:$p" --count 30 --interval-ms 100 || fail "busy flow"
expect_metric relay_flows_expired_total -eq 0
stop_relay

# Limit: 2 flows, 5 clients one after another.
start_relay --listen "udp://127.0.0.1:$p" --upstream "udp://127.0.0.1:$up_PORT" \
	--cpus 0 --allow-non-rt --max-flows 2
for i in 1 2 3 4 5; do
	udptool ping --to "127.0.0.1:$p" --count 2 || fail "client $i with a full table"
done
expect_metric relay_flows_active -eq 2
expect_metric relay_flows_evicted_total -eq 3
expect_metric relay_flows_created_total -eq 5
stop_relay
pass "flows expire when idle, the oldest idle is evicted at the limit"
