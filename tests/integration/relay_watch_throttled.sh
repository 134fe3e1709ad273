#!/usr/bin/env bash
# relay watching a real throttled group (10 % of a 10 ms period, a busy
# loop in it) and an idle one: the throttled group's cpu.stat counters on
# /metrics, and a late wake-up of relay's (relay kept from running for
# 150 ms) counted as late while it was throttled, for it and not for the
# idle group. Needs cgroup v2 with the cpu controller (the test hosts and
# the demo guests have it; a host whose cpu controller is bound to cgroup
# v1 skips, saying so).
# timeout: 60
# check: fast
. "$(dirname "$0")/../lib.sh"
. "$FIXTURES/relay/relay.sh"

up=$(free_udp_port)
base=(--listen "udp://127.0.0.1:$up" --upstream echo --cpus 0 --allow-non-rt)
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
metric_is "relay_late_while_throttled_total{cgroup=\"$hot\"}" -eq 0 ||
	fail "late while throttled before relay was late"
# relay kept from running for 150 ms (standing in for a throttled waker
# holding the ready list): its tick is late, while the hog's group is
# throttled in 9 of each 10 ms.
kill -STOP "$RELAY_PID"; sleep 0.15; kill -CONT "$RELAY_PID"
wait_metric 10 relay_late_wakeups_total -ge 1
wait_metric 10 "relay_late_while_throttled_total{cgroup=\"$hot\"}" -ge 1
metric_is "relay_late_while_throttled_total{cgroup=\"$idle\"}" -eq 0 || fail "late while an idle group was throttled"
metric_is "relay_cgroup_throttled_periods_total{cgroup=\"$idle\"}" -eq 0 || fail "the idle group was throttled"
metric_is "relay_cgroup_readable{cgroup=\"$hot\"}" -eq 1 || fail "the hot group not readable"
stop_relay
pass "a throttled group's counters, and relay's late wake-up while it was throttled (none for an idle group)"
