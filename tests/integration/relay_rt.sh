#!/usr/bin/env bash
# Real-time set-up: as root the loop thread runs SCHED_FIFO at the asked
# priority, pinned to its CPU, and the main thread keeps off that CPU. When
# SCHED_FIFO is refused relay says exactly why and exits 71, or with
# --allow-non-rt runs SCHED_OTHER and says so in /metrics and the stats.
# timeout: 60
. "$(dirname "$0")/../lib.sh"
. "$FIXTURES/relay/relay.sh"
need_root "SCHED_FIFO and dropping privileges"
command -v setpriv >/dev/null || skip "setpriv (util-linux) not installed"

p=$(free_udp_port)
start_relay --listen "udp://127.0.0.1:$p" --upstream echo --cpus 0 --rt-priority 42
expect_metric 'relay_realtime{policy="SCHED_FIFO"}' -eq 1
loop=""
for t in "/proc/$RELAY_PID/task"/*; do
	tid=${t##*/}
	policy=$(chrt -p "$tid" | sed -n 's/.*scheduling policy: //p')
	if [ "$policy" = SCHED_FIFO ]; then
		loop=$tid
		chrt -p "$tid" | grep -q 'priority: 42' || fail "loop priority: $(chrt -p "$tid")"
		taskset -pc "$tid" | grep -q 'list: 0$' || fail "loop not pinned: $(taskset -pc "$tid")"
	fi
done
[ -n "$loop" ] || fail "no SCHED_FIFO thread in relay"
if [ "$(nproc)" -ge 2 ]; then
	taskset -pc "$RELAY_PID" | grep -q 'list: 0$' && fail "main thread on the loop's CPU"
fi
if [ "$VARIANT" != asan ]; then
	grep -q 'VmLck:[[:space:]]*[1-9]' "/proc/$RELAY_PID/status" || fail "memory not locked"
fi
udptool ping --to "127.0.0.1:$p" --expect-prefix "" || fail "echo as SCHED_FIFO"
stop_relay

# Unprivileged, RLIMIT_RTPRIO 0: refused with the reason and status 71, or
# with --allow-non-rt SCHED_OTHER, saying so.
chmod 755 "$TEST_TMP"
mkdir -m 777 "$TEST_TMP/nobody"
as_nobody() {
	exec timeout 20 prlimit --rtprio=0 -- setpriv --reuid=65534 \
		--regid=65534 --clear-groups --inh-caps=-all -- "$@"
}
refused_rt as_nobody "no CAP_SYS_NICE and RLIMIT_RTPRIO is 0" "$TEST_TMP/nobody/r.json"
pass "SCHED_FIFO when allowed; a refusal is explained"
