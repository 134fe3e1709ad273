#!/usr/bin/env bash
# A slow reload never holds up the systemd watchdog or the admin endpoint.
# The reload names its upstream by a host name, and the only name server
# (in a network and mount namespace of the test's own) answers after
# $delay s: getaddrinfo blocks that long, as with a slow resolver during
# `systemctl reload`. Meanwhile WATCHDOG=1 must keep coming at least once
# per WatchdogSec, /healthz must answer, and the reload must still land
# (datagrams reach the named upstream).
# timeout: 90
. "$(dirname "$0")/../lib.sh"
. "$FIXTURES/relay/relay.sh"
need_root "a network and mount namespace with its own name server"

if [ -z "${RELAY_TEST_NS:-}" ]; then
	command -v unshare >/dev/null || skip "no unshare(1)"
	unshare --net --mount true 2>/dev/null || skip "unshare --net --mount refused"
	RELAY_TEST_NS=1 exec unshare --net --mount "$BASH" "$0" "$@"
fi
ip link set lo up || fail "lo up in the test's namespace"

delay=4				# the name server's answer time (s)
watchdog_usec=2000000		# WatchdogSec=2s: pings due every second
printf 'nameserver 127.0.0.1\noptions timeout:20 attempts:1\n' >"$TEST_TMP/resolv.conf"
mount --bind "$TEST_TMP/resolv.conf" /etc/resolv.conf || fail "bind resolv.conf"

# A name server that answers every A query with 127.0.0.1 (and any other
# type with no records), $delay s late.
python3 - "$delay" "$TEST_TMP/dns.log" <<'PY' &
import socket, struct, sys, threading, time
delay, log = float(sys.argv[1]), open(sys.argv[2], "a", buffering=1)
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("127.0.0.1", 53))
def answer(q, peer):
    time.sleep(delay)
    qid, = struct.unpack("!H", q[:2])
    i = 12
    while q[i]:
        i += q[i] + 1
    qtype, = struct.unpack("!H", q[i + 1:i + 3])
    question = q[12:i + 5]
    an = struct.pack("!HHHIH4s", 0xC00C, 1, 1, 60, 4, bytes([127, 0, 0, 1]))
    hdr = struct.pack("!HHHHHH", qid, 0x8180, 1, int(qtype == 1), 0, 0)
    s.sendto(hdr + question + (an if qtype == 1 else b""), peer)
    log.write("answered type %d\n" % qtype)
end = time.monotonic() + 80
s.settimeout(0.5)
while time.monotonic() < end:
    try:
        q, peer = s.recvfrom(512)
    except socket.timeout:
        continue
    threading.Thread(target=answer, args=(q, peer), daemon=True).start()
PY
bg_pids+=($!)

# The notify socket: every message with the time it came.
sock=$TEST_TMP/notify.sock
notify_socket "$sock" "$TEST_TMP/notify.log" 80

start_upstream up --prefix named:
p=$(free_udp_port)
conf=$TEST_TMP/relay.ini
printf '[relay]\nlisten = udp://127.0.0.1:%s\nupstream = echo\ncpus = 0\nallow_non_rt = true\n' \
	"$p" >"$conf"
NOTIFY_SOCKET=$sock WATCHDOG_USEC=$watchdog_usec start_relay --config "$conf"
udptool ping --to 127.0.0.1:$p --count 3 --expect-prefix "" || fail "echo before the reload"

sed -i "s|^upstream = echo|upstream = udp://upstream.relay.test:$up_PORT|" "$conf"
now() { python3 -c 'import time; print("%.3f" % time.monotonic())'; }
t0=$(now)
kill -HUP "$RELAY_PID"
# /healthz while the reload waits for the name server.
worst=0
for _ in $(seq 10); do
	t=$(curl -s -m 5 -o /dev/null -w '%{time_total}' "http://127.0.0.1:$ADMIN_PORT/healthz") ||
		fail "/healthz during the reload"
	worst=$(awk -v a="$worst" -v b="$t" 'BEGIN { print (b > a) ? b : a }')
	sleep 0.2
done
wait_for 40 grep -q "relay: reloaded" "$TEST_TMP/relay.log" ||
	{ cat "$TEST_TMP/relay.log"; fail "the reload did not finish"; }
t1=$(now)
udptool ping --to 127.0.0.1:$p --count 3 --expect-prefix named: ||
	fail "the reload's upstream (by name) does not answer"
sleep 1.5
stop_relay
wait_for 5 grep -q STOPPING=1 "$TEST_TMP/notify.log" || fail "no STOPPING=1"

# The reload really was slow: the name server held it for $delay s.
took=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')
awk -v t="$took" -v d="$delay" 'BEGIN { exit !(t >= d - 0.5) }' ||
	fail "the reload took $took s, expected at least $delay s of resolver wait"
# Pings from a second before the reload to a second after it, at most one
# WatchdogSec apart.
gap=$(awk -v a="$t0" -v b="$t1" '$2 == "WATCHDOG=1" && $1 >= a - 1 && $1 <= b + 1 {
		if (n++) { g = $1 - last; if (g > max) max = g } last = $1 }
	END { printf "%.2f %d", max, n }' "$TEST_TMP/notify.log")
set -- $gap
echo "reload took $took s; $2 WATCHDOG=1 around it, longest gap $1 s; /healthz at worst $worst s"
[ "$2" -ge $((${delay} - 1)) ] || fail "only $2 WATCHDOG=1 during a $took s reload"
awk -v g="$1" -v w="$watchdog_usec" 'BEGIN { exit !(g < w / 1e6) }' ||
	fail "WATCHDOG=1 paused $1 s during the reload (WatchdogSec $((watchdog_usec / 1000000)) s)"
awk -v t="$worst" 'BEGIN { exit !(t < 1) }' || fail "/healthz took $worst s during the reload"
pass "a $took s reload: watchdog pinged every ${1} s at most, /healthz answered"
