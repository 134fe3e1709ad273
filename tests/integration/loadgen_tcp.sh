#!/usr/bin/env bash
# loadgen over TCP: fixed-size messages on 4 connections from 2 threads to
# an echo server: the rate holds, every message comes back whole and
# matched; a refusing port is reported.
# timeout: 120
. "$(dirname "$0")/../lib.sh"
. "$FIXTURES/loadgen/lib.sh"

port=$(free_tcp_port)
bg python3 "$FIXTURES/loadgen/tcp_echo.py" "$port" "$TEST_TMP/echo.ready"
wait_for 10 test -s "$TEST_TMP/echo.ready" || fail "TCP echo did not start"

# run NAME PORT: 2000 messages/s for 2 s of 200 bytes over tcp://...:PORT
run() {
	"$LOADGEN" --target "tcp://127.0.0.1:$2" --rate 2000 --duration 2 \
		--threads 2 --flows 4 --size 200 --json "$TEST_TMP/$1.json" \
		>"$TEST_TMP/$1.txt" || fail "$1: loadgen exited $?: $(cat "$TEST_TMP/$1.txt")"
	cat "$TEST_TMP/$1.txt"
	json_ok "$TEST_TMP/$1.json" '.sent == 4000 and .received == 4000' \
		"$1: not every message came back"
	json_ok "$TEST_TMP/$1.json" '.foreign == 0 and .duplicated == 0 and
		.refused == 0' "$1: a message came back mangled"
	rate_held "$TEST_TMP/$1.json" 2000 "$1"
}
run echo "$port"

status=0
"$LOADGEN" --target "tcp://127.0.0.1:$(free_tcp_port)" --rate 10 --duration 1 \
	2>"$TEST_TMP/err" || status=$?
{ [ "$status" = 69 ] && grep -q "refuses: nothing listens there" "$TEST_TMP/err"; } ||
	fail "refused TCP port: exit $status, $(cat "$TEST_TMP/err")"
pass "TCP messages: rate, matching, refusal"
