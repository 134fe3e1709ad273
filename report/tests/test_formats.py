"""report/formats.py: every JSON file of tests/fixtures fits its reader,
what the judges write fits theirs, docs/formats.md's field tables are the
readers', and a file that does not fit is refused naming the file and
the field."""
import glob
import json
import os
import shutil
import tempfile
import unittest

from lab.capacity import judge as capacity_judge
from lab.demo import judge as demo_judge
from lab.hostab import judge as hostab_judge
from report import formats, search, sweep
from report.files import DataError, read_json

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FIXTURES = os.path.join(TOP, "tests", "fixtures")
REPORT = os.path.join(FIXTURES, "report")


def hostile_scenarios():
    """The scenario.json files of the hostile trace corpus made not to fit
    (its expect.tsv: the error names scenario.json), which
    tests/pylib/test_ktrace_hostile.py sees refused; the corpus's others
    fit."""
    corpus = os.path.join(FIXTURES, "hostile", "traces")
    with open(os.path.join(corpus, "expect.tsv"), encoding="utf-8") as f:
        for line in f:
            case = line.rstrip("\n").split("\t")
            if not line.startswith("#") and len(case) == 4 and "scenario.json" in case[2]:
                yield os.path.join(corpus, case[0], "scenario.json")


class FixturesTest(unittest.TestCase):
    def test_every_json_fixture_has_a_reader_and_fits_it(self):
        # loadgen's sweeps are checked by their own readers; a percentile
        # object alone is lib/results.c's fixture
        def a_sweep(j, path):
            return (search.check if search.is_search(j) else sweep.check)(j, path)
        # the why timeline's fixture is one chain of chains.json, an object
        # passed on as it is (Chains.longest_rt_wait)
        others = {"sweep.json": a_sweep, "search.json": a_sweep,
                  "percentiles.json": lambda j, p: formats.parse(formats.Percentiles, j, p),
                  "why-patched-throttled.json": lambda j, p: formats.check_value(dict, j, p, "chain")}
        refused = set(hostile_scenarios())
        paths = sorted(glob.glob(os.path.join(FIXTURES, "**", "*.json"), recursive=True) +
                       glob.glob(os.path.join(FIXTURES, "**", "*.jsonl"), recursive=True))
        self.assertGreater(len(paths), 80)
        kinds = set()
        for path in paths:
            with self.subTest(path=os.path.relpath(path, TOP)):
                if os.path.relpath(path, FIXTURES).startswith("hostile" + os.sep):
                    continue    # made not to fit: their readers' tests check each refusal
                name = os.path.basename(path)
                if name in others:
                    others[name](read_json(path), path)
                    continue
                if path in refused:
                    continue
                got = formats.check(path)
                kinds.add(type(got[0] if isinstance(got, list) else got).__name__)
        # the fixtures hold a file of every kind (a kernel's manifest: the 7.3
        # build's, tests/fixtures/kernel/7.3/; the kernel harness's
        # selftests.json, epoll-stress.jsonl, cost.json and compare.json:
        # tests/fixtures/kernel/selftests/) but the quota search's probe, a
        # running scenario's running.json and a soak's soak.json (below;
        # scenario_af_unix.sh checks the running.json demo-scenario writes,
        # lab/soak/tests the soak.json of each soak it judges)
        self.assertEqual({cls.__name__ for _, cls in formats.FILES} - kinds,
                         {"Probe", "Running", "Soak"})

    def test_a_probe_and_a_manifest_of_each_writer(self):
        # what lab/capacity/grid's printf writes
        p = formats.parse(formats.Probe, {"cpu_quota_pct": 45, "probe": 3, "cotenant_rate_pps": 30000,
                                          "cotenant_spin_us": 0}, "probe.json")
        self.assertEqual((p.probe, p.cpu_quota_pct), (3, 45))
        built = {"line": "6.12", "images_kind": "ab", "package": "linux-source-6.12",
                 "version": "6.12.117-1", "kernel_release_stock": "6.12.117-relay-stock",
                 "kernel_releases": {"stock": "6.12.117-relay-stock"}, "key": "ab12",
                 "compiler": "gcc 12",
                 "preempt_rt": True, "fragment_options_survived": 40,
                 "source": {"package": "linux", "version": "6.12.117-1", "verified_by": "apt"},
                 "series": ["0001-eventpoll-Replace-rwlock-with-spinlock.patch"], "differing_files": [],
                 "eventpoll_source": {}, "eventpoll_locks": {"stock": "rwlock_t"}, "build_seconds": {},
                 "images": {"stock": {"file": "bzImage-stock", "sha256": "00"}}}
        shipped = {"images_kind": "debian-image", "name": "6.1-rt-signed",
                   "package": "linux-image-6.1.0-57-rt-amd64", "version": "6.1.192-3", "deb_sha256": "00",
                   "kernel_release": "6.1.0-57-rt-amd64", "btf_eventpoll_lock": "rwlock_t",
                   "obtained": "Debian's linux-image-6.1.0-57-rt-amd64 6.1.192-3, as shipped"}
        for m in (built, shipped):
            got = formats.parse(formats.Manifest, m, "manifest.json")
            self.assertEqual(got.images_kind, m["images_kind"])


