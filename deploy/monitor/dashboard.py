"""deploy/monitor/dashboard.py: hold a Grafana dashboard to the series relay
exports. Each panel's queries (and the template variables') may name only
a sample relay's /metrics has, a recording rule of the rules file (whose
own query is held to the same), or Prometheus's ALERTS; each label they
match or group by must be one that series carries (or a target's job and
instance), and a value they match a label of relay's samples to (=, or
=~ with a list of words a|b) one that label takes there.

  mk/py deploy.monitor.dashboard DASHBOARD.json --metrics FILE [--metrics FILE]
        [--rules RULES.yml]

FILE is a scrape of /metrics (or relay.metrics.prom). Prints each query
that names what relay does not produce, with its panel; exit status 0
none, 1 some, 65 a file that cannot be read as what it should be.
"""
import argparse
import json
import re
import sys

import yaml

from deploy.monitor import exposition
from deploy.monitor.recorded import RULES

TARGET_LABELS = {"job", "instance"}
# Series Prometheus itself makes, with the labels of theirs a query may use.
BUILTIN = {"ALERTS": {"alertname", "alertstate", "severity"},
           "ALERTS_FOR_STATE": {"alertname", "severity"}}
KEYWORDS = {"by", "without", "on", "ignoring", "group_left", "group_right", "bool",
            "and", "or", "unless", "offset", "inf", "nan",
            # aggregations, whose "by (...)" may come before their "("
            "sum", "avg", "min", "max", "count", "stddev", "stdvar", "topk", "bottomk",
            "quantile", "count_values", "group"}
GROUPING = {"by", "without", "on", "ignoring", "group_left", "group_right"}
TOKEN = re.compile(r'"(?:\\.|[^"\\])*"|\'(?:\\.|[^\'\\])*\'|\$\{?\w+\}?|\[[^\]]*\]'
                   r'|(?:\d+(?:ms|[smhdwy]))+\b'   # a duration (offset 5m)
                   r'|[A-Za-z_:][A-Za-z0-9_:]*|\d+(?:\.\d+)?(?:e[+-]?\d+)?|=~|!~|!=|==|\S')


def parse(expr):
    """What a PromQL query names: [(metric, {matched labels})] and the
    labels it groups by, as (metrics, grouping)."""
    toks = [t for t in TOKEN.findall(expr) if not t.startswith(("$", "["))]
    metrics, grouping, i = [], set(), 0
    while i < len(toks):
        t = toks[i]
        nxt = toks[i + 1] if i + 1 < len(toks) else ""
        if t in GROUPING and nxt == "(":
            j = i + 2
            while j < len(toks) and toks[j] != ")":
                if re.match(r"[A-Za-z_]\w*$", toks[j]):
                    grouping.add(toks[j])
                j += 1
            i = j + 1
            continue
        if t == "{" or (re.match(r"[A-Za-z_:][\w:]*$", t) and t.lower() not in KEYWORDS and nxt != "("):
            name = None if t == "{" else t
            labels = set()
            j = i + 1 if t == "{" else i + 2
            if t == "{" or nxt == "{":
                while j < len(toks) and toks[j] != "}":
                    if re.match(r"[A-Za-z_]\w*$", toks[j]) and j + 1 < len(toks) and \
                            toks[j + 1] in ("=", "!=", "=~", "!~"):
                        if toks[j] == "__name__" and toks[j + 2][:1] in "\"'":
                            name = toks[j + 2][1:-1]
                        else:
                            labels.add(toks[j])
                    j += 1
                i = j + 1
            else:
                i += 1
            if name:
                metrics.append((name, labels))
            continue
        i += 1
    return metrics, grouping


def matched_values(expr):
    """{(metric, label): {values}} a query matches exactly: label="v", or
    label=~"a|b" when each alternative is a plain word."""
    out = {}
    for name, body in re.findall(r"([A-Za-z_:][\w:]*)\s*\{([^}]*)\}", expr):
        for label, op, value in re.findall(r'(\w+)\s*(=~|=)\s*"((?:\\.|[^"\\])*)"', body):
            words = value.split("|") if op == "=~" else [value]
            if label != "__name__" and all(re.match(r"\w+$", w) for w in words):
                out.setdefault((name, label), set()).update(words)
    return out


def sample_values(texts):
    """{(metric, label): {values}} of relay's samples."""
    out = {}
    for text in texts:
        for name, labels, _ in exposition.samples(text):
            for label, value in labels.items():
                out.setdefault((name, label), set()).add(value)
    return out


def label_values(query):
    """Grafana's label_values(METRIC, LABEL) as PromQL and one label, or
    the query as it is."""
    m = re.match(r"\s*label_values\(\s*(.*?)\s*,\s*(\w+)\s*\)\s*$", query)
    return (m.group(1), {m.group(2)}) if m else (query, set())


