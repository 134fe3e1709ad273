"""host_ab.py: make host-ab's acceptance, on a made-up summary.json shaped
as report/summarize --testhost writes it."""
import contextlib
import copy
import io
import unittest

from lab.hostab.tests import host_ab


def kernel(name, level, late, max_us):
    return {"outcome": "ok", "problems": [], "kernel": "6.12.117-relay-" + name,
            "cotenant_nr_throttled": 1234, "rt_received": 1500, "preflight": {"level": level, "text": "..."},
            "late": late, "late_at_least": late, "latency_us": {"max": max_us, "count": 1700},
            "rt_policy": "SCHED_FIFO", "rt_priority": 40, "stalls": 3 if late else 0,
            "metrics": {"before": f"{name}/scenario/relay-metrics-before.txt",
                        "after": f"{name}/scenario/relay-metrics.txt"},
            "late_chains": {"late": late, "by_chain": late, "complete": True, "unexplained": []}}


SUMMARY = {"late_ms": 5, "params": {"ticker_prio": 40},
           "kernels": {"stock": kernel("stock", "act", 60, 216900),
                       "patched": kernel("patched", "ok", 0, 1300)},
           "verdict": {"word": "fixed", "holds": True, "stock_shows_effect": True, "patched_free": True,
                       "late_explained": True}}


def edited(edit):
    s = copy.deepcopy(SUMMARY)
    edit(s)
    return s


class HostAbTest(unittest.TestCase):
    def test_holds(self):
        with contextlib.redirect_stdout(io.StringIO()) as out:
            self.assertEqual(host_ab.check(SUMMARY), 0)
        self.assertEqual(out.getvalue().splitlines()[0],
                         "ok: stock: 60 of 1700 RT datagrams 5 ms late or more, 60 by a chain; "
                         "max 216.90 ms; the RT client SCHED_FIFO 40; 3 stalls")

    def test_failures(self):
        def k(name, **kw):
            return lambda s: s["kernels"][name].update(kw)

        def chains(name, **kw):
            return lambda s: s["kernels"][name]["late_chains"].update(kw)
        for edit, failure in (
                (k("stock", outcome="hung"), "stock: hung []"),
                (k("patched", problems=["no results"]), "patched: ok ['no results']"),
                (k("patched", kernel="6.12.117-relay-stock"), "patched booted 6.12.117-relay-stock"),
                (k("stock", cotenant_nr_throttled=0), "stock: the co-tenant was never throttled"),
                (k("patched", rt_received=0), "patched: the RT client got no answers"),
                (k("stock", rt_priority=0, rt_policy="SCHED_OTHER"),
                 "stock: the RT client ran SCHED_OTHER 0, not SCHED_FIFO 40"),
                (k("patched", metrics={"before": "x"}),
                 "patched: no watch record, or relay's /metrics not recorded before and after"),
                (k("stock", late_chains=None),
                 "stock: no chains (the trace was not recorded or not explained)"),
                (k("stock", preflight={"level": "ok"}),
                 "relay-preflight: stock {'level': 'ok'}, patched {'level': 'ok', 'text': '...'}"),
                (lambda s: s["verdict"].update(word="no effect", holds=False),
                 "verdict {'word': 'no effect', 'holds': False, 'stock_shows_effect': True, "
                 "'patched_free': True, 'late_explained': True}"),
                (k("stock", late_at_least=58), "stock: 58-60 RT datagrams late, not a count above 0"),
                (chains("stock", by_chain=59),
                 "stock: 59 of 60 late RT datagrams explained by a chain (60 listed)"),
                (k("patched", late=1, late_at_least=1), "patched: 1 RT datagrams 5 ms late")):
            self.assertEqual(host_ab.failure(edited(edit)), failure)


if __name__ == "__main__":
    unittest.main()
