"""lab/ktrace: the trace reader and the chains, on traces recorded by the
demo's guests (tests/fixtures/ktrace: excerpts of a stock and a patched
run) and on mutated copies of them."""
import gzip
import json
import os
import random
import shutil
import subprocess
import tempfile
import unittest

from lab.demo import judge
from lab.demo import page as demo_page
from lab.ktrace import chains, explain, quota, tracefile
from lab.ktrace import page as trace_page
from lab.labkit import TOP
from report import formats
from report.view import Column


FIX = os.path.join(TOP, "tests", "fixtures", "ktrace")


def judged(test, doc):
    """DOC (a chains.json) as the demo's judge reads it beside a guest's
    results, in a directory TEST removes."""
    d = tempfile.mkdtemp()
    test.addCleanup(shutil.rmtree, d)
    res = os.path.join(d, "kernel", "results")
    os.makedirs(res)
    with open(os.path.join(res, "chains.json"), "w", encoding="utf-8") as f:
        json.dump(doc, f)
    return judge.why(res)


def lines_of(kernel):
    with gzip.open(os.path.join(FIX, kernel, "trace.txt.gz"), "rt", encoding="utf-8") as f:
        return f.read().splitlines()


def one_complete_chain(test, d):
    """The chain of the one stall of an excerpt's chains.json, checked
    whole: explained, its trace complete."""
    test.assertEqual((d["totals"]["stalls"], d["totals"]["stalls_explained"]), (1, 1))
    test.assertTrue(d["trace"]["complete"])
    c = d["stalls"][0]["chain"]
    test.assertTrue(c["complete"], c.get("missing"))
    return c


class ReadTest(unittest.TestCase):
    def test_real_traces_parse(self):
        for kernel in ("stock", "patched", "patched-softirq", "patched-vcpu"):
            events = tracefile.read(os.path.join(FIX, kernel, "trace.txt.gz"))
            names = {e.name for e in events}
            # (The 3 ms of patched-vcpu hold no throttle, only an unthrottle.)
            self.assertTrue({"sched_switch", "contention_begin", "contention_end", "ep_cb", "ep_cb_ret",
                             "unthrottle", "sched_pi_setprio"} <= names, (kernel, names))
            self.assertEqual("throttle" in names, kernel != "patched-vcpu")
            self.assertEqual([e.ts for e in events], sorted(e.ts for e in events), kernel)
            stacks = [e for e in events if e.stack]
            self.assertTrue(stacks and all(e.name in ("contention_begin", "throttle", "unthrottle")
                                           for e in stacks), kernel)

    def test_fields(self):
        ev = tracefile.parse([
            "  relay-71  [001] d..1.  3.478504: contention_begin: ffff888002a34e90 (flags=WRITE|RT)",
            "  relay-71  [001] d..1.  3.478516: <stack trace>",
            " => do_epoll_wait+0x3a/0x50",
            " => __x64_sys_epoll_wait",
            "  my task-5  [000] d..2.  3.5: sched_switch: prev_comm=my task prev_pid=5 prev_prio=120 "
            "prev_state=R+ ==> next_comm=relay next_pid=71 next_prio=49",
            "  loadgen-78  [001] d.Zf2  3.6: ep_cb: (ep_poll_callback+0x0/0x1ca) ep=0xffff888002a34e00",
        ])
        self.assertEqual(ev[0].fields, {"lock": 0xffff888002a34e90, "flags": "WRITE|RT"})
        self.assertEqual(ev[0].stack, ["do_epoll_wait", "__x64_sys_epoll_wait"])
        self.assertEqual((ev[1].comm, ev[1].pid, ev[1].fields["next_pid"], ev[1].fields["prev_comm"]),
                         ("my task", 5, 71, "my task"))
        self.assertEqual(ev[2].fields["ep"], 0xffff888002a34e00)
        ticks = tracefile.parse(["  <idle>-0  [000] d.h2.  3.7: local_timer_entry: vector=236",
                                 "  relay-71  [001] d.h1.  3.8: reschedule_entry: vector=253"])
        self.assertEqual([(e.name, e.fields) for e in ticks],
                         [("local_timer_entry", {"vector": 236}), ("reschedule_entry", {"vector": 253})])
        with self.assertRaises(tracefile.TraceError):
            tracefile.parse(["  <idle>-0  [000] d.h2.  3.7: local_timer_entry: irq=2"])

    def test_malformed_lines_are_named(self):
        for bad, what in ((" => orphan_frame", "no <stack trace> line"),
                          ("garbage", "not a trace line"),
                          ("x  y: z", "not a trace line"),
                          ("   ab cd: x: y", "not a trace line"),
                          ("  relay-71 [001] d..1. 3.4: contention_begin: zz (flags=RT)", "contention_begin"),
                          ("  relay-71 [001] d..1. 3.4: sched_switch: prev_comm=x", "sched_switch")):
            with self.assertRaises(tracefile.TraceError) as e:
                tracefile.parse(["# header", bad], "t.txt")
            self.assertIn("t.txt:2:", str(e.exception))
            self.assertIn(what, str(e.exception))

    def test_lazy_preemption_s_seven_columns(self):
        """Debian's 6.1 RT prints need-resched-lazy and preempt-lazy-depth
        too; its header says so, and events carry the five columns every
        reader indexes."""
        events = tracefile.read(os.path.join(FIX, "stock-6.1", "trace.txt.gz"))
        self.assertTrue(events and all(len(e.flags) == 5 for e in events))
        thr = [e for e in events if e.name == "throttle"]
        self.assertEqual(len(thr), 1)
        # "dn.s215": irqs off, need-resched, (lazy), softirq, depth 2, (lazy depth), migrate 5
        self.assertEqual(thr[0].flags, "dns25")
        self.assertTrue(tracefile.holds_bh(thr[0].flags))
        s = thr[0].stack
        self.assertLess(s.index("ep_autoremove_wake_function"), s.index("ep_poll_callback"))
        self.assertIn("s", {e.flags[2] for e in events if e.name == "ep_cb"})

    def test_a_holder_lent_a_priority_by_a_third_task(self):
        """6.1-rt stock: the relay waits for the rwlock's writer side while
        a throttled loadgen thread sits in the callback; ktimers/1, woken
        for the relay's timerfd, needs CPU 1's softirq lock, which the
        holder has too, and boosts it. The waiter itself lends nothing."""
        tl = chains.Timeline(tracefile.read(os.path.join(FIX, "stock-6.1", "trace.txt.gz")))
        w = next(w for w in tl.waits if w.lock == 0xffff888002b9b290 and w.end is not None)
        self.assertEqual(tl.comm[w.pid], "relay")
        (holder, _), = chains.holders(tl, w, 0x90)
        self.assertEqual(tl.comm[holder], "loadgen")
        self.assertIsNone(chains.boost_of(tl, holder, w))
        b = chains.boost_of(tl, holder, w, others=True)
        self.assertEqual((b["by"]["comm"], b["through"], b["from"], b["to"]),
                         ("ktimers/1", "0xffff88803e71afa0", ["OTHER", 0], ["FIFO", 1]))
        self.assertLess(b["after_wait_began_ms"], (w.end - w.begin) * 1000)

    def test_the_waits_a_third_task_ended_are_counted(self):
        doc = explain.GuestTrace(os.path.join(FIX, "stock-6.1"), "stock").document()
        c = doc["contentions"]
        self.assertEqual((c["rt_waits"], c["boosts"], c["lent_by_others"], c["lent_by"], c["lent_through"]),
                         (4, 0, 1, {"ktimers/1": 1}, {"0xffff88803e71afa0": 1}))
        self.assertIn("0 boosts by the waiter, 1 ended by ktimers/1 (1) boosting the holder",
                      explain.headline(doc))
        d = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, d)
        res = os.path.join(d, "stock", "results")
        os.makedirs(res)
        with open(os.path.join(res, "chains.json"), "w", encoding="utf-8") as f:
            json.dump(doc, f)
        rows = dict(trace_page.rows([("stock", judge.why(res))]))
        self.assertEqual(rows["... ended by another task boosting the holder through another lock"],
                         ["1 of 4 (ktimers/1 1)"])

    def test_flag_columns_the_header_does_not_name_are_refused(self):
        lines = [line for line in lines_of("stock-6.1") if line.startswith("#")]
        ok = "  relay-67  [001] d...1..  6.3: contention_begin: ffff888002b9b290 (flags=)"
        self.assertEqual(tracefile.parse(lines + [ok])[0].flags, "d..1.")
        with self.assertRaises(tracefile.TraceError) as e:
            tracefile.parse(lines + [ok.replace("d...1..", "d..1.")], "t.txt")
        self.assertIn(f"t.txt:{len(lines) + 1}: 5 flag columns", str(e.exception))
        self.assertIn("the header names 7", str(e.exception))

    def test_flag_layout(self):
        self.assertIsNone(tracefile.flag_layout(
            ["irqs-off/BH-disabled", "need-resched", "hardirq/softirq", "preempt-depth", "migrate-disable"]))
        self.assertEqual(tracefile.flag_layout(
            ["irqs-off", "need-resched", "need-resched-lazy", "hardirq/softirq", "preempt-depth",
             "preempt-lazy-depth", "migrate-disable"]), [0, 1, 3, 4, 6])
        four = ["irqs-off", "need-resched", "hardirq/softirq", "preempt-depth"]
        self.assertEqual(tracefile.flag_layout(four), [0, 1, 2, 3, None])

    def test_mutated_traces_give_an_error_or_events_never_a_crash(self):
        """A property of the reader and the chains: whatever a damaged trace
        holds, the answer is events (and chains), or a TraceError naming
        the line."""
        rnd = random.Random(20261204)
        base = lines_of("stock")
        for _ in range(150):
            lines = list(base[rnd.randrange(len(base) - 400):][:400])
            for _ in range(rnd.randint(1, 6)):
                i = rnd.randrange(len(lines))
                op = rnd.randrange(5)
                if op == 0:
                    lines[i] = lines[i][:rnd.randrange(len(lines[i]) + 1)]
                elif op == 1:
                    j = rnd.randrange(len(lines[i]) + 1)
                    lines[i] = lines[i][:j] + rnd.choice(["\x00", ":", " => ", "]", "-", "=", "(", "9"]) \
                        + lines[i][j:]
                elif op == 2:
                    del lines[i]
                elif op == 3:
                    lines.insert(i, lines[rnd.randrange(len(lines))])
                else:
                    lines[i] = "".join(rnd.sample(lines[i], len(lines[i])))
            try:
                events = tracefile.parse(lines, "mutated")
            except tracefile.TraceError as e:
                self.assertRegex(str(e), r"^mutated:\d+: ")
                continue
            tl = chains.Timeline(events)
            offset, _ = chains.ready_list_offset(tl)
            for w in tl.waits[:50]:
                chains.chain(tl, w, offset, 0.0)


