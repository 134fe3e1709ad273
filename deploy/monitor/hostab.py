"""deploy/monitor/hostab.py: what make host-ab's two test hosts must show
on relay's /metrics, scraped before and after the scenario: on the stock
kernel the "fix missing" alert fires and the "late while throttled"
counter of the wake-ups the epoll fix protects (wakeup="datagram" or
"stream": data's wait for relay's wake-up) rose, so its alert fires; on
the patched kernel both stay quiet. relay's timer tick (wakeup="tick", a
non-RT waker the fix cannot protect) is read and said, not judged.

  mk/py deploy.monitor.hostab --results RUN
  mk/py deploy.monitor.hostab --stock [BEFORE,]AFTER --patched [BEFORE,]AFTER

RUN is a host A/B run directory: RUN/HOST/scenario/relay-metrics-before.txt
and relay-metrics.txt (FILES, as deploy/hostimg/checks writes them) for
HOST stock and patched. A host given AFTER
alone was scraped as relay started (its counters zero: relay.metrics.prom
of a run relay began with). Each alert's inputs are read from the scrapes
(relay_kernel_info's labels; the rise of relay_late_while_throttled_total
of the alerted kinds)
and what they make of it, fired or quiet, is then asserted by promtool
on relay.rules.yml's own expressions (deploy/monitor/recorded.py), so
that the rules and this reading cannot part. Prints a line per host;
exit status 0 both as they must be, 1 not, 65 a scrape missing or not
the text format, 69 no promtool, 70 promtool and the inputs disagree.
"""
import argparse
import os
import sys

from deploy.monitor import exposition, recorded
from lab.hostab.units import METRICS_FILES

FIX_ALERT = "RelayKernelFixMissing"
LATE_ALERT = "RelayLateWhileThrottled"
LATE = "relay_late_while_throttled_total"
# The wake-ups RelayLateWhileThrottled alerts on (relay.rules.yml): those
# an RT sender's ep_poll_callback delivers, which the epoll fix protects.
ALERTED = ("datagram", "stream")
TICK = ("tick",)
# Each host's scrapes in a run directory, before and after the scenario.
FILES = tuple(os.path.join("scenario", METRICS_FILES[w]) for w in ("before", "after"))
# Whether each alert must fire on each host.
WANT = {"stock": True, "patched": False}
EX_SOFTWARE = 70


class Disagree(Exception):
    """promtool, on the rules file, says otherwise than the inputs read."""


def late_rise(before, after, wakeups=ALERTED):
    """How much LATE grew, summed over the watched groups, of the series
    whose wakeup label is one of wakeups; None when after has no such
    sample (relay watched no group). A group's series that before lacks
    began since, as increase() reads it: it rose by nothing (no before at
    all: relay started with the run, from 0)."""
    def by_group(text):
        return {tuple(sorted(ls.items())): v for n, ls, v in exposition.samples(text)
                if n == LATE and ls.get("wakeup") in wakeups}
    a = by_group(after)
    if not a:
        return None
    b = by_group(before) if before is not None else {}
    return sum(v - b.get(k, 0 if before is None else v) for k, v in a.items())


def fix_missing(after):
    """The relay_kernel_info sample the fix-missing alert matches: its
    labels, or None (a kernel with the fix, or not PREEMPT_RT)."""
    for n, ls, v in exposition.samples(after):
        if n == "relay_kernel_info" and v == 1 and ls.get("preempt_rt") == "yes" \
                and ls.get("epoll_fix") == "missing":
            return ls
    return None


def host_state(before, after):
    """One host's alerts from its scrapes: {alert: "fired" | "quiet"},
    and the inputs read: the kernel's labels and LATE's rise."""
    rise = late_rise(before, after)
    kernel = next((ls for n, ls, _ in exposition.samples(after) if n == "relay_kernel_info"), None)
    return {FIX_ALERT: "fired" if fix_missing(after) else "quiet",
            LATE_ALERT: "fired" if rise else "quiet",
            "kernel": kernel, "late_while_throttled_rise": rise,
            "tick_late_while_throttled_rise": late_rise(before, after, TICK)}


