#!/usr/bin/env bash
# make capacity, the quick grid: stock and patched PREEMPT_RT kernels
# booted at once on the virtual clock, each walking the same small grid of
# RT load x co-tenant quota. capacity.json parses and carries the interface
# (slo, headline, kernels.<k>.by_quota[].{quota_pct, capacity_pps, steps}
# with each step's percentiles, loss, throttled periods and .hgrm); at the
# default objective the patched kernel's capacity under the tight quota is
# above the stock kernel's ("none" counting as below any rate); a capacity
# is never claimed above a step that failed; the page renders in headless
# Chromium with its headline and both kernels' curves.
# Builds the kernels when they are not cached (~10 min once).
#
# The grid starts at a light RT load (500 pps) because that is where the
# stock kernel stalls: from 5000 pps up it showed no stall (report/README.md),
# which is why the old grid (5000-25000 pps, 1 s steps) gave one result and
# then its inverse. The new grid separated the kernels in four runs, and
# not in a fifth: there the stock kernel's one 4 s step at 500 pps under
# the 10 % quota had no stall (p99.9 under 2 ms), so both kernels read
# >= 10500 pps. Some trajectories of the virtual-clock guest stall rarely
# (kernel/vm/demo/README.md), and one short step is then a coin toss; a
# test that fails one run in five would block every landing. So it runs
# when asked (make test-capacity, or RELAY_CAPACITY_TEST=1) and counts as
# skipped otherwise: 3-5 min on a quiet 2-core host.
# timeout: 1800
# needs: kernels
# lane: side
. "$(dirname "$0")/../lib.sh"
[ "${RELAY_CAPACITY_TEST:-0}" = 1 ] ||
	skip "the quick capacity grid takes minutes; run it with make test-capacity (RELAY_CAPACITY_TEST=1)"
need_vm_page

t0=$SECONDS
driver() { "$top/kernel/vm/capacity/run" --quick --results "$TEST_TMP/results"; }
driver >"$TEST_TMP/run.log" 2>&1 || { rc=$?; cat "$TEST_TMP/run.log"; fail "the driver exited $rc after $((SECONDS - t0)) s"; }
cat "$TEST_TMP/run.log"
echo "make capacity --quick: $((SECONDS - t0)) s"
run=$(readlink -f "$TEST_TMP/results/latest-capacity")
[ -f "$run/capacity.json" ] || fail "no capacity.json in results/latest-capacity"
grep -q '^      [0-9]* s: stock: cell .* s left' "$TEST_TMP/run.log" ||
	fail "no progress with a time estimate"
grep -q "^headline: at quota" "$TEST_TMP/run.log" || fail "the table does not end with the headline"

python3 - "$run" <<'PY' || fail "capacity.json is wrong"
import json, os, sys
run = sys.argv[1]
c = json.load(open(os.path.join(run, "capacity.json")))
assert c["slo"] and c["headline"].startswith("at quota "), c["headline"]
for k in ("stock", "patched"):
    kern = c["kernels"][k]
    assert kern["outcome"] == "ok", (k, kern["outcome"])
    assert [q["quota_pct"] for q in kern["by_quota"]] == [10, 100], kern["by_quota"]
    for q in kern["by_quota"]:
        assert not q["problems"], (k, q["quota_pct"], q["problems"])
        steps = q["steps"]
        assert steps, (k, q["quota_pct"])
        for s in steps:
            assert set(s["latency_us"]) >= {"p50", "p99", "p99_9", "max"}, s
            assert s["lost"] is not None and s["throttled_periods"] is not None, s
            assert os.path.getsize(os.path.join(run, s["hgrm"])) > 0, s["hgrm"]
        # never a capacity above a failed step
        cap = q["capacity_pps"]
        if cap is not None:
            assert all(s["meets_slo"] for s in steps if s["target_rate"] <= cap), (k, q)
        else:
            assert not all(s["meets_slo"] for s in steps if s["target_rate"] == steps[0]["target_rate"])
    # the co-tenant was throttled under the 10 % quota
    assert sum(s["throttled_periods"] for s in kern["by_quota"][0]["steps"]) > 0, k
st, pa = (c["kernels"][k]["by_quota"][0]["capacity_pps"] for k in ("stock", "patched"))
print(f"quota 10 %: stock {st}, patched {pa}")
assert pa is not None and (st is None or pa > st), (st, pa)
PY
"$top/report/capacity" --check "$run" || fail "the page is not whole in Chromium"
[ -s "$run/capacity.png" ] || fail "no screenshot"
pass "quick capacity grid: $(tail -n1 "$run/table.txt")"
