"""The soak's verdict (lab/soak/soak.py), on made-up runs."""
import csv
import json
import os
import tempfile
import unittest

from lab.soak import soak
from report import formats


def write_run(d, rss, reload_failed=0, udp_lost=0):
    cols = ["t_s", "rss_kib", "fds", "fds_base", "udp_rx_pps", "tcp_rx_bytes_ps", "drops",
            "rt_demotions", "reloads_applied"]
    with open(os.path.join(d, "soak.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(cols)
        for i, kib in enumerate(rss):
            w.writerow([30 * i, kib, 20, 18, 1000, 5000, 0, 0, i])
    lat = {"corrected": {"p50": 20, "p99": 80, "max": 300}}
    for p, lost in (("udp", udp_lost), ("tcp", 0)):
        with open(os.path.join(d, p + "-soak.json"), "w") as f:
            json.dump({"sent": 100000, "received": 100000 - lost, "lost": lost, "late": 0,
                       "achieved_rate": 1000.0, "rate_ok": True, "latency_us": lat}, f)
    return {"secs": 60, "slo": "p50=5ms", "cap_u": 1250, "cap_t": 1250, "rate_u": 1000,
            "rate_t": 1000, "share": 0.5, "max_loss": 0.0001, "sent": 3, "ok": 3 - reload_failed,
            "part": 0, "failed": reload_failed, "rc_u": 0, "rc_t": 0, "healthy": True}


class SoakVerdictTest(unittest.TestCase):
    def judge(self, **kw):
        with tempfile.TemporaryDirectory() as d:
            a = write_run(d, **kw)
            text, held = soak.verdict(d, a)
            with open(os.path.join(d, "soak.json")) as f:
                out = json.load(f)
            # what it wrote fits its reader (docs/formats.md)
            self.assertEqual(formats.check(os.path.join(d, "soak.json")).verdict, out["verdict"])
        return held, {c["name"]: c["ok"] for c in out["checks"]}, text

    def test_a_flat_clean_run_passes(self):
        held, checks, text = self.judge(rss=[8000, 8010, 8000, 8020, 8000, 8010])
        self.assertTrue(held, checks)
        self.assertIn("verdict: pass", text)

    def test_growth_loss_and_failed_reloads_fail_their_checks(self):
        held, checks, _ = self.judge(rss=[8000, 8000, 9000, 9500, 10000, 12000])
        self.assertFalse(held)
        self.assertFalse(checks["rss flat"])
        held, checks, _ = self.judge(rss=[8000] * 6, udp_lost=50)
        self.assertEqual((held, checks["udp loss"]), (False, False))
        held, checks, _ = self.judge(rss=[8000] * 6, reload_failed=1)
        self.assertEqual((held, checks["reloads applied"]), (False, False))

    def test_capacity_of_a_sweep(self):
        self.assertEqual(soak.capacity({"capacity": {"target_rate": 1234.0}}), 1234)
        self.assertEqual(soak.capacity({"capacity": None}), 0)

    def test_missing_files_are_named(self):
        with tempfile.TemporaryDirectory() as d:
            with self.assertRaises(soak.SoakError) as e:
                soak.verdict(d, {})
            self.assertIn("soak.csv", str(e.exception))


if __name__ == "__main__":
    unittest.main()
