"""deploy/monitor/hostab.py: what make host-ab's two test hosts must show
on relay's /metrics, scraped before and after the scenario: on the stock
kernel the "fix missing" alert's expression is true and the "late while
throttled" counter rose; on the patched kernel neither.

  mk/py deploy.monitor.hostab --stock [BEFORE,]AFTER --patched [BEFORE,]AFTER
  mk/py deploy.monitor.hostab --results DIR

DIR is a host A/B run's results: DIR/HOST/scenario/relay-metrics.txt
(after) and relay-metrics-before.txt (before; none: relay started with the
scenario, its counters zero) for HOST stock and patched. The alert's
expression is relay.rules.yml's, evaluated by promtool on the scrapes
(deploy/monitor/recorded.py). Prints a line per host; exit status 0 both
as they must be, 1 not, 65 a scrape that cannot be read, 69 no promtool.
"""
import argparse
import os
import sys

from deploy.monitor import exposition, recorded

FIX_ALERT = "RelayKernelFixMissing"
LATE = "relay_late_while_throttled_total"
WANT = {"stock": True, "patched": False}


def late_rise(before, after):
    """How much LATE grew, summed over the watched groups; None when
    after has no such sample (relay watched no group)."""
    def total(text):
        vs = [v for n, _, v in exposition.samples(text) if n == LATE]
        return sum(vs) if vs else None
    a = total(after)
    if a is None:
        return None
    b = total(before) if before is not None else 0
    return a - (b or 0)


def check(hosts):
    """hosts {"stock": (before, after), "patched": ...}: (ok, lines)."""
    test = recorded.promtool_test(hosts, {h: [FIX_ALERT] for h, fires in WANT.items() if fires},
                                  only=[FIX_ALERT])
    fix_ok, said = recorded.run_promtool(test)
    lines, ok = [], fix_ok
    if fix_ok:
        lines.append("%s's expression: true on stock, false on patched (promtool, relay.rules.yml)"
                     % FIX_ALERT)
    else:
        lines.append("the %s expression is not true on stock and false on patched: %s"
                     % (FIX_ALERT, said.strip().replace("\n", " ")[:600]))
    for host, fires in WANT.items():
        rise = late_rise(*hosts[host])
        good = rise is not None and (rise > 0) == fires
        ok &= good
        lines.append("%s: %s %s, %s" % (
            host, LATE, "missing (relay watched no group: watch_cgroups)" if rise is None
            else "rose by %g" % rise, "as it must" if good else
            "but it must %s" % ("rise" if fires else "not rise")))
    return ok, lines


def from_results(d):
    files = {}
    for host in WANT:
        s = os.path.join(d, host, "scenario")
        before = os.path.join(s, "relay-metrics-before.txt")
        files[host] = (before if os.path.exists(before) else None, os.path.join(s, "relay-metrics.txt"))
    return files


def main(argv=None):
    ap = argparse.ArgumentParser(prog="deploy.monitor.hostab", description=__doc__.split("\n\n")[0])
    ap.add_argument("--results")
    ap.add_argument("--stock", type=lambda a: recorded.parse_host("stock=" + a)[1:])
    ap.add_argument("--patched", type=lambda a: recorded.parse_host("patched=" + a)[1:])
    a = ap.parse_args(argv)
    if a.results:
        files = from_results(a.results)
    elif a.stock and a.patched:
        files = {"stock": a.stock, "patched": a.patched}
    else:
        ap.error("give --results DIR, or --stock and --patched")
    try:
        hosts = {h: (recorded.read(b) if b else None, recorded.read(af)) for h, (b, af) in files.items()}
        ok, lines = check(hosts)
    except recorded.NoPromtool as e:
        print("deploy.monitor.hostab: %s" % e, file=sys.stderr)
        return recorded.EX_UNAVAILABLE
    except (OSError, ValueError, exposition.BadExposition) as e:
        print("deploy.monitor.hostab: %s" % e, file=sys.stderr)
        return recorded.EX_DATAERR
    for line in lines:
        print(line)
    print("host A/B on /metrics: %s" % ("as it must be" if ok else "NOT as it must be"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
