#!/usr/bin/env bash
# report/render on a fleet run's directory (results/<id>-fleet/, as
# deploy/ansible leaves it): each load host's percentiles beside the merged
# ones, the merged samples the sum of the hosts', every host's curve and the
# merged one on the distribution plot, the relay host's count and the kernel
# it was given (relay-preflight's words) in the facts.
# The fixture is two real loadgen runs through relay and loadgen merge.
# timeout: 120
# lane: side
# variants: release
. "$(dirname "$0")/../../../tests/lib.sh"
command -v gnuplot >/dev/null || skip "gnuplot not installed (mk/deps report)"
dir=$TEST_TMP/t1-fleet
cp -r "$FIXTURES/report/fleet" "$dir"
out=$("$top/report/render" "$dir") || fail "render exited $?"
echo "$out"
grep -Eq '^ +load1 +load2 +merged$' <<<"$out" || fail "no columns load1, load2, merged"
grep -Eq '^  samples +4000 +6000 +10000$' <<<"$out" || fail "merged samples are not 4000 + 6000"
grep -Eq '^  max +94\.8 +53\.2 +94\.8$' <<<"$out" || fail "merged max is not the largest host max"
grep -Eq '^  p99 +75\.6 +44\.0 +61\.5$' <<<"$out" || fail "merged p99 is not the merged histogram's"
grep -q '^verdict: MERGED: 2 load hosts, 10000 samples' <<<"$out" || fail "no headline"
grep -q 'relay host relay1.*10002 datagrams received' "$dir/report.html" || fail "the page lacks the relay host"
grep -q "kernel on relay1.*6\.12\.117-relay-patched; relay-preflight: epoll ready-list fix present (ok)" "$dir/report.html" ||
	fail "the page lacks the kernel relay1 was given"
"$top/report/check" "$dir" || fail "the report is not whole"
if command -v chromium >/dev/null; then
	"$top/report/check" "$dir" --screenshot || fail "the page does not show every curve"
fi
# relay-preflight's words that do not speak of the fix are refused by name.
cp "$dir/relay1/preflight.txt" "$TEST_TMP/preflight.txt"
sed -i '/epoll ready-list fix/d' "$dir/relay1/preflight.txt"
status=0
"$top/report/render" "$dir" >/dev/null 2>"$TEST_TMP/err" || status=$?
[ $status = 65 ] || fail "render with a preflight.txt that lacks the fix exited $status, not 65"
grep -q 'relay1/preflight.txt: relay-preflight said nothing of the epoll ready-list fix' "$TEST_TMP/err" ||
	fail "the error does not name relay1/preflight.txt: $(cat "$TEST_TMP/err")"
cp "$TEST_TMP/preflight.txt" "$dir/relay1/preflight.txt"
# A merged.json whose input has no result directory is refused by name.
sed -i 's|load2/loadgen.hlog|load9/loadgen.hlog|' "$dir/merged.json"
status=0
"$top/report/render" "$dir" >/dev/null 2>"$TEST_TMP/err" || status=$?
[ $status = 65 ] || fail "render of a merge without load9's files exited $status, not 65"
grep -q 'load9/loadgen.json: no such file' "$TEST_TMP/err" || fail "the error does not name load9/loadgen.json: $(cat "$TEST_TMP/err")"
pass "fleet report: per-host columns beside the merge"
