#!/usr/bin/env bash
# The CONFIG_RT_GROUP_SCHED trap: in a cgroup with no real-time budget
# (cpu.rt_runtime_us 0, what every new group gets) SCHED_FIFO is refused
# even to root. relay names that cause and the group, exits 71, or with
# --allow-non-rt runs SCHED_OTHER and says why in its log and stats. Needs
# the cgroup v1 cpu controller of a kernel built with CONFIG_RT_GROUP_SCHED.
# timeout: 60
. "$(dirname "$0")/../lib.sh"
. "$FIXTURES/relay/relay.sh"
need_root "a cpu cgroup and SCHED_FIFO"
cg=/sys/fs/cgroup/cpu
[ -f "$cg/cpu.rt_runtime_us" ] ||
	skip "no cgroup v1 cpu controller with cpu.rt_runtime_us (no CONFIG_RT_GROUP_SCHED, or cgroup v2 only)"
grp=$cg/relay-test-rt.$$
mkdir "$grp" 2>/dev/null || skip "cannot create a cgroup under $cg"
trap 'cleanup_bg; rmdir "$grp" 2>/dev/null' EXIT
[ "$(cat "$grp/cpu.rt_runtime_us")" = 0 ] || fail "a new group has RT runtime $(cat "$grp/cpu.rt_runtime_us")"
# in_group CMD...: CMD as a member of the group.
in_group() { echo "$BASHPID" >"$grp/cgroup.procs" && exec timeout 20 "$@"; }

refused_rt in_group "CONFIG_RT_GROUP_SCHED and this process is in cgroup /relay-test-rt.$$, which has no real-time budget" \
	"$TEST_TMP/r.json"
pass "the RT_GROUP_SCHED trap is named"
