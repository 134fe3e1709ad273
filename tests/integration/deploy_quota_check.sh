#!/usr/bin/env bash
# deploy/quota-check (loadgen@.service's guard) on this machine's cgroups,
# v2 or v1: it names the quota of a cgroup above it, and refuses, saying
# why, when there is none.
# timeout: 60
# check: fast
# lane: side
# variants: release
. "$(dirname "$0")/../lib.sh"
need_root "makes a cgroup"
qc=$top/deploy/quota-check
if [ -e /sys/fs/cgroup/cgroup.controllers ]; then
	base=/sys/fs/cgroup
	grep -qw cpu $base/cgroup.controllers || skip "cgroup v2 without the cpu controller"
	echo +cpu >$base/cgroup.subtree_control 2>/dev/null
	set_quota() { echo "$1 100000" >"$cg/cpu.max"; }
	no_quota() { echo "max 100000" >"$cg/cpu.max"; }
elif [ -e /sys/fs/cgroup/cpu/cpu.cfs_quota_us ]; then
	base=/sys/fs/cgroup/cpu
	set_quota() { echo 100000 >"$cg/cpu.cfs_period_us"; echo "$1" >"$cg/cpu.cfs_quota_us"; }
	no_quota() { echo -1 >"$cg/cpu.cfs_quota_us"; }
else
	skip "no cgroup v2 and no cgroup v1 cpu hierarchy"
fi
cg=$base/relay-quota-check-$$
mkdir "$cg" || skip "cannot make a cgroup under $base"
sub=$cg/scenario.service
mkdir "$sub"
trap 'rmdir "$sub" "$cg" 2>/dev/null; cleanup_bg' EXIT

# run_in: quota-check as a process of $sub (a child, like a service under
# its slice), so the quota it must find is on the parent.
run_in() { sh -c 'echo $$ >"$1/cgroup.procs" && exec "$2"' sh "$sub" "$qc" 2>&1; }

set_quota 20000 || skip "cannot set a quota on $cg"
out=$(run_in) || fail "quota-check refused under a 20% quota: $out"
grep -q "CPU quota on .*relay-quota-check-$$: 20000 us every 100000 us (20% of one CPU)" <<<"$out" ||
	fail "quota-check did not name the quota: $out"
pass "names the parent's quota: $out"

no_quota
out=$(run_in) && fail "quota-check accepted a cgroup without a quota: $out"
grep -q "no CPU quota above .*relay-quota-check-$$/scenario.service" <<<"$out" ||
	fail "quota-check's refusal does not say why: $out"
pass "refuses without a quota, saying why"
