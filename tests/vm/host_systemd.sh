#!/usr/bin/env bash
# "systemctl start relay" on a real systemd and a PREEMPT_RT kernel: build
# the package, boot a minimal Debian 12 (debootstrap, cached by hash) with
# systemd as PID 1 under QEMU, on the patched kernel package of make
# kernel-debs as dpkg installed it (its vmlinuz, modules and the initramfs
# its hook made), install relay's package there and run
# deploy/hostimg/checks: relay-preflight names the kernel from its BTF,
# start, a newer package restarting the running relay on its binary,
# SCHED_FIFO loops at the configured priority and CPU, reload keeping
# flows, the watchdog restarting a stopped relay, loadgen under the slice's
# quota, loadgen@unix through the shipped AF_UNIX listener's mode and
# group, and the failures an operator can cause (bad config, missing user,
# no RT permission, malformed quota).
#
# In make test the guest keeps the virtual clock: the checks' waits cost
# no host time there. Under make test-host (RELAY_TEST_HOST=1) it keeps the
# host clock, as an operator's test host does; RELAY_TEST_HOST_KERNEL=stock
# boots the other package (make test-host KERNEL=stock). The demo's
# scenario under systemd's units is host_kernels' A/B, which make test
# leaves to make test-host and make host-ab: its two emulated RT guests
# would add 5 minutes to make test. The guest's files come
# back to build/test-host/.
# timeout: 3000
# needs: hostimg
# lane: side
. "$(dirname "$0")/../lib.sh"
need_root "debootstrap builds the test host as root"
"$top/mk/deps" kernel deploy >"$TEST_TMP/deps.log" 2>&1 ||
	skip "cannot install debootstrap, QEMU, dpkg-dev and the kernel build tools (mk/deps kernel deploy): $(tail -n 1 "$TEST_TMP/deps.log")"
kind=patched clock=virtual
if [ "${RELAY_TEST_HOST:-0}" = 1 ]; then
	kind=${RELAY_TEST_HOST_KERNEL:-patched} clock=host
fi
case $kind in stock|patched) ;; *) fail "RELAY_TEST_HOST_KERNEL='$kind': stock or patched" ;; esac
results=$top/build/test-host
rm -rf "$results"

t0=$SECONDS
deb=$("$top/deploy/mkdeb" "$TEST_TMP/deb") || fail "deploy/mkdeb"
img=$("$top/deploy/hostimg/image" "$deb") || fail "deploy/hostimg/image"
echo "image $img ($((SECONDS - t0)) s including the packages)"
cat "$img/manifest"
release=$(sed -n 's/^kernels //p' "$img/manifest" | tr ' ' '\n' | grep -- "-relay-$kind\$") ||
	fail "the image has no $kind kernel"

share=$TEST_TMP/share
mkdir -p "$share"
cp "$deb" "$share/relay.deb"
install -m 0755 "$top/deploy/hostimg/checks" "$share/guest"
echo "$kind $release" >"$share/kernel"
"$top/deploy/hostimg/checks" --list | grep -vx scenario >"$share/only"
t1=$SECONDS
"$top/deploy/hostimg/boot" --clock $clock --kernel "$release" "$img" "$share" 1500; st=$?
echo "boot and checks on $release, $clock clock: $((SECONDS - t1)) s"
mkdir -p "$results"
cp -r "$share/out/." "$results/"
[ $st = 0 ] || { tail -n 40 "$results/console.log"; fail "the test host did not run to power-off (boot exit $st)"; }
[ -f "$results/results.txt" ] || { tail -n 40 "$results/console.log"; fail "no results from the guest"; }
cat "$results/results.txt"
[ -f "$results/done" ] || { tail -n 30 "$results/guest.log"; fail "the checks did not run to the end"; }
grep -q '^FAIL' "$results/results.txt" && fail "$(grep -c '^FAIL' "$results/results.txt") check(s) failed; see build/test-host/"
# Every check asked for must have reported.
want=$(wc -l <"$share/only")
got=$(grep -c '^PASS' "$results/results.txt")
[ "$got" = "$want" ] || fail "$got of $want checks passed"
pass "$got checks on a systemd test host running $release ($clock clock)"
