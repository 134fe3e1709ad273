"""demo_ab's rule (lab/demo/tests/demo_ab.sh) on made-up kernels' summaries."""
import unittest

from lab.demo.tests import demo_ab

STOCK = {"outcome": "ok", "stalls": 11, "rt_late": 227, "rt_latency_us": {"max": 219000}}
PATCHED = {"outcome": "ok", "stalls": 0, "rt_ticker": True, "rt_samples": 3328, "rt_expected": 3400,
           "rt_late": 0, "rt_latency_us": {"max": 530}}


class RuleTest(unittest.TestCase):
    def test_the_effect_and_a_clean_patched_kernel(self):
        self.assertTrue(demo_ab.effect(STOCK, PATCHED, 5000))
        self.assertTrue(demo_ab.clean(PATCHED))

    def test_no_effect_without_stalls_late_datagrams_or_a_tail(self):
        quiet = dict(STOCK, stalls=0, rt_late=0, rt_latency_us={"max": 600})
        self.assertFalse(demo_ab.effect(quiet, PATCHED, 5000))
        self.assertTrue(demo_ab.effect(dict(quiet, outcome="hung"), PATCHED, 5000))

    def test_patched_fails_on_one_late_datagram_or_too_few_samples(self):
        self.assertFalse(demo_ab.clean(dict(PATCHED, rt_late=1)))
        self.assertFalse(demo_ab.clean(dict(PATCHED, rt_samples=1000)))
        self.assertFalse(demo_ab.clean(dict(PATCHED, rt_latency_us={"max": 2500})))


def why(**over):
    w = {"trace": {"complete": True, "lost": {"total": 0}},
         "totals": {"stalls": 11, "stalls_explained": 11},
         "worst_stall": {"chain": {"holder_state": {"state": "throttled",
                                                    "throttled_in": "ep_poll_callback"}}},
         "contentions": {"rt_waits": 100, "boosts": 100, "boosted_to": [["FIFO", 50]]}}
    w.update(over)
    return w


class ExplainedTest(unittest.TestCase):
    def test_complete_chains_and_boosts(self):
        self.assertIsNone(demo_ab.explained(dict(STOCK, why=why()), dict(PATCHED, why=why()), 50))

    def test_each_missing_piece_is_named(self):
        st, pa = dict(STOCK, why=why()), dict(PATCHED, why=why())
        self.assertIn("no chains", demo_ab.explained(dict(STOCK), pa, 50))
        lost = why(trace={"complete": False, "lost": {"total": 3}})
        self.assertIn("lost 3 events", demo_ab.explained(dict(STOCK, why=lost), pa, 50))
        half = why(totals={"stalls": 11, "stalls_explained": 10})
        self.assertIn("10 of 11 stalls", demo_ab.explained(dict(STOCK, why=half), pa, 50))
        none = why(totals={"stalls": 0, "stalls_explained": 0})
        self.assertIn("0 of 0 stalls", demo_ab.explained(dict(STOCK, why=none), pa, 50))
        few = why(contentions={"rt_waits": 100, "boosts": 90, "boosted_to": [["FIFO", 50]]})
        self.assertIn("90 boosts", demo_ab.explained(st, dict(PATCHED, why=few), 50))
        self.assertIn("FIFO 40", demo_ab.explained(st, pa, 40))


if __name__ == "__main__":
    unittest.main()
