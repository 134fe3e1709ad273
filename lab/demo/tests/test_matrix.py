"""lab/demo/cells.py, matrix.py and matrix_page.py, the matrix's table and page: a row per
kernel and a cell per waiter from recorded demos (the summary.json of a
debian13 and of a 7.3 run: tests/fixtures/demo-matrix/), the runs of a
cell folded together, one sentence per fix from the rows that differ in
it alone, and the tables those make."""
import contextlib
import copy
import html
import io
import json
import os
import shutil
import tempfile
import unittest
from unittest import mock

from lab.demo import cells, matrix, matrix_page
from lab.labkit import TOP
from lab.labkit import run as labrun

from . import CHAINS

FIX = os.path.join(TOP, "tests", "fixtures", "demo-matrix")


def summary(pair):
    with open(os.path.join(FIX, f"summary-{pair}.json"), encoding="utf-8") as f:
        return json.load(f)


def observed(pair, waker="unix"):
    s = summary(pair)
    return {k: cells.observe(s, k, waker) for k in ("stock", "patched")}


def rows():
    """The four kernels' rows, each from its one AF_UNIX demo."""
    out = []
    for pair in ("debian13", "7.3"):
        o = observed(pair)
        out += [cells.row(pair, k, [o[k]]) for k in ("stock", "patched")]
    return out


