"""tests/vm/host_kernels.sh's checks of lab/hostab/run's summary.json: the
stock kernel shows the effect under systemd's units and the patched one
does not.

  host_kernels.py SUMMARY
"""
import sys

from report import formats


def failure(s):
    """The first failure of the summary S, or None."""
    k = s["kernels"]
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
    if not (k["stock"]["preflight"]["level"] == "act" and k["patched"]["preflight"]["level"] == "ok"):
        return "relay-preflight: stock %s, patched %s" % (k["stock"]["preflight"], k["patched"]["preflight"])
    if s["verdict"]["word"] != "fixed":
        return "verdict %s" % s["verdict"]["word"]
    if not (s["verdict"]["stock_shows_effect"] and s["verdict"]["patched_free"]):
        return "verdict parts %s" % s["verdict"]
    if not (not k["patched"]["relay_late"] and k["patched"]["late"] == 0):
        return "patched: something %g ms late" % s["late_ms"]
    return None


def check(s):
    """Print the first failure of S and return 1, or print each kernel's
    latencies and return 0."""
    what = failure(s)
    if what:
        print("FAIL:", what, file=sys.stderr)
        return 1
    for name in ("stock", "patched"):
        r = s["kernels"][name]
        wake = r.get("relay_wake_us")
        print("ok: %s: RT client max %.1f ms, %s late; relay's own wake-up max %s" % (
            name, r["latency_us"]["max"] / 1000, r["late"],
            "%.1f ms" % (wake["max"] / 1000) if wake else "not recorded"))
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    # the summary fits its reader (docs/formats.md) before its figures are checked
    sys.exit(check(formats.raw(formats.read(formats.HostSummary, sys.argv[1]))))
