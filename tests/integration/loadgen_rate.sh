#!/usr/bin/env bash
# loadgen against a loopback echo server: the measured rate matches the
# target, every packet comes back, and every result file is complete.
# timeout: 120
. "$(dirname "$0")/../lib.sh"
. "$FIXTURES/loadgen/lib.sh"

start_echo
out=$TEST_TMP/run
"$LOADGEN" --target "udp://127.0.0.1:$ECHO_PORT" --rate 5000 --duration 3 \
	--threads 2 --flows 4 --size 100 --json "$out.json" \
	--hgrm "$out.hgrm" --timeseries "$out.csv" >"$out.txt" \
	|| fail "loadgen exited $?: $(cat "$out.txt")"
cat "$out.txt"

check_py "$out.json" "j['expected'] == 15000 and j['sent'] == 15000" \
	"not every scheduled packet was sent"
# within 2 %: on a busy machine the last send alone may be 30 ms late
check_py "$out.json" "abs(j['achieved_rate'] - 5000) <= 100" \
	"achieved rate is not within 2% of 5000 pps"
check_py "$out.json" "j['target_rate'] == 5000" "target rate"
check_py "$out.json" "j['received'] == 15000 and j['lost'] == 0" \
	"packets were lost on loopback"
check_py "$out.json" "j['duplicated'] == 0 and j['foreign'] == 0" "counters"
for key in corrected uncorrected; do
	check_py "$out.json" "all(k in j['latency_us']['$key'] for k in
		('p50','p90','p99','p99_9','p99_99','max','count','mean'))" \
		"latency_us.$key is missing a percentile"
	check_py "$out.json" "j['latency_us']['$key']['count'] == 15000" \
		"latency_us.$key does not count every reply"
done
check_py "$out.json" "0 < j['latency_us']['corrected']['p50'] < 100000" \
	"implausible median"
check_py "$out.json" "j['schedule_error_us']['count'] == 15000" \
	"schedule error not recorded for every packet"
check_py "$out.json" "all(k in j['cgroup'] for k in ('path','quota_us',
	'period_us','nr_periods','nr_throttled','throttled_us'))" "cgroup keys"

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
check_py "$out.epoll.json" "j['sent'] == 4000 and j['received'] == 4000" \
	"--timer epoll did not send and receive the schedule"
check_py "$out.epoll.json" "abs(j['achieved_rate'] - 2000) <= 40" "--timer epoll rate"
pass "5000 pps for 3 s on 2 threads: rate, counts and files; --timer epoll"