class ObserveTest(unittest.TestCase):
    def test_debian13(self):
        o = observed("debian13")
        st, pa = o["stock"], o["patched"]
        self.assertEqual((st["rt"]["word"], st["tick"]["word"], st["quota"]["word"]),
                         ("STALLED", "HELD UP", "HELD UP"))
        self.assertEqual((pa["rt"]["word"], pa["tick"]["word"], pa["quota"]["word"]),
                         ("CLEAN", "ON TIME", "ON TIME"))
        self.assertEqual((st["rt"]["stalls"], st["quota"]["over"]), (85, 84))
        self.assertEqual((st["image"]["lock"], st["model"]), ("rwlock_t", "cfs_rq"))
        self.assertRegex(st["rt"]["chain"], r"^85 of 85 stalls explained; the worst: relay \(FIFO 50\) "
                         r"waited [\d.]+ ms in do_epoll_wait on ep->lock \(rwlock_t\) held by loadgen/\d+, "
                         r"throttled in ep_poll_callback")
        # the refill waited for the stall it would have ended
        self.assertRegex(st["quota"]["chain"], r"ktimers/1 \(the CPU's timer softirq, running the relay's "
                         r"timerfd tick\) .* queued behind relay/\d+'s pending write, held by loadgen/\d+, "
                         r"throttled in ep_poll_callback until a write to cpu.max")
        # the patched kernel's timer softirq thread is RT: it boosts the holder
        self.assertRegex(pa["tick"]["chain"], r"waits on ep->lock by ktimers/1 delivering it; the longest: "
                         r".*boosted to FIFO 1")
        self.assertEqual(pa["throttled"]["periods"], 912)

    def test_7_3(self):
        o = observed("7.3")
        st = o["stock"]
        self.assertEqual((st["image"]["lock"], st["image"]["throttle_model"], st["model"]),
                         ("rwlock_t", None, "task"))
        self.assertEqual([st[w]["word"] for w in ("rt", "tick", "quota")], ["CLEAN", "ON TIME", "ON TIME"])
        self.assertRegex(st["rt"]["chain"], r"its throttle deferred to its way back to user space "
                         r"\(taken off at [\d.]+ s in exit_to_user_mode_loop\)")
        self.assertEqual(st["rt"]["boosts"], 0)
        self.assertGreater(o["patched"]["rt"]["boosts"], 40000)

    def test_words(self):
        s = summary("debian13")
        k = copy.deepcopy(s["patched"])
        rule = cells.judge.Rule.of(s["params"])
        self.assertEqual(cells.rt_word(k, rule), "CLEAN")
        k["rt_late"] = 3
        self.assertEqual(cells.rt_word(k, rule), "SOME LATE")
        k["rt_late"] = 12
        self.assertEqual(cells.rt_word(k, rule), "HELD UP")
        k["outcome"] = "failed"
        self.assertEqual(cells.rt_word(k, rule), "NO RESULT")
        k["outcome"] = "hung"
        self.assertEqual(cells.rt_word(k, rule), "STALLED")
        # a tick over the limit that its softirq thread's waits on
        # ep->lock do not account for: late, not held by the lock
        pa = copy.deepcopy(s["patched"])
        pa.update(timer_late_windows=1, relay_latency_us=dict(pa["relay_latency_us"], max=7210))
        tick = cells.tick_cell(pa, pa["why"])
        self.assertEqual(tick["word"], "LATE")
        self.assertRegex(tick["chain"], r"^not on ep->lock: the tick came 7.21 ms late, its softirq thread's "
                         r"longest wait there [\d.]+ ms; ")
        # with the tick's deliveries traced: what held the latest one
        pa["why"]["tick_delivery"] = {"longest": {"cpu": 1, "late_ms": 7.2, "held_by": {
            "what": "cpu", "ran": [{"task": {"pid": 0, "comm": "swapper/1"}, "ms": 7.19}],
            "cpu_silent_ms": 4.0, "softirq_raised_ms": 3.2, "thread_woken_ms": 4.0}}}
        self.assertRegex(cells.tick_cell(pa, pa["why"])["chain"], r"; its latest delivery, 7.2 ms after it "
                         r"was "
                         r"due on CPU 1: the CPU ran idle 7.19 ms .*raised 3.2 ms after the tick was due")
        pa["why"]["timer_tick"]["wait_ms"]["max"] = 7.0
        self.assertEqual(cells.tick_cell(pa, pa["why"])["word"], "HELD UP")
        # a refill over the limit on a CPU that was idle meanwhile: late,
        # no lock and no throttled task held it (Debian's signed 7.3.4);
        # held up when its softirq thread waited on a lock
        q = pa["why"]["quota_timer"]
        q.update(over_late_ms=1, longest={"cpu": 1, "late_ms": 7.852, "held_by": {
            "what": "cpu", "ran": [{"task": {"pid": 0, "comm": "swapper/1"}, "ms": 7.84}],
            "cpu_silent_ms": 3.998, "softirq_raised_ms": 3.834, "thread_woken_ms": 3.998}})

        def word():
            return cells.observe(dict(s, patched=pa), "patched", "unix")["quota"]
        self.assertEqual(word()["word"], "LATE")
        self.assertRegex(word()["chain"], r"^the longest 7.852 ms late on CPU 1: the CPU ran idle 7.84 ms "
                         r".*its timer softirq raised 3.834 ms after the refill was due")
        q["longest"]["held_by"] = {"what": "softirq_thread_blocked", "waiter": {"comm": "ktimers/1"},
                                   "wait_ms": 7.8, "lock": "0xffff8a36012aec90"}
        self.assertEqual(word()["word"], "HELD UP")
        # a chains.json from before the quota's timer was traced
        s["stock"]["why"]["quota_timer"] = None
        self.assertEqual(cells.observe(s, "stock", "unix")["quota"]["word"], "NOT TRACED")


