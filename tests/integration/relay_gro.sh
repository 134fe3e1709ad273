#!/usr/bin/env bash
# --udp-gro: a burst sent as one segmented write (UDP_SEGMENT) arrives at
# the relay as one coalesced run and leaves as one; the upstream and the
# client still see every datagram on its own, in order, and the counters
# count datagrams, not runs. Without --udp-gro the same burst arrives
# datagram by datagram: same results, no runs.
# timeout: 60
# shellcheck disable=SC2154 # NAME_PORT, NAME_PID: set by start_upstream NAME
. "$(dirname "$0")/../lib.sh"
. "$FIXTURES/relay/relay.sh"

start_upstream up --prefix "up:"
for mode in gro plain; do
	flag=
	[ $mode = gro ] && flag=--udp-gro
	p=$(free_udp_port)
	start_relay --listen "udp://127.0.0.1:$p" --listen "udp://[::1]:$p" \
		--upstream "udp://127.0.0.1:$up_PORT" --allow-non-rt $flag
	udptool burst --to "127.0.0.1:$p" --count 40 --size 100 ||
		fail "$mode: v4 burst through the upstream"
	udptool burst --to "[::1]:$p" --count 48 --size 1200 ||
		fail "$mode: v6 burst through the upstream"
	expect_metric relay_rx_packets_total -eq 88
	expect_metric relay_tx_packets_total -eq 88
	expect_metric relay_reply_packets_total -eq 88
	expect_metric relay_reply_tx_packets_total -eq 88
	drops=$(curl -sf "http://127.0.0.1:$ADMIN_PORT/metrics" |
		awk '/^relay_drops_total[{]/ { n += $2 } END { print n + 0 }')
	[ "$drops" -eq 0 ] || fail "$mode: $drops datagrams dropped"
	if [ $mode = gro ]; then
		# the requests came as 2 runs; replies are sent one by one
		expect_metric relay_gro_runs_total -eq 2
	else
		expect_metric relay_gro_runs_total -eq 0
	fi
	stop_relay
done

# Echo reflects a run as a run; a datagram over --max-datagram inside a
# run drops the whole run, counted by datagram.
p=$(free_udp_port)
start_relay --listen "udp://127.0.0.1:$p" --upstream echo --allow-non-rt \
	--udp-gro --max-datagram 512
udptool burst --to "127.0.0.1:$p" --count 30 --size 500 --expect-prefix "" ||
	fail "echo of a burst"
udptool burst --to "127.0.0.1:$p" --count 10 --size 600 --expect-prefix "" \
	--timeout 0.5 >/dev/null && fail "a burst of oversize datagrams came back"
expect_metric relay_rx_packets_total -eq 40
expect_metric relay_tx_packets_total -eq 30
expect_metric 'relay_drops_total{reason="oversize"}' -eq 10
expect_metric relay_gro_runs_total -eq 2
stop_relay
pass "coalesced runs keep every datagram and count each"
