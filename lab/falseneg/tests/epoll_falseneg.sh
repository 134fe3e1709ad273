#!/usr/bin/env bash
# epoll-falseneg (kernel/selftests/falseneg) on this host's kernel: one
# JSON object whose counts add up, exit 1 exactly when it saw a false
# negative (this host's kernel may have the bug: Debian's 6.1 does), and
# a bad command line refused with 64 and a word on which flag.
# timeout: 60
# check: fast
. "$(dirname "$0")/../../../tests/lib.sh"
fn=$BUILD/bin/epoll-falseneg
[ -x "$fn" ] || fail "$fn is not built"
rc=0
out=$("$fn" --threads 2 --events 2 --seconds 1) || rc=$?
{ [ "$rc" = 0 ] || [ "$rc" = 1 ]; } || fail "exit $rc: $out"
printf '%s\n' "$out" >"$TEST_TMP/r.json"
json_ok "$TEST_TMP/r.json" '.threads == 2 and .events == 2 and .errors == 0' "threads, events, errors"
json_ok "$TEST_TMP/r.json" '.calls > 1000 and .false_negatives >= 0 and .false_negatives <= .calls' "the counts"
# shellcheck disable=SC2016 # $rc is jq's, from --arg
json_ok "$TEST_TMP/r.json" '(.false_negatives > 0) == ($rc == "1")' "exit $rc against the false negatives" --arg rc "$rc"
json_ok "$TEST_TMP/r.json" '(.rate - .false_negatives / .calls) | fabs < 1e-6' "the rate"
pass "1 s on this host: $out"
for bad in "--threads 1" "--events 0" "--seconds x" "--bogus" "extra"; do
	rc=0
	# shellcheck disable=SC2086 # the words are the arguments
	err=$("$fn" $bad 2>&1) || rc=$?
	[ "$rc" = 64 ] || fail "'$bad': exit $rc, expected 64"
	grep -q "usage\|--" <<<"$err" || fail "'$bad': '$err' names nothing"
done
pass "bad command lines: exit 64"
