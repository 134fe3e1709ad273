"""host_kernels.py: the rule of the A/B on systemd test hosts, on a made-up
summary.json shaped as report/summarize --testhost writes it."""
import contextlib
import copy
import io
import unittest

from tests.pylib import host_kernels


def kernel(name, level, late, max_us):
    return {"outcome": "ok", "problems": [], "kernel": "6.12.117-relay-" + name,
            "cotenant_nr_throttled": 1234, "rt_received": 1500, "preflight": {"level": level, "text": "..."},
            "late": late, "relay_late": False, "latency_us": {"max": max_us}, "relay_wake_us": {"max": 900}}


SUMMARY = {"late_ms": 20,
           "kernels": {"stock": kernel("stock", "act", 15, 46900),
                       "patched": kernel("patched", "ok", 0, 13000)},
           "verdict": {"word": "fixed", "holds": True, "stock_shows_effect": True, "patched_free": True}}


def edited(edit):
    s = copy.deepcopy(SUMMARY)
    edit(s)
    return s


class HostKernelsTest(unittest.TestCase):
    def test_holds(self):
        with contextlib.redirect_stdout(io.StringIO()) as out:
            self.assertEqual(host_kernels.check(SUMMARY), 0)
        self.assertEqual(out.getvalue().splitlines()[0],
                         "ok: stock: RT client max 46.9 ms, 15 late; relay's own wake-up max 0.9 ms")

    def test_no_wake_ups_recorded(self):
        s = edited(lambda s: s["kernels"]["patched"].update(relay_wake_us=None))
        with contextlib.redirect_stdout(io.StringIO()) as out:
            self.assertEqual(host_kernels.check(s), 0)
        self.assertTrue(out.getvalue().splitlines()[1].endswith("relay's own wake-up max not recorded"))

    def test_failures(self):
        def k(name, **kw):
            return lambda s: s["kernels"][name].update(kw)
        for edit, failure in (
                (k("stock", outcome="hung"), "stock: hung []"),
                (k("patched", problems=["no results"]), "patched: ok ['no results']"),
                (k("patched", kernel="6.12.117-relay-stock"), "patched booted 6.12.117-relay-stock"),
                (k("stock", cotenant_nr_throttled=0), "stock: the co-tenant was never throttled"),
                (k("patched", rt_received=0), "patched: the RT client got no answers"),
                (k("stock", preflight={"level": "ok"}),
                 "relay-preflight: stock {'level': 'ok'}, patched {'level': 'ok', 'text': '...'}"),
                (lambda s: s["verdict"].update(word="not-fixed"), "verdict not-fixed"),
                (lambda s: s["verdict"].update(patched_free=False),
                 "verdict parts {'word': 'fixed', 'holds': True, 'stock_shows_effect': True, "
                 "'patched_free': False}"),
                (k("patched", late=1), "patched: something 20 ms late"),
                (k("patched", relay_late=True), "patched: something 20 ms late")):
            self.assertEqual(host_kernels.failure(edited(edit)), failure)


if __name__ == "__main__":
    unittest.main()
