#!/usr/bin/env bash
# What relay tells about itself: /metrics (Prometheus text), /stats (JSON
# percentiles), /hgrm/*, /healthz; on exit the stats file, its .hgrm files
# and time series; the heartbeat file advancing while it runs.
# timeout: 60
# check: fast
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
# Every sample line is NAME{labels} VALUE with a numeric value.
bad=$(grep -v '^#' <<<"$m" | grep -Ev '^[a-z_]+(\{[a-z_]+="[^"]*"(,[a-z_]+="[^"]*")*\})? [0-9.e+-]+$' | head -n 3)
[ -z "$bad" ] || fail "malformed /metrics lines: $bad"
# Cumulative buckets never decrease.
grep '^relay_tick_lateness_seconds_bucket' <<<"$m" | awk '{ if ($2 < last) exit 1; last = $2 }' ||
	fail "tick lateness buckets decrease"

curl -sf "http://127.0.0.1:$ADMIN_PORT/stats" >"$TEST_TMP/stats.json" || fail "GET /stats"
python3 - "$TEST_TMP/stats.json" <<'PY' || fail "/stats content"
import json, sys
d = json.load(open(sys.argv[1]))
for k in ("rx_latency_us", "wake_latency_us", "tick_lateness_us"):
    assert set(d[k]) == {"p50", "p90", "p99", "p99_9", "p99_99", "max", "count", "mean"}, d[k]
assert d["rx_latency_us"]["count"] == 100
assert d["tick_lateness_us"]["count"] > 100
assert d["counters"]["rx_packets"] == 100
assert d["sched"]["policy"] in ("SCHED_FIFO", "SCHED_OTHER")
PY
# Reals carry 9 significant digits at most (no 44.200000000000003).
grep -Eq '[0-9]\.[0-9]{10,}' "$TEST_TMP/stats.json" && fail "/stats prints reals unrounded"
curl -sf "http://127.0.0.1:$ADMIN_PORT/hgrm/tick_lateness" | head -n 1 |
	grep -q 'Value.*Percentile.*TotalCount.*1/(1-Percentile)' || fail "/hgrm/tick_lateness"
curl -sf "http://127.0.0.1:$ADMIN_PORT/hgrm/rx_latency" | grep -q '^#\[Max' || fail "/hgrm/rx_latency"
[ "$(curl -sf "http://127.0.0.1:$ADMIN_PORT/healthz")" = ok ] || fail "/healthz"
code=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$ADMIN_PORT/nope")
[ "$code" = 404 ] || fail "unknown path answered $code"

# The heartbeat: magic, one loop, seq and mono_ns advancing without traffic.
python3 - "$TEST_TMP/hb" <<'PY' || fail "heartbeat file"
import struct, sys, time
def read():
    b = open(sys.argv[1], "rb").read()
    magic, ver, n, pid, start = struct.unpack_from("<8sIIQQ", b, 0)
    seq, mono, ticks, pkts, cpu, tid = struct.unpack_from("<QQQQii", b, 64)
    return magic, ver, n, seq, mono, ticks, pkts
a = read()
time.sleep(0.2)
b = read()
assert a[0] == b"RELAYHB1" and a[1] == 1 and a[2] == 1, a
assert b[3] > a[3] and b[4] > a[4] and b[5] > a[5], (a, b)
assert b[6] >= 100, b
age = time.clock_gettime_ns(time.CLOCK_MONOTONIC) - read()[4]
assert age < 100_000_000, age
PY

# SIGSTOP for 1.3 s: a stall the tick lateness must show.
kill -STOP "$RELAY_PID"
sleep 1.3
kill -CONT "$RELAY_PID"
stop_relay

for f in relay.json relay.rx_latency.hgrm relay.wake_latency.hgrm \
	relay.tick_lateness.hgrm relay.timeseries.csv; do
	[ -s "$out/$f" ] || fail "stats file $f missing"
done
python3 - "$out" <<'PY' || fail "stats file content"
import csv, json, sys
d = json.load(open(sys.argv[1] + "/relay.json"))
assert d["program"] == "relay" and d["counters"]["rx_packets"] == 100
assert d["tick_lateness_us"]["max"] >= 1000000, d["tick_lateness_us"]   # the SIGSTOP
assert d["counters"]["ticks_missed"] > 1000, d["counters"]
rows = [r for r in csv.reader(l for l in open(sys.argv[1] + "/relay.timeseries.csv") if not l.startswith("#"))]
assert rows[0][:5] == ["t_s", "count", "p50_us", "p99_us", "max_us"], rows[0]
ts = [float(r[0]) for r in rows[1:]]
assert ts == sorted(ts) and len(ts) >= 10, ts
steps = {round(b - a, 3) for a, b in zip(ts, ts[1:])}
assert steps == {0.1}, steps
assert max(int(r[4] or 0) for r in rows[1:]) >= 1000000
assert sum(int(r[5]) for r in rows[1:]) == 100
PY
head -n 1 "$out/relay.tick_lateness.hgrm" | grep -q 'Value.*Percentile' || fail "hgrm header"
pass "metrics, stats file, hgrm, time series and heartbeat"
