#!/bin/bash
# timeout: 2400
# needs: kernels
# lane: side
# kernel/vm: mkinitramfs is deterministic, and boot tells apart a guest that
# finished, one that reported a failure, one that hung and one that died
# without results (using the patched 6.12 image of make kernels).
. "$(dirname "$0")/../lib.sh"
need_root "creates device nodes, reads the kernels in ${RELAY_CACHE:-/var/cache/relay}"
"$top/mk/deps" kernel >/dev/null || fail "mk/deps kernel"
kernel=$("$top/kernel/build" --line 6.12 --print-images | sed -n 's/^patched //p')
[ -n "$kernel" ] || fail "no patched 6.12 image (make kernels builds it)"
vm=$top/kernel/vm

cd "$TEST_TMP" || exit 1
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
# A transfer that starts and never ends (as when the guest lost its UART
# interrupt): boot must end it long before its time limit.
printf '#!/bin/sh\nvm-setup\nprintf "RELAY-VM-RESULTS-BEGIN bytes=4096\\nH4sI" >/dev/ttyS1\nwhile :; do sleep 1; done\n' >stalled.init

a=$("$vm/mkinitramfs" --init ok.init --add payload.txt:/payload.txt --out ok1.cpio.gz) || fail "mkinitramfs"
sleep 1
b=$("$vm/mkinitramfs" --init ok.init --add payload.txt:/payload.txt --out ok2.cpio.gz) || fail "mkinitramfs"
{ [ "$a" = "$b" ] && [ "$(sha256sum <ok1.cpio.gz | cut -d' ' -f1)" = "$a" ]; } || fail "mkinitramfs not deterministic: $a vs $b"
pass "mkinitramfs deterministic ($a)"
rc=0; "$vm/mkinitramfs" --init ok.init --add nonexistent:/x --out x.cpio.gz 2>err.txt || rc=$?
{ [ $rc = 2 ] && grep -q nonexistent err.txt; } || fail "mkinitramfs accepted a missing --add file (exit $rc)"

# boot_one NAME TIMEOUT [CLOCK [APPEND]]: boot NAME.cpio.gz (on the virtual
# clock unless CLOCK says host, APPEND on the kernel command line); its
# exit status goes to rc-NAME.
boot_one() {
	local name=$1 timeout=$2 clock=${3:-virtual} append=${4:-} rc=0
	"$vm/boot" --kernel "$kernel" --initrd "$name.cpio.gz" --out "out-$name" --timeout "$timeout" \
		--clock "$clock" --append "$append" 2>"boot-$name.err" || rc=$?
	echo "$rc" >"rc-$name"
}
# boot_expect NAME WANT OUTCOME: NAME's boot exited WANT with OUTCOME.
boot_expect() {
	local name=$1 want=$2 outcome=$3 rc
	rc=$(cat "rc-$name" 2>/dev/null) || fail "$name: boot left no exit status"
	[ "$rc" = "$want" ] || { cat "boot-$name.err" >&2; tail -n 20 "out-$name/console.log" >&2; fail "$name: boot exited $rc, expected $want"; }
	[ "$(cat "out-$name/outcome")" = "$outcome" ] || fail "$name: outcome $(cat "out-$name/outcome"), expected $outcome"
	pass "$name: exit $rc ($outcome)"
}
cp ok1.cpio.gz ok.cpio.gz
cp ok1.cpio.gz late.cpio.gz
for name in failed hung noresults stalled; do
	"$vm/mkinitramfs" --init "$name.init" --out "$name.cpio.gz" >/dev/null || fail "mkinitramfs $name"
done
# The guests that end by themselves run on the virtual clock, where a
# guest's time is its instruction count: booted at once they share the
# host's CPUs but cannot change what each other sees, so they need not
# wait for one another. The limits are host time, the harness's, not the
# guest's: the hung one's 15 s must run out; the others end by themselves,
# and five guests on a loaded 2-core host took 123 s to boot once, so
# theirs only catch a harness that never returns. The hung and the stalled
# guest wait on the host clock: idle on the virtual clock a guest skips
# ahead as fast as the host can run it, and would spin a core for nothing.
bg boot_one ok 600
# boot gives kernels before 6.5 maxcpus=1 on the virtual clock; vm-setup
# must then bring CPU 1 online (tests/integration/vm_boot_cmdline.sh
# checks boot's side).
bg boot_one late 600 virtual maxcpus=1
bg boot_one failed 600
bg boot_one hung 15 host
bg boot_one noresults 600
t_stalled=$SECONDS
RELAY_VM_TRANSFER_STALL_S=5 boot_one stalled 900 host
t_stalled=$((SECONDS - t_stalled))
for p in "${bg_pids[@]}"; do wait "$p"; done
boot_expect ok 0 ok
[ "$(cat out-ok/results/payload.txt)" = payload ] || fail "payload did not come back"
[ "$(cat out-ok/results/nproc)" = 2 ] || fail "guest has $(cat out-ok/results/nproc) CPUs, expected 2"
grep -qw cpu out-ok/results/subtree_control || fail "cpu controller not enabled in the guest's cgroup2"
grep -q relay-patched out-ok/results/release || fail "guest runs $(cat out-ok/results/release)"
# A busy host once failed a guest's IO-APIC timer check at boot (a panic,
# no results): every guest must boot without that check.
grep -q 'Command line:.* no_timer_check' out-ok/console.log || fail "guest booted without no_timer_check"
boot_expect late 0 ok
[ "$(cat out-late/results/nproc)" = 2 ] ||
	fail "booted with maxcpus=1, the guest has $(cat out-late/results/nproc) CPUs after vm-setup, expected 2"
grep -q '"cmdline": "[^"]* maxcpus=1"' out-late/boot.json || fail "boot.json lacks the command line: $(cat out-late/boot.json)"
pass "maxcpus=1: vm-setup brought CPU 1 online"
boot_expect failed 1 failed
[ "$(cat out-failed/results/partial)" = partial ] || fail "a failed guest's results did not come back"
boot_expect hung 3 hung
boot_expect noresults 4 no-results
boot_expect stalled 3 hung
grep -q 'results transfer stopped at [0-9]* bytes' boot-stalled.err ||
	fail "a stopped transfer was not named: $(tail -n 3 boot-stalled.err)"
[ "$t_stalled" -lt 600 ] || fail "a stopped transfer ended only after $t_stalled s (limit 900 s, stall rule 5 s)"

# boot killed outright (SIGKILL: no trap runs) takes its QEMU with it,
# instead of leaving an emulated guest to spin a core until its own end.
"$vm/boot" --kernel "$kernel" --initrd hung.cpio.gz --out out-killed --timeout 600 \
	--clock host 2>boot-killed.err &
boot=$!
qemu=""
for _ in $(seq 300); do
	qemu=$(pgrep -P "$boot" -x qemu-system-x86) && break
	sleep 0.1
done
[ -n "$qemu" ] || { kill -9 "$boot"; fail "boot started no QEMU in 30 s"; }
kill -9 "$boot"
wait "$boot" 2>/dev/null
for _ in $(seq 100); do
	kill -0 "$qemu" 2>/dev/null || break
	sleep 0.1
done
if kill -0 "$qemu" 2>/dev/null; then
	kill -9 "$qemu"
	fail "QEMU ($qemu) still ran 10 s after its boot was killed"
fi
pass "boot killed with SIGKILL: its QEMU ended with it"
