#!/usr/bin/env bash
# Slow clients cannot keep /healthz from answering: 32 connections (twice
# the cap) trickle one byte of a header every 3 s and reconnect when closed,
# for 30 s; a health check made every second is answered within 10 s. A
# request must be read and answered within 5 s of its accept, and at the
# cap the oldest connection (open 0.5 s at least) makes room for the next;
# a check that finds every slot younger than that waits in the listen
# backlog, at worst until the oldest is closed at its deadline: twice the
# deadline is the bound. Before the deadline, checks went unanswered 20 s.
# timeout: 90
. "$(dirname "$0")/../lib.sh"
. "$FIXTURES/relay/relay.sh"

p=$(free_udp_port)
start_relay --listen udp://127.0.0.1:"$p" --upstream echo --cpus 0 --allow-non-rt
python3 "$FIXTURES/relay/admintool.py" slow --port "$ADMIN_PORT" \
	--clients 32 --every 3 --seconds 30 --bound 10 >"$TEST_TMP/slow.out" 2>&1 ||
	fail "$(cat "$TEST_TMP/slow.out")"
cat "$TEST_TMP/slow.out"
curl -sf --max-time 5 "http://127.0.0.1:$ADMIN_PORT/healthz" >/dev/null ||
	fail "admin after the slow clients"
stop_relay
pass "slow clients do not hold the admin endpoint"