class CellTest(unittest.TestCase):
    def test_runs_fold_into_ranges_and_mixed_words(self):
        a = observed("debian13")["stock"]
        b = copy.deepcopy(a)
        b["rt"].update(stalls=61, worst_stall_ms=230.0)
        c = cells.cell("rt", [a, b])
        self.assertEqual((c["word"], c["runs"]), ("STALLED", 2))
        self.assertRegex(c["figures"], r"^61-85 stalls \(worst 222-230 ms\)")
        b["rt"]["word"] = "CLEAN"
        c = cells.cell("rt", [a, b, copy.deepcopy(a)])
        self.assertEqual(c["word"], "MIXED")
        self.assertRegex(c["figures"], r"^STALLED in 2 of 3, CLEAN in 1 of 3; ")
        # the worst run's chain: the one that stalled most
        self.assertEqual(c["chain"], a["rt"]["chain"])
        # each waiter from its own waker's demos
        self.assertIsNone(cells.cell("rt_udp", [a]))
        u = observed("debian13", "udp")["stock"]
        self.assertEqual(cells.cell("rt_udp", [a, u])["runs"], 1)

    def test_row_facts(self):
        r = rows()
        self.assertEqual([(x["kernel"], x["lock"], x["model"]) for x in r], [
            ("6.16.12+deb13-rt-amd64", "rwlock_t", "cfs_rq"),
            ("6.17.13+deb13-rt-amd64", "spinlock_t", "cfs_rq"),
            ("7.3.4-relay-stock", "rwlock_t", "task"), ("7.3.4-relay-patched", "spinlock_t", "task")])
        self.assertEqual(r[0]["lock_from"], "its BTF")
        self.assertRegex(r[2]["model_from"], "the trace's probe on throttle_cfs_rq_work")
        # what the image says against what the trace saw
        o = observed("7.3")["stock"]
        o["image"] = dict(o["image"], lock="spinlock_t")
        self.assertEqual(cells.row("7.3", "stock", [o])["lock_note"],
                         "the image says spinlock_t, the trace's waits rwlock_t")


class FixesTest(unittest.TestCase):
    def test_each_fix_from_the_rows_that_differ_in_it_alone(self):
        comps = cells.comparisons(rows())
        self.assertEqual([(c["without"], c["with"], c["context"]) for c in comps["epoll"]], [
            ("6.16.12+deb13-rt-amd64 (debian13 stock)", "6.17.13+deb13-rt-amd64 (debian13 patched)",
             "cfs_rq"),
            ("7.3.4-relay-stock (7.3 stock)", "7.3.4-relay-patched (7.3 patched)", "task")])
        self.assertEqual([(c["without"], c["with"]) for c in comps["throttle"]], [
            ("6.16.12+deb13-rt-amd64 (debian13 stock)", "7.3.4-relay-stock (7.3 stock)"),
            ("6.17.13+deb13-rt-amd64 (debian13 patched)", "7.3.4-relay-patched (7.3 patched)")])
        verdicts = {(f, c["context"]): {x["waiter"]: x["verdict"] for x in c["waiters"]}
                    for f, cs in comps.items() for c in cs}
        every = {"rt": "protects", "tick": "protects", "quota": "protects"}
        self.assertEqual(verdicts[("epoll", "cfs_rq")], every)
        self.assertEqual(verdicts[("throttle", "rwlock_t")], every)
        self.assertEqual(set(verdicts[("epoll", "task")].values()), {"not needed"})
        s = cells.sentence("epoll", comps["epoll"])
        self.assertRegex(s, r"^The epoll change .*: with the per-cfs_rq throttle "
                         r"\(6.16.12\S* \(debian13 stock\) "
                         r"-> .*\) it protects RT ticker through relay \(AF_UNIX waker\): STALLED -> CLEAN, "
                         r"85 -> 0 stalls")
        self.assertIn("with the task-based throttle (7.3.4-relay-stock (7.3 stock) -> 7.3.4-relay-patched "
                      "(7.3 patched)) it has no stall to prevent for", s)
        self.assertRegex(cells.sentence("throttle", []), "no two kernels of this matrix differ in it alone")

    def test_a_cell_mixed_of_on_time_and_late_runs_is_not_the_fix_s_doing(self):
        """LATE runs are late for a reason neither fix touches: a cell of
        ON TIME and LATE runs leaves a fix unsettled, never worse; one
        with a HELD UP run among them is bad."""
        def row(**words):
            return {"cells": {w: {"word": "MIXED" if len(set(ws)) > 1 else ws[0], "words": ws,
                                  "values": [{"max_ms": 1.0}]}
                              for w, ws in words.items()}}
        before = row(tick=["ON TIME"], quota=["ON TIME"])
        after = row(tick=["ON TIME", "LATE"], quota=["ON TIME", "HELD UP"])
        got = {x["waiter"]: x["verdict"] for x in cells.compare(before, after)}
        self.assertEqual(got, {"tick": "unknown", "quota": "worse"})

    def test_on_7x(self):
        r = rows()
        out = cells.on_7x(r, cells.comparisons(r))
        self.assertEqual([(k["kernel"], k["what"]) for k in out["kernels"]], [
            ("7.3.4-relay-stock", "ep->lock an rwlock_t, the task-based throttle"),
            ("7.3.4-relay-patched", "as shipped: both changes")])
        self.assertEqual({w: c["word"] for w, c in out["kernels"][0]["waiters"].items()},
                         {"rt": "CLEAN", "tick": "ON TIME", "quota": "ON TIME"})
        self.assertEqual([len(out["fixes"][f]) for f in ("epoll", "throttle")], [1, 2])
        lines = cells.on_7x_lines(out)
        self.assertEqual(len(lines), 2)
        self.assertRegex(lines[0], r"^7\.3\.4-relay-stock \(7\.3 stock, ep->lock an rwlock_t, the task-based "
                         r"throttle\): RT ticker through relay \(AF_UNIX waker\) CLEAN \(0 stalls, .*\); "
                         r"relay's timer tick \(non-RT\) ON TIME \(max [\d.]+ ms late.*\); "
                         r"quota period's timer ON TIME \(\d+ refills")
        self.assertEqual(cells.on_7x_lines({"kernels": [], "fixes": {}}), [])


