#!/usr/bin/env bash
# loadgen sweep --search against a target whose capacity is known: loadgen
# echo --service-us 200 takes 200 us per datagram, 5000 datagrams per
# second on any host. A plain step far below the knee first shows what
# this host adds; then three independent searches (each from --from, none
# from another's answer) each bisect to their resolution and their median
# must be the knee within it (one search that a busy host threw off is
# reported as not monotonic, not hidden), the JSON must carry
# every step, each search's interval and every rate's runs, and
# report/sweep must draw it. (The decisions on scripted outcomes, a
# non-monotonic set among them: test_loadgen_search.)
# timeout: 180
. "$(dirname "$0")/../lib.sh"
. "$FIXTURES/loadgen/lib.sh"
# A kernel build beside the test takes whole time slices from a
# SCHED_OTHER echo server: it and the sender run SCHED_FIFO, the sender
# above it (on one CPU it must still get to send while the echo spins).
need_root "SCHED_FIFO for the echo server and the sender"
command -v gnuplot >/dev/null || skip "gnuplot not installed (mk/deps report)"

service_us=200
knee=$((1000000 / service_us))
resolution=5
slo_us=5000
duration=1
# Past the knee the queue grows for the whole step: at rate R its p90
# reaches (R/knee - 1) * 0.9 * duration, so a step meets p90 <= 5 ms up to
# 0.56 % above the knee and misses 5 % above it; below it only the host's
# noise can make a step miss.

# The echo server on the second CPU and the sender on the first, where
# there are two.
echo_cpu=() send_cpu=()
if [ "$(nproc)" -ge 2 ]; then
	echo_cpu=(taskset -c 1)
	send_cpu=(--cpus 0)
fi
port=$(free_udp_port)
bg chrt -f 20 "${echo_cpu[@]}" "$LOADGEN" echo --listen "udp://127.0.0.1:$port" \
	--service-us "$service_us"
wait_udp "$port" || fail "echo server did not start"
target=udp://127.0.0.1:$port
client=(--target "$target" --rt-priority 30 "${send_cpu[@]}" --no-progress)

# 1. Calibration: a tenth of the knee. Every reply takes the service time
# and what this host adds; that must leave the objective room. A host
# busy enough to stall a step for a second is tried again, twice.
for try in 1 2 3; do
	"$LOADGEN" "${client[@]}" --rate $((knee / 10)) --duration "$duration" \
		--json "$TEST_TMP/cal.json" >/dev/null || fail "the calibration step exited $?"
	read -r p50 p90 max < <(jq -r '.latency_us.corrected | "\(.p50) \(.p90) \(.max)"' \
		"$TEST_TMP/cal.json")
	echo "calibration $try at $((knee / 10)) pps: p50 $p50 us, p90 $p90 us, max $max us" \
		"(service $service_us us; the host adds $((p50 - service_us)) us at p50)"
	[ "$p90" -lt $((slo_us / 2)) ] && break
	[ "$try" = 3 ] &&
		skip "this host adds too much far below the knee (p90 $p90 us) for a $slo_us us objective"
done
[ "$p50" -ge "$service_us" ] || fail "replies took $p50 us at p50: the echo did not spend $service_us us each"

# 2. Three searches from a fifth of the knee to four times it.
searches=3
"$LOADGEN" sweep --search "${client[@]}" --from $((knee / 5)) --to $((knee * 4)) \
	--slo "p90=${slo_us}us" --duration "$duration" --pause 200 --timeout 1000 \
	--resolution "$resolution" --searches "$searches" --json "$TEST_TMP/s.json" \
	>"$TEST_TMP/s.txt" || fail "the search exited $?"
cat "$TEST_TMP/s.txt"
# shellcheck disable=SC2016 # the $names are jq's
json_ok "$TEST_TMP/s.json" '.mode == "search" and .searches == $n and .resolution_pct == $res and
	(.intervals | length == $n and all(.end == "found" and .missed - .met <= .met * $res / 100))' \
	"a search did not bisect to its resolution" --argjson res "$resolution" --argjson n "$searches"
# the capacity: the median of the searches, with the interval over them
# and its confidence (of three independent ones, 1 - 2^-2)
# shellcheck disable=SC2016 # the $names are jq's
json_ok "$TEST_TMP/s.json" '[.intervals[].met] as $met | .capacity.target_rate == ($met | sort | .[1])
	and .capacity.min_rate == ($met | min) and .capacity.max_rate == ($met | max)
	and .capacity.searches == $n and .capacity.found == $n and .capacity.unstable == false
	and .capacity.fraction_found == 1 and .capacity.confidence == 0.75
	and .capacity.at_least == false' \
	"the capacity is not the median of the searches with the interval over them" --argjson n "$searches"
