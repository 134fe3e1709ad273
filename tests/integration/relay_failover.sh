#!/usr/bin/env bash
# Failover is not pinned by a client that never goes quiet: the upstream
# dies (ICMP port unreachable), a reload names a new one, and a client
# retrying every 250 ms -- more often than flow_idle_ms, so its flow never
# expires -- is answered by the new upstream (flows_moved counts it); a
# reload that keeps the upstream moves nobody.
# timeout: 60
# shellcheck disable=SC2154 # NAME_PORT, NAME_PID: set by start_upstream NAME
. "$(dirname "$0")/../lib.sh"
. "$FIXTURES/relay/relay.sh"

start_upstream a --prefix a:
start_upstream b --prefix b:
p=$(free_udp_port)
conf=$TEST_TMP/relay.ini
write_conf() {
	printf '[relay]\nlisten = udp://127.0.0.1:%s\nupstream = udp://127.0.0.1:%s\ncpus = 0\nallow_non_rt = true\nflow_idle_ms = 1000\n' \
		"$p" "$1" >"$conf"
}
write_conf "$a_PORT"
start_relay --config "$conf"

# the client: answered by a, then a retry every 250 ms (15 s at most)
# until b answers
pylib_bg net udp-retry "$p" a: b: "$TEST_TMP/phase1" --every 0.25 --tries 60 \
	>"$TEST_TMP/client.out" 2>&1
client=$!
wait_for 5 test -e "$TEST_TMP/phase1" || fail "client: $(cat "$TEST_TMP/client.out")"
kill "$a_PID"
wait "$a_PID" 2>/dev/null
# refused: the flow is moved (to the same dead upstream, for now) and the
# next refusal counted
moved() { [ "$(metric relay_flows_moved_total)" -ge 1 ]; }
wait_for 5 moved ||
	fail "a refused flow was not moved: $(metric relay_flows_moved_total)"
expect_metric 'relay_errors_total{kind="upstream_refused"}' -ge 1
write_conf "$b_PORT"
kill -HUP "$RELAY_PID"
wait "$client" || { cat "$TEST_TMP/relay.log"; curl -s "http://127.0.0.1:$ADMIN_PORT/metrics" | grep -E "^relay_[a-z_]*(total|active)"; fail "the retrying client stayed on the dead upstream: $(cat "$TEST_TMP/client.out")"; }
cat "$TEST_TMP/client.out"
expect_metric relay_flows_moved_total -ge 2

# A reload that keeps the upstream moves nobody.
udptool ping --to "127.0.0.1:$p" --count 2 --expect-prefix b: || fail "before the second reload"
moved=$(metric relay_flows_moved_total)
kill -HUP "$RELAY_PID"
reloads() { [ "$(grep -c reloaded "$TEST_TMP/relay.log")" -ge 2 ]; }
wait_for 5 reloads || fail "second reload"
udptool ping --to "127.0.0.1:$p" --count 2 --expect-prefix b: || fail "after the second reload"
expect_metric relay_flows_moved_total -eq "$moved"
stop_relay
pass "flows move off a dead or replaced upstream"
