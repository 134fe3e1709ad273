#!/usr/bin/env bash
# What relay tells about itself: /metrics (Prometheus text), /stats (JSON
# percentiles), /hgrm/*, /healthz; on exit the stats file, its .hgrm files
# and time series; the heartbeat file advancing while it runs.
# timeout: 60
# check: fast
# shellcheck disable=SC2016 # the $names in the filters are jq's
. "$(dirname "$0")/../lib.sh"
. "$FIXTURES/relay/relay.sh"

p=$(free_udp_port)
out=$TEST_TMP/out
mkdir -p "$out"
start_relay --listen "udp://127.0.0.1:$p" --upstream echo --cpus 0 \
	--allow-non-rt --tick-us 50 --stats-file "$out/relay.json" \
	--heartbeat "$TEST_TMP/hb"
udptool ping --to "127.0.0.1:$p" --count 100 --expect-prefix "" || fail "echo"

m=$(curl -sf "http://127.0.0.1:$ADMIN_PORT/metrics") || fail "GET /metrics"
for want in 'relay_rx_packets_total 100' 'relay_tx_bytes_total ' \
	'relay_drops_total{reason="oversize"} 0' 'relay_drops_total{reason="rcvbuf_overflow"} 0' \
	'relay_errors_total{kind="upstream_refused"} 0' 'relay_flows_active 1' \
	'relay_rx_latency_seconds_bucket{le="+Inf"} 100' 'relay_rx_latency_seconds_count 100' \
	'relay_wake_latency_seconds_count ' 'relay_tick_lateness_seconds_bucket{le="0.001"} ' \
	'# TYPE relay_rx_latency_seconds histogram' '# TYPE relay_rx_packets_total counter' \
	'relay_realtime{policy='; do
	grep -qF -- "$want" <<<"$m" || fail "/metrics lacks '$want'"
done
# Every sample line is NAME{labels} VALUE with a numeric value, each label
# value in quotes with backslash, quote and line feed escaped.
well_formed() {
	local value='"(\\[\\"n]|[^"\\])*"' bad
	bad=$(grep -v '^#' <<<"$1" |
		LC_ALL=C grep -Ev "^[a-z_]+(\{[a-z_]+=$value(,[a-z_]+=$value)*\})? [0-9.e+-]+\$" |
		head -n 3)
	[ -z "$bad" ] || fail "malformed /metrics lines: $bad"
}
well_formed "$m"
# Cumulative buckets never decrease.
grep '^relay_tick_lateness_seconds_bucket' <<<"$m" | awk '{ if ($2 < last) exit 1; last = $2 }' ||
	fail "tick lateness buckets decrease"

curl -sf "http://127.0.0.1:$ADMIN_PORT/stats" >"$TEST_TMP/stats.json" || fail "GET /stats"
s=$TEST_TMP/stats.json
for k in rx_latency_us wake_latency_us tick_lateness_us; do
	json_ok "$s" '.[$k] | keys == ["count", "max", "mean", "p50", "p90", "p99", "p99_9", "p99_99"]' \
		"/stats content: $k is $(jq -c ".$k" "$s")" --arg k "$k"
done
json_ok "$s" '.rx_latency_us.count == 100' "/stats content: rx_latency_us.count"
json_ok "$s" '.tick_lateness_us.count > 100' "/stats content: tick_lateness_us.count"
json_ok "$s" '.counters.rx_packets == 100' "/stats content: counters.rx_packets"
json_ok "$s" '.sched.policy | IN("SCHED_FIFO", "SCHED_OTHER")' "/stats content: sched.policy"
# Reals carry 9 significant digits at most (no 44.200000000000003).
grep -Eq '[0-9]\.[0-9]{10,}' "$TEST_TMP/stats.json" && fail "/stats prints reals unrounded"
curl -sf "http://127.0.0.1:$ADMIN_PORT/hgrm/tick_lateness" | head -n 1 |
	grep -q 'Value.*Percentile.*TotalCount.*1/(1-Percentile)' || fail "/hgrm/tick_lateness"
curl -sf "http://127.0.0.1:$ADMIN_PORT/hgrm/rx_latency" | grep -q '^#\[Max' || fail "/hgrm/rx_latency"
[ "$(curl -sf "http://127.0.0.1:$ADMIN_PORT/healthz")" = ok ] || fail "/healthz"
code=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$ADMIN_PORT/nope")
[ "$code" = 404 ] || fail "unknown path answered $code"

# The heartbeat: magic, one loop, seq and mono_ns advancing without traffic.
pylib relay_checks heartbeat "$TEST_TMP/hb" 100 || fail "heartbeat file"

# The families /metrics had, before the stop: the stats file's
# relay.metrics.prom has each but the admin endpoint's own.
curl -sf "http://127.0.0.1:$ADMIN_PORT/metrics" | sed -n 's/^# TYPE \([a-z_]*\) .*/\1/p' |
	grep -v '^relay_admin_' >"$TEST_TMP/families"
# SIGSTOP for 1.3 s: a stall the tick lateness must show.
kill -STOP "$RELAY_PID"
sleep 1.3
kill -CONT "$RELAY_PID"
stop_relay

for f in relay.json relay.rx_latency.hgrm relay.wake_latency.hgrm \
	relay.tick_lateness.hgrm relay.timeseries.csv relay.metrics.prom; do
	[ -s "$out/$f" ] || fail "stats file $f missing"
done
s=$out/relay.json
json_ok "$s" '.program == "relay" and .counters.rx_packets == 100' "stats file content: program or rx_packets"
json_ok "$s" '.tick_lateness_us.max >= 1000000' \
	"stats file content: the SIGSTOP is not in tick_lateness_us $(jq -c .tick_lateness_us "$s")"
json_ok "$s" '.counters.ticks_missed > 1000' "stats file content: counters $(jq -c .counters "$s")"
# the SIGSTOP in a window's max too, and every datagram in one
pylib relay_checks timeseries "$out/relay.timeseries.csv" 1000000 100 || fail "stats file content: time series"
head -n 1 "$out/relay.tick_lateness.hgrm" | grep -q 'Value.*Percentile' || fail "hgrm header"
sed -n 's/^# TYPE \([a-z_]*\) .*/\1/p' "$out/relay.metrics.prom" | diff "$TEST_TMP/families" - ||
	fail "relay.metrics.prom's families are not /metrics' (but relay_admin_*)"
grep -q '^relay_late_wakeups_total{wakeup="tick"} [1-9]' "$out/relay.metrics.prom" ||
	fail "relay.metrics.prom: the SIGSTOP is no late wake-up"

# A listener's name as a label value: a unix:// path may hold a quote, a
# backslash, a line feed and bytes that are not UTF-8; the value keeps the
# text format (and UTF-8: U+FFFD for such a byte).
odd="$TEST_TMP/a\"b\\c"$'\n'"d"$'\xff'".sock"
start_relay --listen "unix://$odd" --upstream echo --cpus 0 --allow-non-rt
m=$(curl -sf "http://127.0.0.1:$ADMIN_PORT/metrics") || fail "GET /metrics"
well_formed "$m"
label="listener=\"unix://$TEST_TMP/a\\\"b\\\\c\\nd"$'\xef\xbf\xbd'".sock\",id=\"0\""
grep -qF "relay_udp_rx_packets_total{$label} 0" <<<"$m" ||
	fail "no escaped label $label in: $(grep relay_udp_rx_packets_total <<<"$m")"
stop_relay
pass "metrics, stats file, hgrm, time series and heartbeat; label values escaped"
