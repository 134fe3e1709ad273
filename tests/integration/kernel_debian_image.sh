#!/usr/bin/env bash
# kernel/debian-image on a made-up signed image package (kernel_deb in
# tests/lib.sh) with pins of its own: the vmlinuz and its manifest (the
# lock from its BTF), the cache on a second call, a package that is not
# the one pinned (exit 10), an unknown name (exit 2). No network: --deb.
# timeout: 60
# variants: release
. "$(dirname "$0")/../lib.sh"
di=$top/kernel/debian-image
cache=$TEST_TMP/cache
kernel_deb spinlock_t 6.1.192-3 "$TEST_TMP/k.deb"
sha=$(sha256sum <"$TEST_TMP/k.deb" | cut -d' ' -f1)
printf '# test pins\nsigned linux-image-6.1.0-57-rt-amd64 6.1.192-3 %s\nother linux-image-6.1.0-57-rt-amd64 6.1.192-3 %s\n' \
	"$sha" "$(printf '%064d' 0)" >"$TEST_TMP/images.conf"

img=$("$di" --cache "$cache" --conf "$TEST_TMP/images.conf" --deb "$TEST_TMP/k.deb" signed) ||
	fail "debian-image: exit $?"
[ "$img" = "$cache/kernels/debian-signed-${sha:0:16}/vmlinuz" ] || fail "printed '$img'"
cmp -s "$img" <(dpkg-deb --fsys-tarfile "$TEST_TMP/k.deb" | tar -xO ./boot/vmlinuz-6.1.0-57-rt-amd64) ||
	fail "the vmlinuz kept is not the package's"
m=$(dirname "$img")/manifest.json
for want in '"version": "6.1.192-3"' '"kernel_release": "6.1.0-57-rt-amd64"' \
	'"btf_eventpoll_lock": "spinlock_t"' "\"deb_sha256\": \"$sha\"" \
	'"obtained": "Debian.s linux-image-6.1.0-57-rt-amd64 6.1.192-3, as shipped"'; do
	grep -q "$want" "$m" || { cat "$m"; fail "manifest lacks $want"; }
done
python3 -m json.tool "$m" >/dev/null || fail "manifest.json is not JSON"
grep -qx 'CONFIG_PREEMPT_RT=y' "$(dirname "$img")/config" || fail "the config was not kept"
pass "the vmlinuz, its config and a manifest with the lock from its BTF"

again=$("$di" --cache "$cache" --conf "$TEST_TMP/images.conf" --deb /nonexistent signed 2>&1) ||
	fail "a cached image: exit $?"
[ "$again" = "$img" ] || fail "a cached image: printed '$again'"
pass "cached: no package needed the second time"

rc=0; err=$("$di" --cache "$cache" --conf "$TEST_TMP/images.conf" --deb "$TEST_TMP/k.deb" other 2>&1) || rc=$?
{ [ $rc = 10 ] && grep -q "not the 0\{64\} pinned for other" <<<"$err"; } || fail "a package not pinned: exit $rc, '$err'"
[ ! -e "$cache/kernels/debian-other-0000000000000000" ] || fail "a refused package left a result"
rc=0; err=$("$di" --cache "$cache" --conf "$TEST_TMP/images.conf" nosuch 2>&1) || rc=$?
{ [ $rc = 2 ] && grep -q "'nosuch' is not in" <<<"$err"; } || fail "an unknown name: exit $rc, '$err'"
grep -q '^6.1-rt-signed linux-image-[0-9.]*-[0-9]*-rt-amd64 [0-9.]*-[0-9]* [0-9a-f]\{64\}$' "$top/kernel/debian-images.conf" ||
	fail "kernel/debian-images.conf has no pinned 6.1-rt-signed line"
pass "a package other than the one pinned: exit 10, nothing kept; an unknown name: exit 2"
