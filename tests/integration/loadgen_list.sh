#!/usr/bin/env bash
# --list-over-us: each reply slower than the limit is listed in the JSON
# with its intended send and its arrival on CLOCK_MONOTONIC (the clock of
# a kernel trace, as start_mono_s), in intended order; the list holds at
# most 10000 a run and says when it dropped some; without the flag there
# is no list.
# timeout: 120
# shellcheck disable=SC2016 # the $names in the filters are jq's
. "$(dirname "$0")/../lib.sh"
. "$FIXTURES/loadgen/lib.sh"

start_echo
fast=udp://127.0.0.1:$ECHO_PORT
# An echo that spends 2 ms on each datagram: every reply is 2 ms late or more.
SLOW_PORT=$(free_udp_port)
bg "$LOADGEN" echo --listen "udp://127.0.0.1:$SLOW_PORT" --service-us 2000
wait_udp "$SLOW_PORT" || fail "the slow echo server did not start"
slow=udp://127.0.0.1:$SLOW_PORT

# run NAME TARGET RATE ARGS...: a run of $DURATION s (2), JSON in
# $TEST_TMP/NAME.json
run() {
	local name=$1 target=$2 rate=$3
	shift 3
	"$LOADGEN" --target "$target" --rate "$rate" --duration "${DURATION:-2}" --no-progress \
		--json "$TEST_TMP/$name.json" "$@" >"$TEST_TMP/$name.txt" \
		|| fail "loadgen $* exited $?: $(cat "$TEST_TMP/$name.txt")"
}

run plain "$fast" 200
json_ok "$TEST_TMP/plain.json" '.listed == null' "a run without --list-over-us has a list"

run slow "$slow" 200 --list-over-us 1000
f=$TEST_TMP/slow.json
json_ok "$f" '.listed.over_us == 1000 and .listed.complete and .listed.dropped == 0' \
	"the list does not say its limit, or says it is incomplete"
json_ok "$f" '.received > 0 and (.listed.datagrams | length) == .received' \
	"not every reply of a 2 ms echo is listed over 1 ms"
json_ok "$f" '[.listed.datagrams[] | .reply_mono_s - .intended_mono_s >= 0.002] | all' \
	"a listed datagram is not 2 ms late"
json_ok "$f" '[.listed.datagrams[].intended_mono_s] as $t | $t == ($t | sort)' \
	"the list is not in intended order"
json_ok "$f" '. as $r | [.listed.datagrams[] | .intended_mono_s >= $r.start_mono_s - 1e-6 and
	.reply_mono_s <= $r.start_mono_s + $r.elapsed_s + 1e-6] | all' \
	"a listed datagram lies outside the run on CLOCK_MONOTONIC"
# 1/1000th of the intended spacing: the listed intended times are the schedule's.
json_ok "$f" '[.listed.datagrams[].intended_mono_s] as $t |
	[range(1; $t | length) | ($t[.] - $t[. - 1]) * 200 | . > 0.999 and . < 1.001] | all' \
	"the listed intended times are not 5 ms apart (200 pps)"

run none "$slow" 200 --list-over-us 500000
json_ok "$TEST_TMP/none.json" '(.listed.datagrams | length) == 0 and .listed.complete' \
	"replies under the limit were listed"

# 24000 intended, every reply over 1 us, from two threads: 10000 listed.
# Four times the list's room, so that a sender slowed by a busy host (an
# ASan build beside guests keeps some 5800 pps) still overfills it.
DURATION=4 run full "$fast" 6000 --list-over-us 1 --threads 2
f=$TEST_TMP/full.json
json_ok "$f" '.received > 10000' "only $(jq .received "$f") replies: the list cannot be full"
json_ok "$f" '(.listed.datagrams | length) == 10000 and (.listed.complete | not) and
	.listed.dropped == .received - 10000' "a full list does not hold 10000 and count the rest"

"$LOADGEN" --target "$fast" --rate 10 --list-over-us -1 >"$TEST_TMP/bad.txt" 2>&1; st=$?
[ "$st" = 64 ] || fail "--list-over-us -1 exited $st, not 64"
grep -q -- "--list-over-us '-1'" "$TEST_TMP/bad.txt" || fail "the refusal does not name the flag: $(cat "$TEST_TMP/bad.txt")"
pass "--list-over-us: slow replies listed on CLOCK_MONOTONIC in order, bounded, refused when negative"
