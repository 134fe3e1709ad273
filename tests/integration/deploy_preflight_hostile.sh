#!/usr/bin/env bash
# relay-preflight --kernel-package on hostile packages
# (tests/fixtures/kernel-packages/, cases.txt says what each must end
# with): decompression bombs, an image and a config larger than any
# kernel's, BTF that crashes bpftool's C dump, a symbolic link for an
# image, not a package at all. Each within a time bound and with its
# files bounded below 256 MB (as a small TMPDIR would be), its temporary
# files gone afterwards; then stand-in bpftools that crash, hang and report
# who ran them: a tool's failure is "could not tell", never a pass, and it
# ran as nobody.
# timeout: 300
# check: fast
# variants: release
. "$(dirname "$0")/../lib.sh"
pf=$top/deploy/preflight
dir=$FIXTURES/kernel-packages
for tool in bpftool xz zstd prlimit setpriv; do
	command -v "$tool" >/dev/null || fail "$tool is needed (mk/deps deploy)"
done
mkdir -p "$TEST_TMP/tmp"
n=0
while read -r file want pattern; do
	case $file in '#'*|'') continue ;; esac
	[ -f "$dir/$file" ] || fail "cases.txt names $file, which is not in $dir"
	start=$SECONDS rc=0
	out=$(TMPDIR=$TEST_TMP/tmp prlimit --fsize=$((256 << 20)) -- \
		timeout 120 "$pf" --kernel-package "$dir/$file" 2>&1) || rc=$?
	[ "$rc" = "$want" ] || { echo "$out"; fail "$file: exit $rc, expected $want"; }
	grep -Eq -- "$pattern" <<<"$out" || { echo "$out"; fail "$file: no line matches '$pattern'"; }
	! grep -qE '^note +epoll ready-list fix: not told' <<<"$out" || { echo "$out"; fail "$file: the fix 'not told' passed"; }
	[ $((SECONDS - start)) -le 60 ] || fail "$file took $((SECONDS - start)) s"
	[ -z "$(ls -A "$TEST_TMP/tmp")" ] || fail "$file left $(ls -A "$TEST_TMP/tmp") in TMPDIR"
	n=$((n + 1))
done <"$dir/cases.txt"
[ $n -ge 10 ] || fail "cases.txt has only $n cases"
pass "$n hostile packages: each a clear verdict or error, bounded, nothing left behind"

# Stand-in bpftools, where the unprivileged tools can run them.
chmod 711 "$TEST_TMP"
mkdir -m 755 "$TEST_TMP/bin"
standin() { printf '#!/bin/sh\n%s\n' "$1" >"$TEST_TMP/bin/bpftool"; chmod 755 "$TEST_TMP/bin/bpftool"; }
kernel_deb spinlock_t 6.1.192-3 "$TEST_TMP/k.deb" task
# package_says STATUS PATTERN...: --kernel-package on k.deb with the stand-in.
package_says() {
	local want=$1 rc=0 out p
	shift
	out=$(PATH=$TEST_TMP/bin:$PATH RELAY_PREFLIGHT_TOOL_SECONDS=3 "$pf" --kernel-package "$TEST_TMP/k.deb" 2>&1) || rc=$?
	[ "$rc" = "$want" ] || { echo "$out"; fail "exit $rc, expected $want"; }
	for p in "$@"; do grep -Eq -- "$p" <<<"$out" || { echo "$out"; fail "no line matches '$p'"; }; done
}
standin 'kill -SEGV $$'
package_says 1 '^unknown +epoll ready-list fix: could not tell: .*bpftool crashed \(signal 11\)' \
	'^summary: could not tell whether linux-image-6.1.0-57-rt-amd64 can be installed here'
standin 'sleep 30'
start=$SECONDS
package_says 1 '^unknown +epoll ready-list fix: could not tell: .*bpftool ran out of its 3 s'
[ $((SECONDS - start)) -lt 25 ] || fail "a hanging bpftool held preflight $((SECONDS - start)) s"
standin "printf \"[1] STRUCT 'eventpoll' size=8 vlen=1\\n\\t'lock' type_id=2 bits_offset=0\\n[2] TYPEDEF 'uid_%s' type_id=3\\n\" \"\$(id -u)\""
got=$(PATH=$TEST_TMP/bin:$PATH "$pf" --btf "$dir/not-a-deb.deb") || fail "--btf with a stand-in: exit $?"
if [ "$(id -u)" = 0 ]; then
	[ "$got" = "uid_$(id -u nobody)" ] || fail "bpftool ran as '${got#uid_}', not as nobody"
	pass "a crashing or hanging bpftool: could not tell; bpftool runs as nobody"
else
	pass "a crashing or hanging bpftool: could not tell (not root: nothing to drop)"
fi
