#!/usr/bin/env bash
# What the reports write into a results directory that someone else handed
# over never goes through a link planted there: report/summarize,
# report/render (its table, page and gnuplot's plots), report/capacity,
# report/sweep and lab/ktrace/explain write each file to a fresh temporary
# beside it and rename it over, and refuse (exit 65, naming the file) an
# output that is a link or not a regular file. The victims outside the
# directory must come through unchanged, with and without the refusal.
# timeout: 120
# variants: release
# check: fast
. "$(dirname "$0")/../lib.sh"
command -v gnuplot >/dev/null || skip "gnuplot not installed (mk/deps report)"
report=$top/report
cd "$TEST_TMP" || exit 1
mkdir victims
victim() { printf 'the victim %s, untouched\n' "$1" >"victims/$1"; }
untouched() {
	local v
	for v in victims/*; do
		[ "$(cat "$v")" = "the victim ${v#victims/}, untouched" ] || fail "$1: $v was written through a link"
	done
	[ "$(find victims -mindepth 1 | wc -l)" = "$(find victims -mindepth 1 -maxdepth 1 -type f | wc -l)" ] ||
		fail "$1: something appeared in victims/"
}
# refuses WHAT STATUS NAME COMMAND...: COMMAND exits STATUS naming NAME.
refuses() {
	local what=$1 want=$2 name=$3 got=0
	shift 3
	"$@" >"$TEST_TMP/out" 2>&1 || got=$?
	[ "$got" = "$want" ] || { cat "$TEST_TMP/out" >&2; fail "$what: exit $got, expected $want"; }
	grep -q "$name.*refusing" "$TEST_TMP/out" || fail "$what: the refusal does not name $name: $(cat "$TEST_TMP/out")"
	! grep -q Traceback "$TEST_TMP/out" || fail "$what: a traceback"
	untouched "$what"
}

# 1. The case of the review: table.txt links to a victim's authorized_keys
# and the headline carries a newline and a key.
d=$TEST_TMP/demo
cp -r "$FIXTURES/report/demo" "$d"
"$report/summarize" "$d" || fail "summarize exited $?"
jq '.headline = "x\nssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHostile attacker@example"' "$d/summary.json" >"$d/s.new"
mv "$d/s.new" "$d/summary.json"
victim authorized_keys
ln -s ../victims/authorized_keys "$d/table.txt"
refuses "render --no-html, table.txt a link" 65 table.txt "$report/render" --no-html "$d"
rm "$d/table.txt"

# 2. Each output of render, one at a time.
for f in report.html plots; do
	victim "$f"
	rm -rf "${d:?}/$f"
	ln -s "../victims/$f" "$d/$f"
	refuses "render, $f a link" 65 "$f" "$report/render" "$d"
	rm "$d/$f"
done
"$report/render" "$d" >/dev/null || fail "render of the demo exited $?"
victim timeline
ln -sf ../../victims/timeline "$d/plots/timeline-stock.svg"
refuses "render, a plot a link" 65 timeline-stock.svg "$report/render" "$d"
rm "$d/plots/timeline-stock.svg"
rm "$d/plots/distribution-relay.svg"
mkdir "$d/plots/distribution-relay.svg" || fail "mkdir"
refuses "render, a plot a directory" 65 distribution-relay.svg "$report/render" "$d"
rmdir "$d/plots/distribution-relay.svg"
# Links at the names the writers used for their temporaries before.
for f in table.txt report.html summary.json; do
	victim "$f.tmp"
	ln -s "../victims/$f.tmp" "$d/$f.tmp"
done
"$report/summarize" "$d" || fail "summarize beside planted .tmp links exited $?"
"$report/render" "$d" >/dev/null || fail "render beside planted .tmp links exited $?"
untouched "render beside planted .tmp links"
victim summary.json
ln -sf ../victims/summary.json "$d/summary.json"
refuses "summarize, summary.json a link" 65 summary.json "$report/summarize" "$d"
pass "summarize and render: no write through a link, each refusal named"

# 3. report/capacity and report/sweep.
c=$TEST_TMP/capacity
cp -r "$FIXTURES/report/capacity" "$c"
for f in capacity.json capacity.html; do
	victim "c-$f"
	ln -s "../victims/c-$f" "$c/$f"
	refuses "capacity, $f a link" 65 "$f" "$report/capacity" "$c"
	rm "$c/$f"
done
s=$TEST_TMP/sweep
mkdir "$s"
victim sweep-table
ln -s ../victims/sweep-table "$s/table.txt"
refuses "sweep, table.txt a link" 65 table.txt "$report/sweep" "$FIXTURES/report/sweep/sweep.json" --out "$s"
pass "capacity and sweep: no write through a link"

# 4. explain: a guest's chains.json or chains.json.tmp planted as a link.
k=$TEST_TMP/trace
cp -r "$FIXTURES/ktrace/patched" "$k"
victim chains.tmp
ln -s ../victims/chains.tmp "$k/chains.json.tmp"
"$top/lab/ktrace/explain" "$k" >/dev/null || fail "explain beside a planted chains.json.tmp exited $?"
jq -e .line "$k/chains.json" >/dev/null || fail "explain wrote no chains.json"
untouched "explain, chains.json.tmp a link"
victim chains
rm "$k/chains.json"
ln -s ../victims/chains "$k/chains.json"
refuses "explain, chains.json a link" 65 chains.json "$top/lab/ktrace/explain" "$k"
pass "explain: no write through a link"
