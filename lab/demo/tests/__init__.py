"""lab/demo's unit tests; SUMMARY: a demo's summary.json as they make it up
(every field its reader needs, and the figures the tests look at)."""
from report import formats


def _pcts(p99_9, top):
    return {"p50": 1, "p99": 2, "p99_9": p99_9, "p99_99": top, "max": top}


SUMMARY = {"kind": "vm-demo", "verdict": "fixed", "headline": "FIXED: ...", "params": {}, "spec": {},
           "honesty": {"same_initramfs": True, "same_params": True},
           "initramfs_sha256": "8e4772c9aa",
           "stock": {"outcome": "ok", "problems": [], "stalls": 7, "rt_late": 147, "rt_samples": 1360,
                     "rt_latency_us": _pcts(215000, 216000),
                     "why": {"totals": {"stalls_explained": 7}, "trace": {"lost": {"total": 0}},
                             "contentions": {"boosts": 0, "rt_waits": 3}}},
           "patched": {"outcome": "ok", "problems": [], "stalls": 0, "rt_latency_us": _pcts(95, 600),
                       "why": {"totals": {"stalls_explained": 0}, "trace": {"lost": {"total": 2}},
                               "contentions": {"boosts": 37375, "rt_waits": 37375}}}}
# A chains.json with nothing in it but what every one has.
CHAINS = {"line": "", "totals": {"stalls": 0, "stalls_explained": 0, "late": 0, "late_explained": 0},
          "stalls": [], "late": [], "contentions": {"rt_waits": 0, "boosts": 0},
          "trace": {"events": 0, "lost": {"total": 0}, "complete": True}}


def summary(s):
    """The summary S as its reader gives it."""
    return formats.parse(formats.DemoSummary, s, "summary.json")
