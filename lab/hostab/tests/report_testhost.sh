#!/usr/bin/env bash
# report/summarize --testhost and report/render on a run of the scenario on
# systemd test hosts, as lab/hostab/run leaves it: the per-kernel table
# (release, what relay-preflight said of the fix, the RT client's latency
# and late datagrams, the co-tenant's throttling), the verdict last, the
# page in headless Chromium; the rule failing where it must; a kernel
# without results said so; a missing or malformed file refused by name.
# The fixture is real loadgen output through relay on loopback, relay
# stopped for 30 ms four times on "stock" (tests/fixtures/report/testhost).
# timeout: 180
# lane: side
# variants: release
# shellcheck disable=SC2016 # the $names in the filters are jq's
. "$(dirname "$0")/../../../tests/lib.sh"
command -v gnuplot >/dev/null || skip "gnuplot not installed (mk/deps report)"
report=$top/report
fresh() { rm -rf "${TEST_TMP:?}/$1"; cp -r "$FIXTURES/report/testhost" "$TEST_TMP/$1"; echo "$TEST_TMP/$1"; }
summarize() { "$report/summarize" --testhost "$@"; }
# judged MS DIR: summary.json of DIR, its spec's late_ms MS.
judged() { json_edit "$2/spec.json" ".scenario.late_ms = $1" && summarize "$2"; }
# verdict DIR: the word and holds of DIR/summary.json.
verdict() { jq -r '.verdict | "\(.word) \(.holds)"' "$1/summary.json"; }

# 1. Judged at the spec's 20 ms (this loopback's own noise reached ~13 ms
# on the patched side): stock late, patched not.
dir=$(fresh ok)
summarize "$dir" || fail "summarize exited $?"
[ "$(verdict "$dir")" = "fixed true" ] || fail "verdict is '$(verdict "$dir")', not 'fixed true'"
s=$dir/summary.json
disagrees="summary.json disagrees with the fixture's files"
for k in stock patched; do
	json_ok "$s" '.kernels[$k] as $o | $rt[0] as $rt
		| ($o.latency_us.max | numbers) == $rt.latency_us.corrected.max
		and ($o.rt_lost | numbers) == $rt.lost and $o.kernel == "6.12.117-relay-\($k)"
		and $o.throttled_during_rt == $rt.watched_cgroup.nr_throttled and $o.throttled_during_rt > 0' \
		"$disagrees: $k: $(jq -c --arg k "$k" '.kernels[$k] | {latency_us, rt_lost, kernel, throttled_during_rt}' "$s")" \
		--arg k "$k" --slurpfile rt "$dir/$k/scenario/rt-client.json"
done
json_ok "$s" '.kernels.stock.late_at_least >= 1 and .kernels.patched.late == 0' "$disagrees: stock not late, or patched late"
json_ok "$s" '.verdict.stock_shows_effect == true and .verdict.patched_free == true' \
	"$disagrees: verdict $(jq -c .verdict "$s")"
json_ok "$s" '.params == ($spec[0].scenario + {clock: null}) and .late_ms == 20' \
	"$disagrees: params or late_ms are not spec.json's" --slurpfile spec "$dir/spec.json"
out=$("$report/render" "$dir") || fail "render exited $?"
echo "$out"
grep -q '^relay on a systemd test host' <<<"$out" || fail "the title does not say 'on a systemd test host'"
while IFS= read -r row; do
	grep -Eq "^  $row\$" <<<"$out" || fail "no table row matching '$row'"
done <<'ROWS'
release +6\.12\.117-relay-stock +6\.12\.117-relay-patched
relay-preflight: the fix +act: MISSING on a PREEMPT_RT kernel +ok: present
max +46\.9 +13\.0
p99\.9 +46\.0 +11\.0
datagrams 20 ms late or more +13-15 +0
lost +77 +0
slice cpu\.max \(quota period, us\) +1000 20000 \(5%\) +1000 20000 \(5%\)
\.\.\. while the RT client ran +176/176 +153/153
ROWS
[ "$(tail -n 1 "$dir/table.txt")" = "verdict: FIXED: stock 13-15 of 1423 RT datagrams 20 ms late or more (max 46.9 ms); patched 0 of 1500 RT datagrams 20 ms late or more (max 13.0 ms)" ] ||
	fail "table.txt does not end with the verdict: $(tail -n 1 "$dir/table.txt")"
grep -q "struct eventpoll&#x27;s lock is spinlock_t" "$dir/report.html" || fail "the page lacks relay-preflight's whole line"
[ -s "$dir/plots/distribution-rt.svg" ] || fail "no RT latency plot"
"$report/check" "$dir" || fail "the report is not whole"
shot=no
if command -v chromium >/dev/null; then
	"$report/check" "$dir" --screenshot || fail "the page does not show the verdict and both curves"
	shot=yes
fi

# 2. The rule fails where it must: at 5 ms the patched side's loopback
# noise is late (not fixed); with stock's effect taken out, no effect.
dir=$(fresh strict)
judged 5 "$dir" || fail "summarize (5 ms) exited $?"
[ "$(verdict "$dir")" = "not fixed false" ] || fail "at 5 ms the verdict is '$(verdict "$dir")'"
"$report/render" "$dir" --no-html | grep -q '^verdict: NOT FIXED: ' || fail "no NOT FIXED verdict line"
dir=$(fresh noeffect)
rm -r "$dir/stock/scenario" && cp -r "$dir/patched/scenario" "$dir/stock/"
summarize "$dir" || fail "summarize (no effect) exited $?"
[ "$(verdict "$dir")" = "no effect false" ] || fail "without the stall the verdict is '$(verdict "$dir")'"

