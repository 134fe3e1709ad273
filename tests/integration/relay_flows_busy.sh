#!/usr/bin/env bash
# A full flow table does not cost a waiting client its reply: with
# --max-flows 16 and an upstream that answers after 500 ms, 40 new clients
# arriving while the first waits are turned away (counted as flows_busy
# drops) rather than evicting it; its reply comes, and its next request
# leaves from the same upstream port. Once the replies are in, the idle
# flows make room again; a flow whose reply is overdue (flow_wait_ms) does
# too.
# timeout: 90
# shellcheck disable=SC2154 # NAME_PORT, NAME_PID: set by start_upstream NAME
. "$(dirname "$0")/../lib.sh"
. "$FIXTURES/relay/relay.sh"

start_upstream slow --delay-ms 500 --log "$TEST_TMP/up.log"
p=$(free_udp_port)
start_relay --listen "udp://127.0.0.1:$p" --upstream "udp://127.0.0.1:$slow_PORT" \
	--cpus 0 --allow-non-rt --max-flows 16 --flow-wait-ms 2000

# client: request A1 (77 bytes), 40 new source ports, then wait for A1's
# reply; then A2 on the same socket.
pylib net udp-waiter "$p" 40 >"$TEST_TMP/client.out" 2>&1 ||
	fail "waiting client: $(cat "$TEST_TMP/client.out")"
ports=$(awk '$2 == 77 { print $1 }' "$TEST_TMP/up.log" | sort -u)
[ "$(echo "$ports" | wc -l)" = 1 ] ||
	fail "the waiting client's requests left from upstream ports ${ports//$'\n'/ }"
expect_metric relay_flows_evicted_total -eq 0
expect_metric 'relay_drops_total{reason="flows_busy"}' -eq 25
expect_metric relay_flows_created_total -eq 16

# The 15 newcomers got their replies: their flows are idle and make room.
sleep 0.3
udptool ping --to "127.0.0.1:$p" --count 2 --timeout 3 || fail "a client after the replies"
expect_metric relay_flows_evicted_total -eq 1
stop_relay

# An upstream that never answers: after flow_wait_ms the oldest waiting
# flow is taken for lost and makes room.
pylib_bg ports hold udp 0 "$TEST_TMP/mute.port" 60
wait_for 5 test -s "$TEST_TMP/mute.port" || fail "mute upstream"
has_metric() { curl -sf "http://127.0.0.1:$ADMIN_PORT/metrics" | grep -qxF "$1"; }
# three clients from one process (a process start may take longer than
# flow_wait_ms on a busy host), then a fourth once the wait is over
clients() {
	pylib net udp-send "$p" "$1" request
}
start_relay --listen "udp://127.0.0.1:$p" --upstream "udp://127.0.0.1:$(cat "$TEST_TMP/mute.port")" \
	--cpus 0 --allow-non-rt --max-flows 2 --flow-wait-ms 2000
clients 3
wait_for 5 has_metric 'relay_drops_total{reason="flows_busy"} 1' ||
	fail "the third client was not turned away: $(metric 'relay_drops_total{reason="flows_busy"}')"
expect_metric relay_flows_evicted_total -eq 0
sleep 2.2
clients 1
wait_for 5 has_metric 'relay_flows_evicted_total 1' ||
	fail "an overdue flow did not make room: $(metric relay_flows_evicted_total)"
expect_metric 'relay_drops_total{reason="flows_busy"}' -eq 1
stop_relay
pass "waiting clients keep their flows; newcomers are turned away and counted"
