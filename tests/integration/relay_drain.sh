#!/usr/bin/env bash
# SIGTERM drains: a request already relayed gets its reply even though the
# upstream answers after the signal; relay exits 0 and writes its stats
# file. With nothing pending it stops at once.
# timeout: 60
# shellcheck disable=SC2154 # NAME_PORT, NAME_PID: set by start_upstream NAME
. "$(dirname "$0")/../lib.sh"
. "$FIXTURES/relay/relay.sh"

start_upstream slow --delay-ms 400
p=$(free_udp_port)
start_relay --listen "udp://127.0.0.1:$p" --upstream "udp://127.0.0.1:$slow_PORT" \
	--cpus 0 --allow-non-rt --drain-ms 3000 --stats-file "$TEST_TMP/out/relay.json"
mkdir -p "$TEST_TMP/out"
udptool ping --to "127.0.0.1:$p" --count 1 --timeout 5 >"$TEST_TMP/ping" 2>&1 &
client=$!
# SIGTERM once the request went upstream, well before its reply is due.
wait_for 5 sh -c "curl -sf http://127.0.0.1:$ADMIN_PORT/metrics | grep -qx 'relay_tx_packets_total 1'" ||
	fail "the request did not reach relay"
kill -TERM "$RELAY_PID"
wait "$client" || fail "the in-flight request lost its reply: $(cat "$TEST_TMP/ping")"
wait "$RELAY_PID"
rc=$?
[ $rc -eq 0 ] || { cat "$TEST_TMP/relay.log"; fail "relay exited $rc after draining"; }
grep -q draining "$TEST_TMP/relay.log" || fail "no drain message"
[ -s "$TEST_TMP/out/relay.json" ] || fail "no stats file after the drain"
json_ok "$TEST_TMP/out/relay.json" '.counters | .reply_tx_packets == 1 and .flows_closed == 1' \
	"stats file content"

# Nothing pending: the drain ends without waiting drain_ms.
start_relay --listen "udp://127.0.0.1:$p" --upstream echo --cpus 0 \
	--allow-non-rt --drain-ms 10000
udptool ping --to "127.0.0.1:$p" --expect-prefix "" || fail "echo before drain"
t0=$(date +%s%N)
stop_relay
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
[ $ms -lt 3000 ] || fail "an idle drain took $ms ms"
pass "SIGTERM drains in-flight replies and exits 0"
