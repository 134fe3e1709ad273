#!/bin/bash
# timeout: 2400
# kernel/vm: mkinitramfs is deterministic, and boot tells apart a guest that
# finished, one that reported a failure, one that hung and one that died
# without results (using the patched 6.12 image, built on first use).
. "$(dirname "$0")/../lib.sh"
need_root "creates device nodes, builds the kernels into ${RELAY_CACHE:-/var/cache/relay}"
"$top/mk/deps" kernel >/dev/null || fail "mk/deps kernel"
dir=$("$top/kernel/build" --line 6.12 --print-dir) || fail "kernel/build exited $?"
kernel=$dir/bzImage-patched
vm=$top/kernel/vm

cd "$TEST_TMP"
echo payload >payload.txt
cat >ok.init <<'INIT'
#!/bin/sh
vm-setup
cp /payload.txt /results/
cat /sys/fs/cgroup/cgroup.subtree_control >/results/subtree_control
nproc >/results/nproc
uname -r >/results/release
vm-finish 0
INIT
printf '#!/bin/sh\nvm-setup\necho partial >/results/partial\nvm-finish 5\n' >failed.init
printf '#!/bin/sh\nvm-setup\nwhile :; do sleep 1; done\n' >hung.init
printf '#!/bin/sh\nexit 0\n' >noresults.init

a=$("$vm/mkinitramfs" --init ok.init --add payload.txt:/payload.txt --out ok1.cpio.gz) || fail "mkinitramfs"
sleep 1
b=$("$vm/mkinitramfs" --init ok.init --add payload.txt:/payload.txt --out ok2.cpio.gz) || fail "mkinitramfs"
[ "$a" = "$b" ] && [ "$(sha256sum <ok1.cpio.gz | cut -d' ' -f1)" = "$a" ] || fail "mkinitramfs not deterministic: $a vs $b"
pass "mkinitramfs deterministic ($a)"
rc=0; "$vm/mkinitramfs" --init ok.init --add nonexistent:/x --out x.cpio.gz 2>err.txt || rc=$?
[ $rc = 2 ] && grep -q nonexistent err.txt || fail "mkinitramfs accepted a missing --add file (exit $rc)"

# boot_expect NAME STATUS OUTCOME TIMEOUT
boot_expect() {
	local name=$1 want=$2 outcome=$3 timeout=$4 rc=0
	[ -f "$name.cpio.gz" ] || "$vm/mkinitramfs" --init "$name.init" --out "$name.cpio.gz" >/dev/null || fail "mkinitramfs $name"
	"$vm/boot" --kernel "$kernel" --initrd "$name.cpio.gz" --out "out-$name" --timeout "$timeout" 2>"boot-$name.err" || rc=$?
	[ "$rc" = "$want" ] || { cat "boot-$name.err" >&2; tail -n 20 "out-$name/console.log" >&2; fail "$name: boot exited $rc, expected $want"; }
	[ "$(cat "out-$name/outcome")" = "$outcome" ] || fail "$name: outcome $(cat "out-$name/outcome"), expected $outcome"
	pass "$name: exit $rc ($outcome)"
}
cp ok1.cpio.gz ok.cpio.gz
boot_expect ok 0 ok 120
[ "$(cat out-ok/results/payload.txt)" = payload ] || fail "payload did not come back"
[ "$(cat out-ok/results/nproc)" = 2 ] || fail "guest has $(cat out-ok/results/nproc) CPUs, expected 2"
grep -qw cpu out-ok/results/subtree_control || fail "cpu controller not enabled in the guest's cgroup2"
grep -q relay-patched out-ok/results/release || fail "guest runs $(cat out-ok/results/release)"
boot_expect failed 1 failed 120
[ "$(cat out-failed/results/partial)" = partial ] || fail "a failed guest's results did not come back"
boot_expect hung 3 hung 15
boot_expect noresults 4 no-results 120
