#!/usr/bin/env bash
# ktrace-drain copies what a file holds now and stops there, where cat
# would wait for more: a FIFO whose writer stays open (as a tracefs
# trace_pipe_raw blocks when empty) is drained byte for byte, into a file
# or to standard output, and the program ends. A file that cannot be opened, an output that cannot be
# written and a bad command line are errors naming what was wrong, with
# their own exit status. (The guests' traces: vm/capacity_quick.)
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
exec 3>&-

"$drain" "$TEST_TMP/none" "$TEST_TMP/x" 2>"$TEST_TMP/err"
rc=$?
{ [ $rc = 66 ] && grep -q "$TEST_TMP/none" "$TEST_TMP/err"; } || fail "a missing input: exit $rc, $(cat "$TEST_TMP/err")"
"$drain" "$TEST_TMP/data" "$TEST_TMP/no/dir/x" 2>"$TEST_TMP/err"
rc=$?
{ [ $rc = 73 ] && grep -q "no/dir/x" "$TEST_TMP/err"; } || fail "an unwritable output: exit $rc, $(cat "$TEST_TMP/err")"
"$drain" "$TEST_TMP/data" 2>"$TEST_TMP/err"
rc=$?
{ [ $rc = 64 ] && grep -q usage "$TEST_TMP/err"; } || fail "one argument: exit $rc"
pass "a held-open FIFO drained byte for byte; bad input named, exits 66, 73, 64"
