#!/usr/bin/env bash
# Bad input gets a clear error and a distinct exit status, and nothing is
# lost: malformed flags (64), a target that refuses or does not answer
# (69), an impossible rate for the thread count (64, saying what is
# possible), no permission for cgroups (71, naming the file), a cgroup path
# that is not one (69), replies that are not ours (counted, ignored).
# timeout: 120
. "$(dirname "$0")/../lib.sh"
. "$FIXTURES/loadgen/lib.sh"

# expect STATUS TEXT ARGS...: loadgen ARGS exits STATUS and says TEXT.
expect() {
	local want=$1 text=$2 status=0
	shift 2
	"$LOADGEN" "$@" >"$TEST_TMP/out" 2>"$TEST_TMP/err" || status=$?
	[ "$status" = "$want" ] || fail "loadgen $* exited $status, not $want: $(cat "$TEST_TMP/err")"
	grep -qF -- "$text" "$TEST_TMP/err" || fail "loadgen $* did not say '$text': $(cat "$TEST_TMP/err")"
	echo "ok $want: $(head -n 1 "$TEST_TMP/err")"
}

port=$(free_udp_port)
t=udp://127.0.0.1:$port
expect 64 "--rate PPS is required" --target "$t"
expect 64 "'10q' is not a rate" --target "$t" --rate 10q
expect 64 "unknown option '--speed'" --target "$t" --speed 10
expect 64 "is not a duration" --target "$t" --rate 10 --duration soon
expect 64 "use --threads 3 or more" --target "$t" --rate 5M
expect 64 "--target" --target "udp://127.0.0.1" --rate 10
# numbers that parse but that loadgen cannot honour: each named, none run
expect 64 "--rate '0.0004' is outside 0.001 to" --target "$t" --rate 0.0004 --duration 1e9
expect 64 "--rate '1e308k' is not a rate" --target "$t" --rate 1e308k
expect 64 "--cpu-quota '1e300%' is not a percentage" --target "$t" --rate 10 --cpu-quota 1e300%
expect 64 "--timeout '3000000000' is not a time in ms from 1 to 86400000" \
	--target "$t" --rate 10 --timeout 3000000000
expect 64 "--window '1e12' is not a time" --target "$t" --rate 10 --window 1e12
expect 64 "over 1e+11 packets" --target "$t" --rate 1M --duration 1e6
sweep=(sweep --target "$t" --steps 2 --slo p99=1ms)
expect 64 "over 1e+11 packets" "${sweep[@]}" --from 1k --to 1M --duration 1e6
expect 64 "--from/--to: 0.0001 to 10 pps is outside" "${sweep[@]}" --from 0.0001 --to 10
expect 64 "--from/--to: a quota of 1e+300% is above" "${sweep[@]}" --quota \
	--rate 1000 --from 1e300% --to 20%
search=(sweep --search --target "$t" --from 1k --to 20k --slo p90=5ms)
expect 64 "--resolution '0' is not a percentage from 0.1 to 100" "${search[@]}" --resolution 0
expect 64 "--searches '0' is not a number from 1 to 100" "${search[@]}" --searches 0
expect 64 "--search chooses its own rates: drop --steps" "${search[@]}" --steps 3
expect 64 "--search: --to 1000 is not above --from 2000" "${search[@]}" --from 2k --to 1k
expect 64 "--start 50000 is not between --from 1000 and --to 20000" "${search[@]}" --start 50k
expect 64 "--start 'fast' is not a rate" "${search[@]}" --start fast
expect 64 "--start is for sweep --search" "${sweep[@]}" --from 1k --to 2k --start 1500
expect 64 "--step-samples '-1' is not a number from 0 to 100000000" "${search[@]}" --step-samples -1
expect 64 "--service-us '1e9' is not a number from 0 to 1000000" echo \
	--listen "udp://127.0.0.1:$port" --service-us 1e9
"$LOADGEN" --help | grep -q -- "--cpu-quota PERCENT" || fail "--help"

# nothing listens on the port: ICMP port unreachable
expect 69 "refuses: nothing listens there" --target "$t" --rate 100 --duration 1
expect 69 "no reply came back" --target "$t" --rate 100 --duration 1 --no-probe
grep -q "refused" "$TEST_TMP/out" || fail "refused datagrams not counted"

# something listens but never answers
pylib_bg net udp-silent "$port" "$TEST_TMP/silent.ready" --seconds 60
wait_for 10 test -e "$TEST_TMP/silent.ready" || fail "silent server did not start"
expect 69 "no answer from $t within 500 ms" --target "$t" --rate 100 --timeout 500
kill "${bg_pids[-1]}"

# a cgroup that is not one
expect 69 "is not a cgroup directory" --target "$t" --rate 10 \
	--cgroup /no/such/cgroup --cpu-quota 10%

# no permission: an unprivileged user asks for a quota
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
	status=0
	setpriv --reuid=65534 --regid=65534 --clear-groups "$LOADGEN" \
		--target "$t" --rate 10 --duration 1 --cpu-quota 10% \
		>/dev/null 2>"$TEST_TMP/err" || status=$?
	[ "$status" = 71 ] || fail "unprivileged quota exited $status: $(cat "$TEST_TMP/err")"
	grep -q "Permission denied; run as root" "$TEST_TMP/err" || fail "$(cat "$TEST_TMP/err")"
	grep -q "/sys/fs/cgroup/" "$TEST_TMP/err" || fail "error does not name the file"
	echo "ok 71: $(cat "$TEST_TMP/err")"
fi

# replies that are not ours: an echo that also sends junk
pylib_bg net udp-junk-echo "$port" "$TEST_TMP/junk.ready" --idle 20
wait_for 10 test -e "$TEST_TMP/junk.ready" || fail "junk server did not start"
"$LOADGEN" --target "$t" --rate 500 --duration 1 --json "$TEST_TMP/f.json" \
	>/dev/null || fail "loadgen with junk replies exited $?"
json_ok "$TEST_TMP/f.json" '.received == 500 and .foreign >= 500' \
	"foreign replies not counted apart"
json_ok "$TEST_TMP/f.json" '.latency_us.corrected.count == 500' \
	"foreign replies reached the histogram"
pass "errors and exit statuses"
