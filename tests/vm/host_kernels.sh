#!/usr/bin/env bash
# The A/B on systemd test hosts (lab/hostab/run): one image, booted on
# the stock and on the patched kernel package at once, on the virtual clock.
# Each installs relay, runs relay-preflight (it names the kernel from its
# BTF: MISSING on stock, present on patched) and the scenario under
# systemd's units alone: relay.service SCHED_FIFO from its unit, a co-tenant
# loadgen@ in loadgen.slice under its CPUQuota= on relay's CPU, an RT client
# as a SCHED_FIFO unit. Stock must show the effect (an RT datagram or one of
# relay's own wake-ups LATE_MS late or more) and patched must not; the
# co-tenant must have been throttled on both; the results render.
# Two emulated RT guests for about 5 minutes would add those to make test:
# this runs under make test-host
# (RELAY_TEST_HOST=1), and make test boots one kernel package, the
# patched one, for the other checks (host_systemd).
# timeout: 3000
# needs: hostimg
# lane: side
# variants: release
. "$(dirname "$0")/../lib.sh"
[ "${RELAY_TEST_HOST:-0}" = 1 ] ||
	skip "the A/B on two test hosts is make test-host's (RELAY_TEST_HOST=1): its two emulated RT guests would add 5 minutes to make test"
need_root "debootstrap builds the test host as root"
"$top/mk/deps" kernel deploy report >"$TEST_TMP/deps.log" 2>&1 ||
	skip "cannot install the kernel build tools, debootstrap, QEMU and gnuplot (mk/deps kernel deploy report): $(tail -n 1 "$TEST_TMP/deps.log")"
t0=$SECONDS
rc=0
"$top/lab/hostab/run" --results "$TEST_TMP/results" >"$TEST_TMP/ab.out" 2>"$TEST_TMP/ab.err" || rc=$?
cat "$TEST_TMP/ab.err" "$TEST_TMP/ab.out"
run=$(tail -n 1 "$TEST_TMP/ab.out")
mkdir -p "$top/build/test-host-ab"
[ -d "$run" ] && cp -r "$run/." "$top/build/test-host-ab/"
[ $rc = 0 ] || fail "lab/hostab/run exited $rc (files in build/test-host-ab/)"
# The boot, the install, relay-preflight and the scenario, on each.
for k in stock patched; do
	got=$(grep -c '^PASS' "$run/$k/results.txt")
	[ "$got" = 4 ] || fail "$k: $got of 4 checks passed"
done
pylib host_kernels "$run/summary.json" || fail "summary checks"
pass "stock shows the effect under systemd's units, patched does not ($((SECONDS - t0)) s)"