class PageTest(unittest.TestCase):
    def tables(self):
        prows = []
        for pair, d in (("debian13", "summary-debian13.json"), ("7.3", "summary-7.3.json")):
            prows.append({"pair": pair, "what": matrix.PAIRS[pair][0], "verdict": summary(pair)["verdict"],
                          "demos": {"unix": [{"run": summary(pair)["run_id"],
                                              "verdict": summary(pair)["verdict"]}]},
                          "wakers": {"unix": summary(pair)["verdict"]}})
        r = rows()
        doc, fixes = matrix.document(prows, r, {"unix": 1, "udp": 0})
        return r, prows, doc, fixes

    def test_markdown_a_row_per_kernel(self):
        r, prows, doc, fixes = self.tables()
        md = matrix_page.markdown(r, prows, fixes, doc["on_7x"]).splitlines()
        kernels = [x for x in md if ", stock) | " in x or ", patched) | " in x]
        self.assertEqual(len(kernels), 4)
        self.assertTrue(kernels[0].startswith("| 6.16.12+deb13-rt-amd64 (debian13, stock) | Debian's "
                                              "linux-image-6.16.12"))
        self.assertEqual(kernels[0].count("**STALLED**") + kernels[0].count("**HELD UP**"), 3)
        self.assertIn("not run", kernels[0])        # no UDP demo
        self.assertIn(fixes["epoll"]["sentence"], md)
        self.assertEqual(len([x for x in md if x.startswith("On 7.x: 7.3.4-relay-")]), 2)
        self.assertEqual(sorted(doc), ["fixes", "kernels", "on_7x", "pairs", "runs"])
        self.assertIn("| Debian 13's signed 6.16.12 against 6.17.13, as shipped | FIXED (", "\n".join(md))

    def test_the_recorded_matrix_reads_as_it_did(self):
        # tests/fixtures/report/expected/demo-matrix: the table of the
        # two recorded demos as the code made it when they were recorded.
        r, prows, doc, fixes = self.tables()
        with open(os.path.join(TOP, "tests", "fixtures", "report", "expected", "demo-matrix",
                               "matrix.md"), encoding="utf-8") as f:
            self.assertEqual(matrix_page.markdown(r, prows, fixes, doc["on_7x"]), f.read())

    def test_html_escaped_and_linked(self):
        r, prows, doc, fixes = self.tables()
        r[0]["obtained"] = "<script>x</script>"
        page = matrix_page.page(r, prows, fixes, doc["on_7x"], "2026-12-07 01:00 UTC", matrix.PROG)
        self.assertNotIn("<script>", page)
        self.assertIn(html.escape("<script>x</script>"), page)
        self.assertIn(f'<a href="{summary("7.3")["run_id"]}/report.html">no effect</a>', page)
        self.assertEqual(page.count("<tr>"), 4 + 2 + 2)
        self.assertEqual(page.count("<li>7.3.4-relay-"), 2)


