#!/bin/bash
# timeout: 600
# lane: side
# kernel/build refuses bad input with a clear message and its own exit
# status, and leaves nothing in the cache: a source version apt does not
# have, a patch that does not apply, a config option that olddefconfig
# drops, a disk too small; for a line from Debian's source package, a .dsc
# or RT patches other than the pinned ones (10); a line's conf that
# contradicts itself (2). Small synthetic inputs; no compiler run.
. "$(dirname "$0")/../lib.sh"
need_root "mounts a small tmpfs, fetches the source package with apt"
"$top/mk/deps" kernel >/dev/null || fail "mk/deps kernel"
real=${RELAY_CACHE:-/var/cache/relay}
conf=$top/kernel/lines/6.12.conf
# The cases below share the real cache's unpacked source; a good check
# fetches it the first time (kernel_series runs the same check every time).
package=$(sed -n 's/^package=//p' "$conf") version=$(sed -n 's/^version=//p' "$conf")
if [ ! -d "$real/src/${package}_$version" ]; then
	"$top/kernel/build" --line 6.12 --check-only >/dev/null 2>&1 || fail "kernel/build --check-only on good input failed"
fi
[ -d "$real/src/${package}_$version" ] || fail "no unpacked source in $real/src/${package}_$version after a good check"

# Caches of our own, sharing the downloaded and unpacked sources with the
# real one: one on the same file system (the stock tree is a hard-linked
# copy of the source), one a tmpfs too small for a build.
cache=$TEST_TMP/cache
small=$TEST_TMP/small
mkdir -p "$cache" "$small"
mount -t tmpfs -o size=64m relay-test "$small" || skip "cannot mount a tmpfs"
trap 'umount "$small" 2>/dev/null; cleanup_bg' EXIT
for c in "$cache" "$small"; do
	ln -s "$real/dl" "$c/dl"
	ln -s "$real/src" "$c/src"
done

# expect NAME STATUS PATTERN ARGS...: kernel/build ARGS exits STATUS with a
# message matching PATTERN and leaves no result or build directory behind.
expect() {
	local name=$1 want=$2 pattern=$3 rc=0; shift 3
	local cache=$cache
	[ "$name" != disk-full ] || cache=$small
	RELAY_CACHE=$cache "$top/kernel/build" "$@" >"$TEST_TMP/$name.out" 2>"$TEST_TMP/$name.err" || rc=$?
	[ "$rc" = "$want" ] || { cat "$TEST_TMP/$name.err" >&2; fail "$name: exit $rc, expected $want"; }
	grep -qE "$pattern" "$TEST_TMP/$name.err" || { cat "$TEST_TMP/$name.err" >&2; fail "$name: message does not match '$pattern'"; }
	# shellcheck disable=SC2010 # the cache names them: no odd characters
	if ls "$cache/kernels" 2>/dev/null | grep -v -e '^last-failure' -e '^steps-' | grep -q .; then
		ls -la "$cache/kernels" >&2
		fail "$name: something was left in the cache"
	fi
	pass "$name: exit $rc: $(grep -m1 -E "$pattern" "$TEST_TMP/$name.err")"
}

sed 's/^version=.*/version=6.12.0-0relay-does-not-exist/' "$conf" >"$TEST_TMP/wrong-version.conf"
expect wrong-version 3 'version=|not available from apt' --line-conf "$TEST_TMP/wrong-version.conf" --check-only
# The error must name the version that was asked for.
grep -q '6.12.0-0relay-does-not-exist' "$TEST_TMP/wrong-version.err" || fail "wrong-version: message does not name the version"

# A series whose patch expects text the tree does not have.
bad=$TEST_TMP/patches-bad
mkdir -p "$bad"
sed 's/^-\trwlock_t lock;$/-\trwlock_t lock_that_is_not_there;/' \
	"$top/kernel/patches/6.12/0001-eventpoll-Replace-rwlock-with-spinlock.patch" >"$bad/0001-broken.patch"
cmp -s "$bad/0001-broken.patch" "$top/kernel/patches/6.12/0001-eventpoll-Replace-rwlock-with-spinlock.patch" &&
	fail "could not make a broken copy of the patch"
echo 0001-broken.patch >"$bad/series"
expect patch-does-not-apply 4 '0001-broken.patch does not apply' --patches "$bad" --check-only

# An option the tree drops: KVM needs VIRTUALIZATION, which tinyconfig lacks.
frag=$TEST_TMP/dropped.config
cp "$top/kernel/config/relay-rt.config" "$frag"
echo CONFIG_KVM=y >>"$frag"
expect dropped-option 5 'CONFIG_KVM=y .*did not survive olddefconfig' --config "$frag" --check-only

# A full disk: the 64 MB tmpfs cannot hold a build.
expect disk-full 6 'not enough disk|disk full'

# A line from Debian's source package (6.1): its unpacked, verified tree is
# shared too. A .dsc other than the one pinned, RT patches other than the
# pinned ones: exit 10, nothing left.
conf61=$top/kernel/lines/6.1.conf
v61=$(sed -n 's/^version=//p' "$conf61")
if [ ! -f "$real/src/linux_$v61+rt.json" ]; then
	"$top/kernel/build" --line 6.1 --check-only >/dev/null 2>&1 || fail "kernel/build --line 6.1 --check-only on good input failed"
fi
sed "s/^dsc_sha256=.*/dsc_sha256=$(printf '%064d' 0)/" "$conf61" >"$TEST_TMP/other-dsc.conf"
expect other-dsc 10 'unpacked from a .dsc other than the one pinned' --line-conf "$TEST_TMP/other-dsc.conf" --check-only
sed "s/^rt_patches_sha256=.*/rt_patches_sha256=$(printf '%064d' 1)/" "$conf61" >"$TEST_TMP/other-rt.conf"
expect other-rt-patches 10 "Debian's RT patches in linux $v61 hash to [0-9a-f]{64} .*pins rt_patches_sha256=0{63}1" \
	--line-conf "$TEST_TMP/other-rt.conf" --check-only

# Confs that contradict themselves, refused before anything is fetched.
{ cat "$top/kernel/lines/6.1.8-rt.conf"; echo "baseline=baseline/linux-6.1-stock.patch"; } >"$TEST_TMP/hist-baseline.conf"
expect historical-with-baseline 2 'images=historical takes no baseline= or patches=' --line-conf "$TEST_TMP/hist-baseline.conf" --check-only
{ cat "$conf61"; echo "config_add=MODULES"; } >"$TEST_TMP/bad-add.conf"
expect bad-config-add 2 'config_add=MODULES is not CONFIG_NAME=VALUE' --line-conf "$TEST_TMP/bad-add.conf" --check-only
sed 's/^source=debian/source=tarball/' "$conf61" >"$TEST_TMP/bad-source.conf"
expect bad-source 2 'source=tarball, expected binary or debian' --line-conf "$TEST_TMP/bad-source.conf" --check-only
sed '/^dsc_sha256=/d' "$conf61" >"$TEST_TMP/no-pin.conf"
expect no-dsc-pin 2 "'dsc_sha256=' is missing" --line-conf "$TEST_TMP/no-pin.conf" --check-only
