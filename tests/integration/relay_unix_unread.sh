#!/usr/bin/env bash
# AF_UNIX clients that never read cannot take the replies of the others:
# five sockets (as nobody) each send 20 datagrams of 4000 bytes and read
# none, and a client that reads still gets its ten replies. Each reply
# waits in its client's queue charged to relay's listener until read, 11
# per client (net.unix.max_dgram_qlen + 1); at the kernel's default send
# buffer (22 such replies) the readers' replies failed too, 0 of 10 of
# them came back, and one full queue gave up the rest of a batch. Now the
# buffer holds 16 such queues, and a reply whose client's queue is full
# fails alone: exactly the 5 x 9 that found their queue full are dropped
# (tx_full). A flow whose replies fail 16 times in a row is closed
# (flows_undelivered): one socket sending 40 loses its flow once.
# check: fast
# timeout: 120
. "$(dirname "$0")/../lib.sh"
. "$FIXTURES/relay/relay.sh"
need_root "clients as another user (nobody)"
command -v setpriv >/dev/null || skip "no setpriv(1)"

qlen=$(cat /proc/sys/net/unix/max_dgram_qlen)
[ "$qlen" = 10 ] || skip "net.unix.max_dgram_qlen is $qlen, not the 10 these counts assume"
name=relay-unread-$$
start_relay --listen "unix://@$name" --upstream echo --cpus 0 --allow-non-rt
grep -q "warning: .*send buffer" "$TEST_TMP/relay.log" &&
	fail "relay could not size its send buffer: $(cat "$TEST_TMP/relay.log")"
# hog N COUNT SIZE OUT: N sockets as nobody that send COUNT x SIZE bytes
# and never read, in the background; OUT says when they have sent.
hog() {
	bg setpriv --reuid=65534 --regid=65534 --clear-groups \
		python3 "$FIXTURES/relay/udptool.py" hog --to "unix://@$name" \
		--sockets "$1" --count "$2" --size "$3" --seconds 60 >"$4"
	wait_for 20 grep -q sent "$4" || fail "the clients that do not read did not send"
}
hog 5 20 4000 "$TEST_TMP/hog5"
wait_metric 10 relay_rx_packets_total -eq 100
udptool ping --to "unix://@$name" --count 10 --size 4000 --expect-prefix "" --timeout 2 ||
	fail "a client that reads got no reply while five others did not read"
expect_metric 'relay_drops_total{reason="tx_full"}' -eq 45
expect_metric relay_reply_tx_packets_total -eq $((5 * 11 + 10))
expect_metric relay_flows_undelivered_total -eq 0

# One that sends 40: its 16th failure in a row closes its flow (at the
# end of that batch; the datagrams after it open a new one), and the 13
# failures after cannot close another.
hog 1 40 100 "$TEST_TMP/hog1"
wait_metric 10 relay_rx_packets_total -eq 150
expect_metric relay_flows_undelivered_total -eq 1
expect_metric 'relay_drops_total{reason="tx_full"}' -eq $((45 + 29))
udptool ping --to "unix://@$name" --count 10 --size 4000 --expect-prefix "" --timeout 2 ||
	fail "a client that reads got no reply after the sixth"
stop_relay
pass "five clients that do not read pin 55 replies; the others' are delivered; 16 failures close a flow"