class WrittenTest(unittest.TestCase):
    """What the judges write from the recorded runs fits the readers."""

    def setUp(self):
        self.d = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, self.d)

    def round_trip(self, cls, obj):
        return formats.parse(cls, json.loads(json.dumps(obj)), "summary.json")

    def test_demo_summaries(self):
        for run in ("demo", "demo-ticker", "demo-virtual", "demo-hung"):
            d = os.path.join(REPORT, run)
            s = demo_judge.build(d)
            got = self.round_trip(formats.DemoSummary, s)
            self.assertEqual((got.verdict, got.stock.outcome), (s["verdict"], s["stock"]["outcome"]))

    def test_host_ab_and_capacity(self):
        s = hostab_judge.build(os.path.join(REPORT, "testhost"))
        self.assertTrue(self.round_trip(formats.HostSummary, s).verdict.holds)
        run = os.path.join(self.d, "capacity")
        shutil.copytree(os.path.join(REPORT, "capacity"), run)
        cap = capacity_judge.build(run)
        self.assertEqual(self.round_trip(formats.Capacity, cap).headline, cap["headline"])


class RefusedTest(unittest.TestCase):
    """A file that does not fit: its name and the field's."""

    def setUp(self):
        with open(os.path.join(REPORT, "demo-ticker", "stock", "results", "scenario.json")) as f:
            self.scenario = json.load(f)

    def refused(self, cls, obj, what):
        with self.assertRaises(DataError) as e:
            formats.parse(cls, obj, "x/scenario.json")
        self.assertEqual(str(e.exception), "x/scenario.json: " + what)

    def test_type_missing_and_null(self):
        s = json.loads(json.dumps(self.scenario))
        s["ticker"]["latency_us"]["p99"] = "fast"
        self.refused(formats.Scenario, s, "ticker.latency_us.p99: expected a number, got 'fast'")
        s = json.loads(json.dumps(self.scenario))
        s["stalls"][1]["length_ms"] = True
        self.refused(formats.Scenario, s, "stalls[1].length_ms: expected a number, got True")
        s = json.loads(json.dumps(self.scenario))
        del s["params"]
        self.refused(formats.Scenario, s, "params: missing")
        s["params"] = None
        self.refused(formats.Scenario, s, "params: null, expected a value")
        self.refused(formats.Scenario, [], "expected an object, got []")
        self.refused(formats.Boot, {"outcome": 3}, "outcome: expected text, got 3")
        self.refused(formats.Cell, {"cpu_quota_pct": 10.5, "cotenant_rate_pps": 1, "cotenant_spin_us": 0},
                     "cpu_quota_pct: expected a whole number, got 10.5")
        self.refused(formats.Boot, {"outcome": "ok", "wall_s": float("nan")},
                     "wall_s: expected a number, got nan")

    def test_numbers_past_what_a_float_holds(self):
        # A whole number of 4300 digits is what Python's json still reads;
        # no float holds it, and no writer of ours makes one past 2^63.
        s = json.loads(json.dumps(self.scenario))
        s["ticker"]["latency_us"]["p99"] = int("9" * 4300)
        self.refused(formats.Scenario, s, "ticker.latency_us.p99: expected a number under 2^63, "
                                          "got a number of 4300 digits")
        self.refused(formats.Cell, {"cpu_quota_pct": 2 ** 63, "cotenant_rate_pps": 1, "cotenant_spin_us": 0},
                     "cpu_quota_pct: expected a whole number under 2^63, got a number of 19 digits")
        s = json.loads(json.dumps(self.scenario))
        s["params"]["ticker_us"] = "1\n2"
        self.refused(formats.Scenario, s, "params.ticker_us: expected a number, got '1\\n2'")
        # one of 4301 digits is refused by int(): read, it stands for
        # itself until its reader names the field it is in
        d = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, d)
        path = os.path.join(d, "cell.json")
        with open(path, "w") as f:
            f.write('{"cpu_quota_pct": -%s, "cotenant_rate_pps": 1, "cotenant_spin_us": 0}' % ("9" * 4301))
        with self.assertRaises(DataError) as e:
            formats.read(formats.Cell, path)
        self.assertEqual(str(e.exception), f"{path}: cpu_quota_pct: expected a whole number, "
                                           "got a number of 4301 digits")
        with open(path, "w") as f:
            f.write('{"outcome": %s}' % ("9" * 4301))
        with self.assertRaisesRegex(DataError, "outcome: expected text, got a number of 4301 digits"):
            formats.read(formats.Boot, path)

    def test_the_verdict_rule(self):
        summary = read_json(os.path.join(REPORT, "expected", "demo", "summary.json"))
        s = formats.parse(formats.DemoSummary, summary, "summary.json")
        self.assertEqual((s.rule.clock, s.rule.late_ms),
                         (summary["rule"]["clock"], summary["rule"]["late_ms"]))
        summary["rule"]["text"] = 1e300
        self.refused(formats.DemoSummary, summary, "rule.text: expected text, got 1e+300")

    def test_an_unknown_key_is_let_through_an_unknown_file_is_not(self):
        boot = formats.parse(formats.Boot, {"outcome": "ok", "new_field": 1}, "boot.json")
        self.assertEqual(boot.outcome, "ok")
        d = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, d)
        path = os.path.join(d, "notes.json")
        with open(path, "w") as f:
            f.write("{}")
        with self.assertRaisesRegex(DataError, "notes.json: not a file of docs/formats.md's"):
            formats.check(path)
        path = os.path.join(d, "falseneg.jsonl")
        with open(path, "w") as f:
            f.write('{"calls": 3, "false_negatives": 0}\n{"calls": "x", "false_negatives": 0}\n')
        with self.assertRaisesRegex(DataError, r"falseneg.jsonl:2: calls: expected a whole number"):
            formats.check(path)


class DocsTest(unittest.TestCase):
    def test_docs_formats_md_holds_the_readers_tables(self):
        with open(formats.DOCS, encoding="utf-8") as f:
            doc = f.read()
        # when a record changes, mk/py report.formats docs writes them there
        self.assertEqual(formats.docs_tables(doc), formats.tables())

    def test_a_table(self):
        t = formats.table(formats.Stall)
        self.assertTrue(t.startswith("| field | type | meaning |\n|---|---|---|\n| `start_s` | number |"))
        self.assertIn("| `end_s` | number, or null | when the relay moved again (null: it did not) |", t)
        self.assertIn("| `ticker.latency_us` | percentile object, or null |", formats.table(formats.Scenario))
        self.assertIn("| `stalls[].start_s` | number |", formats.table(formats.Scenario))


if __name__ == "__main__":
    unittest.main()
