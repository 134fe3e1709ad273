#!/usr/bin/env bash
# unix:// listeners: AF_UNIX datagrams at a path and at an abstract name
# are echoed, and relayed to a UDP upstream, each back to the name its
# client is bound to; a client with no name is dropped and counted; loadgen
# loads one without loss. relay removes its socket file when it exits; one
# left by a relay that was killed is replaced at the next start, any other
# file is refused, and so are a unix:// upstream and a unix:// listener on
# more than one CPU.
# check: fast
# shellcheck disable=SC2154 # NAME_PORT, NAME_PID: set by start_upstream NAME
# timeout: 120
. "$(dirname "$0")/../lib.sh"
. "$FIXTURES/relay/relay.sh"

path=$TEST_TMP/relay.sock
name=relay-test-$$
start_relay --listen "unix://$path" --listen "unix://@$name" --upstream echo \
	--cpus 0 --allow-non-rt
udptool ping --to "unix://@$name" --count 30 --expect-prefix "" --timeout 10 ||
	fail "echo on an abstract name"
udptool ping --to "unix://$path" --from "$TEST_TMP/client.sock" --count 10 \
	--size 1400 --expect-prefix "" --timeout 10 || fail "echo on a path, to a path"
udptool send --to "unix://@$name" --count 5
wait_metric 10 'relay_drops_total{reason="unnamed"}' -eq 5
expect_metric relay_rx_packets_total -eq 45
expect_metric relay_flows_created_total -eq 2

"$LOADGEN" --target "unix://@$name" --rate 2000 --duration 1 --flows 4 \
	--json "$TEST_TMP/lg.json" >"$TEST_TMP/lg.out" 2>&1 ||
	fail "loadgen on unix://@$name: $(cat "$TEST_TMP/lg.out")"
json_ok "$TEST_TMP/lg.json" '.sent == 2000 and .received == 2000 and .lost == 0' \
	"loadgen over AF_UNIX, without loss"
expect_metric relay_flows_created_total -eq 6
stop_relay
[ ! -e "$path" ] || fail "relay left its socket file behind at exit"

# A relay that was killed leaves its socket file: the same path again is
# a socket nobody serves.
start_relay --listen "unix://$path" --upstream echo --cpus 0 --allow-non-rt
kill -KILL "$RELAY_PID"
wait "$RELAY_PID" 2>/dev/null
[ -S "$path" ] || fail "the killed relay's socket file is gone: the stale case below tests nothing"
start_upstream up --prefix "up:"
start_relay --listen "unix://$path" --upstream "udp://127.0.0.1:$up_PORT" \
	--cpus 0 --allow-non-rt
udptool ping --to "unix://$path" --count 10 --timeout 10 ||
	fail "relayed from unix:// to a UDP upstream"
expect_metric relay_reply_packets_total -eq 10
expect_exit 69 "a program serves this address" "$RELAY" --listen "unix://$path" \
	--upstream echo --cpus 0 --allow-non-rt --admin off
stop_relay

: >"$TEST_TMP/file"
expect_exit 69 "unix://$TEST_TMP/file: cannot listen" "$RELAY" \
	--listen "unix://$TEST_TMP/file" --upstream echo --cpus 0 --allow-non-rt --admin off
[ -f "$TEST_TMP/file" ] || fail "relay removed a file that is not a socket"
expect_exit 64 "served by one loop" "$RELAY" --listen "unix://@$name" \
	--upstream echo --cpus 0,1 --allow-non-rt --admin off
expect_exit 64 "the upstream cannot be unix://" "$RELAY" --listen "unix://@$name" \
	--upstream "unix://@x" --admin off
expect_exit 64 "expected unix:///PATH" "$RELAY" --listen "unix://relative" \
	--upstream echo --admin off
expect_exit 64 "say udp://, tcp:// or unix://" "$LOADGEN" --target "tls://127.0.0.1:5" \
	--rate 1 --duration 1
pass "unix:// listeners echo, relay, drop the unnamed and replace a stale socket"
