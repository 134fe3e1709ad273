#!/usr/bin/env bash
# The demo on systemd test hosts (deploy/hostimg/ab): one image, booted on
# the stock and on the patched kernel package at once, on the virtual clock.
# In each, dpkg installs relay, relay-preflight names the kernel from its
# BTF (MISSING on stock, present on patched), and the scenario runs under
# systemd's units alone: relay.service SCHED_FIFO from its unit, a
# co-tenant loadgen@ in loadgen.slice under CPUQuota= on relay's CPU, an
# RT client as a transient SCHED_FIFO unit. Stock must show the effect (an
# RT datagram 5 ms late or more) and patched must not; the co-tenant must
# have been throttled on both; the results render as a report.
# timeout: 3000
# lane: side
# variants: release
. "$(dirname "$0")/../lib.sh"
need_root "debootstrap builds the test host as root"
"$top/mk/deps" kernel deploy report >"$TEST_TMP/deps.log" 2>&1 ||
	skip "cannot install the kernel build tools, debootstrap, QEMU and gnuplot (mk/deps kernel deploy report): $(tail -n 1 "$TEST_TMP/deps.log")"
t0=$SECONDS
rc=0
"$top/deploy/hostimg/ab" --results "$TEST_TMP/results" >"$TEST_TMP/ab.out" 2>"$TEST_TMP/ab.err" || rc=$?
cat "$TEST_TMP/ab.err" "$TEST_TMP/ab.out"
run=$(tail -n 1 "$TEST_TMP/ab.out")
mkdir -p "$top/build/test-host-ab"
[ -d "$run" ] && cp -r "$run/." "$top/build/test-host-ab/"
[ $rc = 0 ] || fail "deploy/hostimg/ab exited $rc (files in build/test-host-ab/)"
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
    check(r["kernel"].endswith("-relay-" + name), "%s booted %s" % (name, r["kernel"]))
    check(r["cotenant_nr_throttled"] > 0, "%s: the co-tenant was never throttled" % name)
    check(r["rt_received"] > 0, "%s: the RT client got no answers" % name)
check(k["stock"]["late"] > 0, "stock: no RT datagram %g ms late" % s["late_ms"])
check(k["patched"]["late"] == 0, "patched: %d RT datagrams %g ms late" % (k["patched"]["late"], s["late_ms"]))
print("ok: stock %d late (max %.1f ms), patched none (max %.3f ms)" % (
    k["stock"]["late"], k["stock"]["latency_us"]["max"] / 1000, k["patched"]["latency_us"]["max"] / 1000))
PY
pass "stock shows the effect under systemd's units, patched does not ($((SECONDS - t0)) s)"
