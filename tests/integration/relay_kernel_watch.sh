#!/usr/bin/env bash
# relay_kernel_info from the BTF of kernels of each lock and throttle model
# (tests/fixtures/btf), the same labels relay-preflight --textfile writes
# for that BTF, "unknown" for a BTF that cannot be read; watch_cgroups
# refused at start and at reload (relay then keeps running as it was) for
# a group that is not there or not a cgroup v2 one with the cpu controller
# (relay_watch_throttled: a group that is).
# timeout: 120
# check: fast
. "$(dirname "$0")/../lib.sh"
. "$FIXTURES/relay/relay.sh"

up=$(free_udp_port)
base=(--listen "udp://127.0.0.1:$up" --upstream echo --cpus 0 --allow-non-rt)
pf=$top/deploy/preflight

# kernel_info: the sample of relay_kernel_info on /metrics.
kernel_info() { curl -sf "http://127.0.0.1:$ADMIN_PORT/metrics" | grep '^relay_kernel_info{'; }

for k in rt-rwlock-cfs_rq rt-rwlock-task rt-spinlock-task nonrt-rwlock-none rt-no-eventpoll; do
	btf=$FIXTURES/btf/$k.o
	start_relay "${base[@]}" --kernel-btf "$btf"
	got=$(kernel_info)
	stop_relay
	case $k in
	rt-rwlock-cfs_rq) want='eventpoll_lock="rwlock_t",throttle_model="cfs_rq",preempt_rt="yes",epoll_fix="missing"' ;;
	rt-rwlock-task) want='eventpoll_lock="rwlock_t",throttle_model="task",preempt_rt="yes",epoll_fix="missing"' ;;
	rt-spinlock-task) want='eventpoll_lock="spinlock_t",throttle_model="task",preempt_rt="yes",epoll_fix="fixed"' ;;
	nonrt-rwlock-none) want='eventpoll_lock="rwlock_t",throttle_model="none",preempt_rt="no",epoll_fix="missing"' ;;
	rt-no-eventpoll) want='eventpoll_lock="unknown",throttle_model="cfs_rq",preempt_rt="yes",epoll_fix="unknown"' ;;
	esac
	[ "$got" = "relay_kernel_info{$want} 1" ] || fail "$k: relay says '$got', expected {$want}"
	grep -q "relay: kernel: " "$TEST_TMP/relay.log" || fail "$k: relay's log does not say what its kernel carries"
	# relay-preflight on a host whose running kernel has that BTF writes
	# the same sample, through the same kernel-markers.
	root=$TEST_TMP/root-$k
	mkdir -p "$root/sys/kernel/btf" "$TEST_TMP/text"
	cp "$btf" "$root/sys/kernel/btf/vmlinux"
	"$pf" --root "$root" --textfile "$TEST_TMP/text" >/dev/null || fail "$k: --textfile exit $?"
	[ "$(grep -v '^#' "$TEST_TMP/text/relay_kernel.prom")" = "$got" ] ||
		fail "$k: relay-preflight --textfile wrote '$(cat "$TEST_TMP/text/relay_kernel.prom")', relay '$got'"
done
pass "relay_kernel_info for each lock, throttle model and preemption model, and relay-preflight --textfile agrees"

# No BTF (or none that can be read): unknown, never fixed; PREEMPT_RT from
# /sys/kernel/realtime there, on both sides.
start_relay "${base[@]}" --kernel-btf "$TEST_TMP/no-such-btf"
got=$(kernel_info)
stop_relay
[ "$got" = 'relay_kernel_info{eventpoll_lock="unknown",throttle_model="unknown",preempt_rt="unknown",epoll_fix="unknown"} 1' ] ||
	fail "no BTF: relay says '$got'"
grep -q "kernel: cannot read the BTF of $TEST_TMP/no-such-btf" "$TEST_TMP/relay.log" || fail "no BTF: the log does not say why"
root=$TEST_TMP/root-none
mkdir -p "$root/sys/kernel"
echo 1 >"$root/sys/kernel/realtime"
"$pf" --root "$root" --textfile "$TEST_TMP/text" >/dev/null 2>"$TEST_TMP/pf.err" || fail "--textfile without BTF: exit $?"
grep -qx 'relay_kernel_info{eventpoll_lock="unknown",throttle_model="unknown",preempt_rt="yes",epoll_fix="unknown"} 1' \
	"$TEST_TMP/text/relay_kernel.prom" || fail "--textfile without BTF: $(cat "$TEST_TMP/text/relay_kernel.prom")"
