#!/usr/bin/env bash
# The descriptor budget. At start relay counts what it may hold open (flows,
# stream connections x 2, listener sockets, admin connections, its own)
# against RLIMIT_NOFILE: a configuration that cannot fit under the hard
# limit is refused (exit 78, naming the numbers); one that fits under it
# raises the soft limit. Under a hard limit of 256, a storm beyond every
# limit (400 TCP clients, 100 UDP sources, 30 idle admin connections):
# relay does not spin, keeps answering /healthz and relaying, counts the
# pauses, and serves new clients once the storm is gone.
# timeout: 240
. "$(dirname "$0")/../lib.sh"
. "$FIXTURES/relay/relay.sh"
command -v prlimit >/dev/null || skip "no prlimit(1)"

pu=$(free_udp_port)
pt=$(free_tcp_port)
up=$(free_tcp_port)
write_conf() {	# FILE MAX_FLOWS MAX_CONNS
	printf '[relay]\nlisten = udp://127.0.0.1:%s\nlisten = tcp://127.0.0.1:%s\n' "$pu" "$pt"
	printf 'upstream = echo\nupstream = tcp://127.0.0.1:%s\ncpus = 0\n' "$up"
	printf 'allow_non_rt = true\nmax_flows = %s\nmax_conns = %s\n' "$2" "$3"
} >"$1"

# 1 loop x (200 flows + 100 connections x 2 + 2 listeners + 4) + 32 = 438
# descriptors: more than 256.
write_conf "$TEST_TMP/big.ini" 200 100
expect_exit 78 "= 438, but RLIMIT_NOFILE (hard) is 256" \
	prlimit --nofile=256:256 "$RELAY" --config "$TEST_TMP/big.ini" --admin 127.0.0.1:0
expect_exit 78 "lower max_flows or max_conns" \
	prlimit --nofile=256:256 "$RELAY" --check-config --config "$TEST_TMP/big.ini"

# 1 x (64 + 48 x 2 + 2 + 4) + 32 = 198: fits under 256, not under 64.
write_conf "$TEST_TMP/fits.ini" 64 48
pylib_bg net echo-server "$up"
wait_for 5 tcp_up "$up" || fail "the TCP upstream did not start"
printf '#!/bin/sh\nexec prlimit --nofile=64:256 "%s" "$@"\n' "$RELAY" >"$TEST_TMP/relay-limited"
chmod +x "$TEST_TMP/relay-limited"
RELAY=$TEST_TMP/relay-limited start_relay --config "$TEST_TMP/fits.ini"
grep -q "descriptor limit raised from 64 to 256 (198 needed)" "$TEST_TMP/relay.log" ||
	fail "no word of the raised limit: $(cat "$TEST_TMP/relay.log")"
read -r soft _ < <(prlimit --pid "$RELAY_PID" --nofile -o SOFT,HARD --raw --noheadings)
[ "$soft" = 256 ] || fail "soft limit $soft, expected 256"

tcp_echo() {	# one client through the relay: what it sends comes back
	pylib net send-expect "$pt" $'through\n' --timeout 5
}
tcp_echo || fail "TCP before the storm"
udptool ping --to "127.0.0.1:$pu" --count 3 --expect-prefix "" || fail "UDP before the storm"
# shellcheck disable=SC2012 # file descriptors: numbers
nfd() { ls "/proc/$RELAY_PID/fd" | wc -l; }
cpu() { awk '{ print $14 + $15 }' "/proc/$RELAY_PID/stat"; }
sleep 1
fd0=$(nfd)
c0=$(cpu); sleep 2; base=$(( $(cpu) - c0 ))

# The storm: held until $TEST_TMP/go-away exists (at most 60 s).
pylib_bg net storm --tcp "400:$pt" --tcp "30:$ADMIN_PORT" --udp "100:$pu" \
	"$TEST_TMP/storm" "$TEST_TMP/go-away" 60
storm=$!
wait_for 30 test -e "$TEST_TMP/storm" || fail "the storm did not start"
sleep 1
c0=$(cpu); sleep 2; busy=$(( $(cpu) - c0 ))
echo "relay CPU: $base ticks in 2 s idle, $busy in 2 s of the storm (200: one CPU spinning)"
[ "$busy" -le $((base + 60)) ] || fail "relay spun: $busy ticks in 2 s (idle: $base)"
kill -0 "$RELAY_PID" || fail "relay died in the storm"
t=$(curl -s -m 15 -o "$TEST_TMP/health" -w '%{time_total}' "http://127.0.0.1:$ADMIN_PORT/healthz") ||
	fail "/healthz unanswered in the storm"
[ "$(cat "$TEST_TMP/health")" = ok ] || fail "/healthz in the storm: $(cat "$TEST_TMP/health")"
awk -v t="$t" 'BEGIN { exit !(t < 5) }' || fail "/healthz took $t s in the storm"
echo "/healthz answered in $t s during the storm; relay holds $(nfd) descriptors (limit 256)"
udptool ping --to "127.0.0.1:$pu" --count 3 --expect-prefix "" || fail "UDP in the storm"
P="listener=\"tcp://127.0.0.1:$pt\""
expect_metric "relay_tcp_active_connections{$P}" -le 48
expect_metric "relay_tcp_paused_limit_total{$P}" -ge 1
expect_metric "relay_tcp_paused_no_fd_total{$P}" -eq 0
expect_metric relay_admin_no_fd_total -eq 0
expect_metric 'relay_drops_total{reason="no_flow_socket"}' -eq 0

touch "$TEST_TMP/go-away"
wait "$storm"
no_conns() { [ "$(metric "relay_tcp_active_connections{$P}")" = 0 ]; }
wait_for 20 no_conns ||
	fail "connections left after the storm: $(metric "relay_tcp_active_connections{$P}")"
tcp_echo || fail "TCP after the storm"
udptool ping --to "127.0.0.1:$pu" --count 3 --expect-prefix "" || fail "UDP after the storm"
# The storm's UDP flows stay until flow_idle_ms; the rest is given back.
fd1=$(nfd)
echo "descriptors: $fd0 before, $fd1 after the storm"
[ "$fd1" -le $((fd0 + 100)) ] || fail "relay holds $fd1 descriptors after the storm ($fd0 before)"
stop_relay
pass "a configuration beyond RLIMIT_NOFILE is refused; a storm beyond every limit is survived"
