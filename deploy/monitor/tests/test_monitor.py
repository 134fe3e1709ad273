"""deploy.monitor on real scrapes of relay (tests/fixtures/prometheus: the
demo guests' relay.metrics.prom, stock and patched PREEMPT_RT kernels):
what a dashboard query may name, the alerts promtool gives for recorded
scrapes, and the host A/B's check. promtool (Debian's prometheus package,
mk/packages/test.txt) is needed: without it these fail, they do not skip."""
import contextlib
import io
import json
import os
import re
import shutil
import tempfile
import unittest
from unittest import mock

from deploy.monitor import dashboard, exposition, hostab, recorded

FIX = os.path.join(recorded.TOP, "tests", "fixtures", "prometheus")


def scrape(host):
    return recorded.read(os.path.join(FIX, "demo", host, "relay.metrics.prom"))


def rules():
    import yaml
    with open(recorded.RULES) as f:
        return yaml.safe_load(f)


def board(*exprs, legend=""):
    return {"panels": [{"title": "p%d" % i, "targets": [{"expr": e, "legendFormat": legend}]}
                       for i, e in enumerate(exprs)]}


class Exposition(unittest.TestCase):
    def test_samples_of_a_real_scrape(self):
        s = scrape("stock")
        self.assertEqual(exposition.value(s, "relay_kernel_info", epoll_fix="missing"), 1)
        self.assertIsNone(exposition.value(s, "relay_kernel_info", epoll_fix="fixed"))
        names = exposition.series([s])
        self.assertIn(("cgroup", "wakeup"), names["relay_late_while_throttled_total"])
        self.assertIn(("le",), names["relay_tick_lateness_seconds_bucket"])

    def test_not_the_text_format(self):
        with self.assertRaises(exposition.BadExposition):
            exposition.samples("relay_x{a=b} 1\n")


class Parse(unittest.TestCase):
    def test_names_labels_and_grouping(self):
        ms, by = dashboard.parse('sum by (instance, reason) (rate(relay_drops_total{instance=~"$instance"}'
                                 '[5m])) / on (job) group_left relay_x{a="b",c!~"d"}')
        self.assertEqual(ms, [("relay_drops_total", {"instance"}), ("relay_x", {"a", "c"})])
        self.assertEqual(by, {"instance", "reason", "job"})

    def test_strings_functions_and_keywords_are_no_names(self):
        ms, _ = dashboard.parse('histogram_quantile(0.999, sum(rate(a_bucket{le="inf or b"}[5m]))) '
                                'and bool c offset 5m')
        self.assertEqual([m for m, _ in ms], ["a_bucket", "c"])
        self.assertEqual(dashboard.parse('{__name__="x", y="1"}')[0], [("x", {"y"})])


class Dashboard(unittest.TestCase):
    def test_the_shipped_dashboard_against_real_scrapes(self):
        with open(os.path.join(os.path.dirname(recorded.RULES), "..", "grafana", "relay.json")) as f:
            dash = json.load(f)
        self.assertEqual(dashboard.problems(dash, [scrape("stock"), scrape("patched")], rules()), [])

    def test_what_relay_does_not_produce(self):
        got = dashboard.problems(board(
            "rate(relay_no_such_total[5m])",
            'relay_kernel_info{kernel="6.1"}',
            "sum by (host) (relay_late_wakeups_total)",
            "relay:no_such_rule",
            'rate(relay_late_wakeups_total{wakeup="tock"}[5m])',
        ), [scrape("stock")], rules())
        self.assertEqual(len(got), 5, got)
        self.assertIn("panel 'p0': relay_no_such_total is no series relay exports", got[0])
        self.assertIn("panel 'p1': relay_kernel_info has no label kernel", got[1])
        self.assertIn("panel 'p2': groups by host", got[2])
        self.assertIn("panel 'p3': relay:no_such_rule is no series", got[3])
        self.assertIn("panel 'p4': relay_late_wakeups_total{wakeup=\"tock\"}: relay exports no such value "
                      "(it has datagram, non_rt_sender, stream, tick)", got[4])

    def test_a_word_list_of_values_is_held_too(self):
        self.assertEqual(dashboard.matched_values('a{wakeup=~"datagram|stream", b="x", c=~".*", i=~"$i"}'),
                         {("a", "wakeup"): {"datagram", "stream"}, ("a", "b"): {"x"}})
        got = dashboard.problems(board('relay_late_wakeups_total{wakeup=~"datagram|streams"}'),
                                 [scrape("stock")], rules())
        self.assertEqual(len(got), 1, got)
        self.assertIn('wakeup="streams"', got[0])

    def test_legends_and_rules_are_held_too(self):
        got = dashboard.problems(board("relay:cgroup_throttled_ratio:rate5m", legend="{{cgroup}} {{slice}}"),
                                 [scrape("stock")], rules())
        self.assertEqual(len(got), 1, got)
        self.assertIn("its legend shows slice", got[0])
        bad = rules()
        bad["groups"][0]["rules"].append({"record": "relay:bad", "expr": "rate(relay_nope_total[5m])"})
        got = dashboard.problems(board("relay:bad"), [scrape("stock")], bad)
        self.assertEqual(got, ["panel 'p0', rule relay:bad: relay_nope_total is no series relay "
                               "exports nor a rule of the rules file"])

    def test_a_family_without_samples_names_a_series(self):
        text = "# HELP relay_cgroup_periods_total x\n# TYPE relay_cgroup_periods_total counter\n"
        self.assertEqual(dashboard.problems(board("relay_cgroup_periods_total"), [text], rules()), [])
        got = dashboard.problems(board('relay_cgroup_periods_total{cgroup="a"}'), [text], rules())
        self.assertIn("has no label cgroup", got[0])


