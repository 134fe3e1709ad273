"""deploy/monitor/exposition.py: a Prometheus text exposition (relay's
/metrics, or its relay.metrics.prom at exit), read with the Prometheus
client library's own parser.

  samples(text)  -> [(name, {label: value}, value)]
  series(texts)  -> {sample name: set of label-name tuples}
"""
from prometheus_client.parser import text_string_to_metric_families


class BadExposition(Exception):
    """The text is not the Prometheus text format."""


def samples(text):
    """Every sample of text, in order: (name, labels, value)."""
    try:
        return [(s.name, dict(s.labels), s.value)
                for f in text_string_to_metric_families(text) for s in f.samples]
    except ValueError as e:
        raise BadExposition(str(e)) from e


def series(texts):
    """The sample names of every text, each with the label-name sets its
    samples carry (a histogram's _bucket with le)."""
    out = {}
    for text in texts:
        for name, labels, _ in samples(text):
            out.setdefault(name, set()).add(tuple(sorted(labels)))
    return out


def value(text, name, **labels):
    """The value of the one sample name whose labels include labels, or
    None when there is none (more than one: BadExposition)."""
    got = [v for n, ls, v in samples(text)
           if n == name and all(ls.get(k) == want for k, want in labels.items())]
    if len(got) > 1:
        raise BadExposition("%d samples of %s%s" % (len(got), name, labels))
    return got[0] if got else None