class StockTest(unittest.TestCase):
    """The stock excerpt: one stall, from its start to the watchdog's lift."""

    @classmethod
    def setUpClass(cls):
        cls.doc = explain.GuestTrace(os.path.join(FIX, "stock"), "stock").document()

    def test_the_stall_has_a_complete_chain(self):
        d = self.doc
        c = one_complete_chain(self, d)
        self.assertEqual((c["waiter"]["comm"], c["waiter"]["policy"], c["waiter"]["priority"]),
                         ("relay", "FIFO", 50))
        self.assertEqual(c["waiter"]["where"], "do_epoll_wait")
        self.assertEqual((c["lock"]["kind"], c["lock"]["flags"]), ("rwlock_t", "WRITE|RT"))
        self.assertEqual(int(c["lock"]["addr"], 16) - int(c["lock"]["epoll"], 16),
                         d["ready_list_lock"]["offset_in_eventpoll"])
        self.assertEqual((c["holder"]["comm"], c["holder"]["policy"]), ("loadgen", "OTHER"))
        st = c["holder_state"]
        self.assertEqual((st["state"], st["throttled_in"], st["unthrottled_by"]),
                         ("throttled", "ep_poll_callback", "cpu.max"))
        # The wait ends when the holder leaves the callback, right after
        # the watchdog gave the quota back: the quota held the lock.
        self.assertLess(0, c["released_after_unthrottle_ms"])
        self.assertLess(c["released_after_unthrottle_ms"], 2)
        self.assertGreater(c["wait"]["ms"], 150)
        self.assertNotIn("boost", c)
        self.assertIn("1 of 1 stalls explained: RT relay (FIFO 50) waited in do_epoll_wait", d["line"])


class StockUnixTest(unittest.TestCase):
    """The AF_UNIX excerpt: one stall in which the RT ticker's wait on the
    ready-list lock began before the relay's and outlasted it (a reader
    queued behind the relay's pending write), while the loadgen thread
    that entered the callback just before the relay's wait sat throttled
    in it."""

    @classmethod
    def setUpClass(cls):
        cls.ex = explain.GuestTrace(os.path.join(FIX, "stock-unix"), "stock")
        cls.doc = cls.ex.document()

    def test_the_stall_s_chain_is_the_relay_s_wait(self):
        c = one_complete_chain(self, self.doc)
        self.assertEqual((c["waiter"]["comm"], c["waiter"]["where"]), ("relay", "do_epoll_wait"))
        # The ticker waited longer: the longest wait alone would name it.
        s = self.doc["stalls"][0]
        a, b = self.ex.t0 + s["start_s"], self.ex.t0 + s["start_s"] + s["length_ms"] / 1000
        longest, _ = self.ex.best_wait(a, b)
        self.assertEqual(self.ex.tl.comm[longest.pid], "demo-scenario")

    def test_a_reader_queued_in_the_callback_holds_nothing(self):
        c = one_complete_chain(self, self.doc)
        # Inside the callback when the relay began to wait: the ticker and
        # ksoftirqd/1, each queued for the lock, and the holder.
        self.assertEqual((c["holder"]["comm"], c["holder"]["policy"]), ("loadgen", "OTHER"))
        self.assertNotIn("other_holders", c["holder"])
        st = c["holder_state"]
        self.assertEqual((st["state"], st["throttled_in"], st["unthrottled_by"]),
                         ("throttled", "ep_poll_callback", "cpu.max"))
        self.assertLess(0, c["released_after_unthrottle_ms"])
        self.assertLess(c["released_after_unthrottle_ms"], 2)


class RawTest(unittest.TestCase):
    """The raw excerpt (stock-raw: a capacity cell's pages, `ktrace stop
    --raw`, read through trace-cmd): the same events and the same chain
    as a text trace gives, with the flag columns (report -l)."""

    @classmethod
    def setUpClass(cls):
        cls.dir = os.path.join(FIX, "stock-raw")
        cls.events = tracefile.read_results(cls.dir)
        cls.doc = explain.GuestTrace(cls.dir, "stock").document()

    def test_events_in_the_text_trace_s_shape(self):
        ev = self.events
        self.assertEqual(len(ev), 3294)
        self.assertEqual([e.ts for e in ev], sorted(e.ts for e in ev))
        names = {e.name for e in ev}
        self.assertTrue({"sched_switch", "sched_waking", "contention_begin", "contention_end", "ep_cb",
                         "ep_cb_ret", "throttle", "unthrottle"} <= names, names)
        sw = next(e for e in ev if e.name == "sched_switch")
        self.assertEqual(set(sw.fields), {"prev_comm", "prev_pid", "prev_prio", "prev_state", "next_comm",
                                          "next_pid", "next_prio"})
        # trace-cmd's frames carry their addresses: the names alone are kept
        stacks = [e.stack for e in ev if e.stack]
        self.assertTrue(stacks)
        self.assertTrue(all(f and " " not in f and "(" not in f for st in stacks for f in st), stacks[0])
        self.assertIn("tg_throttle_down", next(e.stack for e in ev if e.name == "throttle"))
        # report -l: the flag columns after the CPU, as the text trace has them
        self.assertEqual({len(e.flags) for e in ev}, {5})
        self.assertIn("d.s22", {e.flags for e in ev})
        sw = [e for e in ev if e.name == "sched_switch"]
        self.assertTrue(all(e.flags[0] == "d" for e in sw))   # switches run with irqs off
        self.assertTrue(any(tracefile.holds_bh(e.flags) for e in ev if e.name == "ep_cb"))

    def test_the_stall_has_a_complete_chain(self):
        d = self.doc
        c = one_complete_chain(self, d)
        self.assertEqual(c["lock"]["kind"], "rwlock_t")
        self.assertEqual((c["holder"]["comm"], c["holder"]["policy"]), ("loadgen", "OTHER"))
        self.assertEqual((c["holder_state"]["state"], c["holder_state"]["throttled_in"]),
                         ("throttled", "ep_poll_callback"))
        text = explain.GuestTrace(os.path.join(FIX, "stock"), "stock").document()
        self.assertEqual(d["ready_list_lock"]["offset_in_eventpoll"],
                         text["ready_list_lock"]["offset_in_eventpoll"])
        # The flags say who held CPU 1's softirqs: the throttled holder,
        # serving them, until the watchdog's lift.
        h = d["softirq_held"]["longest"]
        self.assertEqual((h["holder"]["comm"], h["holding"], h["unthrottled_by"]),
                         ("loadgen", "serving softirqs", "cpu.max"))
        self.assertGreater(h["held_ms"], 200)

    def test_damaged_pages_give_an_error_or_events_never_a_crash(self):
        rnd = random.Random(20261205)
        with gzip.open(os.path.join(self.dir, "trace", "cpu1.raw.gz"), "rb") as f:
            base = f.read()
        for i in range(12):
            with tempfile.TemporaryDirectory() as d:
                shutil.copytree(self.dir, d, dirs_exist_ok=True)
                data = bytearray(base)
                if i % 3 == 0:
                    data = data[:rnd.randrange(len(data))]
                else:
                    for _ in range(rnd.randint(1, 40)):
                        data[rnd.randrange(len(data))] = rnd.randrange(256)
                with gzip.open(os.path.join(d, "trace", "cpu1.raw.gz"), "wb") as f:
                    f.write(data)
                try:
                    tracefile.read_results(d)
                except tracefile.TraceError as e:
                    self.assertIn(d, str(e))

    def test_a_trace_cut_to_its_kept_spans_is_read_there_only(self):
        """A guest that kept some spans of its pages only (ktrace stop
        --keep: trace/kept.txt) gets no word on a step outside them, and a
        kept.txt that is not spans is named with its line."""
        with tempfile.TemporaryDirectory() as d:
            shutil.copytree(self.dir, d, dirs_exist_ok=True)
            kept = os.path.join(d, "trace", "kept.txt")
            with open(kept, "w") as f:
                f.write("3.063 3.272\n")
            run = explain.GuestTrace(d, "stock")
            self.assertEqual(run.windows, [(3.063, 3.272)])

            def step(a, b):
                return {"target_rate": 117, "meets_slo": False,
                        "result": {"start_mono_s": a, "elapsed_s": b - a, "lost": 0}}
            self.assertEqual(run.step(step(3.07, 3.27))["cause"], "lock")
            # six decimals in kept.txt: a step that ends within them is read
            self.assertTrue(run.step(step(3.07, 3.2720004))["covered"])
            self.assertFalse(run.step(step(3.0, 3.1))["covered"])
            # what the host wants (a missed step's span) within what was kept
            part = explain.GuestTrace(d, "stock", [(3.2, 3.4)])
            self.assertEqual(part.windows, [(3.2, 3.272)])
            self.assertEqual(part.document()["trace"]["read_s"],
                             [[round(3.2 - run.t0, 6), round(3.272 - run.t0, 6)]])
            with open(kept, "w") as f:
                f.write("3.063 3.272\n3.3\n")
            with self.assertRaisesRegex(tracefile.TraceError, "kept.txt:2: expected FROM TO"):
                explain.GuestTrace(d, "stock")
            with open(kept, "w") as f:
                f.write("3.5 3.4\n")
            with self.assertRaisesRegex(tracefile.TraceError, "kept.txt:1: FROM 3.5"):
                explain.GuestTrace(d, "stock")

    def test_a_stall_the_longest_wait_covers_little_of_is_not_the_lock_s(self):
        """The excerpt's stall, made 700 ms long: its 200 ms wait on the
        ready-list lock is not what held the relay, and it says so."""
        with tempfile.TemporaryDirectory() as d:
            shutil.copytree(self.dir, d, dirs_exist_ok=True)
            path = os.path.join(d, "scenario.json")
            with open(path) as f:
                scen = json.load(f)
            scen["stalls"][0]["start_s"] -= 0.5
            with open(path, "w") as f:
                json.dump(scen, f)
            doc = explain.GuestTrace(d, "stock").document()
        self.assertEqual((doc["totals"]["stalls"], doc["totals"]["stalls_explained"]), (1, 0))
        row = doc["stalls"][0]
        self.assertTrue(row["chain"]["complete"])
        self.assertRegex(row["unexplained"], r"covers 20\d\.\d ms of its 70\d\.\d ms")
        self.assertIn("0 of 1 stalls explained (the first: the longest RT wait", doc["line"])

    def test_what_is_missing_is_named(self):
        with tempfile.TemporaryDirectory() as d:
            shutil.copytree(self.dir, d, dirs_exist_ok=True)
            gz = os.path.join(d, "trace", "cpu0.raw.gz")
            with open(gz, "r+b") as f:
                f.truncate(100)
            with self.assertRaisesRegex(tracefile.TraceError, "cpu0.raw.gz"):
                tracefile.read_results(d)
            shutil.copy(os.path.join(self.dir, "trace", "cpu0.raw.gz"), gz)
            shutil.rmtree(os.path.join(d, "trace", "tracefs"))
            with self.assertRaisesRegex(tracefile.TraceError, "no tracefs"):
                tracefile.read_results(d)
            shutil.rmtree(os.path.join(d, "trace"))
            with self.assertRaisesRegex(tracefile.TraceError, "no trace.txt.gz and no trace/"):
                tracefile.read_results(d)


