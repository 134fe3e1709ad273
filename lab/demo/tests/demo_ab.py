"""lab/demo/tests/demo_ab.sh's rule: what a make demo run must show, and the
doctored copy of a run whose stock effect is taken out.

  demo_ab.py check RUN       every assertion on a make demo run directory
  demo_ab.py doctor DIR      remove the stock kernel's effect from DIR's copy
"""
import json
import os
import sys

from report import formats

MARGIN, RT_MAX_US, SHARE, RATIO, BOOSTED = 10, 2000, 0.5, 10, 0.95


def read(path):
    """The JSON file at PATH as its writer wrote it, once its reader
    (report.formats; docs/formats.md) has found it fits its record."""
    return formats.raw(formats.check(path))


def rt_max(k):
    return (k.get("rt_latency_us") or {}).get("max")


def effect(st, pa, late_us):
    if st["outcome"] == "hung" or (st["stalls"] or 0) > 0 or (st.get("rt_late") or 0) >= MARGIN:
        return True
    m, o = rt_max(st), rt_max(pa)
    return m is not None and m > late_us and (not o or m >= RATIO * o)


def clean(pa):
    return (pa["outcome"] == "ok" and pa["stalls"] == 0 and pa.get("rt_ticker") is True
            and pa["rt_samples"] >= SHARE * pa["rt_expected"] and pa["rt_late"] == 0
            and rt_max(pa) is not None and rt_max(pa) < RT_MAX_US)


def explained(st, pa, relay_prio):
    """What the kernels' traces must say (lab/ktrace): nothing lost; every
    stock stall with a complete chain (the RT waiter, the ready-list lock,
    its holder throttled inside ep_poll_callback); on the patched kernel
    RT waits on the same lock, nearly each one boosting the holder to the
    relay's priority. Returns the reason it does not hold, or None."""
    for name, k in (("stock", st), ("patched", pa)):
        w = k.get("why")
        if not w:
            return f"{name}: no chains (the trace was not recorded or not explained)"
        if not w["trace"]["complete"]:
            return f"{name}: the trace lost {w['trace']['lost']['total']} events"
    t = st["why"]["totals"]
    if t["stalls"] == 0 or t["stalls_explained"] != t["stalls"]:
        return f"stock: {t['stalls_explained']} of {t['stalls']} stalls explained"
    h = st["why"]["worst_stall"]["chain"]["holder_state"]
    if (h.get("state"), h.get("throttled_in")) != ("throttled", "ep_poll_callback"):
        return f"stock: the worst stall's holder was not throttled in ep_poll_callback: {h}"
    c = pa["why"]["contentions"]
    if c["rt_waits"] == 0 or c["boosts"] < BOOSTED * c["rt_waits"]:
        return f"patched: {c['boosts']} boosts for {c['rt_waits']} RT waits on the ready-list lock"
    if ["FIFO", relay_prio] not in [list(x) for x in c["boosted_to"]]:
        return f"patched: no holder boosted to the relay's FIFO {relay_prio}: {c['boosted_to']}"
    return None


