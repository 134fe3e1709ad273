#!/usr/bin/env bash
# relay forwards both ways for IPv4 and IPv6 clients and upstreams; each
# client gets its own replies (flows by 4-tuple), from the address it sent to.
# timeout: 60
# shellcheck disable=SC2154 # NAME_PORT, NAME_PID: set by start_upstream NAME
# check: fast
. "$(dirname "$0")/../lib.sh"
. "$FIXTURES/relay/relay.sh"

start_upstream up4 --bind 127.0.0.1 --log "$TEST_TMP/up4.log"
start_upstream up6 --bind ::1 --prefix up6:
p4=$(free_udp_port)
p6=$(free_udp_port)
start_relay --listen "udp://127.0.0.1:$p4" --listen "udp://[::1]:$p6" \
	--upstream "udp://127.0.0.1:$up4_PORT" --cpus 0 --allow-non-rt

udptool ping --to "127.0.0.1:$p4" --count 20 || fail "v4 client through v4 upstream"
udptool ping --to "[::1]:$p6" --count 20 || fail "v6 client through v4 upstream"

# Four clients at once, each must see only its own replies.
for i in 1 2 3 4; do
	udptool ping --to "127.0.0.1:$p4" --count 50 --size $((i * 100)) >"$TEST_TMP/c$i" 2>&1 &
	pids[i]=$!
done
for i in 1 2 3 4; do
	wait "${pids[$i]}" || fail "concurrent client $i: $(cat "$TEST_TMP/c$i")"
done
expect_metric relay_flows_active -eq 6
expect_metric relay_rx_packets_total -eq 240
expect_metric relay_reply_tx_packets_total -eq 240
# One upstream socket per flow: 6 distinct source ports at the upstream.
n=$(awk '{ print $1 }' "$TEST_TMP/up4.log" | sort -u | wc -l)
[ "$n" -eq 6 ] || fail "upstream saw $n source ports, expected 6"
stop_relay

# Wildcard listeners answer from the address each client sent to (the
# kernel would otherwise pick 127.0.0.1 for a client on 127.0.0.1).
pw=$(free_udp_port)
start_relay --listen "udp://0.0.0.0:$pw" --listen "udp://[::]:$pw" \
	--upstream "udp://127.0.0.1:$up4_PORT" --cpus 0 --allow-non-rt
udptool ping --to "127.0.0.2:$pw" --count 5 || fail "reply from the address sent to (v4)"
udptool ping --to "[::1]:$pw" --count 5 || fail "wildcard v6 listener"
stop_relay
start_relay --listen "udp://0.0.0.0:$pw" --upstream echo --cpus 0 --allow-non-rt
udptool ping --to "127.0.0.3:$pw" --count 5 --expect-prefix "" || fail "echo from the address sent to"
stop_relay

# An IPv6 upstream.
start_relay --listen "udp://127.0.0.1:$p4" --upstream "udp://[::1]:$up6_PORT" \
	--cpus 0 --allow-non-rt
udptool ping --to "127.0.0.1:$p4" --count 10 --expect-prefix up6: ||
	fail "v4 client through v6 upstream"
stop_relay
pass "v4 and v6 relayed both ways, flows kept apart"
