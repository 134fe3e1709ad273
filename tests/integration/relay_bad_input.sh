#!/usr/bin/env bash
# Bad input gets a clear error and a distinct exit status, and at run time
# relay counts what it could not relay and keeps serving: usage errors (64),
# config errors (78, file:line), unresolvable addresses, ports in use (69),
# oversize datagrams, an upstream that refuses or disappears, a flood past
# the socket buffer, more clients than max_flows.
# timeout: 120
# shellcheck disable=SC2154 # NAME_PORT, NAME_PID: set by start_upstream NAME
. "$(dirname "$0")/../lib.sh"
. "$FIXTURES/relay/relay.sh"

p=$(free_udp_port)
ok_args=(--listen "udp://127.0.0.1:$p" --upstream echo --cpus 0 --allow-non-rt --admin off)

expect_exit 0 "usage: relay --listen udp://ADDR:PORT" "$RELAY" --help
man -l "$top/server/relay.8" >/dev/null 2>&1 || [ ! -x "$(command -v man)" ] || fail "relay.8 does not render"

# Usage (64): the flag named in the message.
expect_exit 64 "unknown option '--bogus'" "$RELAY" --bogus
expect_exit 64 "--tick-us: 10 out of range 50..1000000" "$RELAY" "${ok_args[@]}" --tick-us 10
expect_exit 64 "--rt-priority: 'high' is not an integer" "$RELAY" "${ok_args[@]}" --rt-priority high
expect_exit 64 "no upstream" "$RELAY" --listen "udp://127.0.0.1:$p"
expect_exit 64 "must be in brackets" "$RELAY" --listen "udp://::1:$p" --upstream echo
expect_exit 64 "unexpected argument 'extra'" "$RELAY" "${ok_args[@]}" extra
expect_exit 64 "--listen needs a value" "$RELAY" --listen
expect_exit 64 "cannot resolve 'no-such-host.invalid'" "$RELAY" --listen "udp://127.0.0.1:$p" \
	--upstream udp://no-such-host.invalid:53
expect_exit 64 "cpus: CPU 1000 is not available" "$RELAY" "${ok_args[@]}" --cpus 1000

# Config (78): file:line: what.
conf=$TEST_TMP/bad.ini
printf '[relay]\nlisten = udp://127.0.0.1:%s\nupstream = echo\nmax_flow = 10\n' "$p" >"$conf"
expect_exit 78 "bad.ini:4: unknown key 'max_flow'" "$RELAY" --config "$conf"
expect_exit 78 "bad.ini:4: unknown key 'max_flow'" "$RELAY" --check-config --config "$conf"
printf '[relay]\nlisten = udp://127.0.0.1:%s\nupstream = udp://nowhere.invalid:53\n' "$p" >"$conf"
expect_exit 78 "bad.ini:3: upstream: 'udp://nowhere.invalid:53': cannot resolve" "$RELAY" --check-config --config "$conf"
printf '[relay]\nlisten = udp://127.0.0.1:%s\n' "$p" >"$conf"
expect_exit 78 "no upstream" "$RELAY" --check-config --config "$conf"
expect_exit 78 "No such file" "$RELAY" --check-config --config "$TEST_TMP/missing.ini"
printf '[relay]\nlisten = udp://127.0.0.1:%s\nupstream = echo\n' "$p" >"$conf"
expect_exit 0 "configuration OK" "$RELAY" --check-config --config "$conf"
# A flag fixes what the file lacks, and its error is a usage error.
printf '[relay]\nlisten = udp://127.0.0.1:%s\n' "$p" >"$conf"
expect_exit 0 "upstream echo" "$RELAY" --check-config --config "$conf" --upstream echo
expect_exit 64 "--batch: 0 out of range" "$RELAY" --check-config --config "$conf" --upstream echo --batch 0

# Ports in use (69).
hold_port udp
expect_exit 69 "udp://127.0.0.1:$HELD_PORT: cannot listen: Address already in use" \
	"$RELAY" --listen "udp://127.0.0.1:$HELD_PORT" --upstream echo --cpus 0 \
	--allow-non-rt --admin off
kill "$HELD_PID"
hold_port tcp
expect_exit 69 "admin tcp://127.0.0.1:$HELD_PORT: cannot listen" "$RELAY" \
	--listen "udp://127.0.0.1:$p" --upstream echo --cpus 0 --allow-non-rt \
	--admin "127.0.0.1:$HELD_PORT"
