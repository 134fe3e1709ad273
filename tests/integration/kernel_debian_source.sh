#!/usr/bin/env bash
# kernel/debian-source on a local archive this test makes: a tiny fake
# "linux" source package (an orig tarball with a Makefile and an excerpt of
# fs/eventpoll.c, Debian's packaging with one patch in debian/patches and
# two in debian/patches-rt), its Sources index made by dpkg-scansources, and
# an apt sources list that trusts it ([trusted=yes]: unsigned, here only).
# A good fetch unpacks it with Debian's patches and the RT series applied
# and records the files' sha256; the second needs no archive; then every
# refusal: a version the index does not have (3), a tarball that does not
# match the signed index (10, apt refuses it), one that matches an index
# remade for it but not the .dsc (10, dpkg-source refuses it), a .dsc other
# than the pinned one (10), an RT patch that does not apply (4), a package
# without RT patches (3). And the source proof kernel/build makes of
# fs/eventpoll.c, on excerpts of Debian's 6.1.8-1 (the rwlock) and
# 6.1.187-1 (the spinlock).
# timeout: 300
# lane: side
# variants: release
# check: fast
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
need_root "apt-get update and source into a cache of its own, as kernel/build runs them"
ds=$top/kernel/debian-source
for t in dpkg-source dpkg-scansources apt-get; do
	command -v "$t" >/dev/null || skip "no $t (mk/deps kernel installs dpkg-dev)"
done

repo=$TEST_TMP/repo
mkdir -p "$repo"

# package VERSION [--rt-broken|--no-rt]: the fake source package VERSION
# (upstream 6.1.8) built into $repo.
package() {
	local v=$1 kind=${2:-} d=$TEST_TMP/build/linux-6.1.8
	rm -rf "$TEST_TMP/build"
	mkdir -p "$d/fs" "$d/debian/source" "$d/debian/patches" "$d/debian/patches-rt"
	printf 'VERSION = 6\nPATCHLEVEL = 1\nSUBLEVEL = 8\nEXTRAVERSION =\n' >"$d/Makefile"
	cp "$FIXTURES/kernel/eventpoll-6.1.8-1.c" "$d/fs/eventpoll.c"
	echo "upstream" >"$d/README"
	[ -f "$repo/linux_6.1.8.orig.tar.xz" ] ||
		tar -C "$TEST_TMP/build" --exclude=debian -cJf "$repo/linux_6.1.8.orig.tar.xz" linux-6.1.8
	cp "$repo/linux_6.1.8.orig.tar.xz" "$TEST_TMP/build/"
	cat >"$d/debian/changelog" <<EOF
linux ($v) bookworm; urgency=medium

  * A test package.

 -- Relay Test <test@localhost>  Mon, 30 Jan 2023 00:00:00 +0000
EOF
	printf 'Source: linux\nMaintainer: Relay Test <test@localhost>\nStandards-Version: 4.6.2\n\nPackage: linux-source-6.1\nArchitecture: all\nDescription: test\n test\n' \
		>"$d/debian/control"
	echo "3.0 (quilt)" >"$d/debian/source/format"
	cat >"$d/debian/patches/debian-readme.patch" <<'EOF'
--- a/README
+++ b/README
@@ -1 +1,2 @@
 upstream
+debian
EOF
	echo debian-readme.patch >"$d/debian/patches/series"
	if [ "$kind" != --no-rt ]; then
		cat >"$d/debian/patches-rt/0001-localversion.patch" <<'EOF'
--- /dev/null
+++ b/localversion-rt
@@ -0,0 +1 @@
+-rt5
EOF
		if [ "$kind" = --rt-broken ]; then
			cat >"$d/debian/patches-rt/0002-readme.patch" <<'EOF'
--- a/README
+++ b/README
@@ -1,2 +1,3 @@
 upstream
 not what Debian's patch left
+rt
EOF
		else
			cat >"$d/debian/patches-rt/0002-readme.patch" <<'EOF'
--- a/README
+++ b/README
@@ -1,2 +1,3 @@
 upstream
 debian
+rt
EOF
		fi
		printf '# RT\n0001-localversion.patch\n\n0002-readme.patch\n' >"$d/debian/patches-rt/series"
	else
		rmdir "$d/debian/patches-rt"
	fi
	(cd "$TEST_TMP/build" && dpkg-source -b linux-6.1.8) >"$TEST_TMP/dpkg-source.log" 2>&1 ||
		{ cat "$TEST_TMP/dpkg-source.log" >&2; fail "dpkg-source -b of the test package $v"; }
	cp "$TEST_TMP/build/linux_$v.dsc" "$TEST_TMP/build/linux_$v.debian.tar.xz" "$repo/"
}
index() { (cd "$repo" && dpkg-scansources . /dev/null >Sources 2>/dev/null) || fail "dpkg-scansources"; }

