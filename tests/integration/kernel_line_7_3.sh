#!/usr/bin/env bash
# The 7.3 line's factorial, without a compiler: Debian 13's
# linux-source-7.3 (fetched through kernel/debian-apt on first use, then
# from the cache) with kernel/baseline/linux-7.3-stock.patch has ep->lock
# an rwlock_t taken with read_lock_irqsave() in ep_poll_callback() and the
# task-based throttle model untouched; the series gives Debian's
# fs/eventpoll.c back; both touch that file alone, apply with patch -p1
# and git am, and pass the tree's checkpatch.pl; every config option
# survives (kernel/build --check-only). A built result, when there is
# one, has the nm proofs and the probe offsets.
# timeout: 900
# variants: release
. "$(dirname "$0")/../lib.sh"
[ "$(id -u)" = 0 ] || skip "fetches with apt and writes ${RELAY_CACHE:-/var/cache/relay}: needs root"
for f in kernel/baseline/linux-7.3-stock.patch kernel/patches/7.3/0001-eventpoll-Replace-rwlock-with-spinlock.patch; do
	files=$(sed -n 's|^+++ b/\([^[:space:]]*\).*|\1|p' "$top/$f" | sort -u)
	[ "$files" = fs/eventpoll.c ] || fail "$f touches $files, not fs/eventpoll.c alone"
done
log=$TEST_TMP/check.log
"$top/kernel/build" --line 7.3 --check-only >"$log" 2>&1 || { tail -n 20 "$log"; fail "kernel/build --line 7.3 --check-only: exit $?"; }
grep -q 'checks passed (source version, baseline, series, Debian.s eventpoll.c, config)' "$log" ||
	{ cat "$log"; fail "the checks did not pass"; }
pass "--check-only: the baseline applies, the series gives Debian's eventpoll.c back, every option survives"

src=$(ls -d "${RELAY_CACHE:-/var/cache/relay}"/src/linux-source-7.3_7.3.4-1~bpo13+1 2>/dev/null) ||
	fail "the 7.3 tree is not in the cache after --check-only"
mkdir -p "$TEST_TMP/t/fs"
cp "$src/fs/eventpoll.c" "$TEST_TMP/t/fs/"
(cd "$TEST_TMP/t" && git init -q && git add . && git -c user.name=t -c user.email=t@localhost commit -qm debian) ||
	fail "git init"
patch -d "$TEST_TMP/t" -p1 --batch --quiet <"$top/kernel/baseline/linux-7.3-stock.patch" || fail "the baseline does not apply with patch -p1"
"$top/kernel/eventpoll-lock" --expect rwlock_t read_lock_irqsave "$TEST_TMP/t/fs/eventpoll.c" >/dev/null ||
	fail "the stock fs/eventpoll.c is not the rwlock one"
(cd "$TEST_TMP/t" && git -c user.name=t -c user.email=t@localhost commit -qam stock &&
	git -c user.name=t -c user.email=t@localhost am -q "$top/kernel/patches/7.3/0001-eventpoll-Replace-rwlock-with-spinlock.patch") ||
	fail "the series does not apply with git am"
cmp -s "$TEST_TMP/t/fs/eventpoll.c" "$src/fs/eventpoll.c" || fail "after git am, fs/eventpoll.c is not Debian's"
grep -q throttled_limbo_list "$src/kernel/sched/sched.h" || fail "the 7.3 tree has no task-based throttle model"
perl "$src/scripts/checkpatch.pl" --quiet --ignore UNKNOWN_COMMIT_ID \
	"$top/kernel/patches/7.3/0001-eventpoll-Replace-rwlock-with-spinlock.patch" >"$TEST_TMP/cp.log" 2>&1 ||
	{ cat "$TEST_TMP/cp.log"; fail "checkpatch.pl"; }
pass "the baseline reverses the epoll change alone (the throttle model untouched), git am gives Debian's file back, checkpatch passes"

dir=$("$top/kernel/build" --line 7.3 --print-dir)
if [ -f "$dir/manifest.json" ]; then
	pylib kernel_manifest images "$dir/manifest.json" || fail "the built 7.3 result's proofs"
	json_ok "$dir/manifest.json" '.probe_ep.stock == "+72(-8(%di))" and .probe_ep.patched == "+72(-8(%di))" and .probe_offsets.stock["eventpoll.lock"] > 0' \
		"the built 7.3 result's probe offsets"
	pass "the built 7.3 pair: the nm proofs and the probe offsets in its manifest"
else
	pass "no built 7.3 result yet (make kernels KERNEL_LINE=7.3): its proofs are kernel/build's own"
fi