def queries(dash):
    """(where, query, the labels its legend shows) for every panel target
    and query variable."""
    def walk(panels):
        for p in panels:
            yield from walk(p.get("panels", []))
            for t in p.get("targets", []):
                if t.get("expr"):
                    legend = set(re.findall(r"\{\{\s*(\w+)\s*\}\}", t.get("legendFormat", "")))
                    yield "panel %r" % p.get("title", p.get("id")), t["expr"], legend
    yield from walk(dash.get("panels", []))
    for v in dash.get("templating", {}).get("list", []):
        q = v.get("query")
        if v.get("type") == "query":
            q = q.get("query") if isinstance(q, dict) else q
            if q:
                yield "variable %r" % v.get("name"), q, set()


def known_series(texts, rules_doc):
    """{name: labels it may be matched or grouped by}: relay's samples, the
    families it declares without a sample yet (# TYPE), the recording
    rules, Prometheus's own."""
    known = {n: set().union(*sets) | TARGET_LABELS for n, sets in exposition.series(texts).items()}
    for text in texts:
        for name, kind in re.findall(r"^# TYPE (\S+) (\S+)$", text, re.M):
            for n in ([name + s for s in ("_bucket", "_sum", "_count")] if kind == "histogram" else [name]):
                known.setdefault(n, set(TARGET_LABELS) | ({"le"} if n.endswith("_bucket") else set()))
    for n, labels in BUILTIN.items():
        known[n] = labels | TARGET_LABELS
    records = {r["record"]: r["expr"] for g in rules_doc.get("groups", []) for r in g.get("rules", [])
               if "record" in r}
    for name, expr in records.items():
        ms, _ = parse(expr)
        known[name] = set().union(*(known.get(m, set()) for m, _ in ms)) - {"le"} | TARGET_LABELS
    return known, records


def problems(dash, texts, rules_doc):
    """What the dashboard's queries name that relay does not produce: a
    list of "WHERE: WHAT" lines."""
    known, records = known_series(texts, rules_doc)
    values = sample_values(texts)
    out = []

    def check(where, query, legend=frozenset(), seen=()):
        expr, extra = label_values(query)
        metrics, grouping = parse(expr)
        names = set()
        for name, labels in metrics:
            if name not in known:
                out.append("%s: %s is no series relay exports nor a rule of the rules file"
                           % (where, name))
                continue
            names.add(name)
            for bad in sorted(labels - known[name]):
                out.append("%s: %s has no label %s (it has %s)"
                           % (where, name, bad, ", ".join(sorted(known[name]))))
            if name in records and name not in seen:
                check("%s, rule %s" % (where, name), records[name], seen=seen + (name,))
        for (name, label), want in sorted(matched_values(expr).items()):
            have_values = values.get((name, label))
            if name in records or have_values is None:
                continue  # a rule's labels are its inputs'; a family with no sample yet
            for bad in sorted(want - have_values):
                out.append('%s: %s{%s="%s"}: relay exports no such value (it has %s)'
                           % (where, name, label, bad, ", ".join(sorted(have_values))))
        have = set().union(*(known[n] for n in names)) if names else set()
        for bad in sorted((grouping | extra) - have - {"le"} - TARGET_LABELS):
            out.append("%s: groups by %s, a label none of %s has"
                       % (where, bad, ", ".join(sorted(names)) or "its series"))
        for bad in sorted(legend - have - grouping):
            out.append("%s: its legend shows %s, a label none of %s has"
                       % (where, bad, ", ".join(sorted(names)) or "its series"))
    for where, query, legend in queries(dash):
        check(where, query, legend)
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(prog="deploy.monitor.dashboard", description=__doc__.split("\n\n")[0])
    ap.add_argument("dashboard")
    ap.add_argument("--metrics", action="append", required=True)
    ap.add_argument("--rules", default=RULES)
    a = ap.parse_args(argv)
    try:
        with open(a.dashboard) as f:
            dash = json.load(f)
        with open(a.rules) as f:
            rules_doc = yaml.safe_load(f)
        texts = []
        for m in a.metrics:
            with open(m, encoding="utf-8") as f:
                texts.append(f.read())
        found = problems(dash, texts, rules_doc)
    except (OSError, ValueError, yaml.YAMLError, exposition.BadExposition) as e:
        print("deploy.monitor.dashboard: %s" % e, file=sys.stderr)
        return 65
    for line in found:
        print(line)
    n = len(list(queries(dash)))
    print("%s: %d queries, %d naming what relay does not produce" % (a.dashboard, n, len(found)),
          file=sys.stderr)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