def kernel_of(name):
    """The kernel.json beside an excerpt: what the host read from the image."""
    return explain.kernel_facts(os.path.join(FIX, name, "kernel.json"))


class Stock616Test(unittest.TestCase):
    """Debian 13's signed 6.16.12 as shipped (ep->lock an rwlock_t, the
    per-cfs_rq throttle; stock-6.16, raw pages around one stall): the
    stall's chain, and the quota period's timer held up by it."""

    @classmethod
    def setUpClass(cls):
        cls.dir = os.path.join(FIX, "stock-6.16")
        cls.doc = explain.GuestTrace(cls.dir, "stock", kernel=kernel_of("stock-6.16")).document()

    def test_the_offsets_are_the_image_s(self):
        lk = self.doc["ready_list_lock"]
        self.assertEqual((lk["offset_in_eventpoll"], lk["from"], lk["trace_agrees"]), (144, "its BTF", True))
        self.assertEqual(self.doc["throttle_model"]["model"], "cfs_rq")
        self.assertRegex(self.doc["throttle_model"]["from"], "no throttle_cfs_rq_work in its kallsyms")
        c = one_complete_chain(self, self.doc)
        self.assertEqual((c["holder_state"]["state"], c["holder_state"]["throttled_in"]),
                         ("throttled", "ep_poll_callback"))
        # Other offsets than the image's: no lock of the trace is a
        # ready-list lock of an instance a callback named, and the stall
        # is the stack's only (what the trace's own distance would have
        # found is said beside it).
        k = dict(kernel_of("stock-6.16"), offsets={"eventpoll.lock": 152})
        d = explain.GuestTrace(self.dir, "stock", kernel=k).document()
        self.assertEqual((d["ready_list_lock"]["trace_offset"], d["ready_list_lock"]["trace_agrees"]),
                         (144, False))
        self.assertNotIn("holder", d["stalls"][0]["chain"])

    def test_the_refill_waited_for_the_stall(self):
        q = self.doc["quota_timer"]
        self.assertEqual((q["over_late_ms"], q["late_limit_ms"], q["run_by"]), (1, 5, ["ktimers/1"]))
        x = q["longest"]
        self.assertGreater(x["late_ms"], 200)
        h = x["held_by"]
        # ktimers/1 ran the relay's timerfd in the same softirq, queued as a
        # reader behind the relay's pending write, whose holder sat
        # throttled inside ep_poll_callback until the watchdog's lift.
        self.assertEqual((h["what"], h["waiter"]["comm"], h["running"]),
                         ("softirq_thread_blocked", "ktimers/1", "timerfd_tmrproc"))
        self.assertEqual((h["behind"]["waiter"]["comm"], h["behind"]["holder_state"]["throttled_in"],
                          h["behind"]["holder_state"]["unthrottled_by"]),
                         ("relay", "ep_poll_callback", "cpu.max"))
        self.assertRegex(q["line"], r"ktimers/1 \(the CPU's timer softirq, running the relay's timerfd "
                         r"tick\) waited .* queued behind relay/\d+'s pending write, held by loadgen/\d+, "
                         r"throttled in ep_poll_callback until a write to cpu.max")

    def test_the_timer_tick_waited_in_the_same_softirq(self):
        t = self.doc["timer_tick"]
        self.assertEqual(t["waiters"], ["ktimers/1"])
        x = t["longest"]
        self.assertEqual((x["running"], x["chain"]["lock"]["kind"], x["behind"]["waiter"]["comm"]),
                         ("timerfd_tmrproc", "rwlock_t", "relay"))
        self.assertGreater(x["wait_ms"], 200)

    def test_throttled_as_the_trace_saw_it(self):
        t = self.doc["throttling"]
        self.assertEqual((t["model"], t["task_throttles"]), ("cfs_rq", None))
        self.assertGreater(t["cgroup_throttled_ms"], 200)


class Stock73Test(unittest.TestCase):
    """The 7.3 line built with ep->lock an rwlock_t again (the task-based
    throttle alone; stock-7.3, 46 ms of raw pages): the quota runs out
    while a holder is inside ep_poll_callback, the holder runs on and is
    taken off on its way back to user space."""

    @classmethod
    def setUpClass(cls):
        cls.dir = os.path.join(FIX, "stock-7.3")
        cls.doc = explain.GuestTrace(cls.dir, "stock", kernel=kernel_of("stock-7.3")).document()
        cls.tl = chains.Timeline(tracefile.ievents(cls.dir))
        cls.tl.model = "task"

    def test_the_model_from_the_kernel_that_ran(self):
        tm = self.doc["throttle_model"]
        self.assertEqual(tm["model"], "task")
        self.assertRegex(tm["from"], "the trace's probe on throttle_cfs_rq_work")
        # the image's manifest says nothing of it: only the trace does
        self.assertIsNone(kernel_of("stock-7.3")["throttle_model"])
        self.assertEqual(self.doc["ready_list_lock"]["from"], "its compiler (kernel/build)")

    def test_the_holder_runs_on_with_its_throttle_deferred(self):
        c = self.doc["longest_rt_wait"]
        self.assertEqual(c["lock"]["kind"], "rwlock_t")
        st = c["holder_state"]
        self.assertEqual((st["state"], st["throttle_deferred"], st["dequeued_in"]),
                         ("running", True, "exit_to_user_mode_loop"))
        self.assertLess(st["group_throttled_s"], c["wait"]["begin_s"])
        self.assertGreater(st["dequeued_s"], c["holder"]["released_s"])
        self.assertEqual(self.doc["totals"]["stalls"], 0)
        # Read as per cfs_rq, the same holder would be called throttled.
        tl = chains.Timeline(tracefile.ievents(self.dir))
        w = max((w for w in tl.waits if w.end and tl.is_rt(w.pid)), key=lambda w: w.end - w.begin)
        hs = chains.holders(tl, w, 144)
        self.assertEqual(chains.holder_state(tl, hs[-1][0], hs[-1][1], w, 0)["state"], "throttled")

    def test_each_task_s_own_throttle(self):
        tl = self.tl
        own = [iv for ivs in tl.task_throttles.values() for iv in ivs]
        self.assertEqual(len(own), 3)
        for iv in own:
            self.assertIn("exit_to_user_mode_loop", iv.stack)
            self.assertEqual((iv.cause, tl.comm[iv.pid]), ("period", "loadgen"))
            self.assertIsNotNone(iv.group)
            self.assertFalse(tracefile.holds_bh(iv.flags))
        # nothing held: no softirq hold, no wait of the quota's
        self.assertEqual(chains.softirq_holds(tl, 0), [])
        self.assertTrue(all(chains.unlent(tl, w, 144) == 0 for w in tl.waits))
        t = self.doc["throttling"]
        self.assertEqual((t["task_throttles"], t["tasks_throttled"]), (3, 3))

    def test_the_page_rows(self):
        # chains.json as the report reads it: the model, the throttling,
        # the quota's timer, and a holder that ran on
        w = judged(self, self.doc)
        rows = dict(trace_page.rows([("stock", w)]))
        self.assertRegex(rows["CFS throttle model"][0], r"^task-based \(its symbols: the trace's probe")
        self.assertRegex(rows["throttled, as the trace saw it"][0],
                         r"^the cgroup's run queue 2 times, 39.584 ms; its tasks, each on its way to user "
                         r"space, 3 times, 103.848 ms$")
        self.assertRegex(rows["the quota period's timer"][0], r"^the quota period's timer ran 2 times")
        self.assertRegex(trace_page.state(self.doc["longest_rt_wait"]),
                         r"^running: its cgroup's quota ran out at 17.843735 s, its throttle deferred to its "
                         r"way back to user space \(taken off at 17.847824 s in exit_to_user_mode_loop\)$")

        # cpu.stat's throttled time, with what it counts on this model
        def column(**data):
            k = formats.parse(formats.DemoKernel, dict(outcome="ok", problems=[], throttled_periods=3,
                                                       periods=9, throttled_us=42000, **data), "summary.json")
            return Column("stock", "stock", k)
        self.assertEqual(demo_page._throttle_cells(column(why=w)),
                         "3/9, 42 ms (from the first task's throttle on its way to user space)")
        self.assertEqual(demo_page._throttle_cells(column(image_facts={"throttle_model": "cfs_rq"})),
                         "3/9, 42 ms (from when the quota ran out)")

    def test_the_refills_on_time(self):
        q = self.doc["quota_timer"]
        self.assertEqual((q["over_late_ms"], q["never_ran"]), (0, []))
        self.assertLess(q["late_ms"]["max"], quota.MIN_LATE_MS)


