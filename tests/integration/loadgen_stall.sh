#!/usr/bin/env bash
# A 200 ms stall must show in full in the corrected latency.
#  1. The echo server stops (SIGSTOP) for 200 ms: loadgen keeps sending on
#     schedule, so both corrected and uncorrected max are about 200 ms (an
#     open-loop sender is never held back by its target).
#  2. loadgen itself stops for 500 ms, as a quota-throttled sender does:
#     the packets due in the gap go out late in one burst; their corrected
#     latency (from the intended send time) is about 500 ms while the
#     uncorrected one (from the late actual send) stays small. That gap is
#     what coordinated omission hides. (500 ms, so that scheduling noise of
#     a busy test machine cannot close the gap.)
# timeout: 120
. "$(dirname "$0")/../lib.sh"
. "$FIXTURES/loadgen/lib.sh"

# stall PID SECONDS: stop PID for SECONDS, one second from now.
stall() {
	sleep 1
	kill -STOP "$1"
	sleep "$2"
	kill -CONT "$1"
}

start_echo
target=udp://127.0.0.1:$ECHO_PORT

# 1: the target stalls
"$LOADGEN" --target "$target" --rate 2000 --duration 3 --json "$TEST_TMP/a.json" \
	--timeseries "$TEST_TMP/a.csv" >"$TEST_TMP/a.txt" &
lg=$!
stall "$ECHO_PID" 0.2
wait "$lg" || fail "loadgen exited $? ($(cat "$TEST_TMP/a.txt"))"
cat "$TEST_TMP/a.txt"
json_ok "$TEST_TMP/a.json" '.latency_us.corrected.max >= 190000' \
	"a 200 ms target stall is missing from the corrected max"
json_ok "$TEST_TMP/a.json" '.latency_us.corrected.max | numbers < 1000000' \
	"corrected max far beyond the 200 ms stall"
json_ok "$TEST_TMP/a.json" '.latency_us.uncorrected.max >= 150000' \
	"the open-loop sender should not have been held back"
json_ok "$TEST_TMP/a.json" '.lost == 0' "packets lost during the stall"
# the stall is one spike in the time series, in the window where it ended
big=$(awk -F, '/^[0-9]/ && $5 >= 150000' "$TEST_TMP/a.csv" | wc -l)
{ [ "$big" -ge 1 ] && [ "$big" -le 3 ]; } || fail "$big windows show the stall"

# 2: the sender stalls
"$LOADGEN" --target "$target" --rate 2000 --duration 3 --json "$TEST_TMP/b.json" \
	>"$TEST_TMP/b.txt" &
lg=$!
stall "$lg" 0.5
wait "$lg" || fail "loadgen exited $? ($(cat "$TEST_TMP/b.txt"))"
cat "$TEST_TMP/b.txt"
json_ok "$TEST_TMP/b.json" '.latency_us.corrected.max >= 480000' \
	"a 500 ms sender stall is missing from the corrected max"
json_ok "$TEST_TMP/b.json" '.schedule_error_us.max >= 480000' \
	"the schedule error does not show the sender's stall"
json_ok "$TEST_TMP/b.json" '.latency_us | .uncorrected.max * 2 < .corrected.max' \
	"uncorrected max is not much smaller than corrected max"
json_ok "$TEST_TMP/b.json" '.sent == 6000 and .lost == 0' \
	"the burst after the stall did not send everything that was due"
pass "a 200 ms target stall and a 500 ms sender stall appear in the corrected latency"