def check(hosts):
    """hosts {"stock": (before, after), "patched": ...}, scrapes as text:
    (ok, lines, states), states each host's host_state. Raises Disagree
    when promtool's evaluation of the rules is not the inputs'."""
    states = {h: host_state(*hosts[h]) for h in WANT}
    alerts = (FIX_ALERT, LATE_ALERT)
    test = recorded.promtool_test({h: hosts[h] for h in WANT},
                                  {h: [a for a in alerts if states[h][a] == "fired"] for h in WANT},
                                  only=list(alerts))
    agreed, said = recorded.run_promtool(test)
    if not agreed:
        raise Disagree("promtool on %s does not agree with the scrapes' %s: %s" % (
            os.path.basename(recorded.RULES), {h: {a: states[h][a] for a in alerts} for h in WANT},
            said.strip().replace("\n", " ")[:600]))
    ok, lines = True, []
    for host, fires in WANT.items():
        s = states[host]
        k = s["kernel"] or {}
        rise = s["late_while_throttled_rise"]
        good = all((s[a] == "fired") == fires for a in alerts) and rise is not None
        ok &= good
        tick = s["tick_late_while_throttled_rise"]
        lines.append("%s: %s %s (preempt_rt=%s, epoll_fix=%s), %s %s (%s{wakeup=~\"%s\"} %s): %s%s" % (
            host, FIX_ALERT, s[FIX_ALERT], k.get("preempt_rt", "?"), k.get("epoll_fix", "?"),
            LATE_ALERT, s[LATE_ALERT], LATE, "|".join(ALERTED),
            "missing: relay watched no group (watch_cgroups), or is older than its wakeup label"
            if rise is None else "rose by %g" % rise,
            "as it must" if good else "but both must be %s" % ("fired" if fires else "quiet"),
            "" if tick is None else "; the tick's (not alerted) rose by %g" % tick))
    return ok, lines, states


def run_files(run):
    """{host: (before, after)}: the paths of a run directory's scrapes."""
    return {h: tuple(os.path.join(run, h, f) for f in FILES) for h in WANT}


def check_run(run):
    """check() on a host A/B run directory RUN (RUN/HOST/FILES). Raises
    OSError for a scrape that is not there, exposition.BadExposition for
    one that is not the text format, recorded.NoPromtool, Disagree."""
    return check({h: tuple(recorded.read(p) for p in ps) for h, ps in run_files(run).items()})


def main(argv=None):
    ap = argparse.ArgumentParser(prog="deploy.monitor.hostab", description=__doc__.split("\n\n")[0])
    ap.add_argument("--results", metavar="RUN")
    ap.add_argument("--stock", type=lambda a: recorded.parse_host("stock=" + a)[1:])
    ap.add_argument("--patched", type=lambda a: recorded.parse_host("patched=" + a)[1:])
    a = ap.parse_args(argv)
    if a.results:
        files = run_files(a.results)
    elif a.stock and a.patched:
        files = {"stock": a.stock, "patched": a.patched}
    else:
        ap.error("give --results RUN, or --stock and --patched")
    try:
        hosts = {h: (recorded.read(b) if b else None, recorded.read(af)) for h, (b, af) in files.items()}
        ok, lines, _ = check(hosts)
    except recorded.NoPromtool as e:
        print("deploy.monitor.hostab: %s" % e, file=sys.stderr)
        return recorded.EX_UNAVAILABLE
    except (OSError, exposition.BadExposition) as e:
        print("deploy.monitor.hostab: %s" % e, file=sys.stderr)
        return recorded.EX_DATAERR
    except Disagree as e:
        print("deploy.monitor.hostab: %s" % e, file=sys.stderr)
        return EX_SOFTWARE
    for line in lines:
        print(line)
    print("host A/B on /metrics: %s" % ("as it must be" if ok else "NOT as it must be"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