class QuotaTest(unittest.TestCase):
    """The quota period's timer from its events: a due time from its
    arming, a run's lateness, an arming that never ran; a task's own
    throttle that found its cgroup let go already is none."""

    def events(self, lines):
        return chains.Timeline(tracefile.parse(lines))

    def test_arming_run_and_never(self):
        tl = self.events([
            "  <idle>-0  [001] d.h2.  1.000000: hrtimer_start: hrtimer=ffff888003a1c0e8 "
            "function=sched_cfs_period_timer expires=1020000000 softexpires=1020000000 mode=ABS|PINNED",
            "  ktimers/1-31  [001] d..s2  1.030000: hrtimer_expire_entry: hrtimer=0xffff888003a1c0e8 "
            "now=1030000000 function=sched_cfs_period_timer/0x0",
            "  ktimers/1-31  [001] d..s2  1.030001: hrtimer_start: hrtimer=ffff888003a1c0e8 "
            "function=sched_cfs_period_timer expires=1040000000 softexpires=1040000000 mode=ABS",
            "  <idle>-0  [001] d.h2.  1.100000: local_timer_entry: vector=236",
        ])
        (r, late), = quota.runs(tl)
        self.assertEqual((r.cpu, round(late * 1000, 3)), (1, 10.0))
        (arm, until), = quota.never_ran(tl)
        self.assertEqual((arm.due, until), (1.04, 1.1))
        doc = quota.document(tl, 1.0, 5, 144, [])
        self.assertEqual((doc["over_late_ms"], doc["run_by"], doc["never_ran"][0]["waited_ms"]),
                         (1, ["ktimers/1"], 60.0))
        self.assertRegex(doc["line"], "1 arming came due and never ran")
        self.assertIsNone(quota.document(self.events(["  <idle>-0  [001] d.h2.  1.1: local_timer_entry: "
                                                      "vector=236"]), 1.0, 5, 144, []))

    def test_a_refill_late_on_an_idle_cpu(self):
        """Debian's signed 7.3.4, 11 ms into a run: ksoftirqd/1 switched in
        by an RT task, its own switch to the idle task left out by the
        filter (no RT task in it); then only the idle task's events. The CPU
        was idle, not running ksoftirqd, while the refill waited for the
        tick to raise its softirq and for its thread to be woken."""
        tl = self.events([
            "  demo-scenario-149  [001] d..2.  1.003508: hrtimer_start: hrtimer=ffff888003a1c0e8 "
            "function=sched_cfs_period_timer expires=1016517000 softexpires=1016517000 mode=ABS|PINNED",
            "  rcu_preempt-16  [001] d..2.  1.012389: sched_switch: prev_comm=rcu_preempt prev_pid=16 "
            "prev_prio=98 prev_state=W ==> next_comm=ksoftirqd/1 next_pid=32 next_prio=120",
            "  <idle>-0  [001] dNh1.  1.016348: reschedule_entry: vector=253",
            "  <idle>-0  [001] dNh1.  1.020350: local_timer_entry: vector=236",
            "  <idle>-0  [001] dNh2.  1.020351: softirq_raise: vec=8 [action=HRTIMER]",
            "  <idle>-0  [001] dN.3.  1.024349: sched_waking: comm=ktimers/1 pid=31 prio=98 target_cpu=001",
            "  <idle>-0  [001] d..2.  1.024357: sched_switch: prev_comm=swapper/1 prev_pid=0 "
            "prev_prio=120 prev_state=R ==> next_comm=ktimers/1 next_pid=31 next_prio=98",
            "  ktimers/1-31  [001] ..s.1  1.024370: hrtimer_expire_entry: hrtimer=0xffff888003a1c0e8 "
            "now=1024370000 function=sched_cfs_period_timer/0x0",
        ])
        self.assertEqual(tl.running(1, 1.014), None)    # ksoftirqd ran, at most, until here
        self.assertEqual(tl.running(1, 1.018), 0)
        self.assertEqual([p for p, _ in tl.ran_on(1, 1.016517, 1.02437)][:1], [0])
        doc = quota.document(tl, 1.0, 5, 144, [])
        h = doc["longest"]["held_by"]
        self.assertEqual((h["what"], h["ran"][0]["task"]["pid"]), ("cpu", 0))
        self.assertEqual((h["softirq_raised_ms"], h["thread_woken_ms"]), (3.834, 3.998))
        self.assertRegex(quota.held_text(h), r"^the CPU ran idle 7\.84 ms.*raised 3\.834 ms after "
                         r"the refill was due, its thread woken 3\.998 ms after that$")

    def test_a_wake_up_that_leaves_the_idle_cpu_asleep(self):
        """Signed 7.3.4 again: the timer interrupt raises the softirq on
        time and wakes ktimers/1 at its exit, but need-resched stays unset
        ("d..3."), so the idle CPU sleeps on to its next timer interrupt."""
        tl = self.events([
            "  demo-scenario-149  [001] d..2.  1.003000: hrtimer_start: hrtimer=ffff888003a1c0e8 "
            "function=sched_cfs_period_timer expires=1010000000 softexpires=1010000000 mode=ABS|PINNED",
            "  <idle>-0  [001] d.h1.  1.010001: local_timer_entry: vector=236",
            "  <idle>-0  [001] d.h2.  1.010002: softirq_raise: vec=8 [action=HRTIMER]",
            "  <idle>-0  [001] d..3.  1.010003: sched_waking: comm=ktimers/1 pid=31 prio=98 target_cpu=001",
            "  relay-152  [000] d.h..  1.012000: local_timer_entry: vector=236",
            "  <idle>-0  [001] dNh1.  1.013740: local_timer_entry: vector=236",
            "  <idle>-0  [001] d..2.  1.013760: sched_switch: prev_comm=swapper/1 prev_pid=0 "
            "prev_prio=120 prev_state=R ==> next_comm=ktimers/1 next_pid=31 next_prio=98",
            "  ktimers/1-31  [001] ..s.1  1.013764: hrtimer_expire_entry: hrtimer=0xffff888003a1c0e8 "
            "now=1013764000 function=sched_cfs_period_timer/0x0",
        ])
        h = quota.document(tl, 1.0, 5, 144, [])["longest"]["held_by"]
        self.assertEqual((h["woken_need_resched"], h["ran_after_wake_ms"], h["timer_irqs_before_run"],
                          h["last_timer_irq_ms"], h["others_events"]), (False, 3.761, 1, 3.737, 1))
        self.assertIn("(silent 3.737 ms; the other CPUs logged 1 event then)", quota.held_text(h))
        self.assertRegex(quota.held_text(h), r"raised 0\.002 ms after the refill was due, its thread woken "
                         r"0\.001 ms after that without need-resched set, and run 3\.761 ms after its "
                         r"wake-up, after the CPU's next timer interrupt \(3\.737 ms\)$")

    def test_the_relay_s_tick_apart_from_the_refill(self):
        """A timerfd's hrtimer (the relay's tick) is the tick's, not the
        quota's: its runs against its armings, the latest with what held
        it (here its CPU idle until the timer interrupt raised the
        softirq)."""
        tl = self.events([
            "  relay-150  [001] d..2.  1.000000: hrtimer_start: hrtimer=ffff888004b2d0a8 "
            "function=timerfd_tmrproc expires=1001000000 softexpires=1001000000 mode=ABS",
            "  ktimers/1-31  [001] ..s.1  1.001020: hrtimer_expire_entry: hrtimer=0xffff888004b2d0a8 "
            "now=1001020000 function=timerfd_tmrproc/0x0",
            "  relay-150  [001] d..2.  1.001100: hrtimer_start: hrtimer=ffff888004b2d0a8 "
            "function=timerfd_tmrproc expires=1002000000 softexpires=1002000000 mode=ABS",
            "  relay-150  [001] d..2.  1.001200: sched_switch: prev_comm=relay prev_pid=150 prev_prio=49 "
            "prev_state=S ==> next_comm=swapper/1 next_pid=0 next_prio=120",
            "  <idle>-0  [001] d.h1.  1.009000: local_timer_entry: vector=236",
            "  <idle>-0  [001] d.h2.  1.009001: softirq_raise: vec=8 [action=HRTIMER]",
            "  <idle>-0  [001] dN.3.  1.009002: sched_waking: comm=ktimers/1 pid=31 prio=98 target_cpu=001",
            "  <idle>-0  [001] d..2.  1.009010: sched_switch: prev_comm=swapper/1 prev_pid=0 "
            "prev_prio=120 prev_state=R ==> next_comm=ktimers/1 next_pid=31 next_prio=98",
            "  ktimers/1-31  [001] ..s.1  1.009020: hrtimer_expire_entry: hrtimer=0xffff888004b2d0a8 "
            "now=1009020000 function=timerfd_tmrproc/0x0",
        ])
        self.assertEqual((len(tl.tick_runs), tl.timer_runs), (2, []))
        self.assertIsNone(quota.document(tl, 1.0, 5, 144, []))
        doc = quota.tick_delivery(tl, 1.0, 5, 144, [])
        self.assertEqual((doc["runs"], doc["late_ms"]["max"], doc["over_late_ms"]), (2, 7.02, 1))
        h = doc["longest"]["held_by"]
        self.assertEqual((h["ran"][0]["task"]["pid"], h["softirq_raised_ms"]), (0, 7.001))
        self.assertRegex(quota.held_text(h, "the tick"), r"raised 7\.001 ms after the tick was due, its "
                         r"thread woken 0\.001 ms after that$")
        self.assertIsNone(quota.tick_delivery(self.events(["  <idle>-0  [001] d.h2.  1.1: local_timer_entry: "
                                                           "vector=236"]), 1.0, 5, 144, []))

    def test_a_refill_behind_its_thread_s_timer_softirq(self):
        """The softirq thread busy in the timer wheel's softirq, one callback
        long, while the refill falls due: what it served, and the callback."""
        tl = self.events([
            "  demo-scenario-149  [001] d..2.  1.000000: hrtimer_start: hrtimer=ffff888003a1c0e8 "
            "function=sched_cfs_period_timer expires=1002000000 softexpires=1002000000 mode=ABS|PINNED",
            "  ktimers/1-31  [001] ..s.1  1.001000: softirq_entry: vec=1 [action=TIMER]",
            "  ktimers/1-31  [001] ..s.1  1.001010: timer_expire_entry: timer=00000000c3a0d2f2 "
            "function=delayed_work_timer_fn now=4294892345 baseclk=4294892345",
            "  ktimers/1-31  [001] d.H12  1.002001: local_timer_entry: vector=236",
            "  ktimers/1-31  [001] d.H22  1.002002: softirq_raise: vec=8 [action=HRTIMER]",
            "  ktimers/1-31  [001] ..s.1  1.009000: timer_expire_exit: timer=00000000c3a0d2f2",
            "  ktimers/1-31  [001] ..s.1  1.009010: softirq_exit: vec=1 [action=TIMER]",
            "  ktimers/1-31  [001] ..s.1  1.009020: softirq_entry: vec=8 [action=HRTIMER]",
            "  ktimers/1-31  [001] ..s.2  1.009030: hrtimer_expire_entry: hrtimer=0xffff888003a1c0e8 "
            "now=1009030000 function=sched_cfs_period_timer/0x0",
        ])
        soft, call = tl.served(1, 1.002, 1.00903)
        self.assertEqual((round(soft["TIMER"], 6), call.what), (0.00701, "delayed_work_timer_fn"))
        h = quota.document(tl, 1.0, 5, 144, [])["longest"]["held_by"]
        self.assertEqual(h["longest_callout"]["ms"], 7.99)
        self.assertRegex(quota.held_text(h), r"^the CPU ran ktimers/1 7\.03 ms .*; its softirq threads "
                         r"served "
                         r"TIMER 7\.01 ms, the longest timer callback delayed_work_timer_fn "
                         r"7\.99 ms \(by ktimers/1\)")
        with self.assertRaises(tracefile.TraceError):
            tracefile.parse(["  ktimers/1-31  [001] ..s.1  1.0: timer_expire_entry: timer=00000000c3a0d2f2"])

    def test_a_refill_behind_another_hrtimer_s_callback(self):
        """The softirq thread inside its HRTIMER softirq, in another timer's
        callback, when the refill falls due: the silence began there."""
        tl = self.events([
            "  demo-scenario-149  [001] d..2.  1.000000: hrtimer_start: hrtimer=ffff888003a1c0e8 "
            "function=sched_cfs_period_timer expires=1002000000 softexpires=1002000000 mode=ABS|PINNED",
            "  ktimers/1-31  [001] ..s.1  1.001000: softirq_entry: vec=8 [action=HRTIMER]",
            "  ktimers/1-31  [001] ..s.2  1.001010: hrtimer_expire_entry: hrtimer=0xffff888003a1c100 "
            "now=1001010000 function=kfence_timer/0x0",
            "  ktimers/1-31  [001] ..s.1  1.005000: softirq_exit: vec=8 [action=HRTIMER]",
            "  ktimers/1-31  [001] ..s.1  1.005010: softirq_entry: vec=8 [action=HRTIMER]",
            "  ktimers/1-31  [001] ..s.2  1.005020: hrtimer_expire_entry: hrtimer=0xffff888003a1c0e8 "
            "now=1005020000 function=sched_cfs_period_timer/0x0",
        ])
        h = quota.document(tl, 1.0, 5, 144, [])["longest"]["held_by"]
        self.assertEqual(h["silence_after"]["function"], "kfence_timer")
        self.assertRegex(quota.held_text(h), r"; the last hrtimer callback before the silence: kfence_timer "
                         r"\(by ktimers/1\), 0\.99 ms before it")

    def test_a_task_throttle_outside_its_cgroup_s_is_none(self):
        tl = self.events([
            "  loadgen-9  [001] d..2.  1.0: throttle: (tg_throttle_down+0x0/0x90) tg=0x10 rq=0x20",
            "  loadgen-9  [001] .....  1.1: throttle_task: (throttle_cfs_rq_work+0x0/0x120)",
            "  ktimers/1-31  [001] d..s2  1.2: unthrottle: (tg_unthrottle_up+0x0/0x190) tg=0x10 rq=0x20",
            "  loadgen-9  [001] .....  1.3: throttle_task: (throttle_cfs_rq_work+0x0/0x120)",
        ])
        (iv,) = tl.task_throttles[9]
        self.assertEqual((iv.start, iv.end, iv.group), (1.1, 1.2, (0x10, 0x20)))
        tl.model = "task"
        self.assertIs(tl.task_throttled_at(9, 1.15), iv)
        self.assertIsNone(tl.task_throttled_at(9, 1.25))
        self.assertEqual([g for g, _ in tl.dequeues()], [(0x10, 0x20)])

    def test_hrtimer_fields(self):
        with self.assertRaises(tracefile.TraceError):
            tracefile.parse(["  <idle>-0  [001] d.h2.  1.0: hrtimer_expire_entry: hrtimer=ffff88 "
                             "function=sched_cfs_period_timer"])
        with self.assertRaises(tracefile.TraceError):
            tracefile.parse(["  <idle>-0  [001] d.h2.  1.0: hrtimer_start: hrtimer=zz function=f expires=1"])


