#!/usr/bin/env bash
# Rendering a result directory never runs anything from it. Results come
# from test hosts and from other people: a host directory named with
# backquotes, a kernel string with a newline and a gnuplot command, and a
# run directory whose own path holds backquotes are rendered; nothing they
# name runs, the page shows their text escaped, and the plots' file names
# are made safe.
# timeout: 120
# lane: side
# variants: release
. "$(dirname "$0")/../lib.sh"
command -v gnuplot >/dev/null || skip "gnuplot not installed (mk/deps report)"
report=$top/report
# The commands below, were they run, would leave their marks in the
# working directory.
cd "$TEST_TMP" || fail "no test directory"
marks() { find "$TEST_TMP" -name 'PWNED*' | sort; }

# 1. A fleet run whose load host directory is named with a command.
host="l2\`touch PWNED1\`'<b>x"
dir=$TEST_TMP/fleet
cp -r "$FIXTURES/report/fleet" "$dir"
mv "$dir/load2" "$dir/$host"
sed -i "s|load2/|$host/|g" "$dir/merged.json"
out=$("$report/render" "$dir") || fail "render of the fleet run exited $?"
[ -z "$(marks)" ] || fail "rendering ran a command from a host directory's name: $(marks)"
grep -qF "l2\`touch PWNED1\`&#x27;&lt;b&gt;x" "$dir/report.html" ||
	fail "the page does not show the host's name escaped"
grep -qF "<b>x" "$dir/report.html" && fail "the host's name reached the page as markup"
grep -qF "$host" <<<"$out" || fail "the table does not name the host as it is"
"$report/check" "$dir" || fail "the fleet page is not whole"

# 2. A demo run whose kernel string ends a gnuplot command and starts another.
dir=$TEST_TMP/demo
cp -r "$FIXTURES/report/demo" "$dir"
# shellcheck disable=SC2016 # the backquotes are the hostile text itself
sed -i 's|"kernel": "6.12.117-relay-stock"|"kernel": "6.1\\nsystem \x27touch PWNED2\x27\\n#\\"`touch PWNED3`"|' \
	"$dir/stock/results/scenario.json"
grep -q 'PWNED2' "$dir/stock/results/scenario.json" || fail "the fixture was not changed"
"$report/summarize" "$dir" || fail "summarize exited $?"
"$report/render" "$dir" >/dev/null || fail "render of the demo run exited $?"
[ -z "$(marks)" ] || fail "rendering ran a command from a kernel string: $(marks)"
grep -qF "system &#x27;touch PWNED2&#x27;" "$dir/report.html" ||
	fail "the page does not show the kernel string escaped"
grep -q "touch PWNED2" "$dir/plots/timeline-stock.svg" || fail "the plot's title lost the kernel string"

# 3. A run directory whose own path holds a command: gnuplot's output file.
dir="$TEST_TMP/run\`touch PWNED4\`"
cp -r "$FIXTURES/report/demo" "$dir"
"$report/summarize" "$dir" || fail "summarize exited $?"
"$report/render" "$dir" >/dev/null || fail "render into a path with backquotes exited $?"
[ -z "$(marks)" ] || fail "rendering ran a command from the directory's path: $(marks)"
[ -s "$dir/plots/timeline-stock.svg" ] || fail "no plot in the directory with backquotes"

# 4. A capacity run whose objective is a string instead of a number is
# refused by name (exit 65), not turned into gnuplot text.
dir=$TEST_TMP/capacity
cp -r "$FIXTURES/report/capacity" "$dir"
# shellcheck disable=SC2016 # the backquotes are the hostile text itself
sed -i '0,/"p99_9": 2000/s//"p99_9": "2`touch PWNED5`"/' "$dir"/*/r*/results/grid/*/sweep.json
grep -q PWNED5 "$dir"/stock/r1/results/grid/q10-c30000/sweep.json || fail "the fixture was not changed"
status=0
"$report/capacity" "$dir" >/dev/null 2>"$TEST_TMP/err" || status=$?
[ -z "$(marks)" ] || fail "a capacity objective ran a command: $(marks)"
[ $status = 65 ] || fail "a string objective exited $status, not 65: $(cat "$TEST_TMP/err")"
grep -q 'sweep.json' "$TEST_TMP/err" || fail "the error does not name the file: $(cat "$TEST_TMP/err")"

# 5. Wrong types and deep nesting in a sweep are bad data (65) naming the
# file and the value, never a traceback (1, which report/capacity's
# --check means as "the check failed").
# refused SWEEP_JSON WHAT: report/sweep exits 65 on it, naming WHAT.
refused() {
	local status=0
	"$report/sweep" "$1" >/dev/null 2>"$TEST_TMP/err" || status=$?
	[ $status = 65 ] || fail "$2: report/sweep exited $status, not 65: $(cat "$TEST_TMP/err")"
	grep -q "$2" "$TEST_TMP/err" || fail "the error does not name $2: $(cat "$TEST_TMP/err")"
	! grep -q Traceback "$TEST_TMP/err" || fail "$2: a traceback"
}
sw=$TEST_TMP/sweep.json
sed '0,/"target_rate": [0-9.]*/s//"target_rate": "fast"/' "$FIXTURES/report/sweep/sweep.json" >"$sw"
refused "$sw" "target_rate"
sed '0,/"p99": [0-9.]*/s//"p99": "fast"/' "$FIXTURES/report/sweep/sweep.json" >"$sw"
refused "$sw" "latency_us.corrected.p99"
{ printf '%.0s[' $(seq 100000); printf '%.0s]' $(seq 100000); } >"$sw"
refused "$sw" "nested too deeply"
# a search's steps, and a search without its intervals
jq '.steps[2].objectives_us.p90 = "fast"' "$FIXTURES/report/search/search.json" >"$sw"
refused "$sw" "steps\[2\].objectives_us.p90"
jq 'del(.intervals)' "$FIXTURES/report/search/search.json" >"$sw"
refused "$sw" "not a loadgen sweep --search: no intervals"
pass "hostile names, kernel strings and paths are rendered as text"
