#!/usr/bin/env bash
# The summary, table, page and plots of every recorded run under
# tests/fixtures/report are what they were when they were recorded in
# tests/fixtures/report/expected/ (made by the code before the experiments
# moved into lab/; tests/fixtures/report/README.md says which): report/summarize
# (a demo; a test host run with --testhost), report/render and report/capacity on a copy of
# each, compared byte for byte, but for the page's "Generated <date>"
# line. A difference is a change of what a run says: the verdict rule,
# a figure, a line of the page.
# timeout: 300
# check: fast
# lane: side
# variants: release
. "$(dirname "$0")/../lib.sh"
command -v gnuplot >/dev/null || skip "gnuplot not installed (mk/deps report)"
rec=$FIXTURES/report
want=$rec/expected

# same RUN DIR FILE...: each FILE of DIR (its page without the date, and
# the names of its plots) is the expected one of RUN.
same() {
	local run=$1 dir=$2 f
	shift 2
	for f in "$@"; do
		case $f in
		*.html) sed -E 's/^(<p class="muted">Generated ).*( by report\/[a-z]+ from the result files in this)$/\1DATE\2/' \
			"$dir/$f" >"$dir/$f.cmp" ;;
		*) cp "$dir/$f" "$dir/$f.cmp" ;;
		esac
		diff -u "$want/$run/$f" "$dir/$f.cmp" || fail "$run: $f is not what the recorded run gave"
	done
	find "$dir/plots" -mindepth 1 -printf '%f\n' | LC_ALL=C sort | diff -u "$want/$run/plots.txt" - ||
		fail "$run: other plots"
}
fresh() { cp -r "$rec/$1" "$TEST_TMP/$1"; echo "$TEST_TMP/$1"; }

for run in demo demo-ticker demo-virtual demo-hung; do
	d=$(fresh "$run")
	"$top/report/summarize" "$d" || fail "$run: summarize exited $?"
	"$top/report/render" "$d" >/dev/null || fail "$run: render exited $?"
	same "$run" "$d" summary.json table.txt report.html
done
for run in testhost testhost-vm; do
	d=$(fresh "$run")
	"$top/report/summarize" --testhost "$d" || fail "$run: summarize exited $?"
	"$top/report/render" "$d" >/dev/null || fail "$run: render exited $?"
	same "$run" "$d" summary.json table.txt report.html
done
for run in model fleet; do
	d=$(fresh "$run")
	"$top/report/render" "$d" >/dev/null || fail "$run: render exited $?"
	same "$run" "$d" table.txt report.html
done
d=$(fresh capacity)
"$top/report/capacity" "$d" >/dev/null || fail "capacity: report/capacity exited $?"
same capacity "$d" capacity.json table.txt capacity.html
pass "9 recorded runs: the same summaries, verdicts, tables, pages and plots"
