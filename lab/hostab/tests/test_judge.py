"""lab/hostab/judge.py: the RT client's scheduling as the guest read it
from /proc (a real rt-client.sched.json), and the late RT datagrams a
chain explains."""
import json
import os
import shutil
import tempfile
import unittest

from lab.hostab import judge
from report.files import DataError

TOP = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..")
SCHED = os.path.join(TOP, "tests", "fixtures", "hostab", "rt-client.sched.json")


class SchedTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, self.dir)

    def write(self, name, obj):
        path = os.path.join(self.dir, name)
        with open(path, "w", encoding="utf-8") as f:
            json.dump(obj, f)
        return path

    def test_the_guest_s_file(self):
        s = judge.rt_sched(SCHED)
        self.assertEqual((s["policy"], s["priority"], len(s["threads"])), ("SCHED_FIFO", 40, 2))

    def test_threads_that_differ_and_none(self):
        with open(SCHED, encoding="utf-8") as f:
            d = json.load(f)
        d["threads"][1].update(policy="SCHED_OTHER", priority=0)
        s = judge.rt_sched(self.write("differ.json", d))
        self.assertEqual((s["policy"], s["priority"]), (None, None))
        self.assertEqual(judge.rt_sched(os.path.join(self.dir, "absent.json"))["threads"], None)
        for bad, words in (({"threads": []}, "threads: empty"),
                           ({"threads": [{"policy": "SCHED_FIFO"}]}, "threads[0].priority: missing")):
            with self.assertRaises(DataError) as e:
                judge.rt_sched(self.write("bad.json", bad))
            self.assertIn(words, str(e.exception))


class ChainsTest(unittest.TestCase):
    def test_late_rows_by_chain(self):
        rows = [{"due_s": 1.0, "latency_ms": 210.0, "chain": {"wait": {"ms": 209}}},
                {"due_s": 2.0, "latency_ms": 6.0, "path": {"dominant": {"step": "the relay: woken"}}},
                {"due_s": 3.0, "latency_ms": 0.4, "path": {"dominant": {"step": "to the echo"}}}]
        doc = {"line": "...", "totals": {"stalls": 0, "stalls_explained": 0, "late": 3, "late_explained": 1},
               "stalls": [], "late": rows, "contentions": {"rt_waits": 1, "boosts": 0},
               "trace": {"events": 1, "lost": {"total": 0}, "complete": True}, "late_list_complete": True}
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "chains.json")
            with open(path, "w", encoding="utf-8") as f:
                json.dump(doc, f)
            c = judge.late_chains(path, 5)
            self.assertIsNone(judge.late_chains(os.path.join(d, "none.json"), 5))
        self.assertEqual((c["late"], c["by_chain"], c["complete"]), (2, 1, True))
        self.assertEqual(c["unexplained"], [{"due_s": 2.0, "latency_ms": 6.0,
                                             "why": "its time went elsewhere: the relay: woken"}])


if __name__ == "__main__":
    unittest.main()
