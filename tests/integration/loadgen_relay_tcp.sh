#!/usr/bin/env bash
# loadgen over TCP through relay (tcp:// listener, TCP echo upstream): the
# rate holds and every message comes back whole and matched.
# timeout: 120
# check: fast
. "$(dirname "$0")/../lib.sh"
. "$FIXTURES/loadgen/lib.sh"
[ -x "$RELAY" ] || skip "no relay binary at $RELAY"

port=$(free_tcp_port)
rp=$(free_tcp_port)
"$RELAY" --listen "tcp://127.0.0.1:$rp" --upstream "tcp://127.0.0.1:$port" \
	--check-config >/dev/null 2>&1 || skip "relay does not take tcp:// listeners"
bg python3 "$FIXTURES/loadgen/tcp_echo.py" "$port" "$TEST_TMP/echo.ready"
wait_for 10 test -s "$TEST_TMP/echo.ready" || fail "TCP echo did not start"
bg "$RELAY" --listen "tcp://127.0.0.1:$rp" --upstream "tcp://127.0.0.1:$port" \
	--allow-non-rt --admin off
wait_for 10 sh -c "ss -Htln 'sport = :$rp' | grep -q ." || fail "relay did not listen on tcp $rp"
"$LOADGEN" --target "tcp://127.0.0.1:$rp" --rate 2000 --duration 2 --threads 2 \
	--flows 4 --size 200 --json "$TEST_TMP/r.json" >"$TEST_TMP/r.txt" \
	|| fail "loadgen exited $?: $(cat "$TEST_TMP/r.txt")"
cat "$TEST_TMP/r.txt"
json_ok "$TEST_TMP/r.json" '.sent == 4000 and .received == 4000' \
	"not every message came back through relay"
json_ok "$TEST_TMP/r.json" '.foreign == 0 and .refused == 0' "mangled"
rate_held "$TEST_TMP/r.json" 2000 "through relay over TCP"
pass "TCP through relay"