class Recorded(unittest.TestCase):
    ALL = ["RelayKernelFixMissing", "RelayLateWhileThrottled", "RelayRTTailOverBound"]

    def hosts(self):
        return {"stock": (None, scrape("stock")), "patched": (None, scrape("patched"))}

    def test_the_demo_stall_as_recorded(self):
        ok, said = recorded.run_promtool(recorded.promtool_test(self.hosts(), {
            "stock": self.ALL + ["RelayForwardTailOverBound"], "patched": ["RelayForwardTailOverBound"]}))
        self.assertTrue(ok, said)

    def test_a_wrong_expectation_fails(self):
        ok, said = recorded.run_promtool(recorded.promtool_test(self.hosts(), {"stock": self.ALL}))
        self.assertFalse(ok)
        self.assertIn("RelayForwardTailOverBound", said)
        with self.assertRaises(ValueError):
            recorded.promtool_test(self.hosts(), {"stock": ["NoSuchAlert"]})

    def test_series_placed_before_and_after(self):
        s = recorded.input_series("h", "relay_late_wakeups_total 2\n", "relay_late_wakeups_total 7\n"
                                  "relay_late_threshold_seconds 0.005\n")
        self.assertEqual(s[0], {"series": 'relay_late_wakeups_total{instance="h",job="relay"}',
                                "values": "2.0" + " 7.0" * recorded.SPAN_MINUTES})
        self.assertTrue(s[1]["values"].startswith("0.005 0.005"))


def late_at(text, count, wakeup="datagram"):
    """text with relay_late_while_throttled_total{wakeup} at count: the
    same relay scraped when its counter stood there (before the scenario)."""
    series = r'^(relay_late_while_throttled_total\{[^}]*wakeup="%s"\}) .*$' % wakeup
    return re.sub(series, r"\g<1> %d" % count, text, flags=re.M)


