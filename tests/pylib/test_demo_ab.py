"""demo_ab's rule (tests/vm/demo_ab.sh) on made-up kernels' summaries."""
import unittest

import demo_ab

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


if __name__ == "__main__":
    unittest.main()
