#!/usr/bin/env bash
# --cpu-quota puts loadgen (or only its sender threads) into a cgroup of its
# own with that CPU bandwidth, for real: read back from /proc/<tid>/cgroup
# and the cgroup's own files while it runs; cpu.stat's throttling shows up
# in the JSON; the cgroup is gone afterwards, also after SIGINT.
# timeout: 180
# shellcheck disable=SC2016 # the $names in the filters are jq's
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
per_cpu_s=$(jq -e '.sent / ([.cpu.user_s + .cpu.sys_s, 1e-3] | max) | floor' "$TEST_TMP/cal.json") ||
	fail "the calibration run's JSON has no sent count or CPU time"
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
json_ok "$TEST_TMP/p.json" '.cgroup.path == $dir' "cgroup.path" --arg dir "$dir"
json_ok "$TEST_TMP/p.json" '.cgroup.quota_us == 1000 and
	.cgroup.period_us == 20000' "quota in the JSON"
json_ok "$TEST_TMP/p.json" '.cgroup.nr_periods > 50' "cpu.stat periods"
json_ok "$TEST_TMP/p.json" '.cgroup.nr_throttled > 10 and
	.cgroup.throttled_us > 100000' "no throttling under a 5 % quota"
json_ok "$TEST_TMP/p.json" '.schedule_error_us.max > 5000' \
	"throttling did not delay sends"
grep -q "throttled in" "$TEST_TMP/p.txt" || fail "table lacks the throttling line"
json_ok "$TEST_TMP/p.json" '.rate_ok == false and .rate_shortfall_pct > 10 and
	(.sent | numbers) == .expected' "falling behind under the quota is not flagged"
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
json_ok "$TEST_TMP/t.json" '.cgroup.scope == "threads"' "scope"

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
json_ok "$TEST_TMP/i.json" '.interrupted == true and 0 < .sent and .sent < 60000' \
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
json_ok "$TEST_TMP/e.json" '.cgroup.path == $mine and
	.cgroup.quota_us == 3000' "existing cgroup not used" --arg mine "$mine"
[ "$(quota_of "$mine")" = "$before" ] || fail "quota of $mine not put back"
[ -d "$mine" ] || fail "loadgen removed a cgroup it did not create"
pass "process and thread quota placement, throttling, SIGINT clean-up, --cgroup"
