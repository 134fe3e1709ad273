#!/usr/bin/env bash
# --spin-us: loadgen wakes early and busy-waits to each intended send time.
# The schedule stays the same (every packet sent once, the rate right, the
# schedule error recorded for each), the JSON and the table say how long
# it spins, and it does spin: with a margin as long as the interval the
# thread busy-waits all the time, using far more CPU than without.
# timeout: 120
# shellcheck disable=SC2016 # the $names in the filters are jq's
. "$(dirname "$0")/../lib.sh"
. "$FIXTURES/loadgen/lib.sh"

start_echo
target=udp://127.0.0.1:$ECHO_PORT

# run NAME RATE ARGS...: a 2 s run, JSON in $TEST_TMP/NAME.json
run() {
	local name=$1 rate=$2
	shift 2
	"$LOADGEN" --target "$target" --rate "$rate" --duration 2 --no-progress \
		--json "$TEST_TMP/$name.json" "$@" >"$TEST_TMP/$name.txt" \
		|| fail "loadgen $* exited $?: $(cat "$TEST_TMP/$name.txt")"
}

# check_run NAME RATE SPIN: the whole schedule went out and came back
check_run() {
	local f=$TEST_TMP/$1.json n=$(($2 * 2))
	json_ok "$f" '.expected == $n and .sent == $n' \
		"$1: not every scheduled packet was sent" --argjson n "$n"
	json_ok "$f" '.received == $n and .lost == 0' \
		"$1: packets were lost on loopback" --argjson n "$n"
	rate_held "$f" "$2" "$1"
	json_ok "$f" '.schedule_error_us.count == $n' \
		"$1: schedule error not recorded for every packet" --argjson n "$n"
	json_ok "$f" '.spin_us == $spin' "$1: spin_us is not $3" --argjson spin "$3"
}

run plain 1000
run spin 1000 --spin-us 1000
run fast 10000 --spin-us 200
run epoll 1000 --spin-us 1500 --timer epoll
check_run plain 1000 0
check_run spin 1000 1000
check_run fast 10000 200
check_run epoll 1000 1500
grep -q 'spinning 1000 us before each send' "$TEST_TMP/spin.txt" \
	|| fail "the table does not show the spin: $(cat "$TEST_TMP/spin.txt")"
grep -q spinning "$TEST_TMP/plain.txt" && fail "the table shows a spin without --spin-us"

cpu() { jq -e '.cpu.user_s + .cpu.sys_s' "$TEST_TMP/$1.json"; }
plain=$(cpu plain) spin=$(cpu spin)
awk -v s="$spin" -v p="$plain" 'BEGIN { exit !(s > 3 * p && s > 0.2) }' \
	|| fail "--spin-us 1000 at 1000 pps used $spin s of CPU, without $plain s: no busy-wait"
pass "--spin-us: schedule, rate and counts unchanged, setting shown, CPU spent"
