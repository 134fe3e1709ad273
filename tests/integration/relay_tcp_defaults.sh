#!/usr/bin/env bash
# The defaults leave no slot open to silence or to one address: with
# neither first_byte_timeout_ms nor max_conns_per_source set, one address
# gets 1024 connections of a loop (a quarter of max_conns) and the next is
# reset, and a client that sends nothing is closed after 10 s.
# timeout: 90
. "$(dirname "$0")/../lib.sh"
. "$FIXTURES/relay/relay.sh"

up=$(free_tcp_port)
pl=$(free_tcp_port)
start_relay --listen "tcp://127.0.0.1:$pl" --upstream "tcp://127.0.0.1:$up" \
	--cpus 0 --allow-non-rt
P="listener=\"tcp://127.0.0.1:$pl\""
python3 "$FIXTURES/relay/silence.py" --relay "$pl" --upstream-port "$up" \
	--per-source 1024 --first-byte 10 >"$TEST_TMP/silence.out" 2>&1 ||
	fail "$(cat "$TEST_TMP/silence.out")"
cat "$TEST_TMP/silence.out"
expect_metric "relay_tcp_refused_source_total{$P}" -eq 1
expect_metric "relay_tcp_closed_total{$P,reason=\"silent\"}" -ge 1
stop_relay
pass "by default silence is closed at 10 s and one address holds 1024 connections"