class ThrottledInTest(unittest.TestCase):
    """Where the holder was throttled: inside the callback whatever context
    the throttle fired in, else the stack's first frame that is neither
    the lock's nor the kprobe's own breakpoint."""

    class Timeline:
        model = None    # per cfs_rq

        def __init__(self, stack):
            self.last = 10.0
            self.iv = chains.Throttle(2.0, 3.0, "cpu.max", stack, 7, "", 1)

        def throttled_at(self, t):
            return ((0x10, 0x20), self.iv) if self.iv.start <= t <= self.iv.end else None

        def task(self, pid):
            return {"pid": pid}

    def test_inside_the_callback_or_the_first_frame(self):
        migration = ["kprobe_int3_handler", "do_int3", "exc_int3", "asm_exc_int3", "tg_nop",
                     "enqueue_entity", "migration_cpu_stop"]
        tl, w = self.Timeline(migration), chains.Wait(5, 1, 0xabc90, "RT", 2.5, 2.9)
        self.assertEqual(chains.holder_state(tl, 5, chains.Callback(1.0, 3.5, 0xabc), w, 0)["throttled_in"],
                         "ep_poll_callback")
        # not inside at the throttle: the frame under the kprobe's own
        self.assertEqual(chains.holder_state(tl, 5, chains.Callback(2.2, 3.5, 0xabc), w, 0)["throttled_in"],
                         "tg_nop")
        self.assertEqual(chains.where(migration), "tg_nop")
        # Once the kernel optimized the probe into a jump: its handler's
        # frames and the trampoline's bare address.
        optimized = ["kprobe_dispatcher", "opt_pre_handler", "optimized_callback",
                     "0xffffffffa00020b0", "tg_nop", "tg_throttle_down", "walk_tg_tree_from"]
        self.assertEqual(chains.where(optimized), "tg_nop")
        # On a function's first instruction through ftrace (Debian's 7.3.4):
        # the ftrace handler's frames, its trampoline's address, and the
        # task work's own frames under them.
        on_ftrace = ["kprobe_trace_func", "kprobe_dispatcher", "kprobe_ftrace_handler", "ffffffffc06000da",
                     "throttle_cfs_rq_work", "task_work_run", "exit_to_user_mode_loop", "do_syscall_64"]
        self.assertEqual(chains.where(on_ftrace, chains.TASK_THROTTLE_FRAMES), "exit_to_user_mode_loop")


class StepTest(unittest.TestCase):
    """A sweep's steps judged from the stock excerpt: one across the stall,
    one after it, one that met."""

    def test_causes(self):
        run = explain.GuestTrace(os.path.join(FIX, "stock"), "stock")
        t0 = run.t0

        def step(a, b, meets=False, lost=0):
            return {"target_rate": 117, "meets_slo": meets,
                    "result": {"start_mono_s": t0 + a, "elapsed_s": b - a, "lost": lost}}
        across = run.step(step(1.43, 1.65))
        self.assertEqual(across["cause"], "lock")
        # The relay (the writer) and the RT ticker (a reader queued behind it).
        self.assertEqual(across["lock_waits"], 2)
        self.assertGreater(across["lock_wait_ms_max"], 150)
        self.assertLess(across["relay_cpu_share"], 0.5)
        self.assertIsNone(run.step(step(1.43, 1.65, meets=True))["cause"])
        after = run.step(step(1.644, 1.649, lost=3))
        self.assertEqual((after["cause"], after["lock_waits"]), ("loss", 0))
        self.assertEqual(run.step(step(1.644, 1.649))["cause"], "objective")

    def test_a_boosted_holder_s_wait_is_not_the_quota_s(self):
        """A 1.5 ms wait on the ready-list lock whose throttled holder the
        waiter boosted 20 us in is the patched kernel working: the wait's
        rest is the critical section, not the quota. Without the boost the
        holder sat throttled for all of it."""
        def trace(boost, throttled="1.000100"):
            lines = [
                "  loadgen-77 [001] d..1. 1.000000: ep_cb: (ep_poll_callback+0x0/0x1b2) "
                "ep=0xffff888000abaa00",
                f"  loadgen-77 [001] dNs25 {throttled}: throttle: (tg_throttle_down+0x0/0x55) "
                "tg=0xffff888002a38000 rq=0xffff88801ef28500",
                "  relay-71 [001] d..2. 1.000500: sched_switch: prev_comm=loadgen prev_pid=77 prev_prio=120 "
                "prev_state=R ==> next_comm=relay next_pid=71 next_prio=49",
                "  relay-71 [001] d..1. 1.001000: contention_begin: ffff888000abaa90 (flags=RT)",
            ]
            lines.sort(key=lambda ln: float(ln.split()[3].rstrip(":")))
            if boost:
                lines.append("  relay-71 [001] d..3. 1.001020: sched_pi_setprio: comm=loadgen pid=77 "
                             "oldprio=120 newprio=49")
            lines += [
                "  loadgen-77 [001] d..1. 1.002400: ep_cb_ret: "
                "(__wake_up_common+0x4c/0x78 <- ep_poll_callback)",
                "  relay-71 [001] d..1. 1.002500: contention_end: ffff888000abaa90 (ret=0)",
                "  relay-71 [001] d.s13 1.050000: unthrottle: (tg_unthrottle_up+0x0/0x77) "
                "tg=0xffff888002a38000 rq=0xffff88801ef28500",
            ]
            tl = chains.Timeline(tracefile.parse(lines))
            return chains.unlent(tl, tl.waits[0], 0x90)
        self.assertAlmostEqual(trace(boost=True), 20e-6, places=9)
        self.assertAlmostEqual(trace(boost=False), 1.5e-3, places=9)
        # throttled after the wait began: from the throttle on
        self.assertAlmostEqual(trace(boost=False, throttled="1.001200"), 1.3e-3, places=9)
        # and after the boost: none of it
        self.assertAlmostEqual(trace(boost=True, throttled="1.001200"), 0.0, places=9)

    def test_the_missed_steps_spans_alone_give_the_same_causes(self):
        full = explain.GuestTrace(os.path.join(FIX, "stock"), "stock")
        t0 = full.t0
        steps = [{"target_rate": 117, "meets_slo": False,
                  "result": {"start_mono_s": t0 + 1.43, "elapsed_s": 0.22, "lost": 0}},
                 {"target_rate": 117, "meets_slo": True,
                  "result": {"start_mono_s": t0 + 1.62, "elapsed_s": 0.02, "lost": 0}}]
        windows = explain.missed_windows(steps)
        self.assertEqual(len(windows), 1)
        self.assertAlmostEqual(windows[0][0], t0 + 1.43 - explain.WINDOW_LEAD)
        part = explain.GuestTrace(os.path.join(FIX, "stock"), "stock", windows)
        self.assertEqual(part.step(steps[0]), full.step(steps[0]))
        # a step outside what was read: no numbers, no cause
        outside = {"target_rate": 234, "meets_slo": True,
                   "result": {"start_mono_s": t0 + 1.66, "elapsed_s": 0.04, "lost": 0}}
        self.assertEqual(part.step(outside), {"target_rate": 234, "covered": False, "cause": None})
        self.assertTrue(full.step(outside)["covered"])
        doc = part.document()
        self.assertEqual(len(doc["trace"]["read_s"]), 1)
        self.assertIn("read: 1 span of the trace, no more", doc["line"])
        # the stall is within the span: explained as from the whole trace
        self.assertEqual(doc["stalls"], full.document()["stalls"])
        self.assertIsNone(full.document()["trace"]["read_s"])
        # a span that misses the stall leaves it out rather than unexplained
        away = explain.GuestTrace(os.path.join(FIX, "stock"), "stock", [(t0 + 1.6, t0 + 1.62)])
        self.assertLess(away.nevents, full.nevents / 5)
        self.assertEqual(away.document()["stalls"], [])

    def test_spans_merge(self):
        self.assertEqual(explain._merged([(5, 6), (1, 3), (2, 4)]), [(1, 4), (5, 6)])

    def test_no_cause_past_a_full_buffer(self):
        """A buffer that filled dropped what came after: a step past the
        first CPU's last event gets no cause from the trace (the report
        keeps loadgen's), one before it does."""
        d = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, d)
        shutil.copytree(os.path.join(FIX, "stock"), d, dirs_exist_ok=True)
        stats = os.path.join(d, "trace-stats.txt")
        with open(stats) as f:
            text = f.read()
        with open(stats, "w") as f:
            f.write(text.replace("dropped events: 0", "dropped events: 1000", 1))
        run = explain.GuestTrace(d, "stock")
        end = min(ts[-1] for ts in run.tl.seen.values()) - run.t0

        def step(a, b):
            return {"target_rate": 117, "meets_slo": False,
                    "result": {"start_mono_s": run.t0 + a, "elapsed_s": b - a, "lost": 0}}
        past = run.step(step(end - 0.1, end + 0.01))
        self.assertEqual((past["covered"], past["cause"]), (False, None))
        before = run.step(step(1.43, min(1.65, end)))
        self.assertEqual((before["covered"], before["cause"]), (True, "lock"))

    def test_cli_refuses_a_sweep_without_times(self):
        d = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, d)
        sweep = os.path.join(d, "sweep.json")
        with open(sweep, "w", encoding="utf-8") as f:
            json.dump({"steps": [{"result": {"elapsed_s": 4}}]}, f)
        p = subprocess.run([os.path.join(TOP, "lab", "ktrace", "explain"), os.path.join(FIX, "stock"),
                            "--out", os.path.join(d, "c.json"), "--sweep", sweep],
                           capture_output=True, text=True)
        self.assertEqual(p.returncode, 65)
        self.assertIn("step 0 has no start_mono_s", p.stderr)
        p = subprocess.run([os.path.join(TOP, "lab", "ktrace", "explain"), os.path.join(FIX, "stock"),
                            "--out", os.path.join(d, "c.json"), "--missed-only"],
                           capture_output=True, text=True)
        self.assertEqual(p.returncode, 2)
        self.assertIn("--missed-only needs --sweep", p.stderr)


