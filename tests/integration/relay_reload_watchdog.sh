#!/usr/bin/env bash
# A slow reload never holds up the systemd watchdog or the admin endpoint.
# The reload names its upstream by a host name, and the only name server
# (in a network and mount namespace of the test's own) answers after
# $delay s: getaddrinfo blocks that long, as with a slow resolver during
# `systemctl reload`. Meanwhile WATCHDOG=1 must keep coming (two at least
# in those $delay s: one a second is due), /healthz must
# answer, and the reload must still land (datagrams reach the named
# upstream).
# timeout: 150
# shellcheck disable=SC2154 # NAME_PORT, NAME_PID: set by start_upstream NAME
. "$(dirname "$0")/../lib.sh"
. "$FIXTURES/relay/relay.sh"
need_root "a network and mount namespace with its own name server"

if [ -z "${RELAY_TEST_NS:-}" ]; then
	command -v unshare >/dev/null || skip "no unshare(1)"
	unshare --net --mount true 2>/dev/null || skip "unshare --net --mount refused"
	RELAY_TEST_NS=1 exec unshare --net --mount "$BASH" "$0" "$@"
fi
ip link set lo up || fail "lo up in the test's namespace"

delay=6				# the name server's answer time (s)
watchdog_usec=2000000		# WatchdogSec=2s: pings due every second
printf 'nameserver 127.0.0.1\noptions timeout:20 attempts:1\n' >"$TEST_TMP/resolv.conf"
mount --bind "$TEST_TMP/resolv.conf" /etc/resolv.conf || fail "bind resolv.conf"

# A name server that answers every A query with 127.0.0.1 (and any other
# type with no records), $delay s late.
pylib_bg slow_dns serve "$delay" "$TEST_TMP/dns.log" --port 53 --seconds 140

# The notify socket: every message with the time it came.
sock=$TEST_TMP/notify.sock
notify_socket "$sock" "$TEST_TMP/notify.log" 140

start_upstream up --prefix named:
p=$(free_udp_port)
conf=$TEST_TMP/relay.ini
printf '[relay]\nlisten = udp://127.0.0.1:%s\nupstream = echo\ncpus = 0\nallow_non_rt = true\n' \
	"$p" >"$conf"
NOTIFY_SOCKET=$sock WATCHDOG_USEC=$watchdog_usec start_relay --config "$conf"
udptool ping --to "127.0.0.1:$p" --count 3 --expect-prefix "" || fail "echo before the reload"

sed -i "s|^upstream = echo|upstream = udp://upstream.relay.test:$up_PORT|" "$conf"
kill -HUP "$RELAY_PID"
wait_for 20 grep -q query "$TEST_TMP/dns.log" || fail "the reload did not ask the name server"
# /healthz while the reload waits for the name server.
worst=0
for _ in $(seq 10); do
	t=$(curl -s -m 5 -o /dev/null -w '%{time_total}' "http://127.0.0.1:$ADMIN_PORT/healthz") ||
		fail "/healthz during the reload"
	worst=$(awk -v a="$worst" -v b="$t" 'BEGIN { print (b > a) ? b : a }')
	sleep 0.2
done
wait_for 40 grep -q "relay: reloaded" "$TEST_TMP/relay.log" ||
	{ cat "$TEST_TMP/relay.log" "$TEST_TMP/dns.log"; fail "the reload did not finish"; }
udptool ping --to "127.0.0.1:$p" --count 3 --expect-prefix named: ||
	fail "the reload's upstream (by name) does not answer"
sleep 1.5
stop_relay
wait_for 5 grep -q STOPPING=1 "$TEST_TMP/notify.log" || fail "no STOPPING=1"

# The name server held the reload from its first query to its last
# answer; the main thread sends WATCHDOG=1 every second meanwhile. (A
# reload on the main thread sends none then: it waits in getaddrinfo.)
read -r q a < <(awk '/query/ && !q { q = $1 } /answered/ { a = $1 }
	END { print q, a }' "$TEST_TMP/dns.log")
[ -n "$a" ] || fail "the name server was not asked: $(cat "$TEST_TMP/dns.log")"
read -r hold n gap < <(awk -v q="$q" -v a="$a" '$2 == "WATCHDOG=1" && $1 > q && $1 < a {
		if (n++) { g = $1 - last; if (g > max) max = g } last = $1 }
	END { printf "%.2f %d %.2f\n", a - q, n, max }' "$TEST_TMP/notify.log")
echo "resolver held the reload $hold s: $n WATCHDOG=1 meanwhile (longest gap" \
	"$gap s); /healthz at worst $worst s"
awk -v h="$hold" -v d="$delay" 'BEGIN { exit !(h >= d - 0.5) }' ||
	fail "the resolver held the reload only $hold s"
# One per second is due; a busy host may delay some, none may stop them.
[ "$n" -ge 2 ] || fail "$n WATCHDOG=1 while the reload waited $hold s for the resolver"
awk -v t="$worst" -v d="$delay" 'BEGIN { exit !(t < d / 2) }' ||
	fail "/healthz took $worst s during the reload"
pass "WATCHDOG=1 and /healthz went on while a reload waited $hold s for a name"
