"""report/plots.py: the distributions of several columns on one axis, each
earlier column's curve wider than the later ones drawn over it, so that
two that coincide (an A/A run) both show."""
import os
import re
import types
import unittest
from unittest import mock

from lab.labkit import TOP
from report import plots

HGRM = os.path.join(TOP, "tests", "fixtures", "report", "demo-virtual", "{}", "results",
                    "relay.tick_lateness.hgrm")


class DistributionTest(unittest.TestCase):
    def test_earlier_columns_wider(self):
        cols = [types.SimpleNamespace(label=k, hgrm={"relay": HGRM.format(k)}) for k in ("stock", "patched")]
        view = types.SimpleNamespace(columns=cols, signal_ms=None)
        with mock.patch.object(plots, "run_gnuplot") as run:
            self.assertTrue(plots.distribution(view, "relay", "tick", "out.svg"))
        widths = [float(w) for w in re.findall(r"with steps lw ([\d.]+)", run.call_args[0][0])]
        self.assertEqual(widths, [6.0, 2.5])


if __name__ == "__main__":
    unittest.main()
