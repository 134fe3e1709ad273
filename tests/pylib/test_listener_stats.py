"""listener_stats' check (tests/integration/relay_listener_stats.sh) on
made-up stats before and after the reload."""
import unittest

from tests.pylib import listener_stats

DROPS = {"oversize": 0, "flows_busy": 0}
PORTS = ("1001", "1002", "1003", "2001", "2002", "3001")   # pA pB pT ua ub tup


def stats(phase):
    extra = 5 if phase == "after" else 0
    d = {
        "drops": dict(DROPS),
        "counters": {"rx_packets": 80 + extra},
        "listeners": {
            "udp://127.0.0.1:1001": {
                "id": 0, "rx_packets": 30 + extra, "rx_bytes": 16 * (30 + extra),
                "reply_tx_packets": 30 + extra, "reply_tx_bytes": 19 * (30 + extra),
                "flows_created": 1 + (extra > 0), "drops": dict(DROPS)},
            "tcp://127.0.0.1:1003": {"id": 2, "accepted": 1, "rx_bytes": 100, "tx_bytes": 100,
                                     "closed": {"done": 1}},
        },
        "upstreams": {
            "udp://127.0.0.1:2001": {"tx_packets": 80, "reply_packets": 80, "tx_bytes": 1480,
                                     "drops": {"upstream_refused": 0, "upstream_error": 0}},
            "tcp://127.0.0.1:3001": {"connected": 1},
        },
    }
    if phase == "before":
        d["listeners"]["udp://[::1]:1002"] = {"id": 1, "rx_packets": 50, "reply_tx_bytes": 1150,
                                              "flows_active": 1}
    else:
        d["upstreams"]["udp://127.0.0.1:2002"] = {"tx_packets": 5, "reply_packets": 5}
    return d


class Check(unittest.TestCase):
    def test_both_phases_pass(self):
        for phase in ("before", "after"):
            listener_stats.check(stats(phase), phase, *PORTS)

    def test_one_count_off_fails(self):
        d = stats("before")
        d["listeners"]["udp://[::1]:1002"]["reply_tx_bytes"] = 1151
        with self.assertRaisesRegex(AssertionError, "'reply_tx_bytes': 1151"):
            listener_stats.check(d, "before", *PORTS)

    def test_a_drop_counted_fails(self):
        d = stats("after")
        d["listeners"]["udp://127.0.0.1:1001"]["drops"]["oversize"] = 1
        with self.assertRaises(AssertionError):
            listener_stats.check(d, "after", *PORTS)

    def test_the_removed_listener_still_shown_fails(self):
        d = stats("after")
        d["listeners"]["udp://[::1]:1002"] = stats("before")["listeners"]["udp://[::1]:1002"]
        with self.assertRaises(AssertionError):
            listener_stats.check(d, "after", *PORTS)

    def test_the_phases_differ(self):
        with self.assertRaises((AssertionError, TypeError)):
            listener_stats.check(stats("before"), "after", *PORTS)


if __name__ == "__main__":
    unittest.main()
