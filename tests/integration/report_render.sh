#!/usr/bin/env bash
# report/summarize and report/render on fixture result directories (no VM):
# a demo run with the effect, one whose stock guest hung, and a model run.
# timeout: 300
# check: fast
# lane: side
# variants: release
. "$(dirname "$0")/../lib.sh"
command -v gnuplot >/dev/null || skip "gnuplot not installed (mk/deps report)"
report=$top/report

# check_outputs DIR: the page, the table and every plot exist and parse.
check_outputs() { "$report/check" "$1" || fail "$1: the report is not whole"; }

# 1. The demo fixture: the stock kernel stalled, the patched one did not.
cp -r "$FIXTURES/report/demo" "$TEST_TMP/demo"
"$report/summarize" "$TEST_TMP/demo" || fail "summarize exited $?"
json_ok "$TEST_TMP/demo/summary.json" '
	all(.stock, .patched; has("stalls") and has("worst_stall_ms") and has("throttled_periods")
		and all(.relay_latency_us, .loadgen_latency_us;
			["p50", "p99", "p99_9", "p99_99", "max"] - keys == []))
	and all(.initramfs_sha256, .params, .verdict; . != null and length > 0)
	and .stock.stalls == 9 and .patched.stalls == 0 and .verdict == "fixed"' \
	"summary.json lacks the interface names"
out=$("$report/render" "$TEST_TMP/demo") || fail "render exited $?"
echo "$out"
grep -q '^verdict: FIXED: stock kernel stalled 9 times' <<<"$out" || fail "no verdict line"
grep -Eq '^  max +221 +20\.8$' <<<"$out" || fail "relay max row is not 221 vs 20.8"
grep -Eq '^  watchdog stalls +9 +0$' <<<"$out" || fail "stall row is wrong"
grep -q "report: $TEST_TMP/demo/report.html" <<<"$out" || fail "no path of the page"
check_outputs "$TEST_TMP/demo"
for f in distribution-relay distribution-loadgen timeline-stock timeline-patched; do
	[ -s "$TEST_TMP/demo/plots/$f.svg" ] || fail "plot $f.svg missing"
done
grep -q "not measured" "$TEST_TMP/demo/report.html" || fail "the cost side should say 'not measured'"

# 1b. A real default-scenario run (RT ticker): the verdict rule from the RT
# datagrams and the stalls, the non-RT waker caveat counted; and the same run
# with the stock effect taken out is "no effect", with late patched RT
# datagrams "not fixed".
cp -r "$FIXTURES/report/demo-ticker" "$TEST_TMP/ticker"
"$report/summarize" "$TEST_TMP/ticker" || fail "summarize (ticker) exited $?"
json_ok "$TEST_TMP/ticker/summary.json" '
	[.stock.stalls, .stock.rt_late, .patched.stalls, .patched.rt_late] == [4, 4, 0, 0]
	and .patched.rt_samples == 3418 and .patched.rt_latency_us.max < 50000
	and .verdict == "fixed" and .non_rt_waker.stock == 4 and .non_rt_waker.patched == 0
	and .rule.patched_late_allowance == 2 and (.rule.text | contains("fixed = stock"))' \
	"the ticker run's summary is wrong"
out=$("$report/render" "$TEST_TMP/ticker") || fail "render (ticker) exited $?"
grep -Eq '^  RT datagrams over 50 ms +4 of 3463 +0 of 3418$' <<<"$out" || fail "no RT datagram row"
grep -q 'timer ticks over 50 ms late' <<<"$out" || fail "no non-RT waker row"
grep -q 'ksoftirqd' "$TEST_TMP/ticker/report.html" || fail "the page lacks the ksoftirqd caveat"
check_outputs "$TEST_TMP/ticker"
[ -s "$TEST_TMP/ticker/plots/distribution-rt.svg" ] || fail "no RT ticker distribution plot"
# The same run with loadgen on AF_UNIX (af_unix 1): the page says how
# loadgen woke the relay; the UDP run says it too.
grep -q "UDP on 127.0.0.1: loadgen's sends wake relay" "$TEST_TMP/ticker/report.html" &&
	fail "a run without af_unix among its parameters names a waker"
