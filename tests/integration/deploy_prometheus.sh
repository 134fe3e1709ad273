#!/usr/bin/env bash
# deploy/prometheus: promtool check rules and test rules (a test for each
# alert, and one that cannot pass once a rule is changed), then the alerts
# promtool gives for a real demo run's stall as relay recorded it
# (tests/fixtures/prometheus/demo: relay.metrics.prom from the stock and
# the patched PREEMPT_RT guest), and the host A/B check on the same.
# timeout: 120
# check: fast
# variants: release
. "$(dirname "$0")/../lib.sh"
command -v promtool >/dev/null || fail "no promtool (mk/deps test: Debian's prometheus package)"
p=$top/deploy/prometheus
promtool check rules "$p/relay.rules.yml" >"$TEST_TMP/check.out" 2>&1 || { cat "$TEST_TMP/check.out"; fail "promtool check rules"; }
promtool test rules "$p/tests/relay.rules.test.yml" >"$TEST_TMP/test.out" 2>&1 || { cat "$TEST_TMP/test.out"; fail "promtool test rules"; }
alerts=$(sed -n 's/^ *- alert: *//p' "$p/relay.rules.yml")
for a in $alerts; do
	grep -q "^  - name: $a\$" "$p/tests/relay.rules.test.yml" || fail "no test for the alert $a"
	grep -q "alertname: $a\$" "$p/tests/relay.rules.test.yml" || fail "the test of $a never evaluates it"
done
pass "promtool check rules and test rules: $(wc -w <<<"$alerts") alerts, a test each"

# A rule that no longer says what its test says fails the test.
mkdir -p "$TEST_TMP/p/tests"
sed 's/> 0.25$/> 0.95/' "$p/relay.rules.yml" >"$TEST_TMP/p/relay.rules.yml"
cmp -s "$p/relay.rules.yml" "$TEST_TMP/p/relay.rules.yml" && fail "the mutation changed nothing"
cp "$p/tests/relay.rules.test.yml" "$TEST_TMP/p/tests/"
promtool test rules "$TEST_TMP/p/tests/relay.rules.test.yml" >"$TEST_TMP/mut.out" 2>&1 &&
	fail "promtool test rules passed a changed RelayCotenantThrottled"
grep -q "RelayCotenantThrottled" "$TEST_TMP/mut.out" || { cat "$TEST_TMP/mut.out"; fail "the failure does not name the alert"; }
# ... and so does RelayLateWhileThrottled alerting on every kind of late
# wake-up, the tick's too: the host whose tick alone was late fires.
sed 's/increase5m{wakeup=~"datagram|stream"} > 0$/increase5m > 0/' "$p/relay.rules.yml" >"$TEST_TMP/p/relay.rules.yml"
cmp -s "$p/relay.rules.yml" "$TEST_TMP/p/relay.rules.yml" && fail "the mutation of RelayLateWhileThrottled changed nothing"
promtool test rules "$TEST_TMP/p/tests/relay.rules.test.yml" >"$TEST_TMP/mut.out" 2>&1 &&
	fail "promtool test rules passed RelayLateWhileThrottled alerting on the tick"
grep -q RelayLateWhileThrottled "$TEST_TMP/mut.out" || { cat "$TEST_TMP/mut.out"; fail "the failure does not name the alert"; }
pass "a changed rule fails its test"

# The demo's stall as relay recorded it in its guests.
d=$FIXTURES/prometheus/demo
"$top/mk/py" deploy.monitor.recorded --host "stock=$d/stock/relay.metrics.prom" \
	--host "patched=$d/patched/relay.metrics.prom" \
	--expect stock=RelayKernelFixMissing,RelayLateWhileThrottled,RelayRTTailOverBound,RelayForwardTailOverBound \
	--expect patched=RelayForwardTailOverBound --write "$TEST_TMP/demo.test.yml" >"$TEST_TMP/demo.out" 2>&1 ||
	{ cat "$TEST_TMP/demo.out"; fail "the demo's recorded stall: not the alerts expected"; }
# ... and expecting the patched guest to be as quiet as the fix makes it
# fails, naming the alert its co-tenant's own delays raise.
"$top/mk/py" deploy.monitor.recorded --host "stock=$d/stock/relay.metrics.prom" \
	--host "patched=$d/patched/relay.metrics.prom" \
	--expect stock=RelayKernelFixMissing,RelayLateWhileThrottled,RelayRTTailOverBound,RelayForwardTailOverBound \
	>"$TEST_TMP/quiet.out" 2>&1 && fail "a quiet patched guest expected, and promtool agreed"
grep -q RelayForwardTailOverBound "$TEST_TMP/quiet.out" || { cat "$TEST_TMP/quiet.out"; fail "the failure does not name the alert"; }
pass "a real demo stall: stock fires the fix, late-while-throttled and both tail alerts; patched only the forward tail"

"$top/mk/py" deploy.monitor.hostab --stock "$d/stock/relay.metrics.prom" \
	--patched "$d/patched/relay.metrics.prom" >"$TEST_TMP/ab.out" 2>&1 || { cat "$TEST_TMP/ab.out"; fail "host A/B check"; }
grep -qF 'RelayLateWhileThrottled fired (relay_late_while_throttled_total{wakeup=~"datagram|stream"} rose by 83): as it must;' \
	"$TEST_TMP/ab.out" || fail "host A/B: $(cat "$TEST_TMP/ab.out")"
grep -q '^patched: RelayKernelFixMissing quiet .* RelayLateWhileThrottled quiet (relay_late_while_throttled_total{wakeup=~"datagram|stream"} rose by 0): as it must;' \
	"$TEST_TMP/ab.out" || fail "host A/B: $(cat "$TEST_TMP/ab.out")"
"$top/mk/py" deploy.monitor.hostab --stock "$d/patched/relay.metrics.prom" \
	--patched "$d/stock/relay.metrics.prom" >/dev/null 2>&1 && fail "host A/B check passed the hosts swapped"
"$top/mk/py" deploy.monitor.hostab --results "$TEST_TMP/none" >"$TEST_TMP/none.out" 2>&1; rc=$?
[ $rc = 65 ] || fail "host A/B check on no results: exit $rc, expected 65"
grep -qF "$TEST_TMP/none/stock/scenario/relay-metrics-before.txt" "$TEST_TMP/none.out" || fail "no results: $(cat "$TEST_TMP/none.out")"
pass "the host A/B check on the demo's scrapes, and refusing them swapped"
