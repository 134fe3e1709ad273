#!/usr/bin/env bash
# "systemctl start relay" on a real systemd: build the package, boot a
# minimal Debian 12 (debootstrap, cached by hash) with systemd as PID 1 under
# QEMU, install the package there and run deploy/hostimg/checks: start,
# SCHED_FIFO loops at the configured priority and CPU, reload keeping flows,
# the watchdog restarting a stopped relay, loadgen under the slice's quota,
# and the failures an operator can cause (bad config, missing user, no RT
# permission, malformed quota). The guest's files come back to
# build/test-host/.
# timeout: 900
. "$(dirname "$0")/../lib.sh"
need_root "debootstrap builds the test host as root"
"$top/mk/deps" deploy >"$TEST_TMP/deps.log" 2>&1 ||
	skip "cannot install debootstrap, QEMU and dpkg-dev (mk/deps deploy): $(tail -n 1 "$TEST_TMP/deps.log")"
results=$top/build/test-host
rm -rf "$results"

t0=$SECONDS
deb=$("$top/deploy/mkdeb" "$TEST_TMP/deb") || fail "deploy/mkdeb"
# The image carries what the package depends on, so dpkg -i needs no network.
deps=$(dpkg-deb -f "$deb" Depends | tr ',' '\n' | sed 's/[(|].*//; s/ //g' | grep -v '^$')
img=$("$top/deploy/hostimg/mkimage" $deps) || fail "deploy/hostimg/mkimage"
echo "image $img ($((SECONDS - t0)) s including the package)"
cat "$img/manifest"

share=$TEST_TMP/share
mkdir -p "$share"
cp "$deb" "$share/relay.deb"
install -m 0755 "$top/deploy/hostimg/checks" "$share/guest"
t1=$SECONDS
"$top/deploy/hostimg/boot" "$img" "$share" 600; st=$?
echo "boot and checks: $((SECONDS - t1)) s"
mkdir -p "$results"
cp -r "$share/out/." "$results/"
[ $st = 0 ] || { tail -n 40 "$results/console.log"; fail "the test host did not run to power-off (boot exit $st)"; }
[ -f "$results/results.txt" ] || { tail -n 40 "$results/console.log"; fail "no results from the guest"; }
cat "$results/results.txt"
[ -f "$results/done" ] || { tail -n 30 "$results/guest.log"; fail "the checks did not run to the end"; }
grep -q '^FAIL' "$results/results.txt" && fail "$(grep -c '^FAIL' "$results/results.txt") check(s) failed; see build/test-host/"
# Every check the guest script defines must have reported.
want=$(grep -c '^check ' "$top/deploy/hostimg/checks")
got=$(grep -c '^PASS' "$results/results.txt")
[ "$got" = "$want" ] || fail "$got of $want checks passed"
pass "$got checks on a systemd test host ($((SECONDS - t0)) s)"
