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
start_relay --listen udp://127.0.0.1:$p --upstream echo --cpus 0 --rt-priority 42
expect_metric 'relay_realtime{policy="SCHED_FIFO"}' -eq 1
loop=""
for t in /proc/$RELAY_PID/task/*; do
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
	grep -q 'VmLck:[[:space:]]*[1-9]' /proc/$RELAY_PID/status || fail "memory not locked"
fi
udptool ping --to 127.0.0.1:$p --expect-prefix "" || fail "echo as SCHED_FIFO"
stop_relay

# Unprivileged, RLIMIT_RTPRIO 0: refused, with the reason and status 71.
chmod 755 "$TEST_TMP"
mkdir -m 777 "$TEST_TMP/nobody"
as_nobody() {
	exec timeout 20 prlimit --rtprio=0 -- setpriv --reuid=65534 \
		--regid=65534 --clear-groups --inh-caps=-all -- "$@"
}
expect_exit 71 "no CAP_SYS_NICE and RLIMIT_RTPRIO is 0" as_nobody "$RELAY" \
	--listen udp://127.0.0.1:$p --upstream echo --cpus 0 --admin off

# Allowed to run without it: SCHED_OTHER, and it says so.
a=$(free_tcp_port)
as_nobody "$RELAY" --listen udp://127.0.0.1:$p --upstream echo --cpus 0 \
	--admin 127.0.0.1:$a --allow-non-rt --stats-file "$TEST_TMP/nobody/r.json" \
	>"$TEST_TMP/nobody.log" 2>&1 &
pid=$!
bg_pids+=("$pid")
ADMIN_PORT=$a
wait_for 10 curl -sf "http://127.0.0.1:$a/healthz" || { cat "$TEST_TMP/nobody.log"; fail "non-RT relay did not start"; }
grep -q "running SCHED_OTHER, not real-time (--allow-non-rt): SCHED_FIFO 50 refused: no CAP_SYS_NICE" "$TEST_TMP/nobody.log" ||
	fail "no plain-words warning: $(cat "$TEST_TMP/nobody.log")"
expect_metric 'relay_realtime{policy="SCHED_OTHER"}' -eq 0
udptool ping --to 127.0.0.1:$p --expect-prefix "" || fail "echo as SCHED_OTHER"
RELAY_PID=$pid
kill -TERM $pid
wait $pid || fail "non-RT relay did not exit 0"
python3 - "$TEST_TMP/nobody/r.json" <<'PY' || fail "stats sched"
import json, sys
s = json.load(open(sys.argv[1]))["sched"]
assert s["policy"] == "SCHED_OTHER" and not s["realtime"] and "RLIMIT_RTPRIO" in s["why"], s
PY
pass "SCHED_FIFO when allowed; a refusal is explained"