class PairTest(unittest.TestCase):
    """A pair's row: its demos per waker and run, make demo's verdicts,
    what the stock kernel's trace says in a line."""

    def setUp(self):
        self.d = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, self.d)

    def run_dir(self, pair, name):
        run = os.path.join(self.d, name)
        os.makedirs(run)
        shutil.copy(os.path.join(FIX, f"summary-{pair}.json"), os.path.join(run, "summary.json"))
        return run

    def test_runs_and_errors(self):
        a, b = self.run_dir("debian13", "a"), self.run_dir("debian13", "b")
        r, obs = matrix.pair_row("debian13", {"unix": [a, labrun.LabError(1, "lab/demo/run exited 4")],
                                              "udp": [b]})
        self.assertEqual([d.get("run") or d["error"] for d in r["demos"]["unix"]],
                         ["a", "lab/demo/run exited 4"])
        self.assertEqual((r["verdict"], r["wakers"]),
                         ("fixed", {"unix": "fixed 1 of 2, no report 1 of 2", "udp": "fixed"}))
        self.assertEqual([(o["waker"], o["kernel"]) for o in obs["stock"]],
                         [("unix", "6.16.12+deb13-rt-amd64"), ("udp", "6.16.12+deb13-rt-amd64")])
        self.assertEqual(r["demos"]["unix"][0]["stock"]["stalls"], 85)
        # no chains.json beside the run: the trace's line is left out
        self.assertIsNone(r["demos"]["unix"][0]["stock_trace"])
        r, obs = matrix.pair_row("7.3", {"unix": [labrun.LabError(1, "x")]})
        self.assertEqual((r["verdict"], obs), ("incomplete", {"stock": [], "patched": []}))

    def test_the_stock_trace_in_a_line(self):
        run = self.run_dir("debian13", "c")
        os.makedirs(os.path.join(run, "stock", "results"))
        chains = os.path.join(run, "stock", "results", "chains.json")
        with open(chains, "w", encoding="utf-8") as f:
            json.dump(dict(CHAINS, contentions={"rt_waits": 83601, "boosts": 0, "rt_wait_us": {"max": 926.0},
                                                "lent_by_others": 2064,
                                                "lent_by": {"ktimers/1": 2000, "demo-scenario": 64}}), f)
        self.assertEqual(matrix.why(run), "83601 RT waits on ep->lock, longest 0.93 ms; 2064 ended when "
                         "another task lent the throttled holder its priority through another lock: "
                         "ktimers/1 (2000), demo-scenario (64)")
        with open(chains, "w", encoding="utf-8") as f:
            json.dump(dict(CHAINS, totals=dict(CHAINS["totals"], stalls=27, stalls_explained=26)), f)
        self.assertEqual(matrix.why(run), "26 of 27 stalls explained")

    def test_the_page_again_from_its_runs(self):
        done = [("debian13", {"unix": [self.run_dir("debian13", "d13")]}),
                ("7.3", {"unix": [self.run_dir("7.3", "k73")], "udp": [labrun.LabError(1, "exited 4")]})]
        runs = {"unix": 1, "udp": 1}
        matrix.write(self.d, done, runs)
        with open(os.path.join(self.d, "matrix.json"), encoding="utf-8") as f:
            first = json.load(f)
        for name in ("matrix.md", "matrix.html"):
            os.remove(os.path.join(self.d, name))
        out = io.StringIO()
        self.assertEqual(matrix.again(self.d, out=out), 0)
        with open(os.path.join(self.d, "matrix.json"), encoding="utf-8") as f:
            self.assertEqual(json.load(f), first)
        self.assertTrue(os.path.exists(os.path.join(self.d, "matrix.html")))
        self.assertEqual(first["pairs"][1]["demos"]["udp"], [{"error": "exited 4"}])
        self.assertIn("7.3.4-relay-stock (rwlock_t, task-based): rt CLEAN", out.getvalue())
        with open(os.path.join(self.d, "matrix.json"), "w", encoding="utf-8") as f:
            f.write('{"pairs": [{"pair": "7.3"}]}')
        with self.assertRaises(labrun.LabError) as e:
            matrix.again(self.d)
        self.assertEqual(e.exception.code, 65)
        self.assertIn("matrix.json: not a matrix this program wrote", str(e.exception))
        with mock.patch("sys.stderr"):
            self.assertEqual(matrix.matrix(["--again"]), 2)

    def test_again_pools_the_repeats_of_a_pair_two_runs_have(self):
        a, b = os.path.join(self.d, "a-demo-matrix"), os.path.join(self.d, "b-demo-matrix")
        first = self.run_dir("7.3", os.path.join("a-demo-matrix", "20261207-013048-2758"))
        second = self.run_dir("7.3", os.path.join("b-demo-matrix", "20261207-073125-ff4c"))
        udp = self.run_dir("7.3", os.path.join("b-demo-matrix", "20261207-073354-0000"))
        matrix.write(a, [("7.3", {"unix": [first]})], {"unix": 1, "udp": 0})
        d13 = self.run_dir("debian13", os.path.join("b-demo-matrix", "20261207-005729-53ca"))
        matrix.write(b, [("7.3", {"unix": [second], "udp": [udp, labrun.LabError(1, "exited 4")]}),
                         ("debian13", {"unix": [d13]})], {"unix": 1, "udp": 2})
        for _ in range(2):      # twice over the same runs: the same page, nothing pooled twice
            self.assertEqual(matrix.again(a, [b], out=io.StringIO()), 0)
            with open(os.path.join(a, "matrix.json"), encoding="utf-8") as f:
                doc = json.load(f)
            self.assertEqual(doc["runs"], {"unix": 2, "udp": 2})
            # in the matrix's order, whichever run had a pair first
            self.assertEqual([p["pair"] for p in doc["pairs"]], ["debian13", "7.3"])
            demos = doc["pairs"][1]["demos"]
            self.assertEqual([d["run"] for d in demos["unix"]],
                             ["20261207-013048-2758", "20261207-073125-ff4c"])
            self.assertEqual([d.get("run") or d["error"] for d in demos["udp"]],
                             ["20261207-073354-0000", "exited 4"])
            self.assertEqual(doc["pairs"][1]["wakers"]["unix"], "no effect")

    def test_a_stopped_run_from_its_logs_with_another_run_s_pairs(self):
        a, b = os.path.join(self.d, "a-demo-matrix"), os.path.join(self.d, "b-demo-matrix")
        os.makedirs(a)
        os.makedirs(b)
        d13 = self.run_dir("debian13", os.path.join("a-demo-matrix", "20261207-005729-53ca"))
        with open(os.path.join(a, "demo-debian13-unix-1.log"), "w", encoding="utf-8") as f:
            f.write(f"[1/5] build\nresults: {d13} (also {a}/latest); 394 s in all\nreport: x\n")
        with open(os.path.join(a, "demo-debian13-udp-1.log"), "w", encoding="utf-8") as f:
            f.write("[3/5] stock and patched kernels side by side\n")      # stopped in its guests
        k73 = self.run_dir("7.3", os.path.join("b-demo-matrix", "20261207-014000-0000"))
        matrix.write(b, [("7.3", {"unix": [k73]})], {"unix": 1, "udp": 0})
        self.assertEqual(matrix.recorded(a), ([("debian13", {"unix": [d13], "udp": [mock.ANY]})],
                                              {"unix": 1, "udp": 1}))
        self.assertEqual(matrix.again(a, [b], out=io.StringIO()), 0)
        with open(os.path.join(a, "matrix.json"), encoding="utf-8") as f:
            doc = json.load(f)
        self.assertEqual([p["pair"] for p in doc["pairs"]], ["debian13", "7.3"])
        self.assertEqual(doc["pairs"][0]["demos"]["udp"][0]["error"],
                         f"no report (log: {a}/demo-debian13-udp-1.log)")
        self.assertEqual([k["kernel"] for k in doc["kernels"]][2:],
                         ["7.3.4-relay-stock", "7.3.4-relay-patched"])
        # the other run's demo, linked from this one's page as its own are
        self.assertEqual(os.readlink(os.path.join(a, "20261207-014000-0000")),
                         os.path.join("..", "b-demo-matrix", "20261207-014000-0000"))
        with open(os.path.join(a, "matrix.html"), encoding="utf-8") as f:
            self.assertIn('<a href="20261207-014000-0000/report.html">no effect</a>', f.read())
        # once more: the same page, the link kept
        self.assertEqual(matrix.again(a, [b], out=io.StringIO()), 0)
        with open(os.path.join(a, "matrix.json"), encoding="utf-8") as f:
            self.assertEqual(json.load(f), doc)
        os.makedirs(os.path.join(self.d, "empty"))
        for where, what in (("empty", "neither a matrix.json nor a demo's log"),
                            ("nowhere", "matrix.json: not a matrix this program wrote")):
            with self.assertRaises(labrun.LabError) as e:
                matrix.again(os.path.join(self.d, where))
            self.assertEqual(e.exception.code, 65)
            self.assertIn(what, str(e.exception))

    def test_a_pair_s_verdict_from_its_demos(self):
        cases = (
            ((["no effect"], ["fixed"]), "fixed"),
            ((["fixed", "no effect"], ["fixed"]), "fixed"),
            ((["fixed"], ["fixed", "not fixed"]), "not fixed"),
            ((["no effect"], ["no effect"]), "no effect"),
            ((["no effect"], ["incomplete"]), "incomplete"),
            ((["no effect"], ["invalid"]), "invalid"),
            ((["incomplete"], ["invalid"]), "invalid"),
            ((["invalid"], ["fixed"]), "fixed"),
            ((["fixed"], [None]), "fixed"),
            ((["no effect"], [None]), "incomplete"),
            (([], []), "incomplete"),
        )
        for (udp, unix), want in cases:
            demos = {"udp": [{"verdict": v} for v in udp],
                     "unix": [{"verdict": v} if v else {"error": "x"} for v in unix]}
            self.assertEqual(matrix.verdict(demos), want, (udp, unix))
        self.assertEqual(matrix.waker_verdict([]), "not run")
        self.assertEqual(matrix.waker_verdict([{"verdict": "fixed"}, {"verdict": "no effect"},
                                               {"verdict": "fixed"}]), "fixed 2 of 3, no effect 1 of 3")


