#!/usr/bin/env bash
# loadgen sweep as a capacity planner uses it, on this host: the knee found
# on a target that starts dropping past a known rate, a sweep that is not
# monotonic repeated and its noise reported instead of a capacity,
# independent searches that disagree said as unstable instead of a number,
# and
# report/sweep's table and latency-vs-rate plot (the same table from a
# stored sweep every time).
# timeout: 420
. "$(dirname "$0")/../lib.sh"
. "$FIXTURES/loadgen/lib.sh"
command -v gnuplot >/dev/null || skip "gnuplot not installed (mk/deps report)"
sweep_report=$top/report/sweep

# slow_echo MAX_PPS [DROP_FIRST]: the synthetic target; sets SLOW_PORT.
slow_echo() {
	SLOW_PORT=$(free_udp_port)
	bg python3 "$FIXTURES/loadgen/slow_echo.py" "$SLOW_PORT" "$@"
	wait_udp "$SLOW_PORT" || fail "slow echo did not start"
}

# 1. A target that keeps 1400 pps and drops the rest: the knee is the first
# step past it, 2000 pps, and the capacity is below it.
slow_echo 1400
"$LOADGEN" sweep --target "udp://127.0.0.1:$SLOW_PORT" --from 1000 --to 3000 \
	--steps 3 --duration 2 --slo p99=1s --pause 100 --timeout 500 --repeat 1 \
	--json "$TEST_TMP/k.json" --hgrm "$TEST_TMP/k.hgrm" >"$TEST_TMP/k.txt" \
	|| fail "sweep of the slow target exited $?"
cat "$TEST_TMP/k.txt"
json_ok "$TEST_TMP/k.json" '.knee.target_rate == 2000' \
	"the knee of a target that drops past 1400 pps is not at 2000 pps"
json_ok "$TEST_TMP/k.json" 'all(.steps[] | select(.target_rate >= 2000);
	.saturated and (.why | contains("lost")))' "the steps past 1400 pps did not lose datagrams"
json_ok "$TEST_TMP/k.json" 'has("capacity") and (.capacity == null
	or (.capacity.target_rate | type == "number" and . < 2000))' \
	"a step that lost datagrams counted as met"
grep -q '^knee: 2000 pps (lost ' "$TEST_TMP/k.txt" || fail "no knee line"
jq -r '.steps[].hgrm' "$TEST_TMP/k.json" >"$TEST_TMP/k.hgrms"
[ -s "$TEST_TMP/k.hgrms" ] || fail "no steps in $TEST_TMP/k.json"
while read -r h; do [ -s "$h" ] || fail "a step has no .hgrm: $h"; done <"$TEST_TMP/k.hgrms"
"$sweep_report" "$TEST_TMP/k.json" --out "$TEST_TMP/kplot" >"$TEST_TMP/k.table" ||
	fail "report/sweep exited $?"
grep -q '^knee: 2000 pps' "$TEST_TMP/k.table" || fail "report/sweep lost the knee"
pylib svg_plot drawn "$TEST_TMP/kplot/latency.svg" "p99.9" "objective p99" "knee" ||
	fail "latency.svg is not a drawn plot"

# 2. Not monotonic: the target drops its first 100 datagrams, so the
# easiest step fails and the harder ones meet. The sweep says so, runs the
# band again and reports the noise, and no capacity.
slow_echo 100000 100
# (3 s steps at low rates: a late last send on a busy host shortens the
# achieved rate by its delay over the whole step)
"$LOADGEN" sweep --no-probe --target "udp://127.0.0.1:$SLOW_PORT" --from 300 \
	--to 600 --steps 2 --duration 3 --slo p99=1s --pause 50 --timeout 500 \
	--repeat 2 --json "$TEST_TMP/n.json" >"$TEST_TMP/n.txt" || fail "sweep 2 exited $?"
