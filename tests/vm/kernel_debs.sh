#!/bin/bash
# timeout: 3000
# needs: kernel-debs
# lane: side
# variants: release
# make kernel-debs: the stock and patched PREEMPT_RT 6.12 kernels as Debian
# packages (built here on first use, then taken from the cache). It prints
# one package path a line; the two have different names, so both install
# side by side; each carries its /boot/config-* with CONFIG_PREEMPT_RT=y;
# the build's proofs hold (trees differ only by the series, and the BTF the
# packages' kernels carry says rwlock_t in stock and spinlock_t in patched,
# which is what relay-preflight reads on a running kernel).
# relay-preflight --kernel-package takes both, and refuses a package for
# another architecture, one without PREEMPT_RT, and a file that is no
# package; kernel/build refuses a --base-config that is not an x86_64 config.
. "$(dirname "$0")/../lib.sh"
need_root "fetches the source package with apt, writes ${RELAY_CACHE:-/var/cache/relay}"
"$top/mk/deps" kernel deploy >/dev/null || fail "mk/deps kernel deploy"

t0=$SECONDS
make -s -C "$top" kernel-debs >"$TEST_TMP/debs" 2>"$TEST_TMP/debs.err" ||
	{ tail -n 20 "$TEST_TMP/debs.err"; fail "make kernel-debs exited $?"; }
