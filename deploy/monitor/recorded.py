"""deploy/monitor/recorded.py: relay.rules.yml's alerts on recorded scrapes
of relay (a host's /metrics, or relay.metrics.prom), evaluated by promtool
itself: each host's scrape before and after a run becomes a series, and
promtool's test says which alerts fire.

  mk/py deploy.monitor.recorded --host NAME=[BEFORE,]AFTER [--host ...]
        [--expect NAME=ALERT,...] [--write FILE]

A host given AFTER alone was scraped as relay started (its counters zero:
relay.metrics.prom of a run relay began with). The scrapes are placed one
minute apart (BEFORE at 0, AFTER from 1m on), so that the 5-minute rates
of the rules see the run's increase whole; the alerts are read at 4m:
an alert with for: 2m on a recording rule fires by then whether promtool
evaluated the recording group before the alerts' at 1m or only at 2m
(it evaluates the groups side by side: at 3m it was so only sometimes). --expect names, per host,
the alerts that must fire there; every other alert of the file must not
(a host with no --expect: none). Exit status 0 as expected, 1 not (what
promtool said on stderr), 65 a scrape that is not the text format, 69 no
promtool (Debian's prometheus package).
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

from deploy.monitor import exposition

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RULES = os.path.join(TOP, "deploy", "prometheus", "relay.rules.yml")
EVAL_MINUTES = 4
SPAN_MINUTES = 10
EX_DATAERR, EX_UNAVAILABLE = 65, 69


class NoPromtool(Exception):
    """promtool is not installed."""


def alert_names(rules_text):
    """The alerts a rules file defines, in order."""
    return re.findall(r"^\s*- alert:\s*(\S+)\s*$", rules_text, re.M)


def quote(v):
    return v.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def input_series(host, before, after):
    """promtool's input_series for one host: each sample of after (with
    instance=host, job=relay) at its value of before (0 if before has none)
    at 0m, and its value of after from 1m to SPAN_MINUTES."""
    was = {(n, tuple(sorted(ls.items()))): v for n, ls, v in exposition.samples(before)} \
        if before is not None else {}
    out = []
    for name, labels, v in exposition.samples(after):
        first = was.get((name, tuple(sorted(labels.items()))), 0 if before is None else None)
        if first is None:
            first = v   # not in the first scrape: a series that began since
        ls = dict(labels, instance=host, job="relay")
        sel = ",".join('%s="%s"' % (k, quote(ls[k])) for k in sorted(ls))
        values = " ".join(["%r" % float(first)] + ["%r" % float(v)] * SPAN_MINUTES)
        out.append({"series": "%s{%s}" % (name, sel), "values": values})
    return out


def promtool_test(hosts, expect, rules=RULES, only=None):
    """The test file (a dict; JSON is YAML) for hosts {name: (before,
    after)}, asserting that each alert (of only, if given) fires exactly on
    the hosts expect {name: [alert]} names for it."""
    with open(rules) as f:
        alerts = alert_names(f.read())
    if only is not None:
        missing = sorted(set(only) - set(alerts))
        if missing:
            raise ValueError("no such alert in %s: %s" % (rules, ", ".join(missing)))
        alerts = [a for a in alerts if a in only]
    unknown = sorted({a for names in expect.values() for a in names} - set(alerts))
    if unknown:
        raise ValueError("no such alert in %s: %s" % (rules, ", ".join(unknown)))
    series = [s for h, (b, a) in sorted(hosts.items()) for s in input_series(h, b, a)]
    checks = []
    for alert in alerts:
        firing = sorted(h for h in hosts if alert in expect.get(h, ()))
        checks.append({
            "expr": 'group by (instance) (ALERTS{alertname="%s",alertstate="firing"})' % alert,
            "eval_time": "%dm" % EVAL_MINUTES,
            "exp_samples": [{"labels": '{instance="%s"}' % h, "value": 1} for h in firing]})
    return {"rule_files": [os.path.abspath(rules)], "evaluation_interval": "1m",
            "tests": [{"interval": "1m", "input_series": series, "promql_expr_test": checks}]}


def run_promtool(test, keep=None):
    """promtool test rules on test (written to keep, or a temporary file):
    (passed, what it said)."""
    promtool = shutil.which("promtool")
    if not promtool:
        raise NoPromtool("no promtool (Debian's prometheus package)")
    with tempfile.TemporaryDirectory() as tmp:
        path = keep or os.path.join(tmp, "recorded.test.yml")
        with open(path, "w") as f:
            json.dump(test, f, indent=1)
        p = subprocess.run([promtool, "test", "rules", path], capture_output=True, text=True)
    return p.returncode == 0, p.stdout + p.stderr


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def parse_host(arg):
    name, _, files = arg.partition("=")
    parts = files.split(",")
    if not name or not files or len(parts) > 2:
        raise argparse.ArgumentTypeError("'%s': NAME=[BEFORE,]AFTER" % arg)
    return name, (parts[0] if len(parts) == 2 else None), parts[-1]


def parse_expect(arg):
    name, _, alerts = arg.partition("=")
    if not name:
        raise argparse.ArgumentTypeError("'%s': NAME=ALERT,..." % arg)
    return name, [a for a in alerts.split(",") if a]


def main(argv=None):
    ap = argparse.ArgumentParser(prog="deploy.monitor.recorded", description=__doc__.split("\n\n")[0])
    ap.add_argument("--host", type=parse_host, action="append", required=True)
    ap.add_argument("--expect", type=parse_expect, action="append", default=[])
    ap.add_argument("--rules", default=RULES)
    ap.add_argument("--write", help="keep the test file here")
    a = ap.parse_args(argv)
    try:
        hosts = {n: (read(b) if b else None, read(af)) for n, b, af in a.host}
        test = promtool_test(hosts, dict(a.expect), a.rules)
        ok, said = run_promtool(test, a.write)
    except NoPromtool as e:
        print("deploy.monitor.recorded: %s" % e, file=sys.stderr)
        return EX_UNAVAILABLE
    except (exposition.BadExposition, ValueError, OSError) as e:
        print("deploy.monitor.recorded: %s" % e, file=sys.stderr)
        return EX_DATAERR
    if not ok:
        print(said, file=sys.stderr)
    for n in sorted(hosts):
        print("%s: %s" % (n, ", ".join(dict(a.expect).get(n, [])) or "no alert"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
