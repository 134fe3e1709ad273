"""lab/hostab/tests/host_systemd.sh's checks of lab/hostab/run's summary.json
(make host-ab's acceptance): the RT client had datagrams late on the stock
test host and none on the patched one, the kernel's trace explains each
late one with a chain, and the summary has what the guests recorded: the
RT client's policy and priority as the kernel had them (the spec's
ticker_prio, SCHED_FIFO), the watch's stalls, relay's /metrics before and
after the scenario.

  host_ab.py SUMMARY
"""
import sys

from report import formats


def failure(s):
    """The first failure of the summary S, or None."""
    k = s["kernels"]
    prio = s["params"]["ticker_prio"]
    for name in ("stock", "patched"):
        r = k[name]
        if not (r["outcome"] == "ok" and not r["problems"]):
            return "%s: %s %s" % (name, r["outcome"], r["problems"])
        if not r["kernel"].endswith("-relay-" + name):
            return "%s booted %s" % (name, r["kernel"])
        if not r["cotenant_nr_throttled"] > 0:
            return "%s: the co-tenant was never throttled" % name
        if not r["rt_received"] > 0:
            return "%s: the RT client got no answers" % name
        if (r["rt_policy"], r["rt_priority"]) != ("SCHED_FIFO", prio):
            return "%s: the RT client ran %s %s, not SCHED_FIFO %d" % (
                name, r["rt_policy"], r["rt_priority"], prio)
        if r["stalls"] is None or not r["metrics"] or sorted(r["metrics"]) != ["after", "before"]:
            return "%s: no watch record, or relay's /metrics not recorded before and after" % name
        if r["late_chains"] is None:
            return "%s: no chains (the trace was not recorded or not explained)" % name
    if not (k["stock"]["preflight"]["level"] == "act" and k["patched"]["preflight"]["level"] == "ok"):
        return "relay-preflight: stock %s, patched %s" % (k["stock"]["preflight"], k["patched"]["preflight"])
    v = s["verdict"]
    if not (v["word"] == "fixed" and v["holds"] and v["late_explained"] is True):
        return "verdict %s" % v
    st, pa = k["stock"], k["patched"]
    if not st["late"] > 0 or st["late"] != st["late_at_least"]:
        return "stock: %s-%s RT datagrams late, not a count above 0" % (st["late_at_least"], st["late"])
    c = st["late_chains"]
    if not (c["late"] == st["late"] and c["by_chain"] == c["late"]):
        return "stock: %d of %d late RT datagrams explained by a chain (%d listed)" % (
            c["by_chain"], st["late"], c["late"])
    if pa["late"] != 0 or pa["late_chains"]["late"] != 0:
        return "patched: %d RT datagrams %g ms late" % (pa["late"], s["late_ms"])
    return None


def check(s):
    """Print the first failure of S and return 1, or print each kernel's
    figures and return 0."""
    what = failure(s)
    if what:
        print("FAIL:", what, file=sys.stderr)
        return 1
    for name in ("stock", "patched"):
        r = s["kernels"][name]
        print("ok: %s: %d of %d RT datagrams %g ms late or more, %d by a chain; max %.2f ms; "
              "the RT client %s %d; %d stalls" % (
                  name, r["late"], r["latency_us"]["count"], s["late_ms"], r["late_chains"]["by_chain"],
                  r["latency_us"]["max"] / 1000, r["rt_policy"], r["rt_priority"], r["stalls"]))
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    # the summary fits its reader (docs/formats.md) before its figures are checked
    sys.exit(check(formats.raw(formats.read(formats.HostSummary, sys.argv[1]))))
