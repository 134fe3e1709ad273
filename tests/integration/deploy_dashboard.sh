#!/usr/bin/env bash
# deploy/grafana/relay.json against what relay's /metrics exports: relay
# runs here and is scraped; the labels of the watched groups' series come
# from a real scrape of relay that watched one (the demo guest's
# relay.metrics.prom, tests/fixtures/prometheus/demo), where this host's
# cpu controller cannot be on cgroup v2. Every family that recording has,
# this relay declares too, so it cannot name what relay no longer makes.
# Then a dashboard with panels naming what relay does not produce (a
# series, a label, a grouping, a label's value) fails.
# timeout: 60
# check: fast
# variants: release
. "$(dirname "$0")/../lib.sh"
. "$FIXTURES/relay/relay.sh"

up=$(free_udp_port)
start_relay --listen "udp://127.0.0.1:$up" --upstream echo --cpus 0 --allow-non-rt \
	--kernel-btf "$FIXTURES/btf/rt-rwlock-cfs_rq.o"
curl -sf "http://127.0.0.1:$ADMIN_PORT/metrics" >"$TEST_TMP/live.prom" || fail "GET /metrics"
stop_relay
rec=$FIXTURES/prometheus/demo/stock/relay.metrics.prom
families() { sed -n 's/^# TYPE \([a-z_]*\) .*/\1/p' "$1" | sort; }
stale=$(comm -23 <(families "$rec") <(families "$TEST_TMP/live.prom") | grep -v '^relay_unix_' | paste -sd' ' -)
[ -z "$stale" ] || fail "the recorded scrape has families this relay does not declare: $stale"

board=$top/deploy/grafana/relay.json
"$top/mk/py" deploy.monitor.dashboard "$board" --metrics "$TEST_TMP/live.prom" --metrics "$rec" \
	>"$TEST_TMP/check.out" 2>&1 || { cat "$TEST_TMP/check.out"; fail "the dashboard names what relay does not produce"; }
pass "the dashboard's $(sed -n 's/.*: \([0-9]*\) queries.*/\1/p' "$TEST_TMP/check.out") queries name only what relay exports"

# A panel naming a series relay does not produce, one matching a label
# relay's series does not carry, one grouping by one: each is named.
jq '.panels += [
	{"title": "made up", "targets": [{"expr": "rate(relay_made_up_total[5m])"}]},
	{"title": "bad label", "targets": [{"expr": "relay_kernel_info{kernel_version=\"6.1\"}"}]},
	{"title": "bad grouping", "targets": [{"expr": "sum by (slice) (relay_late_while_throttled_total)"}]},
	{"title": "bad value", "targets": [{"expr": "rate(relay_late_wakeups_total{wakeup=\"tock\"}[5m])"}]}]' \
	"$board" >"$TEST_TMP/bad.json"
"$top/mk/py" deploy.monitor.dashboard "$TEST_TMP/bad.json" --metrics "$TEST_TMP/live.prom" --metrics "$rec" \
	>"$TEST_TMP/bad.out" 2>&1 && fail "a dashboard naming relay_made_up_total passed"
for want in "panel 'made up': relay_made_up_total is no series relay exports" \
	"panel 'bad label': relay_kernel_info has no label kernel_version" \
	"panel 'bad grouping': groups by slice" \
	"panel 'bad value': relay_late_wakeups_total{wakeup=\"tock\"}: relay exports no such value"; do
	grep -qF "$want" "$TEST_TMP/bad.out" || { cat "$TEST_TMP/bad.out"; fail "not said: $want"; }
done
"$top/mk/py" deploy.monitor.dashboard "$TEST_TMP/no-such.json" --metrics "$TEST_TMP/live.prom" >/dev/null 2>&1; rc=$?
[ $rc = 65 ] || fail "no dashboard file: exit $rc, expected 65"
pass "panels naming what relay does not produce fail the check, each named"