def check(run):
    """Every assertion of the A/B on the run directory RUN."""
    s = read(os.path.join(run, "summary.json"))
    st, pa = s["stock"], s["patched"]
    late = s["rule"]["late_ms"]
    for name, k in (("stock", st), ("patched", pa)):
        print(f"{name}: outcome {k['outcome']}, stalls {k['stalls']}, RT datagrams over {late} ms "
              f"{k.get('rt_late')} of {k.get('rt_samples')}, RT max {rt_max(k)} us, "
              f"freezes {k.get('guest_freezes')}, late timer windows {k.get('timer_late_windows')}")
    print(f"verdict: {s['verdict']}: {s['headline']}")
    for name, k in (("stock", st), ("patched", pa)):
        assert k["outcome"] == "ok", f"{name}: the guest's outcome is {k['outcome']}: {s['headline']}"
    # The clock: virtual, recorded everywhere, and the two guests side by side.
    assert s["params"]["clock"] == "virtual" and s["clock"] == "virtual", s["params"]
    assert s["rule"]["clock"] == "virtual" and s["rule"]["patched_late_allowance"] == 0, s["rule"]
    boots = [read(os.path.join(run, k, "boot.json")) for k in ("stock", "patched")]
    assert all(b["clock"] == "virtual" and "icount" in b["accel"] for b in boots), boots
    assert boots[0]["started"] < boots[1]["ended"] and boots[1]["started"] < boots[0]["ended"], \
        f"the guests did not run at the same time: {boots}"
    # Inside a stall a probe may wake late behind the stalled ticker (the
    # summary's own rule); outside one, only where the kernel's trace says
    # what held that CPU (lab/ktrace/freezes.py), every one listed.
    for name, k in (("stock", st), ("patched", pa)):
        f = k["guest_freezes"]
        assert f and f["complete"] and not f["unexplained"], \
            f"{name}: the freeze probes saw the guest late on the virtual clock, unexplained: {f}"
        assert len(f["explained"]) + len(f["borderline"]) == len(f["outside"]), f
    # Honesty: the same initramfs and the same parameters, as each guest read them.
    assert st["initramfs_sha256"] == pa["initramfs_sha256"] == s["initramfs_sha256"], "initramfs differs"
    scens = [read(os.path.join(run, k, "results", "scenario.json")) for k in ("stock", "patched")]
    params = [sc["params"] for sc in scens]
    assert all(dict(p, clock="virtual") == s["params"] for p in params), f"parameters differ: {params}"
    # The other CPU's deadlines while a datagram is out (pace.h): some
    # 0.5 ms a slot, on every kernel.
    for name, sc in zip(("stock", "patched"), scens):
        t = sc["ticker"]
        assert t["paced_ms"] >= 0.1 * t["sent"] * 0.5, \
            f"{name}: the pacing events were on {t['paced_ms']} ms for {t['sent']} datagrams"
    assert s["honesty"] == {"same_initramfs": True, "same_params": True}, s["honesty"]
    # The default scenario is the one the rule is about: an RT waker on the
    # relay's CPU, and the co-tenant waking the relay over AF_UNIX.
    assert s["params"]["ticker_us"] > 0, f"not the default scenario (no RT ticker): {s['params']}"
    assert s["params"]["af_unix"] == 1, f"not the default scenario (the UDP waker): {s['params']}"
    assert "non_rt_waker" in s, "summary.json lacks the caveat"
    assert effect(st, pa, late * 1000), "the stock kernel did not show the effect"
    # The ticker is timed from its schedule (coordinated omission): each
    # stall of >= 200 ms holds back ~20 of its 10 ms slots, so a stall with
    # fewer than 10 late datagrams means the correction is lost. Timing
    # from send() can only see fewer.
    for name, k in (("stock", st), ("patched", pa)):
        assert k["rt_late_uncorrected"] is not None and k["rt_late_uncorrected"] <= k["rt_late"], \
            f"{name}: {k['rt_late_uncorrected']} late from send(), {k['rt_late']} from schedule"
    assert (st["rt_late"] or 0) >= MARGIN * (st["stalls"] or 0), \
        f"stock: {st['rt_late']} late RT datagrams for {st['stalls']} stalls: " \
        "the missed slots are not counted"
    assert (st["stalls"] or 0) >= MARGIN or (st.get("rt_late") or 0) >= MARGIN, \
        f"stock: the effect without margin (< {MARGIN} stalls and < {MARGIN} late RT datagrams)"
    assert clean(pa), "the patched kernel showed the effect (or did not measure the RT side)"
    assert s["verdict"] == "fixed", s["verdict"]
    for name, k in (("stock", st), ("patched", pa)):
        print(f"{name} (trace): {(k.get('why') or {}).get('line')}")
    why = explained(st, pa, s["params"]["relay_prio"])
    assert why is None, why
    # The rule must be able to fail: the same run with the stock effect removed.
    fake = json.loads(json.dumps(s))
    fake["stock"].update(stalls=0, rt_late=0, rt_latency_us=pa["rt_latency_us"])
    assert not effect(fake["stock"], fake["patched"], late * 1000), \
        "the rule accepts a run without the effect"
    fake = json.loads(json.dumps(s))
    fake["patched"].update(rt_late=1)
    assert not clean(fake["patched"]), "the rule accepts a patched kernel with a late RT datagram"
    fake = json.loads(json.dumps(s))
    fake["stock"]["why"]["totals"]["stalls_explained"] -= 1
    assert explained(fake["stock"], fake["patched"], s["params"]["relay_prio"]), \
        "the rule accepts a stall without its chain"


def doctor(d):
    """The stock kernel's results in the copy D without the stalls and the
    late RT datagrams: summarize must then call the run "no effect"."""
    p = os.path.join(d, "stock", "results", "scenario.json")
    s = read(p)
    pa = read(os.path.join(d, "patched", "results", "scenario.json"))
    s["stalls"] = []
    s["ticker"].update(late=0, late_uncorrected=0, late_unexplained=0, late_in_guest_freeze=0,
                       latency_us=pa["ticker"]["latency_us"])
    with open(p, "w", encoding="utf-8") as f:
        json.dump(s, f)


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] in ("check", "doctor"):
        (check if sys.argv[1] == "check" else doctor)(sys.argv[2])
    else:
        sys.exit(__doc__)
