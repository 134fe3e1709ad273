#!/usr/bin/env bash
# The systemd notify protocol, seen from a fake NOTIFY_SOCKET: READY=1 once
# the loops run, STATUS= with the scheduling and rates, WATCHDOG=1 within
# WatchdogSec/2 while the loops make progress, STOPPING=1 on SIGTERM. Both
# the libsystemd build and the static build (its own sender) when present.
# timeout: 60
. "$(dirname "$0")/../lib.sh"
. "$FIXTURES/relay/relay.sh"

check_notify() {
	local bin=$1 sock=$TEST_TMP/notify.sock log=$TEST_TMP/notify.log
	notify_socket "$sock" "$log" 30
	local p
	p=$(free_udp_port)
	NOTIFY_SOCKET=$sock WATCHDOG_USEC=1000000 RELAY=$bin \
		start_relay --listen "udp://127.0.0.1:$p" --upstream echo --cpus 0 --allow-non-rt
	udptool ping --to "127.0.0.1:$p" --count 10 --expect-prefix "" || fail "echo"
	sleep 2.2
	stop_relay
	wait "$NOTIFY_PID"
	cut -d' ' -f2- "$log" >"$log.msgs"
	log=$log.msgs
	grep -q '^READY=1' "$log" || fail "$bin: no READY=1: $(cat "$log")"
	grep -Eq '^STATUS=SCHED_(FIFO|OTHER).*pkt/s in.*p99 [0-9]+ us.*flows' "$log" ||
		fail "$bin: no STATUS=: $(cat "$log")"
	n=$(grep -c '^WATCHDOG=1' "$log")
	[ "$n" -ge 3 ] || fail "$bin: $n WATCHDOG=1 in 2.2 s, expected one per 0.5 s"
	tail -n 1 "$log" | grep -q 'STOPPING=1' || fail "$bin: no STOPPING=1 last: $(cat "$log")"
}

check_notify "$RELAY"
static=$top/build/static/bin/relay
if [ "${VARIANT:-release}" = release ] && [ -x "$static" ]; then
	check_notify "$static"
fi
pass "READY, STATUS, WATCHDOG and STOPPING"
