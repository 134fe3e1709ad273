#!/usr/bin/env bash
# loadgen merge on the interval logs of tests/fixtures/hlog/: counts add up
# exactly, the max is the largest input's, the percentiles are those of the
# sum; inputs recorded with other settings, cut short, corrupt, empty or
# missing are refused naming the file, with their own exit status, and
# write no result (the crafted logs of fixtures/hlog/hostile.tsv are
# loadgen_merge_hostile's). A file given twice is added with a warning.
# Then real runs: two merge to the sum of their counts; one stopped by
# SIGTERM says so in its log and is refused, unless --partial, which marks
# the result partial.
# timeout: 240
# shellcheck disable=SC2016 # the $names in the filters are jq's
. "$(dirname "$0")/../lib.sh"
. "$FIXTURES/loadgen/lib.sh"
hl=$FIXTURES/hlog
out=$TEST_TMP/merged.json

"$LOADGEN" merge --json "$out" --hgrm "$TEST_TMP/merged.hgrm" "$hl/host-a.hlog" "$hl/host-b.hlog" \
	>"$TEST_TMP/table" || fail "merge of host-a and host-b failed"
cat "$TEST_TMP/table"
json_ok "$out" '.count == 1511 and .latency_us.corrected.count == 1511' "count is not 1010 + 501"
json_ok "$out" '.latency_us.corrected.max == 90047' "max is not host-b's (90000's bucket ends at 90047)"
json_ok "$out" '.latency_us.uncorrected.count == 1501' "uncorrected count is not 1000 + 501"
# Of 1511 values 600 are 100 us, 500 are 200 us: the median is 200 us;
# averaging the inputs' medians (100 and 200) would not give it.
json_ok "$out" '.latency_us.corrected.p50 == 200' "merged p50"
json_ok "$out" '.latency_us.corrected.p99_9 == 5003' "merged p99.9"
json_ok "$out" '[.inputs[].latency_us.corrected.count] == [1010, 501]' "per-input counts"
json_ok "$out" '.histogram == {"lowest": 1, "highest": 10000000, "significant_digits": 3}' "settings"
grep -q 'Total count    =         1511' "$TEST_TMP/merged.hgrm" || fail "merged.hgrm total"
grep -q 'Total count    =         1501' "$TEST_TMP/merged.uncorrected.hgrm" || fail "merged.uncorrected.hgrm total"
grep -q '^  merged  *1511 ' "$TEST_TMP/table" || fail "the table has no merged row of 1511"

# refuse STATUS TEXT FILE...: merge exits STATUS, says TEXT, writes nothing.
refuse() { refuse_args "$1" "$2" --json "$out" "${@:3}"; }
refuse_args() {
	local want=$1 text=$2 status=0
	shift 2
	rm -f "$out"
	timeout 60 "$LOADGEN" merge "$@" >/dev/null 2>"$TEST_TMP/err" || status=$?
	[ "$status" = "$want" ] || fail "merge $* exited $status, not $want: $(cat "$TEST_TMP/err")"
	grep -qF -- "$text" "$TEST_TMP/err" || fail "merge $* did not say '$text': $(cat "$TEST_TMP/err")"
	[ ! -e "$out" ] || fail "merge $* wrote $out though it refused"
	echo "ok $want: $(cat "$TEST_TMP/err")"
}
refuse 65 "$hl/digits2.hlog line 5: histogram settings (lowest 1, highest 10000000, 2 digits) differ from those of $hl/host-a.hlog" \
	"$hl/host-a.hlog" "$hl/digits2.hlog"
refuse 65 "$hl/truncated.hlog: line 6: cut short" "$hl/host-b.hlog" "$hl/truncated.hlog"
refuse 65 "$hl/corrupt.hlog: line 5: the compressed histogram is corrupt" "$hl/corrupt.hlog" "$hl/host-b.hlog"
head -n 4 "$hl/host-a.hlog" >"$TEST_TMP/header-only.hlog"
refuse 65 "$TEST_TMP/header-only.hlog: no untagged interval histogram" "$TEST_TMP/header-only.hlog"
refuse 65 "$FIXTURES/hist_1to10000.hgrm: line 1: not an interval" "$FIXTURES/hist_1to10000.hgrm"
refuse 66 "cannot read $TEST_TMP/nothing.hlog" "$hl/host-a.hlog" "$TEST_TMP/nothing.hlog"
refuse_args 64 "--json OUT is required" --hgrm "$TEST_TMP/x.hgrm" "$hl/host-a.hlog"
refuse_args 64 "no input FILE.hlog given" --json "$out"
refuse_args 64 "unknown option '--jsno'" --jsno "$out" "$hl/host-a.hlog"
refuse_args 64 "option '--json' needs a value" "$hl/host-a.hlog" --json

