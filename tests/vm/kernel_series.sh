#!/bin/bash
# timeout: 900
# lane: side
# The patch series against the reconstructed stock trees (6.12 and 6.1):
# the baseline and the series apply with patch -p1 and with git am, the first
# patch turns stock fs/eventpoll.c into Debian's byte for byte, every patch
# passes the tree's own checkpatch.pl, and every config fragment option
# survives olddefconfig. Needs no compiler run beyond Kconfig.
. "$(dirname "$0")/../lib.sh"
need_root "fetches the source package with apt, writes ${RELAY_CACHE:-/var/cache/relay}"
"$top/mk/deps" kernel >/dev/null || fail "mk/deps kernel"
cache=${RELAY_CACHE:-/var/cache/relay}

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
		git -C "$repo" -c user.name=test -c user.email=test@localhost am -q "$patches/$p" ||
			fail "linux $line: git am $p failed"
		if [ $first = 1 ]; then
			cmp -s "$repo/fs/eventpoll.c" "$src/fs/eventpoll.c" ||
				fail "linux $line: after git am $p, fs/eventpoll.c differs from Debian's"
			first=0
		fi
		# The tree's own checkpatch; commit ids cannot be resolved in a
		# tree without git history, so that one check is left out.
		res=$(cd "$src" && perl scripts/checkpatch.pl --ignore UNKNOWN_COMMIT_ID "$patches/$p" 2>&1 | grep '^total:')
		[ "$res" = "${res#total: 0 errors, 0 warnings}" ] &&
			fail "linux $line: checkpatch $p: $res"
		pass "linux $line: $p: git am ok, checkpatch: $res"
	done < <(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$patches/series")
	[ $first = 0 ] || fail "linux $line: empty series"
	pass "linux $line: fs/eventpoll.c after the fix == Debian $package $version"
done
