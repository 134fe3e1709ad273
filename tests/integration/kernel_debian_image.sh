#!/usr/bin/env bash
# kernel/debian-image on a made-up signed image package (kernel_deb in
# tests/lib.sh) with pins of its own: the vmlinuz and its manifest (the
# lock, the throttle model and the probe's offsets from its BTF), the
# cache on a second call, a package that is not the one pinned (exit
# 10), an unknown name (exit 2), a split image (Debian 13's
# linux-binary-* with linux-base-*). kernel/debian-apt from a local
# repository of its own. No network: --deb, --sources. The project's
# pins: Debian 13's four images beside 6.1's.
# timeout: 60
# variants: release
. "$(dirname "$0")/../lib.sh"
di=$top/kernel/debian-image
cache=$TEST_TMP/cache
kernel_deb spinlock_t 6.1.192-3 "$TEST_TMP/k.deb" task
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
	'"btf_eventpoll_lock": "spinlock_t"' "\"deb_sha256\": \"$sha\"" '"btf_throttle_model": "task"' \
	'"btf_offsets": { "eventpoll.lock": 40, "eventpoll.rdllist": 24, ' '"probe_ep": "+40(-8(%di))"' \
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

# A split image: the vmlinuz in linux-binary-*, its config in linux-base-*.
split() {
	local d=$TEST_TMP/split/$1 rel=7.3.4+deb13-rt-amd64
	rm -rf "$d"
	mkdir -p "$d/DEBIAN" "$d/usr/lib/modules/$rel"
	printf 'Package: linux-%s-%s\nVersion: 7.3.4-1~bpo13+1\nArchitecture: %s\nMaintainer: test <test@localhost>\nDescription: test\n' \
		"$1" "$rel" "$(dpkg --print-architecture)" >"$d/DEBIAN/control"
	if [ "$1" = binary ]; then
		dpkg-deb --fsys-tarfile "$TEST_TMP/k.deb" | tar -xO ./boot/vmlinuz-6.1.0-57-rt-amd64 >"$d/usr/lib/modules/$rel/vmlinuz"
	else
		printf 'CONFIG_PREEMPT_RT=y\nCONFIG_SPLIT=y\n' >"$d/usr/lib/modules/$rel/config"
	fi
	dpkg-deb -Zxz --root-owner-group --build "$d" "$TEST_TMP/$1.deb" >/dev/null || fail "dpkg-deb --build"
	sha256sum <"$TEST_TMP/$1.deb" | cut -d' ' -f1
}
bsha=$(split binary) csha=$(split base)
printf 'seven linux-binary-7.3.4+deb13-rt-amd64 7.3.4-1~bpo13+1 %s trixie,trixie-backports linux-base-7.3.4+deb13-rt-amd64 %s\n' \
	"$bsha" "$csha" >>"$TEST_TMP/images.conf"
img=$("$di" --cache "$cache" --conf "$TEST_TMP/images.conf" --deb "$TEST_TMP/binary.deb" --deb "$TEST_TMP/base.deb" seven) ||
	fail "a split image: exit $?"
grep -qx 'CONFIG_SPLIT=y' "$(dirname "$img")/config" || fail "a split image: the config is not linux-base's"
m=$(dirname "$img")/manifest.json
# shellcheck disable=SC2016 # $c is jq's
json_ok "$m" '.kernel_release == "7.3.4+deb13-rt-amd64" and .config_package.deb_sha256 == $c and .suites == "trixie,trixie-backports"' \
	"a split image's manifest" --arg c "$csha"
rc=0; "$di" --cache "$cache/2" --conf "$TEST_TMP/images.conf" --deb "$TEST_TMP/binary.deb" --deb "$TEST_TMP/k.deb" seven 2>/dev/null || rc=$?
[ $rc = 10 ] || fail "a split image with a config package not pinned: exit $rc"
pass "a split image: vmlinuz from linux-binary, config from linux-base, both pinned"

# kernel/debian-apt from a local repository: the machine's sources untouched.
command -v dpkg-scanpackages >/dev/null || fail "dpkg-scanpackages is needed (mk/deps deploy: dpkg-dev)"
mkdir -p "$TEST_TMP/repo" "$TEST_TMP/dest"
cp "$TEST_TMP/base.deb" "$TEST_TMP/repo/"
(cd "$TEST_TMP/repo" && dpkg-scanpackages --multiversion . 2>/dev/null >Packages) || fail "dpkg-scanpackages"
echo "deb [trusted=yes] file:$TEST_TMP/repo ./" >"$TEST_TMP/sources.list"
before=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/* 2>/dev/null | sha256sum)
rc=0; err=$("$top/kernel/debian-apt" --cache "$cache" --sources "$TEST_TMP/sources.list" local "$TEST_TMP/dest" \
	"linux-base-7.3.4+deb13-rt-amd64=7.3.4-1~bpo13+1" 2>&1) || rc=$?
[ $rc = 0 ] || { echo "$err"; fail "debian-apt: exit $rc"; }
cmp -s "$TEST_TMP/dest/linux-base-7.3.4+deb13-rt-amd64_7.3.4-1~bpo13+1_$(dpkg --print-architecture).deb" "$TEST_TMP/base.deb" ||
	{ echo "$err"; ls "$TEST_TMP/dest"; fail "debian-apt did not fetch the package"; }
grep -Eq 'fetched linux-base-7.3.4\+deb13-rt-amd64 7.3.4-1~bpo13\+1: [0-9]+ MB in [0-9]+\.[0-9]{3} s' <<<"$err" ||
	{ echo "$err"; fail "debian-apt printed no size and time"; }
[ "$(cat /etc/apt/sources.list /etc/apt/sources.list.d/* 2>/dev/null | sha256sum)" = "$before" ] ||
	fail "debian-apt changed the machine's apt sources"
rc=0; err=$("$top/kernel/debian-apt" --cache "$cache" --sources "$TEST_TMP/sources.list" local "$TEST_TMP/dest" nosuch=1.0 2>&1) || rc=$?
{ [ $rc = 3 ] && grep -q 'nosuch 1.0 is not in the index of local' <<<"$err"; } || fail "a package not there: exit $rc, '$err'"
pass "kernel/debian-apt: from its own sources list, size and time printed, the machine's sources untouched"

# The project's pins: Debian 13's RT images from trixie-backports.
for v in '6.16.12-1~bpo13\+1' '6.17.13-1~bpo13\+1' '6.18.12-1~bpo13\+1' '7.[0-9]+.[0-9]+-1~bpo13\+1'; do
	grep -Eq "^[0-9.]+-rt-signed linux-(image|binary)-[0-9.]+\+deb13-rt-amd64 $v [0-9a-f]{64} trixie,trixie-backports( |$)" \
		"$top/kernel/debian-images.conf" || fail "kernel/debian-images.conf pins no Debian 13 image $v"
done
grep -Eq '^7\.[0-9]+-rt-signed linux-binary-.* linux-base-[^ ]+ [0-9a-f]{64}$' "$top/kernel/debian-images.conf" ||
	fail "the 7.x pin names no linux-base package with its sha256"
pass "Debian 13's 6.16.12, 6.17.13, 6.18.12 and 7.x images pinned beside 6.1's"