class PatchedTest(unittest.TestCase):
    """The patched excerpt: the relay's waits on the ready-list lock, each
    with the holder boosted to the relay's priority."""

    @classmethod
    def setUpClass(cls):
        cls.doc = explain.GuestTrace(os.path.join(FIX, "patched"), "patched").document()

    def test_every_rt_wait_boosts_its_holder(self):
        c = self.doc["contentions"]
        self.assertGreater(c["rt_waits"], 10)
        self.assertEqual(c["boosts"], c["rt_waits"])
        self.assertIn(["FIFO", 50], [list(t) for t in c["boosted_to"]])
        self.assertLess(c["rt_wait_us"]["max"], 1000)
        w = self.doc["longest_rt_wait"]
        self.assertEqual(w["lock"]["kind"], "spinlock_t")
        self.assertEqual(w["boost"]["to"], ["FIFO", 50])
        self.assertEqual(self.doc["totals"]["stalls"], 0)

    def test_offset_agrees_with_the_stock_kernel(self):
        stock = explain.GuestTrace(os.path.join(FIX, "stock"), "stock")
        self.assertEqual(self.doc["ready_list_lock"]["offset_in_eventpoll"], stock.offset)


class SoftirqTest(unittest.TestCase):
    """The patched-softirq excerpt: the non-RT waker's chain. A loadgen
    thread is throttled serving softirqs; a boost through ep->lock does not
    end the hold, the relay's boost through CPU 1's softirq lock does."""

    @classmethod
    def setUpClass(cls):
        cls.run_ = explain.GuestTrace(os.path.join(FIX, "patched-softirq"), "patched")
        cls.doc = cls.run_.document()

    def test_the_hold_and_what_ended_it(self):
        sh = self.doc["softirq_held"]
        self.assertEqual((sh["throttles_holding"], sh["over_late_ms"], sh["late_ms"]), (1, 1, 5))
        h = sh["longest"]
        self.assertEqual((h["holder"]["comm"], h["holder"]["pid"], h["holder"]["policy"]),
                         ("loadgen", 77, "OTHER"))
        self.assertEqual((h["cpu"], h["holding"], h["ended_by"]), (1, "serving softirqs", "boost"))
        self.assertAlmostEqual(h["held_ms"], 7.996, places=3)
        self.assertEqual((h["boost"]["by"]["comm"], h["boost"]["to"]), ("relay", ["FIFO", 50]))
        # Through a lock of no epoll instance: not the ready-list lock the
        # relay boosted the same thread through 46 us into the hold.
        lock = int(h["boost"]["through_lock"], 16)
        epolls = {cb.ep for cbs in self.run_.tl.callbacks.values() for cb in cbs}
        self.assertNotIn(lock - self.doc["ready_list_lock"]["offset_in_eventpoll"], epolls)
        early = [b for b in self.run_.tl.boosts[77] if b.ts < self.run_.t0 + h["held_until_s"] - 0.001]
        self.assertTrue(any(b.through and b.through.lock - 144 in epolls for b in early), early)
        self.assertIn("held past 5 ms by a throttled task 1 time, longest 8.0 ms by loadgen/77",
                      self.doc["line"])

    def test_the_page_row(self):
        # chains.json as the report reads it: the non-RT waiter's row shows
        # the hold, not the loadgen thread's microseconds on ep->lock.
        rows = dict(trace_page.rows([("patched", judged(self, self.doc))]))
        cell = rows["non-RT waiter (the caveat)"][0]
        self.assertEqual(cell, "CPU 1's softirqs (the relay's timerfd tick) held 7.996 ms by loadgen/77 "
                         "(OTHER 0), throttled serving softirqs; no task waited on the lock to boost it, "
                         "until relay/71 (FIFO 50) needed the lock and boosted it to FIFO 50 "
                         "(1 of 1 such holds over 5 ms)")

    def test_no_hold_without_the_flags(self):
        # The same excerpt with the throttle's columns saying nothing was
        # held: no hold is claimed.
        lines = [ln.replace("dNs26", "dN.2.") if " throttle: " in ln else ln
                 for ln in lines_of("patched-softirq")]
        tl = chains.Timeline(tracefile.parse(lines))
        self.assertEqual(chains.softirq_holds(tl, 0), [])

    def test_a_throttle_in_another_task_s_context_holds_nothing(self):
        # The same throttle, fired while an RT task's boost changed the
        # loadgen thread's class (rt_mutex_setprio): not the thread's own
        # switch-out, so not its softirq lock.
        lines = []
        for ln in lines_of("patched-softirq"):
            lines.append(ln)
            if ln.startswith(" => put_prev_task_fair"):
                lines.append(" => rt_mutex_setprio")
        tl = chains.Timeline(tracefile.parse(lines))
        self.assertEqual(chains.softirq_holds(tl, 0), [])

    def test_a_task_s_own_priority(self):
        # The relay starts as SCHED_OTHER and then goes FIFO 50: RT. A
        # loadgen thread boosted to FIFO 50 and seen running so: not RT,
        # OTHER in a chain.
        lines = [
            "  relay-71  [001] d..2.  1.0: sched_switch: prev_comm=relay prev_pid=71 prev_prio=120 "
            "prev_state=S ==> next_comm=loadgen next_pid=77 next_prio=120",
            "  relay-71  [001] d..3.  1.1: sched_pi_setprio: comm=loadgen pid=77 oldprio=120 newprio=49",
            "  loadgen-77  [001] d..2.  1.2: sched_switch: prev_comm=loadgen prev_pid=77 prev_prio=49 "
            "prev_state=R+ ==> next_comm=relay next_pid=71 next_prio=49",
        ]
        tl = chains.Timeline(tracefile.parse(lines))
        self.assertTrue(tl.is_rt(71))
        self.assertFalse(tl.is_rt(77))
        self.assertEqual(tl.task(77)["policy"], "OTHER")
        self.assertEqual(tl.task(71)["policy"], "FIFO")

    def test_a_reader_s_nested_waits(self):
        # A reader queued on the rwlock (e90) waits, inside that, for its
        # rtmutex (e98) twice: it waits for e90 from its first
        # contention_begin to its last contention_end, and for nothing
        # after it.
        lines = [
            "  ticker-78  [000] d.s13.  1.000: contention_begin: ffff888000b92e90 (flags=READ|RT)",
            "  ticker-78  [000] d.s13.  1.001: contention_begin: ffff888000b92e98 (flags=RT)",
            "  ticker-78  [000] d..1.  1.002: contention_end: ffff888000b92e98 (ret=0)",
            "  ticker-78  [000] d.s13.  1.003: contention_begin: ffff888000b92e98 (flags=RT)",
            "  ticker-78  [000] d..1.  1.004: contention_end: ffff888000b92e98 (ret=0)",
            "  ticker-78  [000] d..1.  1.200: contention_end: ffff888000b92e90 (ret=0)",
        ]
        tl = chains.Timeline(tracefile.parse(lines))
        rw, rtm = 0xffff888000b92e90, 0xffff888000b92e98
        for t in (1.0, 1.0015, 1.0025, 1.0035, 1.1, 1.2):
            self.assertTrue(tl.waiting_at(78, rw, t), t)
        self.assertTrue(tl.waiting_at(78, rtm, 1.0035))
        self.assertFalse(tl.waiting_at(78, rtm, 1.1))
        for t in (0.9, 1.3):
            self.assertFalse(tl.waiting_at(78, rw, t), t)
        self.assertFalse(tl.waiting_at(79, rw, 1.1))

    def test_inside_the_callback(self):
        # Two callbacks of one task, the second never seen to return: the
        # one holding t from its entry to its return, none between them,
        # the open one from its entry on; another task's are its own.
        cb = "ep_cb: (ep_poll_callback+0x0/0x1ca) ep=0xffff888002a34e00"
        ret = "ep_cb_ret: (ffffffff8115f01e <- ffffffff8106bf5f)"
        lines = [f"  loadgen-77  [001] d..3.  1.000: {cb}",
                 f"  loadgen-77  [001] d..3.  1.002: {ret}",
                 f"  loadgen-78  [000] d..3.  1.003: {cb}",
                 f"  loadgen-77  [001] d..3.  1.005: {cb}"]
        tl = chains.Timeline(tracefile.parse(lines))
        for t, entry in ((0.999, None), (1.0, 1.0), (1.001, 1.0), (1.002, 1.0), (1.003, None),
                         (1.005, 1.005), (9.0, 1.005)):
            got = tl.inside_callback(77, t)
            self.assertEqual(got and got.entry, entry, t)
        self.assertEqual(tl.inside_callback(78, 1.004).entry, 1.003)
        self.assertIsNone(tl.inside_callback(78, 1.0))
        self.assertIsNone(tl.inside_callback(79, 1.004))

    def test_a_holder_that_queued_behind_the_writer(self):
        # A stock run's stall 26 (2026-12-07), cut down: loadgen enters the
        # callback and queues for the read lock behind the relay's write
        # wait; the relay takes the lock alone and lets it go; loadgen
        # gets it, is throttled inside the callback, and the relay's next
        # wait finds it holding the lock. The relay's solo take came before
        # loadgen had the lock, so it clears nothing.
        lock, cb = "ffff888002b33290", "ep_cb: (ep_poll_callback+0x0/0x1ca) ep=0xffff888002b33200"
        lines = [f"  loadgen-90  [001] d..3.  8.423772: {cb}",
                 f"  loadgen-90  [001] d..3.  8.423773: contention_begin: {lock} (flags=READ|RT)",
                 f"  relay-84  [001] d..3.  8.423807: contention_end: {lock} (ret=0)",
                 f"  loadgen-90  [001] d..3.  8.423845: contention_end: {lock} (ret=0)",
                 f"  relay-84  [001] d..3.  8.423888: contention_begin: {lock} (flags=WRITE|RT)"]
        # The relay's wait that the solo take ended, begun before them.
        lines.insert(0, f"  relay-84  [001] d..3.  8.423755: contention_begin: {lock} (flags=WRITE|RT)")
        tl = chains.Timeline(tracefile.parse(lines))
        w = tl.waits[-1]
        self.assertEqual(w.begin, 8.423888)
        self.assertEqual([pid for pid, _ in chains.holders(tl, w, 0x90)], [90])
        # Had loadgen held the lock before the relay took it alone, it
        # would hold nothing at the relay's next wait.
        early = [ln.replace("8.423845", "8.423790") for ln in lines]
        tl = chains.Timeline(tracefile.parse(early))
        self.assertEqual(chains.holders(tl, tl.waits[-1], 0x90), [])

    def test_holds_bh(self):
        for flags, held in (("dNs26", True), ("DNZ13", True), ("b...3", True), ("d.H2.", True),
                            ("dN.2.", False), ("d.h3.", False), ("", False), ("d.", False)):
            self.assertEqual(tracefile.holds_bh(flags), held, flags)