cp -r "$FIXTURES/report/demo-ticker" "$TEST_TMP/unix"
json_edit "$TEST_TMP/unix/spec.json" '.scenario.af_unix = 1'
for k in stock patched; do
	json_edit "$TEST_TMP/unix/$k/results/scenario.json" '.params.af_unix = 1'
done
"$report/summarize" "$TEST_TMP/unix" || fail "summarize (af_unix) exited $?"
"$report/render" "$TEST_TMP/unix" >/dev/null || fail "render (af_unix) exited $?"
grep -q "AF_UNIX datagrams: loadgen&#x27;s sends wake relay from their own context" \
	"$TEST_TMP/unix/report.html" || fail "the page does not say loadgen woke relay over AF_UNIX"
cp -r "$FIXTURES/report/demo-ticker" "$TEST_TMP/noeffect"
json_edit "$TEST_TMP/noeffect/stock/results/scenario.json" \
	'.stalls = [] | .ticker += {late: 0, late_unexplained: 0} | .ticker.latency_us.max = 20000'
"$report/summarize" "$TEST_TMP/noeffect" || fail "summarize (no effect) exited $?"
grep -q '"verdict": "no effect"' "$TEST_TMP/noeffect/summary.json" || fail "a stock run without the effect was not 'no effect'"
cp -r "$FIXTURES/report/demo-ticker" "$TEST_TMP/late"
sed -i 's/"late_unexplained": 0/"late_unexplained": 3/' "$TEST_TMP/late/patched/results/scenario.json"
"$report/summarize" "$TEST_TMP/late" || fail "summarize (late) exited $?"
grep -q '"verdict": "not fixed"' "$TEST_TMP/late/summary.json" || fail "3 late patched RT datagrams were not 'not fixed'"

# 1c. A real run on the virtual clock (make demo's default): the strict
# rule. The late limit is the run's --late-ms (5 ms), no allowance, no
# freeze discounts; one late patched RT datagram is "not fixed" and a
# freeze the probes saw makes the run invalid.
cp -r "$FIXTURES/report/demo-virtual" "$TEST_TMP/virtual"
"$report/summarize" "$TEST_TMP/virtual" || fail "summarize (virtual) exited $?"
json_ok "$TEST_TMP/virtual/summary.json" '
	.clock == "virtual" and .params.clock == "virtual"
	and .rule.clock == "virtual" and .rule.late_ms == 5 and .rule.patched_late_allowance == 0
	and [.stock.stalls, .stock.rt_late, .patched.stalls, .patched.rt_late] == [47, 47, 0, 0]
	and .patched.rt_latency_us.max < 2000 and .stock.guest_freezes.count == 0
	and .verdict == "fixed"
	and (.headline | contains("p99.9 211 ms stock, 0.28 ms patched (753x)"))' \
	"the virtual-clock run's summary is wrong"
out=$("$report/render" "$TEST_TMP/virtual") || fail "render (virtual) exited $?"
grep -Eq '^  RT datagrams over 5 ms +47 of 3339 +0 of 3355$' <<<"$out" || fail "no 5 ms RT datagram row"
grep -q 'during guest freezes' <<<"$out" && fail "the virtual clock's table discounts freezes"
grep -q 'guest clock.*virtual' "$TEST_TMP/virtual/report.html" || fail "the page does not name the clock"
grep -q '5 ms late limit' "$TEST_TMP/virtual/plots/timeline-patched.svg" || fail "the plots lack the late limit"
check_outputs "$TEST_TMP/virtual"
cp -r "$FIXTURES/report/demo-virtual" "$TEST_TMP/vlate"
json_edit "$TEST_TMP/vlate/patched/results/scenario.json" '.ticker += {late: 1, late_unexplained: 1}'
"$report/summarize" "$TEST_TMP/vlate" || fail "summarize (virtual, late) exited $?"
grep -q '"verdict": "not fixed"' "$TEST_TMP/vlate/summary.json" ||
	fail "one late patched RT datagram on the virtual clock was not 'not fixed'"
