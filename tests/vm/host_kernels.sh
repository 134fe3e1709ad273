#!/usr/bin/env bash
# The demo on systemd test hosts (deploy/hostimg/ab --checks all
# --stock-checks scenario): one image, booted on the stock and on the
# patched kernel package at once, on the virtual clock. Both: dpkg installs
# relay, relay-preflight names the kernel from its BTF (MISSING on stock,
# present on patched), and the scenario. The patched host also runs every
# other check of deploy/hostimg/checks (relay's loops run SCHED_FIFO at
# the unit's priority, reloads, the watchdog, the slice's quota, the
# failures an operator can cause); they test deploy/, not the kernel, and
# make host-ab HOST_AB_ARGS="--checks all" runs them on stock too.
# The scenario runs under systemd's units alone: relay.service SCHED_FIFO from its unit, a co-tenant loadgen@ in
# loadgen.slice under its CPUQuota= on relay's CPU, an RT client as a
# SCHED_FIFO unit. Stock must show the effect (an RT datagram or one of
# relay's own wake-ups 20 ms late or more) and patched must not; the
# co-tenant must have been throttled on both; the results render.
# timeout: 3000
# lane: side
# variants: release
. "$(dirname "$0")/../lib.sh"
need_root "debootstrap builds the test host as root"
"$top/mk/deps" kernel deploy report >"$TEST_TMP/deps.log" 2>&1 ||
	skip "cannot install the kernel build tools, debootstrap, QEMU and gnuplot (mk/deps kernel deploy report): $(tail -n 1 "$TEST_TMP/deps.log")"
t0=$SECONDS
rc=0
"$top/deploy/hostimg/ab" --checks all --stock-checks scenario --results "$TEST_TMP/results" >"$TEST_TMP/ab.out" 2>"$TEST_TMP/ab.err" || rc=$?
cat "$TEST_TMP/ab.err" "$TEST_TMP/ab.out"
run=$(tail -n 1 "$TEST_TMP/ab.out")
mkdir -p "$top/build/test-host-ab"
[ -d "$run" ] && cp -r "$run/." "$top/build/test-host-ab/"
[ $rc = 0 ] || fail "deploy/hostimg/ab exited $rc (files in build/test-host-ab/)"
# patched: every check; stock: the boot, the install, preflight, the scenario.
for k in stock patched; do
	want=$("$top/deploy/hostimg/checks" --list | wc -l)
	[ $k = patched ] || want=4
	got=$(grep -c '^PASS' "$run/$k/results.txt")
	[ "$got" = "$want" ] || fail "$k: $got of $want checks passed"
done
grep -q '^PASS relay-preflight' "$run/stock/results.txt" || fail "stock: relay-preflight did not run"
python3 - "$run/summary.json" <<'PY' || fail "summary checks"
import json, sys
s = json.load(open(sys.argv[1]))
k = s["kernels"]
def check(cond, what):
    if not cond:
        print("FAIL:", what, file=sys.stderr)
        sys.exit(1)
for name in ("stock", "patched"):
    r = k[name]
    check(r["outcome"] == "ok" and not r["problems"], "%s: %s %s" % (name, r["outcome"], r["problems"]))
    check(r["kernel"].endswith("-relay-" + name), "%s booted %s" % (name, r["kernel"]))
    check(r["cotenant_nr_throttled"] > 0, "%s: the co-tenant was never throttled" % name)
    check(r["rt_received"] > 0, "%s: the RT client got no answers" % name)
check(s["verdict"]["word"] == "fixed", "verdict %s" % s["verdict"]["word"])
check(s["verdict"]["stock_shows_effect"] and s["verdict"]["patched_free"], "verdict parts %s" % s["verdict"])
check(not k["patched"]["relay_late"] and k["patched"]["late"] == 0, "patched: something %g ms late" % s["late_ms"])
for name in ("stock", "patched"):
    r = k[name]
    print("ok: %s: RT client max %.1f ms, %s late; relay's own wake-up max %.1f ms" % (
        name, r["latency_us"]["max"] / 1000, r["late"], r["relay_wake_us"]["max"] / 1000))
PY
pass "stock shows the effect under systemd's units, patched does not ($((SECONDS - t0)) s)"
