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

p=$(free_udp_port)
expect_exit 71 "CONFIG_RT_GROUP_SCHED and this process is in cgroup /relay-test-rt.$$, which has no real-time budget" \
	in_group "$RELAY" --listen udp://127.0.0.1:$p --upstream echo --cpus 0 --admin off

a=$(free_tcp_port)
in_group "$RELAY" --listen udp://127.0.0.1:$p --upstream echo --cpus 0 \
	--admin 127.0.0.1:$a --allow-non-rt --stats-file "$TEST_TMP/r.json" \
	>"$TEST_TMP/relay.log" 2>&1 &
RELAY_PID=$!
bg_pids+=("$RELAY_PID")
ADMIN_PORT=$a
wait_for 10 curl -sf "http://127.0.0.1:$a/healthz" || { cat "$TEST_TMP/relay.log"; fail "non-RT relay did not start"; }
grep -q "running SCHED_OTHER, not real-time (--allow-non-rt): .*CONFIG_RT_GROUP_SCHED" "$TEST_TMP/relay.log" ||
	fail "no warning naming the cause: $(cat "$TEST_TMP/relay.log")"
expect_metric 'relay_realtime{policy="SCHED_OTHER"}' -eq 0
udptool ping --to 127.0.0.1:$p --expect-prefix "" || fail "echo as SCHED_OTHER"
stop_relay
python3 - "$TEST_TMP/r.json" <<'PY' || fail "stats sched"
import json, sys
s = json.load(open(sys.argv[1]))["sched"]
assert s["policy"] == "SCHED_OTHER" and "CONFIG_RT_GROUP_SCHED" in s["why"], s
PY
pass "the RT_GROUP_SCHED trap is named"