cat "$TEST_TMP/n.txt"
grep -q '^not monotonic: a step failed below one that met' "$TEST_TMP/n.txt" ||
	fail "the sweep did not say it is not monotonic"
grep -q '^noise: 300 pps: [0-9] of 3 runs met, p99 ' "$TEST_TMP/n.txt" || fail "no noise line"
grep -q '^capacity: none: ' "$TEST_TMP/n.txt" || fail "a capacity was claimed"
# (after the repeats the verdict may be "monotonic" again: on a busy host
# 1000 pps can fall behind its rate in a repeat, and then no step met)
json_ok "$TEST_TMP/n.json" 'has("capacity") and .capacity == null and .repeats == 2 and
	(.steps | length) == 6 and [.noise[].runs] == [3, 3]' \
	"the JSON of a non-monotonic sweep"

# 2b. Searches that disagree: against the same target (it dropped its
# first 100 datagrams), the first search misses --from and finds none, the
# second, from --from again, meets up to --to. No capacity is claimed:
# unstable, found in 1 of 2, the interval of the one that found it.
slow_echo 100000 100
"$LOADGEN" sweep --search --no-probe --target "udp://127.0.0.1:$SLOW_PORT" --from 300 \
	--to 600 --duration 3 --slo p99=1s --pause 50 --timeout 500 --searches 2 \
	--json "$TEST_TMP/u.json" >"$TEST_TMP/u.txt" || fail "search 2b exited $?"
cat "$TEST_TMP/u.txt"
json_ok "$TEST_TMP/u.json" '[.intervals[].end] == ["none", "to"] and .capacity.target_rate == null
	and .capacity.unstable and .capacity.found == 1 and .capacity.searches == 2
	and .capacity.fraction_found == 0.5 and .capacity.min_rate == 600 and .capacity.max_rate == 600' \
	"searches that disagree were not said unstable"
tail -n 1 "$TEST_TMP/u.txt" | grep -q '^capacity unstable: found in 1 of 2 independent searches (600 pps), none in 1 (--from 300 pps missed)' ||
	fail "the verdict of searches that disagree: $(tail -n 1 "$TEST_TMP/u.txt")"
"$sweep_report" "$TEST_TMP/u.json" --out "$TEST_TMP/uplot" >"$TEST_TMP/u.table" ||
	fail "report/sweep of an unstable search exited $?"
grep -q '^capacity unstable: ' "$TEST_TMP/u.table" || fail "report/sweep lost the unstable verdict"

# 3. against loadgen echo: the plot of a quick sweep exists.
start_echo
"$LOADGEN" sweep --target "udp://127.0.0.1:$ECHO_PORT" --from 500 --to 1500 \
	--steps 2 --duration 1 --slo p99.9=1s --slo p50=500ms --pause 50 \
	--json "$TEST_TMP/e.json" >/dev/null || fail "sweep against echo exited $?"
json_ok "$TEST_TMP/e.json" '.slo == {"p99_9": 1000000, "p50": 500000}' \
	"two --slo flags did not both count"
"$sweep_report" "$TEST_TMP/e.json" --out "$TEST_TMP/eplot" >/dev/null || fail "report/sweep (echo) exited $?"
[ -s "$TEST_TMP/eplot/latency.svg" ] || fail "no latency.svg for the echo sweep"

# 4. a stored sweep renders to the same table every time
for i in 1 2; do
	"$sweep_report" "$FIXTURES/report/sweep/sweep.json" >"$TEST_TMP/t$i.txt" ||
		fail "report/sweep (fixture) exited $?"
	diff -u "$FIXTURES/report/sweep/table.txt" "$TEST_TMP/t$i.txt" ||
		fail "the stored sweep's table changed"
done
"$sweep_report" "$TEST_TMP/missing.json" 2>/dev/null; [ $? -eq 65 ] || fail "a missing JSON should exit 65"
pass "knee, non-monotonic noise, unstable searches, plots and a stable table"