package 6.1.8-1
package 6.1.8-2 --rt-broken
package 6.1.8-3 --no-rt
index
list=$TEST_TMP/sources.list
echo "deb-src [trusted=yes] file:$repo ./" >"$list"

# run NAME CACHE ARGS...: kernel/debian-source ARGS with CACHE and the
# test's archive; status in $rc, output in $TEST_TMP/NAME.out and .err.
run() {
	local name=$1 cache=$2; shift 2
	rc=0
	"$ds" --cache "$cache" --apt-sources "$list" "$@" >"$TEST_TMP/$name.out" 2>"$TEST_TMP/$name.err" || rc=$?
}
# refused NAME STATUS PATTERN: the run NAME exited STATUS saying PATTERN.
refused() {
	[ "$rc" = "$2" ] || { cat "$TEST_TMP/$1.err" >&2; fail "$1: exit $rc, expected $2"; }
	grep -qE -- "$3" "$TEST_TMP/$1.err" || { cat "$TEST_TMP/$1.err" >&2; fail "$1: no '$3' in its message"; }
	pass "$1: exit $rc: $(grep -m1 '^kernel/debian-source: error:' "$TEST_TMP/$1.err")"
}
sum() { sha256sum <"$1" | cut -d' ' -f1; }
dsc1=$(sum "$repo/linux_6.1.8-1.dsc")

# --- a good fetch ------------------------------------------------------------
c=$TEST_TMP/cache
run good "$c" --rt --dsc-sha256 "$dsc1" linux 6.1.8-1
[ "$rc" = 0 ] || { cat "$TEST_TMP/good.err" >&2; fail "good: exit $rc"; }
tree=$(cat "$TEST_TMP/good.out")
[ "$tree" = "$c/src/linux_6.1.8-1+rt" ] || fail "good: printed '$tree'"
[ "$(cat "$tree/localversion-rt")" = -rt5 ] || fail "good: the RT patch 0001 was not applied"
[ "$(cat "$tree/README")" = $'upstream\ndebian\nrt' ] ||
	fail "good: README is '$(cat "$tree/README")': Debian's patch, then the RT one, were not applied in order"
{ [ ! -e "$tree/debian" ] && [ ! -e "$tree/.pc" ]; } || fail "good: the tree has debian/ or .pc/"
[ -f "$tree.debian/patches-rt/series" ] || fail "good: Debian's packaging is not kept beside the tree"
j=$tree.json
# shellcheck disable=SC2016 # $f and $s are jq's
for f in linux_6.1.8-1.dsc linux_6.1.8.orig.tar.xz linux_6.1.8-1.debian.tar.xz; do
	json_ok "$j" '.files[] | select(.file == $f and .sha256 == $s)' "good: $f and its sha256 in $j" \
		--arg f "$f" --arg s "$(sum "$repo/$f")"
done
json_ok "$j" '[.rt_patches[].patch] == ["0001-localversion.patch", "0002-readme.patch"]' "good: the RT patches, in order"
# The hash of the RT patches' names and contents, in order, as a line pins it.
series_sum=$(for p in 0001-localversion.patch 0002-readme.patch; do
	echo "$p"; sha256sum <"$tree.debian/patches-rt/$p"; done | sha256sum | cut -d' ' -f1)
# shellcheck disable=SC2016 # $s is jq's
json_ok "$j" '.rt_patches_series_sha256 == $s' "good: the RT patches' hash" --arg s "$series_sum"
pass "good: Debian's patch and the 2 RT patches applied in order; the files' sha256 recorded"

run uris "$c" --print-uris linux 6.1.8-1
[ "$rc" = 0 ] || fail "--print-uris: exit $rc"
grep -qx "linux_6.1.8.orig.tar.xz $(stat -c %s "$repo/linux_6.1.8.orig.tar.xz") $(sum "$repo/linux_6.1.8.orig.tar.xz")" \
	"$TEST_TMP/uris.out" || { cat "$TEST_TMP/uris.out"; fail "--print-uris: not the orig tarball's size and sha256"; }
