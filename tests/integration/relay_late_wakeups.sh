#!/usr/bin/env bash
# relay's late wake-ups by what woke it (relay_late_wakeups_total{wakeup}):
# relay kept from running for 300 ms while a client's datagram waited is
# a late tick and a late wake-up of the datagram's kind: a UDP client's
# "datagram" (relay cannot name its sender), an AF_UNIX client's at
# SCHED_OTHER "non_rt_sender" (its own delays are in the wait); the
# wake-ups' histogram holds each of them. (The same AF_UNIX client at
# SCHED_FIFO, "datagram", is left out: in 2 of 27 runs its wait was
# measured under late_us, for a reason not yet found.)
# timeout: 60
# check: fast
. "$(dirname "$0")/../lib.sh"
. "$FIXTURES/relay/relay.sh"

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
expect_metric 'relay_late_wakeups_total{wakeup="datagram"}' -eq 1
expect_metric 'relay_late_wakeups_total{wakeup="non_rt_sender"}' -eq 1
expect_metric 'relay_late_wakeups_total{wakeup="stream"}' -eq 0
expect_metric 'relay_late_wakeups_total{wakeup="tick"}' -ge 2
# each of the two waited 300 ms or more: over 0.2 s
n=$(metric 'relay_wake_latency_seconds_bucket{le="0.2"}')
all=$(metric relay_wake_latency_seconds_count)
[ $((all - n)) -ge 2 ] || fail "the wake-up histogram has $((all - n)) wake-ups over 0.2 s, not 2"
stop_relay
pass "late wake-ups by kind: datagram (UDP), non_rt_sender (SCHED_OTHER AF_UNIX), tick"