# The largest histograms read, 200 lines of them: every line is added
# where it belongs, none is allocated.
timeout 60 "$LOADGEN" merge --json "$out" "$hl/largest.hlog" >/dev/null ||
	fail "merge of largest.hlog exited $?"
json_ok "$out" '.count == 200 and .latency_us.corrected.max == 200' "largest.hlog's 200 values"

# The same log twice, by one name and as a copy: added, with a warning.
cp "$hl/host-b.hlog" "$TEST_TMP/copy.hlog"
"$LOADGEN" merge --json "$out" "$hl/host-a.hlog" "$hl/host-b.hlog" "$hl/host-a.hlog" \
	"$TEST_TMP/copy.hlog" >/dev/null 2>"$TEST_TMP/err" || fail "merge of repeated inputs exited $?"
grep -qF "warning: $hl/host-a.hlog is the same file as $hl/host-a.hlog: its counts are added twice" \
	"$TEST_TMP/err" || fail "no warning for a file given twice: $(cat "$TEST_TMP/err")"
grep -qF "warning: $TEST_TMP/copy.hlog has the same content as $hl/host-b.hlog" \
	"$TEST_TMP/err" || fail "no warning for a copy: $(cat "$TEST_TMP/err")"
json_ok "$out" '.count == 2 * 1511 and all(.inputs[]; has("same_as"))
	and [.inputs[].same_as] == [null, null, $a, $b]' "repeated inputs" \
	--arg a "$hl/host-a.hlog" --arg b "$hl/host-b.hlog"

# Two runs of loadgen itself.
start_echo
for i in 1 2; do
	"$LOADGEN" --target "udp://127.0.0.1:$ECHO_PORT" --rate $((1000 * i)) --duration 1 \
		--no-progress --json "$TEST_TMP/run$i.json" --hlog "$TEST_TMP/run$i.hlog" \
		>/dev/null || fail "run $i"
done
"$LOADGEN" merge --json "$out" "$TEST_TMP/run1.hlog" "$TEST_TMP/run2.hlog" >/dev/null || fail "merge of two runs"
# the runs' corrected count and max: [{"count": N, "max": N}, ...], for jq
runs=$(jq -ces 'map(.latency_us.corrected | {count, max}) | select(all(.[][]; type == "number"))' \
	"$TEST_TMP/run1.json" "$TEST_TMP/run2.json") || fail "a run's JSON has no corrected count or max"
json_ok "$out" '.count == ($runs | map(.count) | add)' "merged count of two runs" --argjson runs "$runs"
json_ok "$out" '.latency_us.corrected.max == ($runs | map(.max) | max)' "merged max of two runs" \
	--argjson runs "$runs"
json_ok "$out" '.partial == false and all(.inputs[]; .interrupted == false)' \
	"whole runs merged as partial"
grep -q '^#\[Interrupted' "$TEST_TMP/run1.hlog" && fail "a whole run's log says it was interrupted"

# A run stopped by SIGTERM at 1.5 s of 10: its log says so.
"$LOADGEN" --target "udp://127.0.0.1:$ECHO_PORT" --rate 1000 --duration 10 \
	--no-progress --json "$TEST_TMP/cut.json" --hlog "$TEST_TMP/cut.hlog" >/dev/null 2>&1 &
lg=$!
sleep 1.5
kill -TERM "$lg"
status=0
wait "$lg" || status=$?
[ "$status" = 130 ] || fail "exit $status after SIGTERM, expected 130"
json_ok "$TEST_TMP/cut.json" '.interrupted == true' "the JSON of the stopped run"
grep -Eq '^#\[Interrupted: stopped after [0-9.]+ of 10\.000 s\]$' "$TEST_TMP/cut.hlog" ||
	fail "the stopped run's log does not say so: $(head -n 3 "$TEST_TMP/cut.hlog")"
refuse 65 "$TEST_TMP/cut.hlog line 6: the run was interrupted (stopped after" \
	"$TEST_TMP/run1.hlog" "$TEST_TMP/cut.hlog"
grep -qF -- "--partial merges it anyway" "$TEST_TMP/err" || fail "the refusal does not name --partial"
"$LOADGEN" merge --partial --json "$out" "$TEST_TMP/run1.hlog" "$TEST_TMP/cut.hlog" >/dev/null ||
	fail "merge --partial exited $?"
json_ok "$out" '.partial == true and [.inputs[].interrupted] == [false, true]' \
	"merge --partial: the result is not marked partial"
pass "merge: exact sums, settings, damage and interrupted logs refused, repeats warned"
