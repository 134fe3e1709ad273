#!/usr/bin/env bash
# loadgen against a loopback echo server: the measured rate matches the
# target, every packet comes back, and every result file is complete.
# timeout: 120
# shellcheck disable=SC2016 # the $names in the filters are jq's
. "$(dirname "$0")/../lib.sh"
. "$FIXTURES/loadgen/lib.sh"

start_echo
out=$TEST_TMP/run
"$LOADGEN" --target "udp://127.0.0.1:$ECHO_PORT" --rate 5000 --duration 3 \
	--threads 2 --flows 4 --size 100 --json "$out.json" \
	--hgrm "$out.hgrm" --timeseries "$out.csv" >"$out.txt" \
	|| fail "loadgen exited $?: $(cat "$out.txt")"
cat "$out.txt"

json_ok "$out.json" '.expected == 15000 and .sent == 15000' \
	"not every scheduled packet was sent"
rate_held "$out.json" 5000 "5000 pps"
json_ok "$out.json" '.target_rate == 5000' "target rate"
json_ok "$out.json" '.received == 15000 and .lost == 0' \
	"packets were lost on loopback"
json_ok "$out.json" '.duplicated == 0 and .foreign == 0' "counters"
for key in corrected uncorrected; do
	json_ok "$out.json" '[.latency_us[$key] | has("p50", "p90", "p99", "p99_9", "p99_99",
		"max", "count", "mean")] | all' "latency_us.$key is missing a percentile" --arg key "$key"
	json_ok "$out.json" '.latency_us[$key].count == 15000' \
		"latency_us.$key does not count every reply" --arg key "$key"
done
json_ok "$out.json" '.latency_us.corrected.p50 | 0 < . and . < 100000' \
	"implausible median"
json_ok "$out.json" '.schedule_error_us.count == 15000' \
	"schedule error not recorded for every packet"
json_ok "$out.json" '[.cgroup | has("path", "quota_us", "period_us", "nr_periods",
	"nr_throttled", "throttled_us")] | all' "cgroup keys"

grep -q '^ *Value  *Percentile  *TotalCount' "$out.hgrm" || fail "hgrm header"
grep -q '^#\[Max' "$out.uncorrected.hgrm" || fail "uncorrected hgrm"
grep -q '^t_s,count,p50_us,p99_us,max_us$' "$out.csv" || fail "csv header"
rows=$(grep -c '^[0-9]' "$out.csv")
{ [ "$rows" -ge 30 ] && [ "$rows" -le 33 ]; } || fail "$rows time series rows for 3 s"
sum=$(awk -F, '/^[0-9]/ { s += $2 } END { print s }' "$out.csv")
[ "$sum" = 15000 ] || fail "time series counts add up to $sum, not 15000"
{ grep -q '50.000%' "$out.txt" && grep -q '99.990%' "$out.txt"; } || fail "table"

# --timer epoll: 1 ms pacing, the same schedule and counts
"$LOADGEN" --target "udp://127.0.0.1:$ECHO_PORT" --rate 2000 --duration 2 \
	--timer epoll --json "$out.epoll.json" >/dev/null || fail "--timer epoll exited $?"
json_ok "$out.epoll.json" '.sent == 4000 and .received == 4000' \
	"--timer epoll did not send and receive the schedule"
rate_held "$out.epoll.json" 2000 "--timer epoll"
# The rate check itself, on the run's JSON changed: a shortfall the
# schedule error does not cover fails, one it covers holds, a rate over
# the schedule's fails.
short() { json_edit "$2" "$1"; (rate_held "$2" 5000 "edited") >/dev/null 2>&1; }
cp "$out.json" "$out.a.json"
short '.achieved_rate = 4500 | .schedule_error_us.max = 1000' "$out.a.json" &&
	fail "rate_held took 4500 of 5000 pps with sends 1 ms behind"
cp "$out.json" "$out.b.json"
short '.achieved_rate = 4500 | .schedule_error_us.max = 340000' "$out.b.json" ||
	fail "rate_held refused 4500 of 5000 pps with sends 340 ms behind"
cp "$out.json" "$out.c.json"
short '.achieved_rate = 5200' "$out.c.json" &&
	fail "rate_held took 5200 pps on a 5000 pps schedule"
pass "5000 pps for 3 s on 2 threads: rate, counts and files; --timer epoll; the rate check's bounds"
