#!/bin/bash
# timeout: 600
# lane: side
# kernel/build refuses bad input with a clear message and its own exit
# status, and leaves nothing in the cache: a source version apt does not
# have, a patch that does not apply, a config option that olddefconfig
# drops, a disk too small. Small synthetic inputs; no compiler run.
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
