"""lab/capacity/repeats.py: a cell's answer over its independent repeats
(the median and the interval, unstable when they disagree, the
confidence), and when two runs agree on a cell; on made-up repeats and
on two stored capacity.json documents (tests/fixtures/capacity-repeats)."""
import io
import json
import os
import unittest
from contextlib import redirect_stdout

from lab.capacity import repeats
from lab.capacity.repeats import Repeat
from lab.labkit import TOP

FIXTURE = os.path.join(TOP, "tests", "fixtures", "capacity-repeats")


def found(*caps, at_least=False):
    return [Repeat(i, "to" if at_least else "found", c, at_least) for i, c in enumerate(caps, 1)]


def none(n, first=1):
    return [Repeat(i, "none", None) for i in range(first, first + n)]


class CombineTest(unittest.TestCase):
    def test_every_repeat_found_one(self):
        c = repeats.combine(found(26000, 24000, 28000))
        self.assertEqual((c["median_pps"], c["min_pps"], c["max_pps"]), (26000, 24000, 28000))
        self.assertEqual((c["repeats"], c["found"], c["none"], c["unstable"]), (3, 3, 0, False))
        self.assertEqual(c["confidence"], 0.75)
        self.assertEqual(repeats.text(c), "26000 pps (24000-28000 over 3 repeats)")
        # an even count: the lower middle; four repeats: 87.5 %
        c = repeats.combine(found(5000, 4000, 6000, 7000))
        self.assertEqual((c["median_pps"], c["confidence"]), (5000, 0.875))
        # one: no interval, no confidence
        c = repeats.combine(found(5000))
        self.assertEqual((c["median_pps"], c["min_pps"], c["max_pps"], c["confidence"]),
                         (5000, 5000, 5000, 0.0))
        self.assertEqual(repeats.text(c), "5000 pps (5000 over 1 repeat)")

    def test_a_ceiling_is_a_lower_bound(self):
        c = repeats.combine(found(468, 468, at_least=True))
        self.assertTrue(c["at_least"])
        self.assertEqual(repeats.text(c), ">= 468 pps (468 over 2 repeats; a ceiling of loadgen's)")

    def test_none_in_every_repeat(self):
        c = repeats.combine(none(3))
        self.assertEqual((c["found"], c["none"], c["unstable"], c["median_pps"]), (0, 3, False, None))
        self.assertEqual(repeats.text(c), "none (3 repeats)")
        self.assertEqual(repeats.kind(c), "none")

    def test_repeats_that_disagree_have_no_number(self):
        # on every side of the split: no median, the fraction, the interval
        # of those that found one
        for k in range(1, 5):
            c = repeats.combine(found(*[20000 + 1000 * i for i in range(k)]) + none(5 - k, k + 1))
            self.assertTrue(c["unstable"], k)
            self.assertIsNone(c["median_pps"])
            self.assertEqual((c["found"], c["none"], c["fraction_found"]), (k, 5 - k, k / 5))
            self.assertEqual((c["min_pps"], c["max_pps"]), (20000, 20000 + 1000 * (k - 1)))
            self.assertEqual(repeats.kind(c), "unstable")
        self.assertEqual(repeats.text(repeats.combine(found(21000, 23000) + none(1, 3))),
                         "unstable: found in 2 of 3 repeats (21000-23000 pps)")

    def test_loadgen_own_limit_at_the_lowest_rate_says_neither(self):
        neither = Repeat(3, "sender", None)
        c = repeats.combine(found(5000, 6000) + [neither])
        self.assertFalse(c["unstable"])
        self.assertEqual((c["repeats"], c["found"], c["none"], c["median_pps"]), (3, 2, 0, 5000))
        c = repeats.combine([neither])
        self.assertEqual(repeats.kind(c), "unknown")
        self.assertFalse(repeats.agree(c, c))

    def test_no_repeat(self):
        self.assertIsNone(repeats.combine([]))
        self.assertEqual(repeats.text(None), "no result")


class AgreeTest(unittest.TestCase):
    def test_intervals_that_overlap(self):
        a = repeats.combine(found(21000, 22000, 23000))
        self.assertTrue(repeats.agree(a, repeats.combine(found(23000, 24000, 26000))))
        self.assertTrue(repeats.agree(a, repeats.combine(found(19000, 21000))))
        self.assertFalse(repeats.agree(a, repeats.combine(found(23400, 26000, 27000))))
        self.assertFalse(repeats.agree(repeats.combine(found(26000)), a))

    def test_none_and_unstable_agree_with_their_own_kind_only(self):
        n = repeats.combine(none(3))
        u = repeats.combine(found(5000) + none(2, 2))
        u2 = repeats.combine(found(30000, 31000) + none(1, 3))
        f = repeats.combine(found(5000, 5000, 5000))
        self.assertTrue(repeats.agree(n, repeats.combine(none(2))))
        self.assertTrue(repeats.agree(u, u2))   # unstable in both, whatever the intervals
        for x, y in ((n, u), (n, f), (u, f), (None, n), (None, None)):
            self.assertFalse(repeats.agree(x, y))
            self.assertFalse(repeats.agree(y, x))


class CompareTest(unittest.TestCase):
    def read(self, name):
        with open(os.path.join(FIXTURE, name, "capacity.json"), encoding="utf-8") as f:
            return json.load(f)

    def test_two_stored_runs(self):
        rows, ok = repeats.compare(self.read("a"), self.read("b"))
        self.assertFalse(ok)
        got = {(k, q): same for k, q, _, _, _, same in rows}
        self.assertEqual(got, {("stock", 10): True, ("stock", 25): True, ("stock", 50): True,
                               ("patched", 10): True, ("patched", 25): False, ("patched", 50): True})
        self.assertEqual([r[3:5] for r in rows if r[:2] == ("patched", 25)],
                         [("21528 pps (20592-21528 over 3 repeats)",
                           "26076 pps (26076-27209 over 3 repeats)")])

    def test_the_command(self):
        out = io.StringIO()
        with redirect_stdout(out):
            rc = repeats.main([os.path.join(FIXTURE, "a"), os.path.join(FIXTURE, "a")])
        self.assertEqual(rc, 0)
        self.assertTrue(out.getvalue().endswith("every cell agrees\n"))
        with redirect_stdout(io.StringIO()):
            self.assertEqual(repeats.main([os.path.join(FIXTURE, "a"), os.path.join(FIXTURE, "b")]), 1)


if __name__ == "__main__":
    unittest.main()
