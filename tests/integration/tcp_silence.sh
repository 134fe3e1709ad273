#!/usr/bin/env bash
# Connection slots are not held by silence: a client that sends nothing is
# closed at first_byte_timeout_ms (counted as silent) while one that spoke
# stays; one address holds at most max_conns_per_source connections (the
# next is reset and counted) while other addresses are served; a reload
# changes both; out-of-range values are refused, naming the key.
# timeout: 120
. "$(dirname "$0")/../lib.sh"
. "$FIXTURES/relay/relay.sh"

up=$(free_tcp_port)
pl=$(free_tcp_port)
# An echo upstream, a thread per connection.
bg python3 -c '
import socket, sys, threading
l = socket.create_server(("127.0.0.1", int(sys.argv[1])), backlog=128)
def serve(c):
    with c:
        while d := c.recv(65536):
            c.sendall(d)
while True:
    c, _ = l.accept()
    threading.Thread(target=serve, args=(c,), daemon=True).start()
' "$up"
wait_for 5 python3 -c "import socket; socket.create_connection(('127.0.0.1', $up), 1).close()" ||
	fail "the upstream did not start"

conf=$TEST_TMP/relay.ini
write_conf() {
	printf '[relay]\nlisten = tcp://127.0.0.1:%s\nupstream = tcp://127.0.0.1:%s\n' "$pl" "$up" >"$conf"
	printf 'allow_non_rt = true\ncpus = 0\n' >>"$conf"
	printf '%s\n' "$@" >>"$conf"
}
write_conf "first_byte_timeout_ms = 500" "max_conns_per_source = 3"
start_relay --config "$conf"
P="listener=\"tcp://127.0.0.1:$pl\""

# silence PORT: three silent clients from 127.0.0.1 and one that speaks; a
# fourth from 127.0.0.1 is reset at once, one from 127.0.0.2 is served;
# the silent ones end after the deadline (not before), the talker does not.
python3 - "$pl" <<'PY' || fail "deadline and limit per source"
import socket, sys, time
port = int(sys.argv[1])
def conn(src, timeout=10):
    s = socket.create_connection(("127.0.0.1", port), timeout, (src, 0))
    return s
t0 = time.monotonic()
silent = [conn("127.0.0.1") for _ in range(2)]
talker = conn("127.0.0.1")
talker.sendall(b"hi")
assert talker.recv(2) == b"hi"
try:    # reset at once: maybe before connect() even returns
    got = conn("127.0.0.1").recv(1)
    sys.exit("the fourth connection from one address was served: %r" % got)
except ConnectionResetError:
    pass
other = conn("127.0.0.2")
other.sendall(b"other")
assert other.recv(5) == b"other", "another address was not served"
for s in silent:
    assert s.recv(1) == b"", "a silent client got bytes"
took = time.monotonic() - t0
assert took >= 0.45, "silent clients closed after %.2f s, before the deadline" % took
talker.sendall(b"still")
assert talker.recv(5) == b"still", "the talker was closed"
print("silent clients closed after %.2f s" % took)
PY
expect_metric "relay_tcp_closed_total{$P,reason=\"silent\"}" -eq 2
expect_metric "relay_tcp_refused_source_total{$P}" -eq 1
expect_metric "relay_tcp_accepted_total{$P}" -eq 4
none_left() { [ "$(metric "relay_tcp_active_connections{$P}")" = 0 ]; }
wait_for 10 none_left || fail "connections left open after their clients went"

# A reload: one connection per address, no deadline.
write_conf "max_conns_per_source = 1"
kill -HUP "$RELAY_PID"
wait_for 10 grep -q "reloaded" "$TEST_TMP/relay.log" || fail "no reload"
python3 - "$pl" <<'PY' || fail "after the reload"
import socket, sys, time
port = int(sys.argv[1])
a = socket.create_connection(("127.0.0.1", port), 10)
time.sleep(0.8)   # longer than the old deadline: no longer silent
try:
    socket.create_connection(("127.0.0.1", port), 10).recv(1)
    sys.exit("a second connection was served under max_conns_per_source = 1")
except ConnectionResetError:
    pass
a.sendall(b"x")
assert a.recv(1) == b"x", "the first connection was not served"
PY
expect_metric "relay_tcp_refused_source_total{$P}" -eq 2
expect_metric "relay_tcp_closed_total{$P,reason=\"silent\"}" -eq 2
stop_relay

# Bad values name the key, with the file's line or the flag.
write_conf "first_byte_timeout_ms = -5"
expect_exit 78 "relay.ini:6: first_byte_timeout_ms: -5 out of range 0..600000" \
	"$RELAY" --check-config --config "$conf"
expect_exit 64 "--max-conns-per-source: 'many' is not an integer" \
	"$RELAY" --check-config --listen "tcp://127.0.0.1:$pl" \
	--upstream "tcp://127.0.0.1:$up" --max-conns-per-source many
pass "first-byte deadline and connections per source, reloadable, checked"
