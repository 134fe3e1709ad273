#!/usr/bin/env bash
# relay's late wake-ups by what woke it (relay_late_wakeups_total{wakeup}):
# relay kept from running for 300 ms while a client's datagram waited is
# a late tick and a late wake-up of the datagram's kind: a UDP client's
# "datagram" (relay cannot name its sender), an AF_UNIX client's at
# SCHED_OTHER "non_rt_sender" (its own delays are in the wait), the same
# client at SCHED_FIFO "datagram" again; the wake-ups' histogram holds
# each of them. Needs SCHED_FIFO for a client (root).
# timeout: 60
# check: fast
. "$(dirname "$0")/../lib.sh"
. "$FIXTURES/relay/relay.sh"

need_root "a SCHED_FIFO client"
chrt -f 10 true 2>/dev/null || skip "cannot run a SCHED_FIFO client here (chrt -f 10 refused)"
up=$(free_udp_port)
name=relay-test-late-$$
start_relay --listen "udp://127.0.0.1:$up" --listen "unix://@$name" --upstream echo \
	--cpus 0 --allow-non-rt --late-us 20000
# One datagram first: the kernel turns receive timestamps on for relay's
# socket from a work item (net_enable_timestamp), and until it has run a
# datagram is stamped only when relay reads it.
udptool ping --to "127.0.0.1:$up" --expect-prefix "" >/dev/null || fail "no echo from relay"
expect_metric 'relay_late_wakeups_total{wakeup="datagram"}' -eq 0
late_datagram 'relay_late_wakeups_total{wakeup="datagram"}' "127.0.0.1:$up"
late_datagram 'relay_late_wakeups_total{wakeup="non_rt_sender"}' "unix://@$name"
late_datagram 'relay_late_wakeups_total{wakeup="datagram"}' "unix://@$name" chrt -f 10
expect_metric 'relay_late_wakeups_total{wakeup="datagram"}' -eq 2
expect_metric 'relay_late_wakeups_total{wakeup="non_rt_sender"}' -eq 1
expect_metric 'relay_late_wakeups_total{wakeup="stream"}' -eq 0
expect_metric 'relay_late_wakeups_total{wakeup="tick"}' -ge 3
# each of the three waited 300 ms, less the client's send: over 0.2 s
n=$(metric 'relay_wake_latency_seconds_bucket{le="0.2"}')
all=$(metric relay_wake_latency_seconds_count)
[ $((all - n)) -ge 3 ] || fail "the wake-up histogram has $((all - n)) wake-ups over 0.2 s, not 3"
stop_relay
pass "late wake-ups by kind: datagram (UDP, SCHED_FIFO AF_UNIX), non_rt_sender (SCHED_OTHER AF_UNIX), tick"