kill "$HELD_PID"

# Oversize datagrams are dropped and counted; the next one goes through.
start_upstream up
start_relay --listen "udp://127.0.0.1:$p" --upstream "udp://127.0.0.1:$up_PORT" \
	--cpus 0 --allow-non-rt --max-datagram 512
udptool send --to "127.0.0.1:$p" --size 1000 --count 3
udptool ping --to "127.0.0.1:$p" --size 500 || fail "after oversize datagrams"
udptool ping --to "127.0.0.1:$p" --size 0 || fail "an empty datagram is relayed"
expect_metric 'relay_drops_total{reason="oversize"}' -eq 3

# The upstream disappears: ICMP port unreachable is counted, relay answers
# /healthz, and the flow works again when the upstream is back.
kill "$up_PID"
sleep 0.3
udptool ping --to "127.0.0.1:$p" --timeout 0.3 --count 3 >/dev/null && fail "a dead upstream answered"
sleep 0.3
udptool ping --to "127.0.0.1:$p" --timeout 0.3 --count 1 >/dev/null
expect_metric 'relay_drops_total{reason="upstream_refused"}' -ge 1
expect_metric 'relay_errors_total{kind="upstream_refused"}' -ge 1
[ "$(curl -sf "http://127.0.0.1:$ADMIN_PORT/healthz")" = ok ] || fail "unhealthy after refusals"
bg python3 "$FIXTURES/relay/udptool.py" serve --port "$up_PORT" --seconds 60
sleep 0.5
udptool ping --to "127.0.0.1:$p" --count 3 || fail "upstream back, relay did not recover"
stop_relay

# Flood past the receive buffer: relay stopped while 3000 datagrams arrive;
# every one is either relayed or counted as a kernel drop.
start_relay --listen "udp://127.0.0.1:$p" --upstream echo --cpus 0 \
	--allow-non-rt --socket-buffer 65536 --max-flows 64
rss0=$(awk '/VmRSS/ { print $2 }' "/proc/$RELAY_PID/status")
kill -STOP "$RELAY_PID"
udptool send --to "127.0.0.1:$p" --size 1000 --count 3000
kill -CONT "$RELAY_PID"
wait_for 5 curl -sf "http://127.0.0.1:$ADMIN_PORT/healthz" || fail "unresponsive after the flood"
# The admin thread answers first; the loop reads the queue (and learns the
# kernel's drop count with it) when the scheduler lets it run.
# flood_counted N: rx + overflow have reached N (both kept in rx, ov).
flood_counted() {
	rx=$(metric relay_rx_packets_total)
	ov=$(metric 'relay_drops_total{reason="rcvbuf_overflow"}')
	[ "$rx" != missing ] && [ "$ov" != missing ] && [ $((rx + ov)) -ge "$1" ]
}
wait_for 10 flood_counted 3000
[ "$ov" -gt 0 ] || fail "no receive-buffer drops counted (rx $rx)"
[ $((rx + ov)) -eq 3000 ] || fail "rx $rx + overflow $ov != 3000 sent"

# More clients than max_flows: evicted, counted, memory flat. Every
# datagram from a new source that the relay read took a flow slot, so each
# one past the table's 64 evicted one; the others overflowed the small
# receive buffer, counted. Exact, however fast the relay reads.
rx0=$rx ov0=$ov
active0=$(metric relay_flows_active)
# (a pause of 2 ms after every 32: most of them get in, on a slow build too)
pylib net udp-send "$p" 500 x --burst 32 --gap 0.002
wait_for 10 flood_counted $((rx0 + ov0 + 500))
[ $((rx + ov - rx0 - ov0)) -eq 500 ] ||
	fail "rx $rx - $rx0 + overflow $ov - $ov0 != the 500 sent"
new=$((rx - rx0))
[ "$new" -gt 128 ] || fail "only $new of 500 new sources got past the receive buffer"
wait_metric 10 relay_flows_evicted_total -ge $((new + active0 - 64))
expect_metric relay_flows_active -le 64
rss1=$(awk '/VmRSS/ { print $2 }' "/proc/$RELAY_PID/status")
[ $((rss1 - rss0)) -lt 8192 ] || fail "RSS grew from $rss0 to $rss1 kB"
udptool ping --to "127.0.0.1:$p" --expect-prefix "" || fail "after the flood"
stop_relay
pass "bad input: clear errors, distinct statuses, everything counted"