class ParseTest(unittest.TestCase):
    def parse(self, *argv):
        return matrix.parse(list(argv))

    def test_runs_pairs_and_packages(self):
        _, pairs, runs, given, rest = self.parse("--runs", "3,1", "--duration-s", "10")
        self.assertEqual((pairs, runs, rest),
                         (list(matrix.PAIRS), {"unix": 3, "udp": 1}, ["--duration-s", "10"]))
        _, pairs, runs, given, _ = self.parse("--pairs", "7.3,packages", "--runs", "2",
                                              "--stock-package", "a.deb", "--patched-package", "b.deb")
        self.assertEqual((pairs, runs, given), (["7.3", "packages"], {"unix": 2, "udp": 1},
                                                {"stock": "a.deb", "patched": "b.deb"}))
        self.assertEqual(self.parse("--stock-package", "a", "--patched-package", "b")[1][-1], "packages")
        for bad in (["--runs", "0"], ["--runs", "1,x"], ["--runs", "1,1,1"], ["--pairs", "packages"],
                    ["--pairs", "5.4"], ["--stock-package", "a"], ["--kernel-line", "7.3"],
                    ["--af-unix", "0"], ["--kernels", "debian13"]):
            with self.assertRaises(SystemExit, msg=bad) as e, mock.patch("sys.stderr"), \
                    mock.patch("sys.stdout"):
                self.parse(*bad)
            self.assertEqual(e.exception.code, 2, bad)

    def test_bad_arguments_make_nothing(self):
        with tempfile.TemporaryDirectory() as d:
            for argv, what in ((["--pairs", "6.1,5.10"], "5.10: not one of"),
                               (["--stock-image", "x"], "chooses each pair's kernels"),
                               (["--af-unix", "1"], "chooses each pair's kernels and wakers"),
                               (["--pairs", "--results", d], "--pairs: expected one argument")):
                err = io.StringIO()
                with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()), \
                        self.assertRaises(SystemExit) as e:
                    matrix.matrix(argv + ["--results", d])
                self.assertEqual(e.exception.code, 2)
                self.assertIn(what, err.getvalue())
            self.assertEqual(os.listdir(d), [])

    def test_images_of_each_kind(self):
        calls = []
        with mock.patch.object(matrix.kernels, "images", lambda run, line: calls.append(("images", line))
                               or {"stock": f"{line}/s", "patched": f"{line}/p"}), \
                mock.patch.object(matrix.kernels, "debian_image",
                                  lambda run, name: calls.append(("debian", name)) or f"deb/{name}"), \
                mock.patch.object(matrix.kernels, "historical",
                                  lambda run, line: calls.append(("historical", line)) or f"{line}/h"), \
                mock.patch.object(matrix.kernels, "packages", lambda run, given: dict(given)):
            self.assertEqual(matrix.images(None, "7.3", None), {"stock": "7.3/s", "patched": "7.3/p"})
            self.assertEqual(matrix.images(None, "debian13", None),
                             {"stock": "deb/6.16-rt-signed", "patched": "deb/6.17-rt-signed"})
            self.assertEqual(matrix.images(None, "6.1.8-rt", None),
                             {"stock": "6.1.8-rt/h", "patched": "deb/6.1-rt-signed"})
            self.assertEqual(matrix.images(None, "packages", {"stock": "a", "patched": "b"}),
                             {"stock": "a", "patched": "b"})
        self.assertEqual(calls, [("images", "7.3"), ("debian", "6.16-rt-signed"),
                                 ("debian", "6.17-rt-signed"),
                                 ("historical", "6.1.8-rt"), ("debian", "6.1-rt-signed")])

    def test_a_package_the_guest_cannot_run_on_stops_the_matrix(self):
        with mock.patch.object(matrix, "images",
                               side_effect=labrun.LabError(matrix.kernels.EX_PACKAGE, "no PREEMPT_RT")), \
                mock.patch.object(matrix, "run_demo") as rd, open(os.devnull, "w") as out, \
                mock.patch.object(matrix, "Run", lambda *a, **k: labrun.Run(*a, **k, out=out)):
            with tempfile.TemporaryDirectory() as d, self.assertRaises(labrun.LabError):
                matrix.matrix(["--results", d, "--pairs", "packages", "--stock-package", "a",
                               "--patched-package", "b"])
        rd.assert_not_called()


if __name__ == "__main__":
    unittest.main()
