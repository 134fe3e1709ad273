#!/usr/bin/env bash
# relay watching a real throttled group (10 % of a 10 ms period, a busy
# loop in it) and an idle one: the throttled group's cpu.stat counters on
# /metrics, and relay's late wake-ups (relay kept from running for 300 ms
# while a client's datagram waited) counted as late while it was
# throttled, for it and not for the idle group, each by what it was: the
# tick, the UDP client's datagram (wakeup="datagram"), an AF_UNIX
# client's at SCHED_OTHER (non_rt_sender). Needs cgroup v2 with the cpu
# controller (the test hosts and the demo guests have it; a host whose
# cpu controller is bound to cgroup v1 skips, saying so).
# timeout: 60
# check: fast
. "$(dirname "$0")/../lib.sh"
. "$FIXTURES/relay/relay.sh"

up=$(free_udp_port)
name=relay-test-watch-$$
base=(--listen "udp://127.0.0.1:$up" --listen "unix://@$name" --upstream echo --cpus 0 --allow-non-rt)
need_root "a cgroup of its own"
mnt=$(awk '$9 == "cgroup2" { print $5; exit }' /proc/self/mountinfo)
{ [ -n "$mnt" ] && grep -qw cpu "$mnt/cgroup.controllers" 2>/dev/null; } ||
	skip "the cpu controller is not on cgroup v2 here (${mnt:-no cgroup2 mount}): no group can be throttled there"
grep -qw cpu "$mnt/cgroup.subtree_control" || echo +cpu >"$mnt/cgroup.subtree_control" ||
	skip "cannot enable the cpu controller below $mnt"
hot=$mnt/relay-test-hot-$$ idle=$mnt/relay-test-idle-$$
mkdir "$hot" "$idle" || fail "mkdir under $mnt"
cleanup_groups() {
	cleanup_bg
	for g in "$hot" "$idle"; do
		[ -d "$g" ] || continue
		while read -r p; do echo "$p" >"$mnt/cgroup.procs"; done <"$g/cgroup.procs"
		rmdir "$g"
	done
}
trap cleanup_groups EXIT
echo "1000 10000" >"$hot/cpu.max"	# 10 % of a 10 ms period
echo "max 10000" >"$idle/cpu.max"
bash -c 'echo $$ >"$1/cgroup.procs"; while :; do :; done' hog "$hot" &
bg_pids+=($!)
start_relay "${base[@]}" --watch-cgroups "$hot,$idle" --late-us 20000
wait_metric 10 "relay_cgroup_throttled_periods_total{cgroup=\"$hot\"}" -gt 5
metric_is "relay_late_while_throttled_total{cgroup=\"$hot\",wakeup=\"datagram\"}" -eq 0 ||
	fail "late while throttled before relay was late"
# One datagram first: the kernel turns receive timestamps on for relay's
# socket from a work item (net_enable_timestamp), and until it has run a
# datagram is stamped only when relay reads it.
udptool ping --to "127.0.0.1:$up" --expect-prefix "" >/dev/null || fail "no echo from relay"
# relay kept from running while a client's datagram waited, the hog's
# group throttled in 9 of each 10 ms: late of the datagram's kind while
# it was throttled (relay_late_wakeups.sh: the kinds themselves)
late_datagram "relay_late_while_throttled_total{cgroup=\"$hot\",wakeup=\"datagram\"}" "127.0.0.1:$up"
late_datagram "relay_late_while_throttled_total{cgroup=\"$hot\",wakeup=\"non_rt_sender\"}" "unix://@$name"
metric_is "relay_late_while_throttled_total{cgroup=\"$hot\",wakeup=\"datagram\"}" -eq 1 ||
	fail "the SCHED_OTHER AF_UNIX client's late wake-up counted as a datagram's"
wait_metric 10 "relay_late_while_throttled_total{cgroup=\"$hot\",wakeup=\"tick\"}" -ge 1
for k in datagram non_rt_sender tick stream; do
	metric_is "relay_late_while_throttled_total{cgroup=\"$idle\",wakeup=\"$k\"}" -eq 0 ||
		fail "$k: late while an idle group was throttled"
done
metric_is "relay_cgroup_throttled_periods_total{cgroup=\"$idle\"}" -eq 0 || fail "the idle group was throttled"
metric_is "relay_cgroup_readable{cgroup=\"$hot\"}" -eq 1 || fail "the hot group not readable"
stop_relay
pass "a throttled group's counters, and relay's late wake-ups while it was throttled by kind (tick, datagram, non_rt_sender); none for an idle group"