pass "--print-uris: $(wc -l <"$TEST_TMP/uris.out") files with the index's sha256"

# Unpacked and verified once: the archive is not asked again.
mv "$repo" "$repo.away"
run again "$c" --rt --dsc-sha256 "$dsc1" linux 6.1.8-1
mv "$repo.away" "$repo"
{ [ "$rc" = 0 ] && [ "$(cat "$TEST_TMP/again.out")" = "$tree" ]; } ||
	{ cat "$TEST_TMP/again.err" >&2; fail "again: exit $rc without the archive"; }
pass "again: the unpacked tree, without the archive"
run again-other-pin "$c" --rt --dsc-sha256 "$(printf '%064d' 0)" linux 6.1.8-1
refused again-other-pin 10 'unpacked from a .dsc other than the one pinned'

# --- refusals -----------------------------------------------------------------
run no-version "$TEST_TMP/c-none" --rt linux 6.1.9-1
refused no-version 3 'linux 6.1.9-1 is not in the archive.s Sources index \(versions there: 6.1.8-1 6.1.8-2 6.1.8-3\)'

run bad-pin "$TEST_TMP/c-pin" --rt --dsc-sha256 "$(printf '%064d' 0)" linux 6.1.8-1
refused bad-pin 10 "linux_6.1.8-1.dsc has sha256 $dsc1, the line pins 0{64}"
[ ! -e "$TEST_TMP/c-pin/src/linux_6.1.8-1+rt" ] || fail "bad-pin: a tree was unpacked"

run rt-broken "$TEST_TMP/c-rt" --rt linux 6.1.8-2
refused rt-broken 4 'RT patch 0002-readme.patch \(step 2 of debian/patches-rt/series\) does not apply to linux 6.1.8-2'
run no-rt "$TEST_TMP/c-rt" --rt linux 6.1.8-3
refused no-rt 3 'linux 6.1.8-3 has no debian/patches-rt/series'
run no-rt-plain "$TEST_TMP/c-rt" linux 6.1.8-3
[ "$rc" = 0 ] || { cat "$TEST_TMP/no-rt-plain.err" >&2; fail "no-rt-plain: exit $rc"; }
[ ! -e "$TEST_TMP/c-rt/src/linux_6.1.8-3/localversion-rt" ] || fail "no-rt-plain: RT patches applied"
pass "without --rt: Debian's tree alone"

# A tampered tarball in the archive, the index unchanged: apt refuses it.
cp "$repo/linux_6.1.8-1.debian.tar.xz" "$TEST_TMP/debian.tar.xz.good"
printf 'x' >>"$repo/linux_6.1.8-1.debian.tar.xz"
run tampered "$TEST_TMP/c-tampered" --rt linux 6.1.8-1
refused tampered 10 'linux_6.1.8-1.debian.tar.xz does not match the sha256 of the archive.s signed Sources index'
[ ! -e "$TEST_TMP/c-tampered/src/linux_6.1.8-1+rt" ] || fail "tampered: a tree was unpacked"
# The same tarball with an index made for it (its hashes and size written
# into Sources): apt takes it, the .dsc still names the good one, and
# dpkg-source refuses it.
f=linux_6.1.8-1.debian.tar.xz
sed -i -e "s/$(md5sum <"$TEST_TMP/debian.tar.xz.good" | cut -d' ' -f1) [0-9]* $f/$(md5sum <"$repo/$f" | cut -d' ' -f1) $(stat -c %s "$repo/$f") $f/" \
	-e "s/$(sha1sum <"$TEST_TMP/debian.tar.xz.good" | cut -d' ' -f1) [0-9]* $f/$(sha1sum <"$repo/$f" | cut -d' ' -f1) $(stat -c %s "$repo/$f") $f/" \
	-e "s/$(sum "$TEST_TMP/debian.tar.xz.good") [0-9]* $f/$(sum "$repo/$f") $(stat -c %s "$repo/$f") $f/" "$repo/Sources"