class HostAB(unittest.TestCase):
    """The host A/B's check, on a run directory laid out as make host-ab
    leaves it: after the scenario the demo guests' real scrapes, before it
    the same with the counter where it stood as relay started (0), or
    where it ended (a scenario that made relay late no more)."""

    def run_dir(self, stock=(0, "stock"), patched=(0, "patched")):
        run = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, run)
        for host, (late0, scraped) in (("stock", stock), ("patched", patched)):
            after = scrape(scraped)
            before = late_at(after, late0) if late0 is not None else after
            for f, text in zip(hostab.FILES, (before, after)):
                os.makedirs(os.path.dirname(os.path.join(run, host, f)), exist_ok=True)
                with open(os.path.join(run, host, f), "w") as out:
                    out.write(text)
        return run

    def test_stock_fires_both_patched_neither(self):
        ok, lines, states = hostab.check_run(self.run_dir())
        self.assertTrue(ok, lines)
        self.assertEqual({h: (s[hostab.FIX_ALERT], s[hostab.LATE_ALERT]) for h, s in states.items()},
                         {"stock": ("fired", "fired"), "patched": ("quiet", "quiet")})
        self.assertEqual(states["stock"]["late_while_throttled_rise"], 83)
        self.assertEqual(states["patched"]["late_while_throttled_rise"], 0)
        # the patched guest's late wake-ups were its co-tenant's own
        self.assertEqual(hostab.late_rise(None, scrape("patched"), ("non_rt_sender",)), 453)
        self.assertEqual(lines[0], "stock: RelayKernelFixMissing fired (preempt_rt=yes, epoll_fix=missing), "
                                   "RelayLateWhileThrottled fired "
                                   "(relay_late_while_throttled_total{wakeup=~\"datagram|stream\"} "
                                   "rose by 83): "
                                   "as it must; the tick's (not alerted) rose by 0")
        self.assertTrue(lines[1].startswith("patched: RelayKernelFixMissing quiet "
                                            "(preempt_rt=yes, epoll_fix=fixed)"))

    def test_only_the_rise_counts(self):
        ok, lines, states = hostab.check_run(self.run_dir(stock=(70, "stock")))
        self.assertTrue(ok, lines)
        self.assertEqual(states["stock"]["late_while_throttled_rise"], 13)
        ok, lines, states = hostab.check_run(self.run_dir(stock=(None, "stock")))
        self.assertFalse(ok)
        self.assertEqual(states["stock"]["RelayLateWhileThrottled"], "quiet")
        self.assertIn("rose by 0): but both must be fired", lines[0])

    def test_the_tick_is_said_not_judged(self):
        # The patched 6.12 test host's late ticks while its co-tenant was
        # throttled (a non-RT waker the fix cannot help): quiet, and said.
        patched = scrape("patched")
        ok, lines, states = hostab.check({"stock": (late_at(scrape("stock"), 0), scrape("stock")),
                                          "patched": (patched, late_at(patched, 4, "tick"))})
        self.assertTrue(ok, lines)
        self.assertEqual(states["patched"][hostab.LATE_ALERT], "quiet")
        self.assertEqual(states["patched"]["tick_late_while_throttled_rise"], 4)
        self.assertTrue(lines[1].endswith("rose by 0): as it must; the tick's (not alerted) rose by 4"),
                        lines[1])
        # ... but a datagram's late wake-up there is the stall's, and fails.
        ok, lines, _ = hostab.check({"stock": (late_at(scrape("stock"), 0), scrape("stock")),
                                     "patched": (patched, late_at(patched, 1))})
        self.assertFalse(ok)
        self.assertIn("RelayLateWhileThrottled fired", lines[1])

    def test_swapped_hosts_fail(self):
        ok, lines, _ = hostab.check_run(self.run_dir(stock=(0, "patched"), patched=(0, "stock")))
        self.assertFalse(ok)
        self.assertIn("but both must be fired", lines[0])
        self.assertIn("but both must be quiet", lines[1])

    def test_no_watched_group_fails(self):
        s = "\n".join(line for line in scrape("stock").splitlines()
                      if not line.startswith("relay_late_while_throttled_total")) + "\n"
        ok, lines, states = hostab.check({"stock": (s, s), "patched": (None, scrape("patched"))})
        self.assertFalse(ok)
        self.assertIsNone(states["stock"]["late_while_throttled_rise"])
        self.assertIn("missing: relay watched no group (watch_cgroups)", lines[0])

    def test_promtool_is_the_judge_of_the_inputs(self):
        # A reading of the inputs the rules do not share is caught.
        with mock.patch.object(hostab, "fix_missing", lambda after: None):
            with self.assertRaisesRegex(hostab.Disagree, "RelayKernelFixMissing"):
                hostab.check_run(self.run_dir())

    def test_the_command(self):
        def run(*argv):
            out, err = io.StringIO(), io.StringIO()
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                rc = hostab.main(list(argv))
            return rc, out.getvalue() + err.getvalue()
        rc, said = run("--results", self.run_dir())
        self.assertEqual(rc, 0, said)
        self.assertTrue(said.endswith("host A/B on /metrics: as it must be\n"), said)
        rc, said = run("--results", self.run_dir(stock=(0, "patched")))
        self.assertEqual(rc, 1, said)
        run_ = self.run_dir()
        os.remove(os.path.join(run_, "patched", hostab.FILES[0]))
        rc, said = run("--results", run_)
        self.assertEqual(rc, 65)
        self.assertIn(os.path.join(run_, "patched", "scenario", "relay-metrics-before.txt"), said)
        with open(os.path.join(run_, "patched", hostab.FILES[0]), "w") as f:
            f.write("relay_x{a=b} 1\n")
        self.assertEqual(run("--results", run_)[0], 65)
        with mock.patch.object(hostab, "fix_missing", lambda after: None):
            self.assertEqual(run("--results", self.run_dir())[0], 70)


if __name__ == "__main__":
    unittest.main()
