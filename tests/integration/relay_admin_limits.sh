#!/usr/bin/env bash
# The admin endpoint does not grow without bound: a request whose header
# never ends is cut off at 8 KiB (relay's RSS stays within a few MiB of
# where it was), a connection that stays silent is closed after 5 s, and at
# most 16 connections are open at once (the rest wait in the backlog).
# timeout: 90
. "$(dirname "$0")/../lib.sh"
. "$FIXTURES/relay/relay.sh"

p=$(free_udp_port)
start_relay --listen "udp://127.0.0.1:$p" --upstream echo --cpus 0 --allow-non-rt
rss() { awk '/^VmRSS/ { print $2 }' "/proc/$RELAY_PID/status"; }
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

# The connection cap: 40 idle connections hold at most 16 descriptors; the
# rest wait in the backlog and are served as slots free (the idle ones are
# closed after 5 s), and relay's descriptor count goes back down after.
# shellcheck disable=SC2012 # file descriptors: numbers
fds() { ls "/proc/$RELAY_PID/fd" | wc -l; }
fd0=$(fds)
python3 - "$ADMIN_PORT" "$RELAY_PID" >"$TEST_TMP/cap.out" 2>&1 <<'PY' || fail "$(cat "$TEST_TMP/cap.out")"
import os, socket, sys, time
port, pid = int(sys.argv[1]), sys.argv[2]
def fds():
    return len(os.listdir("/proc/%s/fd" % pid))
base = fds()
idle = [socket.create_connection(("127.0.0.1", port)) for _ in range(40)]
time.sleep(1)
held = fds() - base
assert held <= 16, "40 idle admin connections took %d descriptors" % held
# a request behind them is answered once the idle ones time out
t0 = time.monotonic()
s = socket.create_connection(("127.0.0.1", port))
s.settimeout(30)
s.sendall(b"GET /healthz HTTP/1.0\r\n\r\n")
reply = s.recv(100)
took = time.monotonic() - t0
assert reply.startswith(b"HTTP/1.0 200"), reply
print("40 idle connections held %d descriptors; a request behind them answered in %.1f s" % (held, took))
for c in idle:
    c.close()
PY
cat "$TEST_TMP/cap.out"
# every slot freed: the cap's count went back down, and accepting resumed
wait_metric 5 relay_admin_connections -le 1
expect_metric relay_admin_capped_total -ge 1
fd1=$(fds)
echo "descriptors ${fd0} -> ${fd1}"
[ "$fd1" -le $((fd0 + 1)) ] || fail "descriptors went from $fd0 to $fd1"

rss1=$(rss)
echo "RSS ${rss0} -> ${rss1} KiB"
[ $((rss1 - rss0)) -lt 8192 ] || fail "RSS grew from $rss0 to $rss1 KiB"
curl -sf "http://127.0.0.1:$ADMIN_PORT/healthz" >/dev/null || fail "admin after the abuse"
udptool ping --to "127.0.0.1:$p" --count 3 --expect-prefix "" || fail "relaying after the abuse"
stop_relay
pass "admin requests are bounded in size, time and number"