# 2b. A real run on the test hosts before the demo's scenario reached them
# (tests/fixtures/report/testhost-vm): the RT clients were spared, relay's
# own wake-ups were not on stock. The verdict is the RT client's: no
# effect; relay's own wake-ups are shown, not judged.
vm() { rm -rf "${TEST_TMP:?}/$1"; cp -r "$FIXTURES/report/$2" "$TEST_TMP/$1"; echo "$TEST_TMP/$1"; }
dir=$(vm real testhost-vm)
"$report/summarize" --testhost "$dir" >/dev/null || fail "summarize of the real run exited $?"
[ "$(verdict "$dir")" = "no effect false" ] || fail "real run: verdict '$(verdict "$dir")', not 'no effect false'"
out=$("$report/render" "$dir") || fail "render of the real run exited $?"
grep -Eq '^  max +70\.97 +1\.51$' <<<"$out" || fail "no row of relay's own wake-up max (70.97, 1.51)"
"$report/check" "$dir" || fail "the real run's report is not whole"
echo '{"wake_latency_us": {"p50": 1}}' >"$dir/patched/scenario/relay-stats.json"
rc=0
"$report/summarize" --testhost "$dir" >/dev/null 2>"$TEST_TMP/bad-stats.err" || rc=$?
{ [ $rc = 65 ] && grep -q 'patched/scenario/relay-stats.json: wake_latency_us.p99: missing' "$TEST_TMP/bad-stats.err"; } ||
	fail "a relay-stats.json without percentiles: exit $rc, $(cat "$TEST_TMP/bad-stats.err")"
pass "a real test-host run of before: no effect on the RT client, relay's own wake-ups shown (71 ms stock, 1.5 ms patched)"

# 3. A kernel whose guest left no scenario: said so, never a pass.
dir=$(fresh missing)
rm -r "$dir/patched/scenario"
echo "FAIL the scenario under systemd units: the RT client failed" >>"$dir/patched/results.txt"
summarize "$dir" || fail "summarize (patched missing) exited $?"
[ "$(verdict "$dir")" = "incomplete false" ] || fail "without patched results the verdict is '$(verdict "$dir")'"
out=$("$report/render" "$dir") || fail "render (patched missing) exited $?"
grep -Eq '^  max +46\.9 +no-results$' <<<"$out" || fail "the patched column does not say no-results"
grep -q "^verdict: INCOMPLETE: .*no patched/scenario/rt-client.json.*FAIL the scenario under systemd units: the RT client failed" <<<"$out" ||
	fail "the verdict does not say why the patched results are missing"
grep -q "The patched kernel&#x27;s data is missing" "$dir/report.html" || fail "the page does not say the patched data is missing"
"$report/check" "$dir" || fail "the report without patched results is not whole"

# 4. Missing or malformed files: exit 65, naming the file.
refused() {	# refused WHAT FILE-IN-MESSAGE COMMAND...
	local what=$1 name=$2 st=0; shift 2
	"$@" >/dev/null 2>"$TEST_TMP/err" || st=$?
	[ $st = 65 ] || fail "$what: exited $st, not 65"
	grep -q "$name" "$TEST_TMP/err" || fail "$what: the error does not name $name: $(cat "$TEST_TMP/err")"
}
dir=$(fresh bad)
rm "$dir/stock/scenario/cotenant.json"
refused "no cotenant.json" "stock/scenario/cotenant.json: no such file" summarize "$dir"
# broken WHAT NAME FILE SED: FILE of a fresh copy edited by SED is refused, naming NAME.
broken() {
	local dir
	dir=$(fresh bad)
	sed -i "$4" "$dir/$3"
	refused "$1" "$2" summarize "$dir"
}
broken "a bad hgrm row" patched/scenario/rt-client.hgrm:5 patched/scenario/rt-client.hgrm '5s/.*/  0.2 oops 12 1.0/'
# shellcheck disable=SC2016 # a sed program: delete the last line
broken "cut-off JSON" stock/scenario/rt-client.json stock/scenario/rt-client.json '$d'
broken "a bad cpu.max" patched/scenario/loadgen-slice.cpu.max patched/scenario/loadgen-slice.cpu.max '1s/.*/1000/'
broken "cpu.stat without nr_throttled" "stock/scenario/loadgen-slice.cpu.stat: no nr_throttled" \
	stock/scenario/loadgen-slice.cpu.stat '/nr_throttled/d'
broken "preflight without the fix" "patched/preflight.txt: relay-preflight said nothing" \
	patched/preflight.txt '/ready-list/d'
dir=$(fresh bad)
summarize "$dir" || fail "summarize exited $?"
rm "$dir/stock/scenario/rt-client.hgrm"
refused "render without the hgrm" "stock/scenario/rt-client.hgrm" "$report/render" "$dir"
# The limit is the spec's: a spec without a usable one is bad data.
for bad in 0 '"soon"' null; do
	dir=$(fresh bad)
	json_edit "$dir/spec.json" ".scenario.late_ms = $bad"
	refused "late_ms $bad" "spec.json: scenario.late_ms" summarize "$dir"
done
dir=$(fresh bad)
json_edit "$dir/spec.json" 'del(.scenario)'
refused "a spec without a scenario" "spec.json: no scenario object" summarize "$dir"
rm "$dir/spec.json"
refused "no spec" "spec.json: no such file" summarize "$dir"
"$report/summarize" --testhost --late-ms 20 "$dir" >/dev/null 2>&1; st=$?
[ $st = 64 ] || fail "summarize --testhost --late-ms (the spec's now) exited $st, not 64"
[ $shot = yes ] || skip "chromium not installed (mk/deps report): everything but the page in a browser passed"
pass "test host report: table, verdict, page, missing and malformed files"
