#!/usr/bin/env bash
# Connection slots are not held by silence: a client that sends nothing is
# closed at first_byte_timeout_ms (counted as silent) while one that spoke
# stays; one address holds at most max_conns_per_source connections (the
# next is reset and counted) while other addresses are served; a reload
# changes both; out-of-range values are refused, naming the key.
# timeout: 120
. "$(dirname "$0")/../lib.sh"
. "$FIXTURES/relay/relay.sh"

up=$(free_tcp_port)
pl=$(free_tcp_port)
# An echo upstream, a thread per connection.
pylib_bg net echo-server "$up"
wait_for 5 tcp_up "$up" || fail "the upstream did not start"

conf=$TEST_TMP/relay.ini
write_conf() {
	printf '[relay]\nlisten = tcp://127.0.0.1:%s\nupstream = tcp://127.0.0.1:%s\n' "$pl" "$up" >"$conf"
	printf 'allow_non_rt = true\ncpus = 0\n' >>"$conf"
	printf '%s\n' "$@" >>"$conf"
}
write_conf "first_byte_timeout_ms = 500" "max_conns_per_source = 3"
start_relay --config "$conf"
P="listener=\"tcp://127.0.0.1:$pl\""

# Two silent clients from 127.0.0.1 and one that speaks; a fourth from
# 127.0.0.1 is reset at once, one from 127.0.0.2 is served; the silent ones
# end after the deadline (not before), the talker does not.
pylib net silent-clients "$pl" 3 0.5 || fail "deadline and limit per source"
expect_metric "relay_tcp_closed_total{$P,reason=\"silent\"}" -eq 2
expect_metric "relay_tcp_refused_source_total{$P}" -eq 1
expect_metric "relay_tcp_accepted_total{$P}" -eq 4
none_left() { [ "$(metric "relay_tcp_active_connections{$P}")" = 0 ]; }
wait_for 10 none_left || fail "connections left open after their clients went"

# A reload: one connection per address, no deadline.
write_conf "max_conns_per_source = 1"
kill -HUP "$RELAY_PID"
wait_for 10 grep -q "reloaded" "$TEST_TMP/relay.log" || fail "no reload"
# A connection held 0.8 s, longer than the old deadline: no longer silent.
pylib net source-limit-one "$pl" 0.8 || fail "after the reload"
expect_metric "relay_tcp_refused_source_total{$P}" -eq 2
expect_metric "relay_tcp_closed_total{$P,reason=\"silent\"}" -eq 2
stop_relay

# Bad values name the key, with the file's line or the flag.
write_conf "first_byte_timeout_ms = -5"
expect_exit 78 "relay.ini:6: first_byte_timeout_ms: -5 out of range 0..600000" \
	"$RELAY" --check-config --config "$conf"
expect_exit 64 "--max-conns-per-source: 'many' is not an integer" \
	"$RELAY" --check-config --listen "tcp://127.0.0.1:$pl" \
	--upstream "tcp://127.0.0.1:$up" --max-conns-per-source many
pass "first-byte deadline and connections per source, reloadable, checked"
