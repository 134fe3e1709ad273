#!/usr/bin/env bash
# ktrace-drain copies what a file holds now and stops there, where cat
# would wait for more: a FIFO whose writer stays open (as a tracefs
# trace_pipe_raw blocks when empty) is drained byte for byte, into a file
# or to standard output, and the program ends. A file that cannot be opened, an output that cannot be
# written and a bad command line are errors naming what was wrong, with
# their own exit status. With --keep FROM:TO, only the ring-buffer pages
# whose span (from their time to the next page's) meets a window go out.
# (The guests' traces: capacity/capacity_quick.)
# timeout: 30
# variants: release asan
# check: fast
. "$(dirname "$0")/../lib.sh"
drain=$BUILD/bin/ktrace-drain
[ -x "$drain" ] || fail "$drain is not built"

fifo=$TEST_TMP/pipe
mkfifo "$fifo"
head -c 20000 /dev/urandom >"$TEST_TMP/data"
# Held open for reading and writing by this shell: the data waits in the
# pipe, and a writer is still there when it has been read.
exec 3<>"$fifo"
cat "$TEST_TMP/data" >&3
out=$(timeout 10 "$drain" "$fifo" "$TEST_TMP/copy") || fail "drain of a held-open FIFO: exit $?"
[ "$out" = "20000 bytes" ] || fail "said '$out', not '20000 bytes'"
cmp -s "$TEST_TMP/data" "$TEST_TMP/copy" || fail "the copy differs from what was written"
# To standard output (the guest pipes it into gzip), the count on stderr.
cat "$TEST_TMP/data" >&3
timeout 10 "$drain" "$fifo" - >"$TEST_TMP/piped" 2>"$TEST_TMP/said" || fail "drain to stdout: exit $?"
cmp -s "$TEST_TMP/data" "$TEST_TMP/piped" || fail "the copy on stdout differs"
[ "$(cat "$TEST_TMP/said")" = "20000 bytes" ] || fail "drain to stdout said '$(cat "$TEST_TMP/said")'"
# Empty now: nothing, at once.
out=$(timeout 10 "$drain" "$fifo" "$TEST_TMP/empty") || fail "drain of an empty FIFO: exit $?"
{ [ "$out" = "0 bytes" ] && [ ! -s "$TEST_TMP/empty" ]; } || fail "an empty FIFO gave '$out'"

# --keep: ring-buffer pages, each starting with its first event's time
# (u64 ns): five pages at 1, 2, 3, 4 and 5 s. A page runs to the next
# one's time; the last one to the end.
le64() {
	local i
	for i in 0 1 2 3 4 5 6 7; do
		# shellcheck disable=SC2059 # the format is the byte
		printf "\\$(printf %03o $(( ($1 >> (8 * i)) & 255 )))"
	done
}
pages() {
	local s
	for s in 1 2 3 4 5; do
		le64 $((s * 1000000000))
		head -c 4088 /dev/zero | tr '\0' "$s"
	done
}
pages >"$TEST_TMP/pages"
[ "$(stat -c %s "$TEST_TMP/pages")" = 20480 ] || fail "the test's pages are $(stat -c %s "$TEST_TMP/pages") bytes"
# keep WINDOWS... EXPECT: the pages kept, by their fill byte, and what it said
keep() {
	local want=$1 args=() w got said
	shift
	for w in "$@"; do args+=(--keep "$w"); done
	cat "$TEST_TMP/pages" >&3
	said=$(timeout 10 "$drain" "${args[@]}" "$fifo" "$TEST_TMP/kept") || fail "--keep $*: exit $?"
	got=$(for ((o = 8; o < $(stat -c %s "$TEST_TMP/kept"); o += 4096)); do
		od -An -c -j "$o" -N 1 "$TEST_TMP/kept" | tr -d ' \n'; done)
	[ "$got" = "$want" ] || fail "--keep $*: kept the pages '$got', not '$want'"
	[ "$said" = "$(( ${#want} * 4096 )) bytes, ${#want} of 5 pages" ] || fail "--keep $*: said '$said'"
}
keep 2 2.5:2.6
keep 24 0:1.5e-9 2.2:2.3 4.5:4.9
keep 15 1:1 7:8
keep 12345 0:100
keep "" 0:0.5
exec 3>&-

# Real pages: a capacity cell's (tests/fixtures/ktrace/stock-raw, its stall
# 1.050-1.254 s after its t0, 2.018 s on the trace's clock) cut to a window
# around the stall, as the guest cuts a cell's trace to its missed steps.
# trace-cmd reads what is left, and lab/ktrace/explain, told the window
# (trace/kept.txt), explains the stall from it as from the whole trace.
cut=$TEST_TMP/cut
cp -r "$top/tests/fixtures/ktrace/stock-raw" "$cut"
for c in 0 1; do
	zcat "$cut/trace/cpu$c.raw.gz" >"$TEST_TMP/cpu$c.raw"
	"$drain" --keep 3.063:3.272 "$TEST_TMP/cpu$c.raw" - 2>>"$TEST_TMP/said" |
		gzip >"$cut/trace/cpu$c.raw.gz" || fail "cutting cpu$c: exit $?"
done
grep -qx '[0-9]* bytes, [0-9] of 34 pages' "$TEST_TMP/said" || fail "CPU 1's 34 pages not cut to a few: $(cat "$TEST_TMP/said")"
echo "3.063 3.272" >"$cut/trace/kept.txt"
"$top/lab/ktrace/explain" "$cut" --name stock --out "$TEST_TMP/cut.json" >"$TEST_TMP/explain.out" 2>&1 ||
	fail "explain of the cut trace: exit $?, $(cat "$TEST_TMP/explain.out")"
labspec=$BUILD/bin/labspec
for kv in totals.stalls=1 totals.stalls_explained=1 'stalls.*.chain.complete=true' \
	'stalls.*.chain.holder_state.state=throttled'; do
	got=$("$labspec" "$TEST_TMP/cut.json" "${kv%%=*}") || fail "the cut trace's chains.json has no ${kv%%=*}"
	[ "$got" = "${kv#*=}" ] || fail "the cut trace: ${kv%%=*} is $got, not ${kv#*=}"
done
for bad in 2:1 x:2 2 -1:2 1:2:3 ""; do
	"$drain" --keep "$bad" "$TEST_TMP/data" "$TEST_TMP/x" 2>"$TEST_TMP/err"
	rc=$?
	{ [ $rc = 64 ] && grep -qF -- "--keep '$bad'" "$TEST_TMP/err"; } ||
		fail "--keep '$bad': exit $rc, $(cat "$TEST_TMP/err")"
done

"$drain" "$TEST_TMP/none" "$TEST_TMP/x" 2>"$TEST_TMP/err"
rc=$?
{ [ $rc = 66 ] && grep -q "$TEST_TMP/none" "$TEST_TMP/err"; } || fail "a missing input: exit $rc, $(cat "$TEST_TMP/err")"
"$drain" "$TEST_TMP/data" "$TEST_TMP/no/dir/x" 2>"$TEST_TMP/err"
rc=$?
{ [ $rc = 73 ] && grep -q "no/dir/x" "$TEST_TMP/err"; } || fail "an unwritable output: exit $rc, $(cat "$TEST_TMP/err")"
"$drain" "$TEST_TMP/data" 2>"$TEST_TMP/err"
rc=$?
{ [ $rc = 64 ] && grep -q usage "$TEST_TMP/err"; } || fail "one argument: exit $rc"
pass "a held-open FIFO drained byte for byte; --keep keeps the pages that meet its windows, and a real trace cut so explains its stall; bad input named, exits 66, 73, 64"