grep -q "$(sum "$repo/$f")" "$repo/Sources" || fail "could not write the tampered tarball's hash into Sources"
run tampered-dsc "$TEST_TMP/c-tampered2" --rt linux 6.1.8-1
refused tampered-dsc 10 'dpkg-source refused linux_6.1.8-1.dsc: a tarball does not match the .dsc'
[ ! -e "$TEST_TMP/c-tampered2/src/linux_6.1.8-1+rt" ] || fail "tampered-dsc: a tree was unpacked"
cp "$TEST_TMP/debian.tar.xz.good" "$repo/linux_6.1.8-1.debian.tar.xz"
index

# A file in the download cache changed after apt verified it: checked
# against the index again, it is fetched anew, not used.
c3=$TEST_TMP/c-cached
run fetch-only "$c3" --rt linux 6.1.8-1
[ "$rc" = 0 ] || fail "fetch-only: exit $rc"
rm -rf "$c3/src"
# From a file: archive apt leaves symbolic links: a copy of its own.
o=$c3/dl/linux_6.1.8-1/linux_6.1.8.orig.tar.xz
cp --remove-destination "$(readlink -f "$o")" "$o"
printf 'x' >>"$o"
run cached "$c3" --rt linux 6.1.8-1
[ "$rc" = 0 ] || { cat "$TEST_TMP/cached.err" >&2; fail "cached: exit $rc"; }
grep -q 'fetching linux 6.1.8-1' "$TEST_TMP/cached.err" || fail "cached: the changed file was not fetched again"
[ "$(sum "$c3/dl/linux_6.1.8-1/linux_6.1.8.orig.tar.xz")" = "$(sum "$repo/linux_6.1.8.orig.tar.xz")" ] ||
	fail "cached: the changed file is still there"
pass "a changed file in the download cache is fetched again, not used"

# --- usage --------------------------------------------------------------------
for bad in "linux" "--dsc-sha256 xyz linux 6.1.8-1" "--bogus linux 6.1.8-1" "Linux! 6.1.8-1" "linux not-a-version"; do
	# shellcheck disable=SC2086 # the words of each case
	"$ds" --cache "$TEST_TMP/c-usage" $bad >/dev/null 2>&1 && rc=0 || rc=$?
	[ "$rc" = 2 ] || fail "'$bad': exit $rc, expected 2"
done
pass "usage errors exit 2"

# --- the source proof of fs/eventpoll.c ---------------------------------------
el=$top/kernel/eventpoll-lock
out=$("$el" "$FIXTURES/kernel/eventpoll-6.1.8-1.c") || fail "eventpoll-lock on 6.1.8-1: exit $?"
[ "$out" = $'struct_eventpoll_lock rwlock_t\nep_poll_callback_lock read_lock_irqsave' ] ||
	fail "eventpoll-lock on Debian's 6.1.8-1: '$out'"
"$el" --expect rwlock_t read_lock_irqsave "$FIXTURES/kernel/eventpoll-6.1.8-1.c" >/dev/null ||
	fail "6.1.8-1 is not the rwlock tree to --expect"
out=$("$el" "$FIXTURES/kernel/eventpoll-6.1.187-1.c") || fail "eventpoll-lock on 6.1.187-1: exit $?"
[ "$out" = $'struct_eventpoll_lock spinlock_t\nep_poll_callback_lock spin_lock_irqsave' ] ||
	fail "eventpoll-lock on Debian's 6.1.187-1: '$out'"
rc=0
err=$("$el" --expect rwlock_t read_lock_irqsave "$FIXTURES/kernel/eventpoll-6.1.187-1.c" 2>&1 >/dev/null) || rc=$?
{ [ "$rc" = 8 ] && grep -q "struct eventpoll's lock is spinlock_t and ep_poll_callback() takes it with spin_lock_irqsave, expected rwlock_t and read_lock_irqsave" <<<"$err"; } ||
	fail "--expect rwlock_t on the spinlock file: exit $rc, '$err'"
sed 's/^struct eventpoll {/struct eventpoll_renamed {/' "$FIXTURES/kernel/eventpoll-6.1.8-1.c" >"$TEST_TMP/nostruct.c"
rc=0
err=$("$el" "$TEST_TMP/nostruct.c" 2>&1 >/dev/null) || rc=$?
{ [ "$rc" = 1 ] && grep -q "no member 'lock' in struct eventpoll" <<<"$err"; } || fail "no struct: exit $rc, '$err'"
pass "fs/eventpoll.c: 6.1.8-1 rwlock_t + read_lock_irqsave, 6.1.187-1 spinlock_t + spin_lock_irqsave; --expect refuses the other (8)"