class HoldersTest(unittest.TestCase):
    """Who held the ready-list lock when a wait began: a callback whose
    return the trace never saw (its probes narrowed to the co-tenant's
    threads while it was inside) holds nothing once another waiter took
    the lock alone after it began."""

    def test_a_callback_left_open_before_a_writer_took_the_lock(self):
        lines = [
            "          rcuc/1-26      [001] ..s.4     1.000000: "
            "ep_cb: (ep_poll_callback+0x0/0x1ca) ep=0xffff888002ab0e00",
            "           relay-71      [001] d..1.     1.100000: "
            "contention_begin: ffff888002ab0e90 (flags=WRITE|RT)",
            "           relay-71      [001] d..1.     1.200000: "
            "contention_end: ffff888002ab0e90 (ret=0)",
            "         loadgen-120     [001] ..s.4     1.250000: "
            "ep_cb: (ep_poll_callback+0x0/0x1ca) ep=0xffff888002ab0e00",
            "           relay-71      [001] d..1.     1.300000: "
            "contention_begin: ffff888002ab0e90 (flags=WRITE|RT)",
            "         loadgen-120     [001] ..s.4     1.400000: "
            "ep_cb_ret: (__wake_up_common+0x4c/0x78 <- ep_poll_callback)",
            "           relay-71      [001] d..1.     1.400010: "
            "contention_end: ffff888002ab0e90 (ret=0)",
        ]
        tl = chains.Timeline(tracefile.parse(lines))
        first, second = tl.waits
        self.assertEqual([pid for pid, _ in chains.holders(tl, second, 0x90)], [120])
        # before the first writer took it, the open callback may hold it
        self.assertEqual([pid for pid, _ in chains.holders(tl, first, 0x90)], [26])
        # a reader's wait proves nothing: readers share the lock
        read = [ln.replace("flags=WRITE|RT", "flags=READ|RT") if "1.100000" in ln else ln for ln in lines]
        tl = chains.Timeline(tracefile.parse(read))
        self.assertEqual(sorted(pid for pid, _ in chains.holders(tl, tl.waits[1], 0x90)), [26, 120])


class BhStallTest(unittest.TestCase):
    """The patched-bh-stall excerpt: a stall of the patched kernel that no
    wait on the ready-list lock explains. The relay slept in epoll_wait
    while a loadgen thread, preempted inside its softirqs, held CPU 1's
    softirq lock and its cgroup was throttled: the relay's tick, the
    co-tenant's datagrams and the quota period's refill all wait for that
    lock, until the watchdog's write to cpu.max."""

    @classmethod
    def setUpClass(cls):
        cls.dir = os.path.join(FIX, "patched-bh-stall")
        cls.doc = explain.GuestTrace(cls.dir, "patched").document()

    def test_the_stall_is_the_softirq_lock_s(self):
        (row,) = self.doc["stalls"]
        self.assertNotIn("unexplained", row)
        self.assertEqual(row["held_by"], "softirq lock")
        c = row["chain"]
        self.assertEqual((c["kind"], c["cpu"], c["complete"]), ("softirq", 1, True))
        self.assertEqual((c["relay"]["task"]["comm"], c["relay"]["state"]), ("relay", "asleep"))
        h = c["holder"]
        self.assertEqual((h["comm"], h["pid"], h["policy"], h["holding"], h["switched_out_state"]),
                         ("loadgen", 125, "OTHER", "serving softirqs", "R"))
        # preempted by the relay 7 us before the relay slept; its cgroup
        # throttled 17 us after, in the other sender's switch-out
        self.assertAlmostEqual(h["switched_out_s"], 34.230026, places=6)
        self.assertEqual(c["throttle"]["unthrottled_by"], "cpu.max")
        self.assertGreater(c["covers_ms"], 0.9 * row["length_ms"])
        # the other sender waited for the lock the whole time
        self.assertEqual([w["pid"] for w in c["waiters"]], [124])
        self.assertIn("an inversion the epoll fix does not reach", self.doc["line"])
        self.assertTrue(row["line"].startswith("the relay slept in epoll_wait from 34.230033 s while CPU 1's "
                                               "softirq lock was held by loadgen/125"), row["line"])
        self.assertEqual(self.doc["totals"]["stalls_explained"], 1)

    def test_not_without_the_holder_s_flags(self):
        # The holder's switch-out without its softirq column: nobody is
        # seen holding the lock, and the stall stays unexplained, saying so.
        lines = [ln.replace("d.s23", "d..2.") for ln in lines_of("patched-bh-stall")]
        d = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, d)
        for f in ("scenario.json", "trace-stats.txt", "trace-probes.txt"):
            shutil.copy(os.path.join(self.dir, f), d)
        with gzip.open(os.path.join(d, "trace.txt.gz"), "wt", encoding="utf-8") as f:
            f.write("\n".join(lines) + "\n")
        (row,) = explain.GuestTrace(d, "patched").document()["stalls"]
        self.assertIn("the longest RT wait on a ready-list lock in it covers 0.0 ms", row["unexplained"])
        self.assertNotIn("held_by", row)

    def test_the_holder_is_the_one_that_did_not_run_since(self):
        tl = chains.Timeline(tracefile.parse(lines_of("patched-bh-stall")))
        t = 36.300740   # the relay's sleep, on the trace's clock
        pid, out, back = chains.bh_holder(tl, 1, t)
        self.assertEqual((pid, out.state), (125, "R"))
        self.assertGreater(back, t + 0.2)
        # Earlier on, while the relay still ran, a sender preempted inside
        # its softirqs ran again 9 us later, the relay having boosted it.
        pid, out, back = chains.bh_holder(tl, 1, 36.2989)
        self.assertEqual(pid, 124)
        self.assertLess(back - out.ts, 1e-4)


class VcpuTest(unittest.TestCase):
    """The patched-vcpu excerpt: an RT datagram late because the ticker's
    vCPU did not execute."""

    def test_the_silent_cpu_is_the_step(self):
        doc = explain.GuestTrace(os.path.join(FIX, "patched-vcpu"), "patched").document()
        (row,) = doc["late"]
        d = row["path"]["dominant"]
        self.assertEqual(d["step"], "the ticker's datagram into the relay's socket")
        self.assertAlmostEqual(d["ms"], 0.548, places=3)
        self.assertAlmostEqual(d["cpu_silent_ms"], 0.512, places=3)
        self.assertNotIn("unexplained", row)
        self.assertEqual((doc["totals"]["late"], doc["totals"]["late_vcpu_idle"]), (1, 1))
        self.assertIn("(1 while the ticker's vCPU did not execute)", doc["line"])
        # A CPU that logged events through the step did execute.
        busy = dict(d, cpu_silent_ms=0.05)
        self.assertFalse(explain.vcpu_idle({"path": {"dominant": busy}}))


class StockIdleTest(unittest.TestCase):
    """stock-idle: CPU 0's freeze probe late three times in a row outside
    any stall, the first by 3.005 ms: woken on time in the timer's
    interrupt, then the idle task kept the CPU, need-resched set, through
    three ticks. The excerpt's scenario.json lists the three as freezes
    with a limit of 1 ms (the run's probes had 5 ms)."""

    @classmethod
    def setUpClass(cls):
        cls.doc = explain.GuestTrace(os.path.join(FIX, "stock-idle"), "stock").document()

    def test_three_freezes_of_the_idle_cpu(self):
        fr = self.doc["freezes"]
        self.assertEqual((fr["counted"], fr["explained"], fr["unexplained"]), (3, 3, 0))
        self.assertEqual(fr["by_cause"], {"vcpu": 0, "idle": 3, "task": 0})
        first = fr["rows"][0]
        self.assertEqual((first["cpu"], first["late_ms"], first["cause"]), (0, 3.005, "idle"))
        step = first["steps"][1]
        self.assertEqual((step["step"], step["idle_ms"], step["need_resched"]),
                         ("woken to running", 3.0, True))
        self.assertEqual(step["interrupts"], 4)      # the keeper's timer and three ticks
        self.assertNotIn("in_stall", first)
        self.assertEqual(first["text"], "3.005 ms on CPU 0 at 23.599 s: CPU 0 stayed idle 3.0 ms with "
                         "the probe woken (taking 4 interrupts meanwhile; the emulated CPU back in hlt "
                         "with a task runnable)")
        self.assertIn("3 freezes of the probes over 1 ms, 3 explained (idle with the probe woken 3",
                      self.doc["line"])

    def test_without_the_probe_s_wake_up_it_is_unexplained(self):
        d = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, d)
        shutil.copytree(os.path.join(FIX, "stock-idle"), d, dirs_exist_ok=True)
        lines = [ln for ln in lines_of("stock-idle")
                 if not ("25.440007: sched_waking: comm=demo-scenario pid=76 " in ln
                         or "25.443007: sched_switch:" in ln)]
        with gzip.open(os.path.join(d, "trace.txt.gz"), "wt", encoding="utf-8") as f:
            f.write("\n".join(lines) + "\n")
        fr = explain.GuestTrace(d, "stock").document()["freezes"]
        self.assertEqual((fr["explained"], fr["unexplained"]), (2, 1))
        self.assertIn("no wake-up of the probe on CPU 0 in the trace", fr["rows"][0]["unexplained"])

    def test_freezes_a_probe_did_not_list_are_its_own(self):
        # CPU 0's probe counted five and listed three; CPU 1's counted none.
        d = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, d)
        shutil.copytree(os.path.join(FIX, "stock-idle"), d, dirs_exist_ok=True)
        path = os.path.join(d, "scenario.json")
        with open(path, encoding="utf-8") as f:
            scen = json.load(f)
        scen["ticker"]["freeze_probes"][0]["freezes"] = 5
        with open(path, "w", encoding="utf-8") as f:
            json.dump(scen, f)
        fr = explain.GuestTrace(d, "stock").document()["freezes"]
        self.assertEqual((fr["counted"], fr["unlisted"], fr["explained"], fr["unexplained"]), (5, 2, 3, 2))


