#!/usr/bin/env bash
# epoll-unixwake (kernel/selftests/unixwake) on this host's kernel: 2 s of
# its scenario, one JSON object whose counts add up and whose co-tenant
# was throttled, exit 1 exactly when it saw a stall or a late ping, and
# bad command lines refused with 64, naming the flag.
# timeout: 60
# check: fast
. "$(dirname "$0")/../../../tests/lib.sh"
uw=$BUILD/bin/epoll-unixwake
[ -x "$uw" ] || fail "$uw is not built"
for bad in "--seconds 0" "--quota-us 5" "--cpu x" "--quota-us 30000 --period-us 20000" \
	"--cpu 0 --ping-cpu 0" "--bogus 1" "extra"; do
	rc=0
	# shellcheck disable=SC2086 # the words are the arguments
	err=$("$uw" $bad 2>&1) || rc=$?
	[ "$rc" = 64 ] || fail "'$bad': exit $rc, expected 64"
	grep -q "usage" <<<"$err" || fail "'$bad': no usage line in '$err'"
done
err=$("$uw" --quota-us 5 2>&1) || true
grep -q -- "--quota-us '5': expected a whole number in 1000..1000000" <<<"$err" ||
	fail "the refusal names the flag as typed: '$err'"
pass "bad command lines: exit 64, the flag named"

[ "$(nproc)" -ge 2 ] || skip "needs 2 CPUs, this host has $(nproc)"
rc=0
out=$("$uw" --seconds 2 --ping-us 10000 2>"$TEST_TMP/err") || rc=$?
if [ "$rc" = 71 ]; then
	skip "this host refused a resource (root, a cgroup with the cpu controller, SCHED_FIFO): $(cat "$TEST_TMP/err")"
fi
{ [ "$rc" = 0 ] || [ "$rc" = 1 ]; } || fail "exit $rc: $out $(cat "$TEST_TMP/err")"
printf '%s\n' "$out" >"$TEST_TMP/r.json"
json_ok "$TEST_TMP/r.json" '.seconds == 2 and .senders == 2 and .quota_us == 1000' "the parameters"
json_ok "$TEST_TMP/r.json" '.pings >= 150 and .pings <= 201 and .ping_us.max >= .ping_us.p50' "the pings"
json_ok "$TEST_TMP/r.json" '.co_tenant_datagrams > 0 and .throttled_periods > 0 and .throttled_periods <= .periods' \
	"the co-tenant ran and was throttled"
# shellcheck disable=SC2016 # $rc is jq's, from --arg
json_ok "$TEST_TMP/r.json" '((.stalls + .late) > 0) == ($rc == "1")' "exit $rc against the stalls" --arg rc "$rc"
[ -z "$(find /sys/fs/cgroup -maxdepth 3 -name "relay-unixwake-*" 2>/dev/null)" ] ||
	fail "its cgroup was left behind"
pass "2 s on this host: $out"
