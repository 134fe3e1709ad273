#!/usr/bin/env bash
# --cpu-quota puts loadgen (or only its sender threads) into a cgroup of its
# own with that CPU bandwidth, for real: read back from /proc/<tid>/cgroup
# and the cgroup's own files while it runs; cpu.stat's throttling shows up
# in the JSON; the cgroup is gone afterwards, also after SIGINT.
# timeout: 180
. "$(dirname "$0")/../lib.sh"
. "$FIXTURES/loadgen/lib.sh"
need_root "creates cgroups"
grep -qE ' - cgroup2? ' /proc/self/mountinfo || skip "no cgroup file system"

start_echo
target=udp://127.0.0.1:$ECHO_PORT

# cgdir PID: the cgroup directory loadgen PID made (empty when none)
cgdir() {
	find /sys/fs/cgroup -maxdepth 6 -type d -name "relay-loadgen-$1" \
		2>/dev/null | head -n 1
}

has_cg() { [ -n "$(cgdir "$1")" ]; }

# quota_of DIR: "QUOTA PERIOD" from cpu.max (v2) or cpu.cfs_* (v1)
quota_of() {
	if [ -f "$1/cpu.max" ]; then cat "$1/cpu.max"
	else echo "$(cat "$1/cpu.cfs_quota_us") $(cat "$1/cpu.cfs_period_us")"
	fi
}

# in_cg TID: is thread TID of $lg in loadgen's cgroup?
in_cg() { grep -q "/relay-loadgen-$lg\(/\|$\)" "/proc/$lg/task/$1/cgroup"; }

# 1: the whole process, 5 % of a CPU, offered four times what 5 % of a CPU
# can send here. How much that is depends on the host and the build:
# unthrottled, loadgen sends as fast as it can (far behind a 2M pps
# schedule) and the packets per CPU-second it used are its price.
"$LOADGEN" --target "$target" --rate 2M --duration 50ms --timeout 200 \
	--no-progress --json "$TEST_TMP/cal.json" >"$TEST_TMP/cal.txt" 2>&1 ||
	fail "calibration run exited $?: $(cat "$TEST_TMP/cal.txt")"
per_cpu_s=$(jget "$TEST_TMP/cal.json" \
	"int(j['sent'] / max(j['cpu']['user_s'] + j['cpu']['sys_s'], 1e-3))")
rate=$(((per_cpu_s * 5 / 100) * 4))
[ "$rate" -gt 2000000 ] && rate=2000000	# what one sender thread paces
echo "unthrottled: $per_cpu_s packets per CPU-second; offering $rate pps under 5 %"
"$LOADGEN" --target "$target" --rate "$rate" --duration 1 --cpu-quota 5% \
	--quota-period-us 20000 --json "$TEST_TMP/p.json" >"$TEST_TMP/p.txt" &
lg=$!
wait_for 5 has_cg "$lg" || fail "no cgroup relay-loadgen-$lg appeared"
dir=$(cgdir $lg)
# every thread (main and sender) in the cgroup, once the senders exist
all_in() {
	local t n=0
	for t in "/proc/$lg/task"/*; do
		in_cg "${t##*/}" || return 1
		n=$((n + 1))
	done
	[ "$n" -ge 2 ]
}
wait_for 5 all_in || fail "not every thread of $lg is in $dir"
[ "$(quota_of "$dir")" = "1000 20000" ] || fail "quota in $dir is $(quota_of "$dir")"
wait "$lg" || fail "loadgen exited $?: $(cat "$TEST_TMP/p.txt")"
cat "$TEST_TMP/p.txt"
[ -d "$dir" ] && fail "$dir is still there after the run"
check_py "$TEST_TMP/p.json" "j['cgroup']['path'] == '$dir'" "cgroup.path"
check_py "$TEST_TMP/p.json" "j['cgroup']['quota_us'] == 1000 and
	j['cgroup']['period_us'] == 20000" "quota in the JSON"
