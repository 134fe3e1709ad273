#!/bin/bash
# timeout: 900
# lane: side
# The patch series against the reconstructed stock trees (6.12, and 6.1
# with Debian's RT patches): the baseline and the series apply with patch
# -p1 and with git am, the first patch turns stock fs/eventpoll.c into
# Debian's byte for byte, every patch passes the tree's own checkpatch.pl,
# and every config fragment option survives olddefconfig. The historical
# 6.1.8-rt line: its source verified, its fs/eventpoll.c the rwlock one,
# its config. A patch kept beside a series to be measured, not in it
# (kernel/patches/README.md), must apply on top of the series and pass
# checkpatch too. Needs no compiler run beyond Kconfig.
. "$(dirname "$0")/../lib.sh"
need_root "fetches the source package with apt, writes ${RELAY_CACHE:-/var/cache/relay}"
"$top/mk/deps" kernel >/dev/null || fail "mk/deps kernel"
cache=${RELAY_CACHE:-/var/cache/relay}

# checkpatch SRC PATCH: the tree's own checkpatch.pl has nothing to say
# (commit ids cannot be resolved in a tree without git history, so that
# one check is left out); prints its total line.
checkpatch() {
	local res
	res=$(cd "$1" && perl scripts/checkpatch.pl --ignore UNKNOWN_COMMIT_ID "$2" 2>&1 | grep '^total:')
	echo "$res"
	[ "$res" != "${res#total: 0 errors, 0 warnings}" ]
}
am() {
	git -C "$1" -c user.name=test -c user.email=test@localhost am -q "$2"
}

for line in 6.12 6.1; do
	# Source version, baseline, series with patch -p1, Debian's eventpoll.c,
	# config survival: kernel/build checks all of it before compiling.
	"$top/kernel/build" --line "$line" --check-only ||
		fail "linux $line: kernel/build --check-only exited $?"
	pass "linux $line: baseline and series apply with patch -p1; fragment survives olddefconfig"

	conf=$top/kernel/lines/$line.conf
	package=$(sed -n 's/^package=//p' "$conf")
	version=$(sed -n 's/^version=//p' "$conf")
	baseline=$top/kernel/$(sed -n 's/^baseline=//p' "$conf")
	patches=$top/kernel/$(sed -n 's/^patches=//p' "$conf")
	src=$cache/src/${package}_$version
	# A line from Debian's source package: the tree with its RT patches.
	! grep -qx 'rt_patches=yes' "$conf" || src+=+rt
	[ -f "$src/fs/eventpoll.c" ] || fail "linux $line: $src was not unpacked"

	# git am onto a repository holding the stock file.
	repo=$TEST_TMP/am-$line
	mkdir -p "$repo/fs"
	cp "$src/fs/eventpoll.c" "$repo/fs/"
	patch -s -d "$repo" -p1 -i "$baseline" || fail "linux $line: baseline does not apply"
	git -C "$repo" init -q
	git -C "$repo" add fs/eventpoll.c
	git -C "$repo" -c user.name=test -c user.email=test@localhost commit -q -m stock
	first=1
	while read -r p; do
		am "$repo" "$patches/$p" || fail "linux $line: git am $p failed"
		if [ $first = 1 ]; then
			cmp -s "$repo/fs/eventpoll.c" "$src/fs/eventpoll.c" ||
				fail "linux $line: after git am $p, fs/eventpoll.c differs from Debian's"
			first=0
		fi
		res=$(checkpatch "$src" "$patches/$p") || fail "linux $line: checkpatch $p: $res"
		pass "linux $line: $p: git am ok, checkpatch: $res"
	done < <(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$patches/series")
	[ $first = 0 ] || fail "linux $line: empty series"
	pass "linux $line: fs/eventpoll.c after the fix == Debian $package $version"
	for f in "$patches"/*.patch; do
		p=$(basename "$f")
		! grep -qx "$p" "$patches/series" || continue
		am "$repo" "$f" || fail "linux $line: $p (beside the series) does not git am on top of it"
		res=$(checkpatch "$src" "$f") || fail "linux $line: checkpatch $p: $res"
		git -C "$repo" reset -q --hard HEAD~1
		pass "linux $line: $p (measured, not in the series): git am on the series ok, checkpatch: $res"
	done
done

# The historical line: no baseline, no series; the check verifies the
# source and finds the rwlock in its fs/eventpoll.c.
rc=0
"$top/kernel/build" --line 6.1.8-rt --check-only 2>"$TEST_TMP/hist.err" || rc=$?
[ "$rc" = 0 ] || { cat "$TEST_TMP/hist.err" >&2; fail "linux 6.1.8-rt: kernel/build --check-only exited $rc"; }
grep -q "fs/eventpoll.c as shipped: struct eventpoll's lock is rwlock_t, ep_poll_callback() takes read_lock_irqsave()" \
	"$TEST_TMP/hist.err" || { cat "$TEST_TMP/hist.err" >&2; fail "linux 6.1.8-rt: no rwlock proof"; }
pass "linux 6.1.8-rt: Debian's 6.1.8-1 with its RT patches, verified; the rwlock in fs/eventpoll.c; fragment survives"