cp -r "$FIXTURES/report/demo-virtual" "$TEST_TMP/vfreeze"
json_edit "$TEST_TMP/vfreeze/stock/results/scenario.json" \
	'.ticker.freeze_probes[1] += {freezes: 2, max_ms: 7.5, total_ms: 13.0}'
"$report/summarize" "$TEST_TMP/vfreeze" || fail "summarize (virtual, freeze) exited $?"
grep -q '"verdict": "invalid"' "$TEST_TMP/vfreeze/summary.json" ||
	fail "a freeze on the virtual clock did not make the run invalid"
# The same freezes inside the stock kernel's stalls: its own doing, shown
# but not against the clock; one of them outside is enough again.
cp -r "$FIXTURES/report/demo-virtual" "$TEST_TMP/vstall"
json_edit "$TEST_TMP/vstall/stock/results/scenario.json" \
	'.ticker.freeze_probes[1] += {freezes: 2, in_stalls: 2, max_ms: 7.5, total_ms: 13.0}'
"$report/summarize" "$TEST_TMP/vstall" || fail "summarize (virtual, freezes in stalls) exited $?"
json_ok "$TEST_TMP/vstall/summary.json" '.verdict == "fixed" and .stock.guest_freezes.in_stalls == 2' \
	"freezes inside the stalls made the run invalid"
out=$("$report/render" "$TEST_TMP/vstall") || fail "render (virtual, freezes in stalls) exited $?"
grep -Eq '^  guest freezes >= 5 ms \(count, total ms\) +2, 13 \(2 in stalls\) +0, 0$' <<<"$out" ||
	fail "the freezes in stalls are not shown apart: $(grep 'guest freezes' <<<"$out")"
json_edit "$TEST_TMP/vstall/stock/results/scenario.json" '.ticker.freeze_probes[1].in_stalls = 1'
"$report/summarize" "$TEST_TMP/vstall" || fail "summarize (virtual, a freeze outside) exited $?"
grep -q '"verdict": "invalid"' "$TEST_TMP/vstall/summary.json" ||
	fail "a freeze outside the stalls did not make the run invalid"

# 2. The same run with different parameters on the patched kernel: invalid.
cp -r "$FIXTURES/report/demo" "$TEST_TMP/mixed"
sed -i 's/"rate_pps": 2000/"rate_pps": 3000/' "$TEST_TMP/mixed/patched/results/scenario.json"
"$report/summarize" "$TEST_TMP/mixed" || fail "summarize (mixed) exited $?"
grep -q '"verdict": "invalid"' "$TEST_TMP/mixed/summary.json" ||
	fail "runs with different parameters were not called invalid"

# 3. A hung stock guest is a result, reported as such.
cp -r "$FIXTURES/report/demo-hung" "$TEST_TMP/hung"
"$report/summarize" "$TEST_TMP/hung" || fail "summarize (hung) exited $?"
out=$("$report/render" "$TEST_TMP/hung") || fail "render (hung) exited $?"
grep -q 'stock kernel hung (no results within 105 s)' <<<"$out" || fail "the hang is not reported"
check_outputs "$TEST_TMP/hung"

# 4. The userspace model's summary renders the same way.
cp -r "$FIXTURES/report/model" "$TEST_TMP/model"
out=$("$report/render" "$TEST_TMP/model") || fail "render (model) exited $?"
grep -Eq '^verdict: SEPARATED: worst wait: rwlock' <<<"$out" || fail "model verdict missing"
check_outputs "$TEST_TMP/model"

# 5. Broken input: distinct exit statuses, a message naming the file.
mkdir "$TEST_TMP/empty"
"$report/render" "$TEST_TMP/empty" 2>"$TEST_TMP/err" && fail "render accepted an empty directory"
[ $? -eq 65 ] || fail "render on an empty directory should exit 65"
grep -q 'summary.json: no such file' "$TEST_TMP/err" || fail "the error does not name summary.json"
"$report/render" 2>/dev/null; [ $? -eq 64 ] || fail "render without arguments should exit 64 (usage)"
pass "summaries, tables, plots and pages from the fixtures"