grep -q "no $root/sys/kernel/btf/vmlinux" "$TEST_TMP/pf.err" || fail "--textfile without BTF does not say so"
"$pf" --root "$root" --textfile "$TEST_TMP/no-such-dir" >/dev/null 2>&1; rc=$?
[ $rc = 73 ] || fail "--textfile into a directory that is not there: exit $rc, expected 73"
# Without kernel-markers beside it (nor in ../share/relay), it cannot tell.
mkdir -p "$TEST_TMP/alone/sbin"
cp "$pf" "$TEST_TMP/alone/sbin/relay-preflight"
"$TEST_TMP/alone/sbin/relay-preflight" --root "$root" --textfile "$TEST_TMP/text" >/dev/null 2>&1; rc=$?
[ $rc = 70 ] || fail "--textfile without kernel-markers: exit $rc, expected 70"
mkdir -p "$TEST_TMP/alone/share/relay"
cp "$top/deploy/kernel-markers" "$TEST_TMP/alone/share/relay/"
"$TEST_TMP/alone/sbin/relay-preflight" --root "$root" --textfile "$TEST_TMP/text" >/dev/null 2>&1 ||
	fail "installed as make install lays it out, relay-preflight does not find kernel-markers"
pass "a kernel whose BTF cannot be read is unknown on both sides; --textfile's failures"

# A watched group that is not there, or not a cgroup v2 directory with the
# cpu controller: refused at start, naming it.
refused_start() {
	local what=$1 want=$2 status=$3; shift 3
	local out rc=0
	out=$("$RELAY" "${base[@]}" --admin off "$@" 2>&1) || rc=$?
	[ $rc = "$status" ] || fail "$what: exit $rc, expected $status: $out"
	grep -qF -- "$want" <<<"$out" || fail "$what: '$out' does not say '$want'"
}
refused_start "a slice that is not there (flag)" "--watch-cgroups: 'no-such-relay-test.slice': no cgroup" 64 \
	--watch-cgroups no-such-relay-test.slice
refused_start "a path that is no cgroup" "'/proc': /proc is not a cgroup v2 directory" 64 --watch-cgroups /proc
printf '[relay]\nwatch_cgroups = /proc\n' >"$TEST_TMP/bad.conf"
refused_start "in the file" "bad.conf:2: watch_cgroups: '/proc': /proc is not a cgroup v2 directory" 78 \
	--config "$TEST_TMP/bad.conf"
"$RELAY" --check-config --config "$TEST_TMP/bad.conf" "${base[@]}" >/dev/null 2>&1; rc=$?
[ $rc = 78 ] || fail "--check-config took a bad watch_cgroups (exit $rc)"
if v1=$(awk '$9 == "cgroup" && $NF ~ /(^|,)cpu(,|$)/ { print $5; exit }' /proc/self/mountinfo) && [ -n "$v1" ]; then
	refused_start "cgroup v1's cpu hierarchy" "is not a cgroup v2 directory (it is cgroup v1's)" 64 --watch-cgroups "$v1"
fi
pass "watch_cgroups refused at start: not there, not a cgroup, cgroup v1's; in a file and as a flag"

# ... and at reload: relay keeps running with what it had.
printf '[relay]\nlisten = udp://127.0.0.1:%s\nupstream = echo\ncpus = 0\nallow_non_rt = yes\n' "$up" >"$TEST_TMP/relay.conf"
start_relay --config "$TEST_TMP/relay.conf"
printf 'watch_cgroups = no-such-relay-test.slice\n' >>"$TEST_TMP/relay.conf"
kill -HUP "$RELAY_PID"
wait_metric 10 'relay_reloads_total{result="failed"}' -eq 1
grep -q "reload failed, keeping the running configuration: .*watch_cgroups: 'no-such-relay-test.slice': no cgroup" \
	"$TEST_TMP/relay.log" || fail "the failed reload does not name the group"
udptool ping --to "127.0.0.1:$up" --count 3 --expect-prefix "" >/dev/null || fail "relay stopped relaying after the refused reload"
sed -i 's|^watch_cgroups = .*|watch_cgroups = /proc|' "$TEST_TMP/relay.conf"
kill -HUP "$RELAY_PID"
wait_metric 10 'relay_reloads_total{result="failed"}' -eq 2
grep -q "reload failed, keeping the running configuration: .*relay.conf:6: watch_cgroups: '/proc': /proc is not a cgroup v2 directory" \
	"$TEST_TMP/relay.log" || fail "the failed reload does not name /proc"
udptool ping --to "127.0.0.1:$up" --count 3 --expect-prefix "" >/dev/null || fail "relay stopped relaying after the second refused reload"
[ "$(curl -sf "http://127.0.0.1:$ADMIN_PORT/metrics" | grep -c '^relay_cgroup_periods_total{')" = 0 ] ||
	fail "a refused reload left a watched group behind"
stop_relay
pass "watch_cgroups refused at reload, not there or not a cgroup v2 directory, naming it; relay keeps relaying"
