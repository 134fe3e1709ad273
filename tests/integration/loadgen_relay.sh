#!/usr/bin/env bash
# loadgen through relay: relay reflecting itself (--upstream echo) and
# relay in front of a loadgen echo server. The rate holds, every reply
# comes back and is matched to its own packet across the relay's
# per-client upstream sockets (4 flows on 2 threads).
# timeout: 120
# check: fast
. "$(dirname "$0")/../lib.sh"
. "$FIXTURES/loadgen/lib.sh"
[ -x "$RELAY" ] || skip "no relay binary at $RELAY"

# through PORT NAME: 3000 pps for 2 s through udp://127.0.0.1:PORT
through() {
	"$LOADGEN" --target "udp://127.0.0.1:$1" --rate 3000 --duration 2 \
		--threads 2 --flows 4 --json "$TEST_TMP/$2.json" >"$TEST_TMP/$2.txt" \
		|| fail "loadgen through relay ($2) exited $?: $(cat "$TEST_TMP/$2.txt")"
	cat "$TEST_TMP/$2.txt"
	json_ok "$TEST_TMP/$2.json" '.sent == 6000 and .received == 6000' \
		"$2: not every packet came back through relay"
	json_ok "$TEST_TMP/$2.json" '.foreign == 0 and .duplicated == 0' "$2: counters"
	rate_held "$TEST_TMP/$2.json" 3000 "$2"
}

p1=$(free_udp_port)
bg "$RELAY" --listen "udp://127.0.0.1:$p1" --upstream echo --allow-non-rt \
	--admin off
wait_udp "$p1" || fail "relay did not listen on $p1"
through "$p1" echo

start_echo
p2=$(free_udp_port)
bg "$RELAY" --listen "udp://127.0.0.1:$p2" --upstream "udp://127.0.0.1:$ECHO_PORT" \
	--allow-non-rt --admin off
wait_udp "$p2" || fail "relay did not listen on $p2"
through "$p2" upstream
pass "through relay (echo and upstream), every reply matched"