class FreezeTest(unittest.TestCase):
    """What held a CPU from the freeze probe (freezes.py), on small traces:
    CPU 0's probe (pid 90, FIFO 90) due at 1.000 s, woken in the timer's
    interrupt, run at 1.005 s."""

    PROBE = "  <idle>-0 [000] dNh3. 1.000003: sched_waking: comm=demo-scenario pid=90 prio=9 target_cpu=000"
    RUN = ("  <idle>-0 [000] d..2. 1.005005: sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 "
           "prev_state=R ==> next_comm=demo-scenario next_pid=90 next_prio=9")

    def row(self, lines, stalls=(), covered=lambda a, b: True):
        from lab.ktrace import freezes, scenario
        before = ["  demo-scenario-90 [000] d..2. 0.995005: sched_switch: prev_comm=demo-scenario "
                  "prev_pid=90 prev_prio=9 prev_state=S ==> next_comm=swapper/0 next_pid=0 next_prio=120"]
        tl = chains.Timeline(tracefile.parse(before + lines), [(0.99, 1.01)])
        pid = freezes.probe_pid(tl, 0, 90)
        self.assertEqual(pid, 90)
        r = freezes.explain(tl, scenario.Freeze(0, 1.0, 1.005009), pid, 0.0, stalls, covered)
        r["text"] = freezes.line(r)
        return r

    def test_the_vcpu_that_did_not_execute(self):
        other = [f"  loadgen-80 [001] ....1 1.00{i}500: ep_cb: (ep_poll_callback+0x0/0x1ca) "
                 "ep=0xffff888000001000" for i in range(1, 5)]
        r = self.row([self.PROBE] + other + [self.RUN])
        self.assertEqual(r["cause"], "vcpu", r)
        self.assertIn("CPU 0 logged nothing", r["text"])
        self.assertIn("CPU 1 ran", r["text"])

    def test_idle_with_the_probe_woken_through_its_ticks(self):
        ticks = [f"  <idle>-0 [000] dNh1. 1.00{i}004: local_timer_entry: vector=236" for i in range(1, 6)]
        r = self.row([self.PROBE] + ticks + [self.RUN])
        self.assertEqual(r["cause"], "idle", r)
        step = r["steps"][1]
        self.assertEqual((step["interrupts"], step["need_resched"]), (5, True))
        self.assertIn("stayed idle 5.002 ms with the probe woken (taking 5 interrupts", r["text"])

    def test_a_task_that_kept_the_cpu(self):
        lines = [
            "  <idle>-0 [000] d..2. 0.999000: sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 "
            "prev_state=R ==> next_comm=migration/0 next_pid=20 next_prio=0",
            "  migration/0-20 [000] d.h2. 1.000003: sched_waking: comm=demo-scenario pid=90 prio=9 "
            "target_cpu=000",
        ] + [f"  migration/0-20 [000] d.h1. 1.00{i}004: local_timer_entry: vector=236"
             for i in range(1, 5)] + [
            "  migration/0-20 [000] d..2. 1.005005: sched_switch: prev_comm=migration/0 prev_pid=20 "
            "prev_prio=0 prev_state=S ==> next_comm=demo-scenario next_pid=90 next_prio=9"]
        r = self.row(lines)
        self.assertEqual(r["cause"], "task", r)
        self.assertEqual((r["steps"][1]["task"]["comm"], r["steps"][1]["above_probe"]), ("migration/0", True))
        self.assertIn("migration/0/20 (FIFO 99) ran 5.002 ms", r["text"])

    def test_in_a_stall(self):
        from lab.ktrace import scenario
        ticks = [f"  <idle>-0 [000] dNh1. 1.00{i}004: local_timer_entry: vector=236" for i in range(1, 6)]
        r = self.row([self.PROBE] + ticks + [self.RUN], stalls=[scenario.Stall(3, 0.9, 1.1, 200.0, 1.09)])
        self.assertEqual(r["in_stall"], 3)
        self.assertTrue(r["text"].endswith(", inside stall 3"), r["text"])

    def test_what_the_trace_cannot_account_for(self):
        # no wake-up of the probe
        r = self.row([self.RUN.replace("1.005005", "1.007")])
        self.assertIn("no wake-up of the probe on CPU 0", r["unexplained"])
        # the span not seen whole (a buffer filled before it)
        r = self.row([self.PROBE, self.RUN], covered=lambda a, b: False)
        self.assertIn("does not hold all of it", r["unexplained"])
        # events on the CPU, nothing else ran: no task and no silence
        wakes = [f"  demo-scenario-90 [000] d..2. 1.00{i}100: sched_waking: comm=demo-scenario pid=91 prio=9 "
                 "target_cpu=001" for i in range(1, 5)]
        r = self.row([self.PROBE] + wakes + [self.RUN])
        self.assertIn("no other task filled it", r["unexplained"])
        self.assertIn("unexplained", r["text"])


class CliTest(unittest.TestCase):
    def run_explain(self, d):
        return subprocess.run([os.path.join(TOP, "lab", "ktrace", "explain"), d, "--name", "x"],
                              capture_output=True, text=True)

    def copy(self, kernel):
        d = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, d)
        for f in os.listdir(os.path.join(FIX, kernel)):
            shutil.copy(os.path.join(FIX, kernel, f), d)
        return d

    def test_writes_chains_json(self):
        d = self.copy("stock")
        p = self.run_explain(d)
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(os.path.join(d, "chains.json"), encoding="utf-8") as f:
            self.assertEqual(json.load(f)["totals"]["stalls_explained"], 1)
        self.assertIn("x: 1 of 1 stalls explained", p.stdout)

    def test_lost_events_are_said(self):
        d = self.copy("stock")
        with open(os.path.join(d, "trace-stats.txt"), "a", encoding="utf-8") as f:
            f.write("cpu7\ndropped events: 12\n")
        p = self.run_explain(d)
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(os.path.join(d, "chains.json"), encoding="utf-8") as f:
            doc = json.load(f)
        self.assertFalse(doc["trace"]["complete"])
        self.assertIn("the trace lost 12 events", p.stdout)

    def test_a_loadgen_run_as_the_rt_client(self):
        """--client: the RT datagrams of a loadgen run's JSON, its threads
        the RT waker. The stock excerpt with its ticker renamed loadgen and
        its listed datagrams in a loadgen JSON instead of scenario.json is
        explained as the ticker's were."""
        d = self.copy("stock")
        p = self.run_explain(d)
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(os.path.join(d, "chains.json"), encoding="utf-8") as f:
            want = json.load(f)
        self.assertGreater(want["totals"]["late"], 0)
        path = os.path.join(d, "scenario.json")
        with open(path, encoding="utf-8") as f:
            scen = json.load(f)
        t0 = scen["t0_mono_ns"] / 1e9
        run = {"listed": {"over_us": scen["ticker"]["list_over_us"], "complete": True, "dropped": 0,
                          "datagrams": [{"intended_mono_s": t0 + x["due_s"], "reply_mono_s": t0 + x["echo_s"]}
                                        for x in scen["ticker"]["listed"]]}}
        scen["ticker"]["listed"] = []
        with open(path, "w", encoding="utf-8") as f:
            json.dump(scen, f)
        client = os.path.join(d, "rt-client.json")
        with open(client, "w", encoding="utf-8") as f:
            json.dump(run, f)
        with gzip.open(os.path.join(d, "trace.txt.gz"), "rt", encoding="utf-8") as f:
            text = f.read().replace("demo-scenario", "loadgen")
        with gzip.open(os.path.join(d, "trace.txt.gz"), "wt", encoding="utf-8") as f:
            f.write(text)
        p = subprocess.run([os.path.join(TOP, "lab", "ktrace", "explain"), d, "--client", client],
                           capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(os.path.join(d, "chains.json"), encoding="utf-8") as f:
            got = json.load(f)
        self.assertEqual(got["totals"], want["totals"])
        # the same rows, the waiter's name the client's
        self.assertEqual(json.dumps(got["late"]),
                         json.dumps(want["late"]).replace("demo-scenario", "loadgen"))
        # A run without --list-over-us has nothing to explain: named, 65.
        with open(client, "w", encoding="utf-8") as f:
            json.dump({"listed": None}, f)
        p = subprocess.run([os.path.join(TOP, "lab", "ktrace", "explain"), d, "--client", client],
                           capture_output=True, text=True)
        self.assertEqual(p.returncode, 65)
        self.assertIn("rt-client.json: no listed datagrams", p.stderr)

    def test_each_freeze_has_its_words(self):
        d = self.copy("stock")
        with open(os.path.join(d, "scenario.json"), encoding="utf-8") as f:
            scen = json.load(f)
        due = 3.000001 - scen["t0_mono_ns"] / 1e9
        scen["ticker"]["freeze_probes"][0].update(freezes=1, listed=[{"due_s": due, "woke_s": due + 0.00001}])
        scen["ticker"]["freeze_probes"][1]["listed"] = []
        with open(os.path.join(d, "scenario.json"), "w", encoding="utf-8") as f:
            json.dump(scen, f)
        p = self.run_explain(d)
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(os.path.join(d, "chains.json"), encoding="utf-8") as f:
            fr = json.load(f)["freezes"]
        self.assertEqual((fr["counted"], len(fr["rows"])), (1, 1))
        self.assertTrue(fr["rows"][0]["text"].startswith(f"0.010 ms on CPU 0 at {due:.3f} s"), fr["rows"][0])
        self.assertIn("1 freeze of the probes", p.stdout)

    def test_bad_input_exits_65_or_66(self):
        d = self.copy("stock")
        os.unlink(os.path.join(d, "trace.txt.gz"))
        self.assertEqual(self.run_explain(d).returncode, 66)
        d = self.copy("stock")
        with gzip.open(os.path.join(d, "trace.txt.gz"), "wt") as f:
            f.write("not a trace\n")
        p = self.run_explain(d)
        self.assertEqual(p.returncode, 65)
        self.assertIn("trace.txt.gz:1: not a trace line", p.stderr)
        d = self.copy("stock")
        # a scenario from before the trace; one that is not a scenario at all
        for text, said in (('{"stalls": [], "params": {}}', "scenario.json: no t0_mono_ns"),
                           ('{"stalls": []}', "scenario.json: params: missing")):
            with open(os.path.join(d, "scenario.json"), "w", encoding="utf-8") as f:
                f.write(text)
            p = self.run_explain(d)
            self.assertEqual(p.returncode, 65)
            self.assertIn(said, p.stderr)


if __name__ == "__main__":
    unittest.main()