secs=$((SECONDS - t0))
cat "$TEST_TMP/debs"
[ "$(wc -l <"$TEST_TMP/debs")" = 2 ] || fail "make kernel-debs printed $(wc -l <"$TEST_TMP/debs") lines, expected two package paths"
stock=$(sed -n 1p "$TEST_TMP/debs") patched=$(sed -n 2p "$TEST_TMP/debs")
declare -A rel
for k in stock patched; do
	deb=${!k}
	[ -f "$deb" ] || fail "$deb does not exist"
	pkg=$(dpkg-deb -f "$deb" Package) || fail "$deb is not a Debian package"
	[[ $pkg == linux-image-*-relay-$k ]] || fail "the $k package is named $pkg"
	rel[$k]=${pkg#linux-image-}
	[ "$(dpkg-deb -f "$deb" Architecture)" = "$(dpkg --print-architecture)" ] || fail "$pkg is not for this architecture"
	dpkg-deb -c "$deb" >"$TEST_TMP/files-$k" || fail "dpkg-deb -c $deb"
	grep -q " \./boot/vmlinuz-${rel[$k]}$" "$TEST_TMP/files-$k" || fail "$pkg has no /boot/vmlinuz-${rel[$k]}"
	grep -q " \./lib/modules/${rel[$k]}/kernel/.*9p.*\.ko" "$TEST_TMP/files-$k" || fail "$pkg has no 9p modules"
	dpkg-deb --fsys-tarfile "$deb" | tar -xO "./boot/config-${rel[$k]}" >"$TEST_TMP/config-$k" ||
		fail "$pkg carries no /boot/config-${rel[$k]}"
	grep -qx CONFIG_PREEMPT_RT=y "$TEST_TMP/config-$k" || fail "$pkg's config is not PREEMPT_RT"
	# The maintainer scripts are what run the initramfs hook on install.
	dpkg-deb -I "$deb" postinst >/dev/null 2>&1 || fail "$pkg has no postinst (no kernel hooks)"
done
[ "${rel[stock]}" != "${rel[patched]}" ] || fail "both packages are ${rel[stock]}"
cmp -s "$TEST_TMP/config-stock" "$TEST_TMP/config-patched" || fail "the two packages' configs differ"
pass "two packages, $(basename "$stock") and $(basename "$patched"), PREEMPT_RT, equal configs (${secs} s)"

dir=$(dirname "$stock")
pylib kernel_manifest debs "$dir/manifest.json" || fail "manifest proofs"
while read -r opt; do
	grep -qxF "$opt" "$TEST_TMP/config-patched" || fail "$opt missing from the packages' config"
done < <(grep -E '^CONFIG_[A-Za-z0-9_]+=' "$dir/fragment.config")
pass "every option of relay-rt.config and relay-host.config is in the packages' config"

t1=$SECONDS
make -s -C "$top" kernel-debs >"$TEST_TMP/again" 2>/dev/null || fail "second make kernel-debs exited $?"
cmp -s "$TEST_TMP/debs" "$TEST_TMP/again" || fail "the second make kernel-debs printed other paths"
[ $((SECONDS - t1)) -lt 60 ] || fail "the cached request took $((SECONDS - t1)) s"
pass "second request answered from the cache in $((SECONDS - t1)) s"

# relay-preflight before installing.
preflight=$top/deploy/preflight
for k in stock patched; do
	"$preflight" --kernel-package "${!k}" >"$TEST_TMP/pf-$k" 2>&1 || { cat "$TEST_TMP/pf-$k"; fail "preflight refused the $k package"; }
	grep -q '^ok .*PREEMPT_RT: yes' "$TEST_TMP/pf-$k" || fail "preflight does not see PREEMPT_RT in the $k package"
done
grep -q '^ok .*epoll ready-list fix: present' "$TEST_TMP/pf-patched" || fail "preflight does not name the patched package's fix"
grep -q '^note .*epoll ready-list fix: absent' "$TEST_TMP/pf-stock" || fail "preflight does not say the stock package lacks the fix"
pass "relay-preflight --kernel-package accepts both"

# repack DEB OUT EDIT: DEB unpacked, EDIT run in its directory, packed as OUT.
repack() {
	local d=$TEST_TMP/repack
	rm -rf "$d"; dpkg-deb -R "$1" "$d" || fail "dpkg-deb -R $1"
	(cd "$d" && eval "$3") || fail "editing the package for $2"
	dpkg-deb -Zgzip -z1 --build "$d" "$2" >/dev/null 2>&1 || fail "dpkg-deb --build $2"
	rm -rf "$d"
}
# refused NAME FILE STATUS PATTERN
refused() {
	local rc=0
	"$preflight" --kernel-package "$2" >"$TEST_TMP/pf-$1" 2>&1 || rc=$?
	[ "$rc" = "$3" ] || { cat "$TEST_TMP/pf-$1"; fail "$1: preflight exited $rc, expected $3"; }
	grep -q -- "$4" "$TEST_TMP/pf-$1" || { cat "$TEST_TMP/pf-$1"; fail "$1: no '$4' in what preflight said"; }
	pass "$1: refused ($(grep -m1 -- "$4" "$TEST_TMP/pf-$1" | cut -c1-110))"
}
repack "$patched" "$TEST_TMP/arm64.deb" "sed -i 's/^Architecture: .*/Architecture: arm64/' DEBIAN/control"
refused wrong-arch "$TEST_TMP/arm64.deb" 1 "^act .*architecture: the package is for arm64"
repack "$patched" "$TEST_TMP/nort.deb" "sed -i 's/^CONFIG_PREEMPT_RT=y/# CONFIG_PREEMPT_RT is not set/' boot/config-*"
refused no-preempt-rt "$TEST_TMP/nort.deb" 1 "^act .*PREEMPT_RT: no"
printf 'not a package\n' >"$TEST_TMP/junk.deb"
refused not-a-package "$TEST_TMP/junk.deb" 65 "is not a readable Debian package"

# kernel/build refuses a base config that cannot be one.
echo 'CONFIG_ARM64=y' >"$TEST_TMP/arm.config"
rc=0
"$top/kernel/build" --host --base-config "$TEST_TMP/arm.config" >/dev/null 2>"$TEST_TMP/base.err" || rc=$?
{ [ "$rc" = 2 ] && grep -q 'is not an x86_64 kernel config' "$TEST_TMP/base.err"; } ||
	fail "kernel/build --base-config with an arm64 config: exit $rc, $(cat "$TEST_TMP/base.err")"
pass "kernel/build refuses a --base-config that is not x86_64 (exit 2)"