check_py "$TEST_TMP/p.json" "j['cgroup']['nr_periods'] > 50" "cpu.stat periods"
check_py "$TEST_TMP/p.json" "j['cgroup']['nr_throttled'] > 10 and
	j['cgroup']['throttled_us'] > 100000" "no throttling under a 5 % quota"
check_py "$TEST_TMP/p.json" "j['schedule_error_us']['max'] > 5000" \
	"throttling did not delay sends"
grep -q "throttled in" "$TEST_TMP/p.txt" || fail "table lacks the throttling line"
check_py "$TEST_TMP/p.json" "not j['rate_ok'] and j['rate_shortfall_pct'] > 10 and
	j['sent'] == j['expected']" "falling behind under the quota is not flagged"
grep -q "BELOW TARGET" "$TEST_TMP/p.txt" || fail "the table does not flag the shortfall"

# 2: only the sender threads; the main thread stays where it was
"$LOADGEN" --target "$target" --rate 2000 --duration 3 --threads 2 \
	--cpu-quota 50% --quota-scope threads --json "$TEST_TMP/t.json" \
	>"$TEST_TMP/t.txt" &
lg=$!
wait_for 5 has_cg "$lg" || fail "no cgroup for thread scope"
inside() {
	local t n=0
	for t in "/proc/$lg/task"/*; do in_cg "${t##*/}" && n=$((n + 1)); done
	echo "$n"
}
two_in() { [ "$(inside)" -eq 2 ]; }
wait_for 5 two_in || fail "$(inside) threads in the cgroup, expected the 2 senders"
in_cg "$lg" && fail "the main thread went into the quota cgroup"
dir=$(cgdir $lg)
wait "$lg" || fail "loadgen exited $?: $(cat "$TEST_TMP/t.txt")"
[ -d "$dir" ] && fail "$dir is still there after the thread-scope run"
check_py "$TEST_TMP/t.json" "j['cgroup']['scope'] == 'threads'" "scope"

# 3: SIGINT mid-run: results written, cgroup removed, exit 130
"$LOADGEN" --target "$target" --rate 2000 --duration 30 --cpu-quota 50% \
	--json "$TEST_TMP/i.json" >"$TEST_TMP/i.txt" &
lg=$!
wait_for 5 has_cg "$lg" || fail "no cgroup before SIGINT"
dir=$(cgdir $lg)
sleep 1
kill -INT "$lg"
status=0
wait "$lg" || status=$?
[ "$status" = 130 ] || fail "exit $status after SIGINT, expected 130"
[ -d "$dir" ] && fail "$dir is still there after SIGINT"
check_py "$TEST_TMP/i.json" "j['interrupted'] and 0 < j['sent'] < 60000" \
	"partial results after SIGINT"
grep -q '99.990%' "$TEST_TMP/i.txt" || fail "no table after SIGINT"

# 4: an existing cgroup by path: used as is, its quota put back afterwards
mine=$(dirname "$dir")/relay-test-$$
mkdir "$mine"
trap 'rmdir "$mine" 2>/dev/null; cleanup_bg' EXIT
before=$(quota_of "$mine")
"$LOADGEN" --target "$target" --rate 1000 --duration 1 --cgroup "$mine" \
	--cpu-quota 30% --quota-period-us 10000 --json "$TEST_TMP/e.json" \
	>/dev/null || fail "loadgen with --cgroup $mine exited $?"
check_py "$TEST_TMP/e.json" "j['cgroup']['path'] == '$mine' and
	j['cgroup']['quota_us'] == 3000" "existing cgroup not used"
[ "$(quota_of "$mine")" = "$before" ] || fail "quota of $mine not put back"
[ -d "$mine" ] || fail "loadgen removed a cgroup it did not create"
pass "process and thread quota placement, throttling, SIGINT clean-up, --cgroup"
