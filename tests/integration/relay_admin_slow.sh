#!/usr/bin/env bash
# Slow clients cannot keep /healthz from answering: 32 connections (twice
# the cap) trickle one byte of a header every 3 s and reconnect when closed,
# for 20 s; a health check made every second is answered within 5 s, as a
# request must be read and answered within 5 s of its accept, and at the
# cap the oldest connection makes room for the next.
# timeout: 90
. "$(dirname "$0")/../lib.sh"
. "$FIXTURES/relay/relay.sh"

p=$(free_udp_port)
start_relay --listen udp://127.0.0.1:"$p" --upstream echo --cpus 0 --allow-non-rt
python3 "$FIXTURES/relay/admintool.py" slow --port "$ADMIN_PORT" \
	--clients 32 --every 3 --seconds 20 --bound 5 >"$TEST_TMP/slow.out" 2>&1 ||
	fail "$(cat "$TEST_TMP/slow.out")"
cat "$TEST_TMP/slow.out"
curl -sf --max-time 5 "http://127.0.0.1:$ADMIN_PORT/healthz" >/dev/null ||
	fail "admin after the slow clients"
stop_relay
pass "slow clients do not hold the admin endpoint"
