#!/usr/bin/env bash
# The userspace model separates the lock kinds: with the producers throttled
# by cpu.max 5000/100000, the writer-preferring rwlock (stock kernel) makes the
# RT consumer wait out the quota at least 5 times over 50 ms in 3 s, the PI
# mutex (patched kernel) never over 20 ms, and the plain mutex (no PI) stalls
# too (at least once): PI, not exclusivity, is what helps.
# Release only: the claim is about time, which ASan only slows; the model's
# code runs under ASan in test_model and test_model_pi.
# variants: release
# timeout: 90
. "$(dirname "$0")/../../../tests/lib.sh"

need_root "a cgroup with a CPU quota and a SCHED_FIFO consumer"
if ! grep -qw cpu /sys/fs/cgroup/cgroup.controllers 2>/dev/null &&
   ! awk '$3 == "cgroup" && $4 ~ /(^|,)cpu(,|$)/ { found = 1 } END { exit !found }' /proc/mounts; then
	skip "no cgroup cpu controller (neither cgroup v2 cpu nor a v1 cpu hierarchy)"
fi

epmodel=$BUILD/bin/epmodel
[ -x "$epmodel" ] || fail "$epmodel is not built"
out=$TEST_TMP/model

"$epmodel" --duration-s 3 --out "$out" >"$TEST_TMP/stdout" 2>"$TEST_TMP/stderr" &
pid=$!
# epmodel removes its cgroup on exit and on SIGINT/SIGTERM; only a SIGKILL
# leaves it behind, and then it is named after the pid.
cleanup() {
	kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	find /sys/fs/cgroup -maxdepth 8 -depth -type d -path "*/relay-model-$pid*" \
		-exec rmdir {} \; 2>/dev/null
}
trap cleanup EXIT
wait "$pid"
status=$?
cat "$TEST_TMP/stdout"
case $status in
0) ;;
71) skip "$(tail -n 1 "$TEST_TMP/stderr" | sed 's/^epmodel: //')" ;;
*) cat "$TEST_TMP/stderr"; fail "epmodel exited $status" ;;
esac

leftover=$(find /sys/fs/cgroup -maxdepth 8 -type d -name "relay-model-$pid" 2>/dev/null)
[ -z "$leftover" ] || fail "epmodel left its cgroup behind: $leftover"
for f in summary.json {rwlock,pi_mutex,mutex}.{hgrm,timeseries.csv,events.csv}; do
	[ -s "$out/$f" ] || fail "no $f"
done

s=$out/summary.json
jq -r '[.rwlock.waits_over_50ms, .rwlock.wait_us.max, .mutex.waits_over_50ms, .mutex.wait_us.max,
	.pi_mutex.wait_us.max, .pi_mutex.waits] | @tsv' "$s" | awk -F '\t' '{
	printf "rwlock: %d waits over 50 ms (max %.1f ms); mutex: %d (max %.1f ms); ", $1, $2 / 1000, $3, $4 / 1000
	printf "pi_mutex: max %.3f ms, %d waits\n", $5 / 1000, $6 }'
sep="the lock kinds did not separate"
json_ok "$s" '.rwlock.waits_over_50ms >= 5' "$sep: rwlock: fewer than 5 waits over 50 ms"
# The control only has to show that exclusivity without PI still stalls;
# its count swings with host load (4 to 31 seen), the rwlock's threshold
# is the issue's.
json_ok "$s" '.mutex.waits_over_50ms >= 1' "$sep: mutex: no wait over 50 ms (the control should stall too)"
json_ok "$s" '.pi_mutex.wait_us.max | numbers <= 20000' "$sep: pi_mutex: a wait over 20 ms"
# A consumer ticking every 1 ms for 3 s that never waits long: ~3000 waits
# on a quiet host, fewer when the host's other work delays its timer (1973
# beside make test's guests). Against the rwlock on the same host, which
# loses ~90 ms a throttled period: at least twice as many.
json_ok "$s" '.pi_mutex.waits >= 2 * .rwlock.waits' \
	"$sep: pi_mutex: the consumer got the lock $(jq .pi_mutex.waits "$s") times, not twice the rwlock's $(jq .rwlock.waits "$s")"
pass "rwlock and mutex stall for a quota period, the PI mutex does not"
