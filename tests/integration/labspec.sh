#!/usr/bin/env bash
# labspec, a guest's JSON reader: a scalar on one line, an array one
# element a line, "*" for every element of an array (each step's verdict
# of a sweep, as the capacity grid reads them); a missing key, an object,
# a "*" over something not an array, or a file that is not JSON is an
# error naming the file and the key, with its own exit status.
# timeout: 30
# variants: release asan
# check: fast
. "$(dirname "$0")/../lib.sh"
labspec=$BUILD/bin/labspec
[ -x "$labspec" ] || fail "$labspec is not built"

j=$TEST_TMP/sweep.json
cat >"$j" <<'JSON'
{"capacity": {"target_rate": 234, "slo": ["p99.9<=2ms", "loss<=0"]},
 "steps": [{"meets_slo": true, "result": {"start_mono_s": 12.5, "elapsed_s": 4}},
           {"meets_slo": false, "result": {"start_mono_s": 16.75, "elapsed_s": 4}}]}
JSON
# expect KEY WANT: labspec prints WANT (its lines joined by spaces)
expect() {
	local got
	got=$("$labspec" "$j" "$1" | paste -sd ' ') || fail "$1: exit $?"
	[ "$got" = "$2" ] || fail "$1: printed '$got', not '$2'"
}
expect capacity.target_rate 234
expect capacity.slo "p99.9<=2ms loss<=0"
expect 'steps.*.meets_slo' "true false"
expect 'steps.*.result.start_mono_s' "12.5 16.75"
expect 'steps.*.result.elapsed_s' "4 4"

# refuse KEY STATUS: exit STATUS, naming the file and the key
refuse() {
	local rc=0
	"$labspec" "$2" "$1" >/dev/null 2>"$TEST_TMP/err" || rc=$?
	{ [ $rc = "$3" ] && grep -qF "$2" "$TEST_TMP/err"; } || fail "$1: exit $rc, $(cat "$TEST_TMP/err")"
	[ "$3" != 65 ] || grep -qF "$1" "$TEST_TMP/err" || fail "$1: the error does not name the key"
}
refuse capacity.nope "$j" 65
refuse capacity "$j" 65
refuse 'capacity.*' "$j" 65
refuse 'steps.*.result' "$j" 65
refuse 'steps.*.missing' "$j" 65
echo '{"a": 1,' >"$TEST_TMP/bad.json"
refuse a "$TEST_TMP/bad.json" 66
refuse a "$TEST_TMP/none.json" 66
rc=0; "$labspec" "$j" 2>/dev/null || rc=$?
[ $rc = 64 ] || fail "one argument: exit $rc"
pass "scalars, arrays and '*' over a sweep's steps; missing keys, objects and bad files refused"
