"""bench/summary.py: the UDP benchmarks' medians, ratios and targets, on
made-up runs."""
import contextlib
import io
import json
import os
import tempfile
import unittest

from bench import summary


# offered, forwarded per run: relay carries its sustainable 100k/s, nginx
# and socat less
OVERLOAD = {"relay": ["400000 100000", "420000 98000", "410000 101000"],
            "nginx": ["400000 60000", "400000 61000", "400000 59000"],
            "socat": ["300000 9000", "300000 9500", "300000 8000"]}


def write_runs(d, runs):
    for name, lines in runs.items():
        with open(os.path.join(d, name), "w", encoding="utf-8") as f:
            f.write("".join(line + "\n" for line in lines))


def quietly(fn, *args):
    with contextlib.redirect_stdout(io.StringIO()) as out:
        rc = fn(*args)
    return rc, out.getvalue()


class SummaryTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.d = self.dir.name
        self.out = os.path.join(self.d, "out.json")

    def tearDown(self):
        self.dir.cleanup()

    def test_column_medians(self):
        write_runs(self.d, {"f": ["3 10.5", "1 30", "2 20"]})
        self.assertEqual(summary.column_medians(os.path.join(self.d, "f")), [2, 20])
        write_runs(self.d, {"g": ["1 4", "2 8"]})
        self.assertEqual(summary.column_medians(os.path.join(self.d, "g")), [1.5, 6])

    def overload(self, runs):
        write_runs(self.d, {"ov." + k: v for k, v in runs.items()})
        rc, out = quietly(summary.udp_overload, self.out, 100000, 3, self.d, list(runs))
        with open(self.out, encoding="utf-8") as f:
            return rc, out, json.load(f)

    def test_udp_overload_met(self):
        rc, out, j = self.overload(OVERLOAD)
        self.assertEqual(rc, 0)
        self.assertEqual(list(j), ["bench", "runs", "sustainable_pps", "offered_pps", "forwarded_pps",
                                   "checks", "targets_met"])
        self.assertEqual(j["forwarded_pps"], {"relay": 100000, "nginx": 60000, "socat": 9000})
        self.assertEqual(j["offered_pps"]["relay"], 410000)
        self.assertEqual([c["met"] for c in j["checks"]], [True] * 4)
        self.assertEqual(j["checks"][2], {"name": "relay / nginx forwarded", "value": 100000 / 60000,
                                          "target": ">= 1", "met": True})
        self.assertTrue(j["targets_met"])
        self.assertIn("relay overloaded / sustainable       1.00  target >= 0.9 met", out)

    def test_udp_overload_missed(self):
        # relay collapses to 80 % of its sustainable rate when overloaded
        rc, out, j = self.overload(dict(OVERLOAD, relay=["400000 80000"] * 3))
        self.assertEqual(rc, 1)
        self.assertFalse(j["targets_met"])
        self.assertEqual([c["name"] for c in j["checks"] if not c["met"]], ["relay overloaded / sustainable"])
        self.assertIn("relay overloaded / sustainable       0.80  target >= 0.9 MISSED", out)

    def pps_runs(self, relay_pps=900000, relay_p50=14.0):
        runs = {}
        rates = {"direct": 1000000, "relay": relay_pps, "relay-nobudget": 910000, "nginx": 300000,
                 "socat": 50000}
        for k, rate in rates.items():
            for t in summary.TRAFFICS:
                runs["pps.%s.%s" % (t, k)] = ["%d 0.5 1100000" % rate] * 3
            runs["rtt." + k] = ["%.1f 30" % (relay_p50 if k == "relay" else 10.0)] * 3
        write_runs(self.d, runs)
        rc, out = quietly(summary.relay_pps, self.out, 64, 3, self.d)
        with open(self.out, encoding="utf-8") as f:
            return rc, out, json.load(f)

    def test_relay_pps_met(self):
        rc, _, j = self.pps_runs()
        self.assertEqual(rc, 0)
        self.assertEqual(list(j), ["bench", "size", "runs", "traffic", "rtt_p50_us", "rtt_p99_us",
                                   "added_p50_us", "checks", "targets_met"])
        seg = j["traffic"]["segmented"]
        self.assertEqual(seg["ratios"]["relay_vs_nginx"], 3)
        self.assertEqual(seg["pps_per_cpu1"]["relay"], 1800000)
        self.assertNotIn("direct", seg["cpu1_busy"])
        self.assertEqual(j["added_p50_us"]["relay"], 4)
        self.assertEqual(len(j["checks"]), 7)

    def test_relay_pps_missed(self):
        # relay no faster than its budget-less self allows, and slow
        rc, out, j = self.pps_runs(relay_pps=800000, relay_p50=25.0)
        self.assertEqual(rc, 1)
        missed = [c["name"] for c in j["checks"] if not c["met"]]
        self.assertEqual(missed, ["datagram: relay / without budget", "segmented: relay / without budget",
                                  "relay added p50 (us)"])
        self.assertIn("relay added p50 (us)                    15.00  target < 10  MISSED", out)


if __name__ == "__main__":
    unittest.main()
