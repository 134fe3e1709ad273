#!/usr/bin/env bash
# The admin endpoint does not grow without bound: a request whose header
# never ends is cut off at 8 KiB (relay's RSS stays within a few MiB of
# where it was), and a connection that stays silent is closed after 5 s.
# timeout: 90
. "$(dirname "$0")/../lib.sh"
. "$FIXTURES/relay/relay.sh"

p=$(free_udp_port)
start_relay --listen udp://127.0.0.1:$p --upstream echo --cpus 0 --allow-non-rt
rss() { awk '/^VmRSS/ { print $2 }' /proc/$RELAY_PID/status; }
rss0=$(rss)

python3 - "$ADMIN_PORT" >"$TEST_TMP/client.out" 2>&1 <<'PY' || fail "$(cat "$TEST_TMP/client.out")"
import socket, sys, time
port = int(sys.argv[1])
# a header that never ends: 2 MiB of it in 8 s at most
s = socket.create_connection(("127.0.0.1", port))
s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n")
sent, cut = 0, False
deadline = time.monotonic() + 8
try:
    while sent < 2 << 20 and time.monotonic() < deadline:
        s.sendall(b"X-Pad: " + b"a" * 1000 + b"\r\n")
        sent += 1009
except (BrokenPipeError, ConnectionResetError):
    cut = True
if not cut:
    s.settimeout(3)
    try:
        d = s.recv(100)
        cut = d == b"" or d.startswith(b"HTTP/1.1 4")
    except ConnectionResetError:
        cut = True
    except socket.timeout:
        cut = False
assert cut, "a %d-byte header was still being read" % sent
print("cut off after %d bytes sent" % sent)
# silence: closed within the timeout (5 s) and a margin
s = socket.create_connection(("127.0.0.1", port))
s.settimeout(12)
t0 = time.monotonic()
try:
    d = s.recv(100)
except ConnectionResetError:
    d = b""
took = time.monotonic() - t0
assert d == b"" and took < 11, (d, took)
print("silent connection closed after %.1f s" % took)
PY
cat "$TEST_TMP/client.out"
rss1=$(rss)
echo "RSS ${rss0} -> ${rss1} KiB"
[ $((rss1 - rss0)) -lt 8192 ] || fail "RSS grew from $rss0 to $rss1 KiB"
curl -sf "http://127.0.0.1:$ADMIN_PORT/healthz" >/dev/null || fail "admin after the abuse"
udptool ping --to 127.0.0.1:$p --count 3 --expect-prefix "" || fail "relaying after the abuse"
stop_relay
pass "admin requests are bounded in size and time"
