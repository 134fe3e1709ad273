#!/usr/bin/env bash
# The echo upstream reflects each datagram to its sender, in both families,
# and on several loop threads at once when there are CPUs for them. A reply
# may take up to 10 s: on a loaded host a non-RT relay under ASan can be
# kept off its CPU for seconds, and a slow echo is not this test's subject.
# timeout: 180
. "$(dirname "$0")/../lib.sh"
. "$FIXTURES/relay/relay.sh"

p=$(free_udp_port)
cpus=0
[ "$(nproc)" -ge 2 ] && cpus=0-1
start_relay --listen "udp://127.0.0.1:$p" --listen "udp://[::1]:$p" \
	--upstream echo --cpus $cpus --allow-non-rt --tick-us 50
for i in 1 2 3 4 5 6; do
	udptool ping --to "127.0.0.1:$p" --count 30 --expect-prefix "" --timeout 10 ||
		fail "v4 echo (client $i)"
done
udptool ping --to "[::1]:$p" --count 30 --size 1400 --expect-prefix "" --timeout 10 ||
	fail "v6 echo"
expect_metric relay_rx_packets_total -eq 210
expect_metric relay_tx_packets_total -eq 210
expect_metric relay_reply_packets_total -eq 0
expect_metric relay_flows_created_total -eq 7
stop_relay
pass "echo reflects to the sender"