# ... within the resolution below the knee, and no further above it than
# the objective allows
cap=$(jq -r '.capacity.target_rate' "$TEST_TMP/s.json")
echo "capacity found: $cap pps (searches: $(jq -r '[.intervals[].met] | join(", ")' "$TEST_TMP/s.json")), knee $knee pps"
# shellcheck disable=SC2016 # the $names are jq's
json_ok "$TEST_TMP/s.json" '.capacity.target_rate as $c | $c >= $knee * (1 - $res / 100)
	and $c <= $knee * (1 + $slo / 1e6 / (0.9 * $dur))' \
	"the capacity is not within $resolution % of the knee, $knee pps" \
	--argjson res "$resolution" --argjson knee "$knee" --argjson slo "$slo_us" \
	--argjson dur "$duration"
# the trace: every step of every search, with the objective, met and cause
# shellcheck disable=SC2016 # the $names are jq's
json_ok "$TEST_TMP/s.json" '(.steps | length) == ([.intervals[].steps] | add)
	and all(.steps[]; .search >= 1 and .search <= 3 and (.objectives_us.p90 | type) == "number"
		and .meets_slo == (.objectives_us.p90 <= $slo and .result.lost == 0
			and .result.send_errors == 0 and .result.refused == 0 and .result.rate_ok)
		and (.meets_slo == (.cause == null)) and (.meets_slo == (.why == null)))' \
	"a step lacks its search, objective, verdict or cause" --argjson slo "$slo_us"
# shellcheck disable=SC2016 # the $names are jq's
json_ok "$TEST_TMP/s.json" '[.steps[] | select(.target_rate >= 1.2 * $knee)] |
	length > 0 and all(.cause == "objective" or .cause == "loss")
	and all(.why | test("p90 .* > 5 ms"))' \
	"a step 20 % past the knee did not miss on its objective" --argjson knee "$knee"
# shellcheck disable=SC2016 # the $names are jq's
json_ok "$TEST_TMP/s.json" '.steps[0].target_rate == $from and ([.steps[].target_rate] | max) <= $to' \
	"the search did not start at --from or went past --to" \
	--argjson from $((knee / 5)) --argjson to $((knee * 4))
# independent repeats: every search starts cold at --from, none near
# what an earlier one found, each with a first step at --from of its own
# shellcheck disable=SC2016 # the $names are jq's
json_ok "$TEST_TMP/s.json" 'all(.intervals[]; (.warm | not) and .start == $from)
	and ([.steps[] | select(.target_rate == $from) | .search] == [1, 2, 3])' \
	"a search did not start afresh at --from" --argjson from $((knee / 5))
# every rate's runs over every search, and whether that is monotonic
# shellcheck disable=SC2016 # the $names are jq's
# (the JSON's reals have 9 significant digits)
json_ok "$TEST_TMP/s.json" '. as $j | ([.rates[] | del(.fraction_met)] ==
	([.steps[] | .target_rate] | unique | map(. as $r | [$j.steps[] | select(.target_rate == $r)] |
		{target_rate: $r, runs: length, met: map(select(.meets_slo)) | length})))
	and all(.rates[]; (.fraction_met - .met / .runs) | fabs < 1e-8)' \
	"the rates do not count the steps' runs"
# shellcheck disable=SC2016 # the $names are jq's
json_ok "$TEST_TMP/s.json" '([.steps[] | select(.meets_slo) | .target_rate] | max) as $top |
	.monotonic == (.nonmonotonic == null) and .monotonic ==
	([.steps[] | select(.cause == "objective" or .cause == "loss") | .target_rate < $top] | any | not)' \
	"monotonic does not follow the steps"
verdict=$(jq -r .verdict "$TEST_TMP/s.json")
[ "$(tail -n 1 "$TEST_TMP/s.txt")" = "$verdict" ] || fail "the last line is not the JSON's verdict"
grep -q "^capacity $cap pps (median of 3 independent searches, [0-9]*-[0-9]* over them), resolution 5 %, p90 <= 5 ms" \
	<<<"$verdict" || fail "verdict line: $verdict"
grep -Eq '^ +3 +[0-9]+ +[0-9]+ +[0-9]+ +[0-9]+ +[0-9]+  missed \((objective|loss)\): ' \
	"$TEST_TMP/s.txt" || fail "no row of search 3 that missed, with its cause"

# 3. report/sweep draws it: the table ends in the verdict, the plot has
# every step and the capacity.
"$top/report/sweep" "$TEST_TMP/s.json" --out "$TEST_TMP/plot" >"$TEST_TMP/table.txt" ||
	fail "report/sweep exited $?"
grep -qxF "$verdict" "$TEST_TMP/table.txt" || fail "report/sweep's table lacks the verdict"
for word in "p90 met" "p90 missed" "capacity $cap pps" "objective p90"; do
	grep -qF "$word" "$TEST_TMP/plot/latency.svg" || fail "latency.svg lacks '$word'"
done
pass "capacity $cap pps found for a knee of $knee pps (resolution $resolution %)"
