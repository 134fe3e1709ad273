"""lab/labkit and the soak's verdict (lab/soak/soak.py), on made-up runs."""
import argparse
import contextlib
import csv
import io
import json
import os
import subprocess
import tempfile
import unittest

from lab.demo import matrix, runs
from lab.labkit import guest
from lab.labkit import run as labrun
from lab.labkit import spec
from lab.labkit.run import LabError
from lab.soak import soak

TOP = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")

PARAMS = [spec.Param("cpu_quota_pct", "ints", [10, 25], "quotas", lo=1, hi=100),
          spec.Param("period_us", "int", 10000, "period", lo=1000, hi=1000000),
          spec.Param("clock", "str", "virtual", "clock", choices=("virtual", "host"))]


def parsed(argv):
    ap = argparse.ArgumentParser()
    spec.flags(ap, PARAMS)
    return ap.parse_args(argv)


class SpecTest(unittest.TestCase):
    def test_defaults_overrides_and_flags(self):
        self.assertEqual(spec.resolve(parsed([]), PARAMS),
                         {"cpu_quota_pct": [10, 25], "period_us": 10000, "clock": "virtual"})
        self.assertEqual(spec.resolve(parsed([]), PARAMS, {"cpu_quota_pct": [10]})["cpu_quota_pct"], [10])
        got = spec.resolve(parsed(["--cpu-quota-pct", "5,50", "--period-us", "20000"]), PARAMS,
                           {"cpu_quota_pct": [10]})
        self.assertEqual((got["cpu_quota_pct"], got["period_us"]), ([5, 50], 20000))

    def test_bad_values_name_the_flag(self):
        for argv, words in ((["--cpu-quota-pct", "0"], "0 is outside 1..100"),
                            (["--cpu-quota-pct", "10,10"], "given twice"),
                            (["--period-us", "fast"], "--period-us 'fast'"),
                            (["--clock", "wall"], "one of virtual, host")):
            with self.assertRaises(spec.SpecError) as e:
                spec.resolve(parsed(argv), PARAMS)
            self.assertIn(words, str(e.exception))


class DescribedTest(unittest.TestCase):
    """Parameters taken from a program's table (demo-scenario --describe),
    a driver's table described the same way, and a shell driver's flags."""

    def test_like_takes_the_programs_row(self):
        row = spec.described("demo-scenario")["cpu_quota_pct"]
        p = spec.like("demo-scenario", "cpu_quota_pct")
        self.assertEqual((p.name, p.kind, p.lo, p.hi, p.default, p.help, p.unit, p.spec, p.source),
                         ("cpu_quota_pct", "int", row["min"], row["max"], row["default"]["host"],
                          row["help"], "pct", None, "demo-scenario"))
        q = spec.like("demo-scenario", "rate_pps", name="cotenant_rate_pps", kind="ints",
                      default=[30000], help="rates")
        self.assertEqual((q.name, q.spec, q.kind, q.default, q.help, q.unit),
                         ("cotenant_rate_pps", "rate_pps", "ints", [30000], "rates", "pps"))
        with self.assertRaises(spec.SpecError):
            spec.resolve(argparse.Namespace(cpu_quota_pct=str(row["max"] + 1)), [p])
        v = spec.like("demo-scenario", "cpu_quota_pct", clock="virtual")
        self.assertEqual(v.default, row["default"]["virtual"])

    def test_refusal_is_the_programs(self):
        self.assertIsNone(spec.refusal("demo-scenario", cpu_quota_pct=10, period_us=10000))
        self.assertIn("below the 1000 us cpu.max allows",
                      spec.refusal("demo-scenario", cpu_quota_pct=1, period_us=10000))

    def test_describe_a_drivers_table(self):
        d = spec.describe([spec.Param("share", "float", 0.5, "a share", lo=0, hi=1),
                           spec.Param("period_us", "int", 100000, "p", lo=1000, hi=1000000,
                                      spec="quota_period_us"),
                           spec.Param("clock", "str", "virtual", "c", choices=("virtual", "host"))],
                          "lab/x/run")
        self.assertEqual(d["program"], "lab/x/run")
        self.assertEqual(d["params"][0], {"name": "share", "flag": "--share", "type": "float",
                                          "unit": None, "default": 0.5, "help": "a share",
                                          "min": 0, "max": 1})
        self.assertEqual((d["params"][1]["unit"], d["params"][1]["spec"]), ("us", "quota_period_us"))
        self.assertEqual(d["params"][2]["choices"], ("virtual", "host"))

    def test_a_float(self):
        p = spec.Param("max_loss", "float", 0.1, "loss", lo=0, hi=1)
        self.assertEqual(spec.resolve(argparse.Namespace(max_loss="0.25"), [p]), {"max_loss": 0.25})
        for bad, words in (("x", "expected a number"), ("2", "2.0 is outside 0..1")):
            with self.assertRaises(spec.SpecError) as e:
                spec.resolve(argparse.Namespace(max_loss=bad), [p])
            self.assertIn(words, str(e.exception))

    def shell(self, table, *argv):
        p = subprocess.run([os.path.join(TOP, "lab", "lab"), "flags", table, *argv],
                           capture_output=True, text=True)
        return p.returncode, p.stdout, p.stderr

    def evaluated(self, code, *names):
        """The shell variables NAMES after CODE, as bash sees them."""
        script = code + "".join(f'\nprintf "%s\\0" "${{{n}[*]}}"' for n in names)
        out = subprocess.run(["bash", "-c", script], capture_output=True, text=True, check=True).stdout
        return dict(zip(names, out.split("\0")))

    def test_the_host_ab_flags(self):
        rc, out, err = self.shell("lab.hostab.params", "--cpu-quota-pct", "20", "--checks", "all",
                                  "--period-us", "20500")
        self.assertEqual(rc, 0, err)
        got = self.evaluated(out, "cpu_quota_pct", "checks", "late_ms", "spec", "results")
        ds = spec.described("demo-scenario")
        self.assertEqual((got["cpu_quota_pct"], got["checks"], got["results"]), ("20", "all", ""))
        # the scenario's defaults are demo-scenario's on the virtual clock
        self.assertEqual(got["late_ms"], str(ds["late_ms"]["default"]["virtual"]))
        self.assertIn("checks=all trace=on scenario.duration_s=15 ", got["spec"])
        self.assertIn("scenario.cpu_quota_pct=20 scenario.period_us=20500", got["spec"])
        self.assertIn("scenario.af_unix=1 ", got["spec"])

    def test_the_host_ab_refusals_and_help(self):
        for argv, words in ((["--relay-prio", "60"], "60 is outside 1..50"),
                            (["--duration-s", "3"], "3 is outside 5..3600"),
                            (["--cpu-quota-pct", "101"], "101 is outside 1..100"),
                            (["--ticker-us", "0"], "0 is outside 100..1000000"),
                            (["--checks", "some"], "expected one of scenario, all, all-patched"),
                            (["--bogus"], "unrecognized arguments: --bogus")):
            rc, out, err = self.shell("lab.hostab.params", *argv)
            self.assertEqual((rc, out), (2, ""), argv)
            self.assertIn(f"lab/hostab/run: {argv[0]}" if "bogus" not in argv[0] else words, err)
            self.assertIn(words, err)
        rc, out, err = self.shell("lab.hostab.params", "--help")
        self.assertEqual((rc, out), (0, "exit 0\n"))
        self.assertIn("--ticker-lead-us", err)

    def test_the_soak_flags(self):
        rc, out, err = self.shell("lab.soak.params", "--duration-s", "60", "--max-loss", "0.01")
        self.assertEqual(rc, 0, err)
        got = self.evaluated(out, "duration_s", "max_loss", "slo", "spec")
        self.assertEqual((got["duration_s"], got["max_loss"], got["slo"]), ("60", "0.01", "p50=5ms"))
        self.assertTrue(got["spec"].startswith("duration_s=60 slo=p50=5ms "))
        rc, out, err = self.shell("lab.soak.params", "--step-s", "0")
        self.assertEqual(rc, 2)
        self.assertIn("--step-s '0': 0 is outside 1..3600", err)


class RunTest(unittest.TestCase):
    def test_run_directory_phases_and_latest(self):
        with tempfile.TemporaryDirectory() as d:
            out = open(os.devnull, "w")
            r = labrun.Run("t", d, kind="x", phases=1, out=out)
            self.assertTrue(r.id.endswith("-x") and os.path.isdir(r.dir))
            with r.phase("one", "now"):
                pass
            r.finish({"k": 1})
            with open(os.path.join(r.dir, "run.json")) as f:
                rec = json.load(f)
            self.assertEqual((rec["k"], rec["run_id"], rec["phases"][0]["name"]), (1, r.id, "one"))
            self.assertEqual(os.readlink(os.path.join(d, "latest-x")), r.id)
            with open(r.path("run.log")) as f:
                said = f.read().splitlines()
            self.assertRegex(said[0], r"^\s+0 s \[1/1\] one \(now\)$")
            self.assertRegex(said[1], r"^\s+0 s       done in 0 s$")
            self.assertNotEqual(labrun.Run("t", d, kind="x", out=out).id, r.id)
            out.close()

    def test_failed_command_names_its_log(self):
        with tempfile.TemporaryDirectory() as d:
            with open(os.devnull, "w") as out:
                r = labrun.Run("t", d, out=out)
                with self.assertRaises(labrun.LabError) as e:
                    r.command(["sh", "-c", "echo broken; exit 3"], r.path("b.log"), "the build")
            self.assertEqual(e.exception.code, labrun.EX_BUILD)
            self.assertIn("b.log", str(e.exception))

    def test_lab_spec_cli(self):
        with tempfile.TemporaryDirectory() as d:
            lab = os.path.join(TOP, "lab", "lab")
            p = subprocess.run([lab, "spec", d, "experiment=soak", "scenario.rate_pps=2000",
                                "slo=p50=5ms", 'model={"duration_s": 3}', "odd={x"],
                               capture_output=True, text=True)
            self.assertEqual(p.returncode, 0, p.stderr)
            with open(os.path.join(d, "spec.json")) as f:
                self.assertEqual(json.load(f), {"experiment": "soak", "slo": "p50=5ms",
                                                "scenario": {"rate_pps": 2000},
                                                "model": {"duration_s": 3}, "odd": "{x"})
            p = subprocess.run([lab, "spec", d, "bare"], capture_output=True, text=True)
            self.assertEqual(p.returncode, 2)
            self.assertIn("'bare': expected NAME=VALUE", p.stderr)


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


class DemoRunsTest(unittest.TestCase):
    """lab/demo/runs.py: a run's row, from its summary."""
    SUMMARY = {"initramfs_sha256": "8e4772c9aa", "verdict": "fixed",
               "stock": {"stalls": 7, "rt_late": 147, "rt_samples": 1360,
                         "rt_latency_us": {"p99_9": 215000, "max": 216000},
                         "why": {"totals": {"stalls_explained": 7}, "trace": {"lost": {"total": 0}},
                                 "contentions": {"boosts": 0, "rt_waits": 3}}},
               "patched": {"stalls": 0, "rt_latency_us": {"p99_9": 95, "max": 600},
                           "why": {"totals": {"stalls_explained": 0}, "trace": {"lost": {"total": 2}},
                                   "contentions": {"boosts": 37375, "rt_waits": 37375}}}}

    def test_row(self):
        r = runs.row(3, self.SUMMARY, 451)
        self.assertEqual(r, "| 3 | 8e4772c9 | 7 (7) | 147 of 1360 | 215 / 216 ms | 0 | 0.095 / 0.6 ms | "
                            "2263x | 37375 of 37375 | 0/2 | 451 s | fixed |")

    def test_untraced_and_unreadable(self):
        s = json.loads(json.dumps(self.SUMMARY))
        del s["stock"]["why"], s["patched"]["why"]
        self.assertIn("| 7 (not traced) |", runs.row(1, s, None))
        with tempfile.TemporaryDirectory() as d:
            self.assertEqual(runs.main([d]), 65)
        self.assertEqual(runs.main([]), 2)

    def test_one_trajectory_twice_is_said(self):
        with tempfile.TemporaryDirectory() as d:
            dirs = []
            for i, p99 in enumerate((95, 96, 95)):
                s = json.loads(json.dumps(self.SUMMARY))
                s["patched"]["rt_latency_us"]["p99_9"] = p99
                dirs.append(os.path.join(d, str(i)))
                os.makedirs(dirs[-1])
                with open(os.path.join(dirs[-1], "summary.json"), "w", encoding="utf-8") as f:
                    json.dump(s, f)
            err = io.StringIO()
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
                self.assertEqual(runs.main(dirs), 1)
            self.assertIn("runs 1 and 3 have the same figures", err.getvalue())
            with contextlib.redirect_stdout(io.StringIO()):
                self.assertEqual(runs.main(dirs[:2]), 0)


class MatrixTest(unittest.TestCase):
    """lab/demo/matrix.py: a pair's row, from its run's summary and the
    kernels' manifests; the table and the page."""

    def setUp(self):
        self.d = tempfile.mkdtemp()
        self.addCleanup(__import__("shutil").rmtree, self.d)

    def image(self, name, manifest):
        kdir = os.path.join(self.d, name)
        os.makedirs(kdir, exist_ok=True)
        with open(os.path.join(kdir, "manifest.json"), "w", encoding="utf-8") as f:
            json.dump(manifest, f)
        return kdir

    def test_how_each_kernel_was_made(self):
        ab = self.image("6.1", {"package": "linux", "version": "6.1.187-1", "images_kind": "ab",
                                "source": {"rt_patches": [{"patch": "0001.patch"}]}})
        hist = self.image("6.1.8-rt", {"package": "linux", "version": "6.1.8-1",
                                       "images_kind": "historical"})
        self.assertEqual(matrix.obtained(os.path.join(ab, "bzImage-stock")),
                         "Debian's linux 6.1.187-1 with its own RT patches, the fix reversed")
        self.assertEqual(matrix.obtained(os.path.join(ab, "bzImage-patched")),
                         "Debian's linux 6.1.187-1 with its own RT patches")
        self.assertEqual(matrix.obtained(os.path.join(hist, "bzImage-historical")),
                         "Debian's linux 6.1.8-1 with its own RT patches, as shipped")
        shipped = "Debian's linux-image-6.1.0-57-rt-amd64 6.1.192-3, as shipped"
        signed = self.image("debian", {"images_kind": "debian-image", "obtained": shipped})
        self.assertEqual(matrix.obtained(os.path.join(signed, "vmlinuz")), shipped)
        self.assertEqual(matrix.obtained(os.path.join(self.d, "nowhere", "bzImage-stock")), "?")

    def demo_run(self, name, verdict, stock_stalls, hist):
        """A lab/demo/run directory whose summary has these figures."""
        run = os.path.join(self.d, name)
        os.makedirs(run)
        s = json.loads(json.dumps(DemoRunsTest.SUMMARY))
        s["stock"].update(kernel="6.1.8-rt5-relay-historical", stalls=stock_stalls,
                          kernel_image=os.path.join(hist, "bzImage-historical"))
        s["patched"].update(kernel="6.1.187-rt64-relay-patched", kernel_image="/nowhere/bzImage-patched")
        s.update(verdict=verdict, headline=f"{verdict.upper()}: ...")
        with open(os.path.join(run, "summary.json"), "w", encoding="utf-8") as f:
            json.dump(s, f)
        return run

    def test_rows_table_and_page(self):
        hist = self.image("h", {"package": "linux", "version": "6.1.8-1", "images_kind": "historical"})
        udp = self.demo_run("20261204-220000-abcd", "no effect", 0, hist)
        unix = self.demo_run("20261204-221000-ef01", "fixed", 7, hist)
        rows = [matrix.row("6.1.8-rt", {"udp": udp, "unix": unix}),
                matrix.row("6.1", {"udp": LabError(1, "lab/demo/run exited 4 (log: x)"),
                                   "unix": LabError(1, "lab/demo/run exited 4 (log: y)")})]
        r = rows[0]
        unix_demo = r["demos"]["unix"]
        self.assertEqual((r["stock"]["kernel"], unix_demo["stock"]["stalls"],
                          unix_demo["stock"]["rt_p99_9_ms"], unix_demo["patched"]["rt_max_ms"],
                          r["demos"]["udp"]["verdict"], r["verdict"]),
                         ("6.1.8-rt5-relay-historical", 7, 215.0, 0.6, "no effect", "fixed"))
        self.assertEqual(rows[1]["verdict"], "incomplete")
        md = matrix.markdown(rows)
        self.assertIn("| 6.1.8-rt5-relay-historical (Debian's linux 6.1.8-1 with its own RT patches, "
                      "as shipped) | 6.1.187-rt64-relay-patched (?) | NO EFFECT: stock 0 stalls, RT p99.9 "
                      "215 / max 216 ms; patched 0 stalls, RT p99.9 0.095 / max 0.6 ms (trace: no trace "
                      "analysis) | FIXED: stock 7 stalls,", md)
        self.assertIn("| FIXED |", md)
        self.assertIn("| - | - | no report: lab/demo/run exited 4 (log: x) | no report: lab/demo/run "
                      "exited 4 (log: y) | INCOMPLETE |", md)
        # With the stock guest's chains.json (lab/ktrace/explain), the cell
        # says what the trace found.
        os.makedirs(os.path.join(udp, "stock", "results"))
        with open(os.path.join(udp, "stock", "results", "chains.json"), "w", encoding="utf-8") as f:
            json.dump({"totals": {"stalls": 0, "stalls_explained": 0},
                       "contentions": {"rt_waits": 83601, "rt_wait_us": {"max": 926.0},
                                       "lent_by_others": 2064,
                                       "lent_by": {"ktimers/1": 2000, "demo-scenario": 64}}}, f)
        self.assertEqual(matrix.demo(udp)[0]["stock_trace"],
                         "83601 RT waits on ep->lock, longest 0.93 ms; 2064 ended when another task lent "
                         "the throttled holder its priority through another lock: ktimers/1 (2000), "
                         "demo-scenario (64)")
        with open(os.path.join(udp, "stock", "results", "chains.json"), "w", encoding="utf-8") as f:
            json.dump({"totals": {"stalls": 27, "stalls_explained": 26},
                       "contentions": {"rt_waits": 0}}, f)
        self.assertEqual(matrix.why(udp), "26 of 27 stalls explained")
        page = matrix.page(rows)
        self.assertIn('<a href="20261204-220000-abcd/report.html"><b>NO EFFECT</b></a>', page)
        self.assertIn('<a href="20261204-221000-ef01/report.html"><b>FIXED</b></a>', page)
        self.assertIn("lab/demo/run exited 4 (log: y)", page)

    def test_a_pair_s_verdict_from_its_wakers(self):
        cases = (
            (("no effect", "fixed"), "fixed"),
            (("fixed", "fixed"), "fixed"),
            (("fixed", "not fixed"), "not fixed"),
            (("no effect", "no effect"), "no effect"),
            (("no effect", "incomplete"), "incomplete"),
            (("no effect", "invalid"), "invalid"),
            (("incomplete", "invalid"), "invalid"),
            (("invalid", "fixed"), "fixed"),
            (("fixed", None), "fixed"),
            (("no effect", None), "incomplete"),
        )
        for (udp, unix), want in cases:
            demos = {"udp": {"verdict": udp}, "unix": {"verdict": unix} if unix else {"error": "x"}}
            self.assertEqual(matrix.verdict(demos), want, (udp, unix))

    def test_bad_arguments(self):
        for argv, what in ((["--pairs", "6.1,5.10"], "5.10: not one of"),
                           (["--stock-image", "x"], "chooses each pair's kernels"),
                           (["--af-unix", "1"], "chooses each pair's kernels and wakers"),
                           (["--pairs", "--results", self.d], "--pairs: expected one argument")):
            err = io.StringIO()
            with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()), \
                    self.assertRaises(SystemExit) as e:
                matrix.matrix(argv + ["--results", self.d])
            self.assertEqual(e.exception.code, 2)
            self.assertIn(what, err.getvalue())
        self.assertEqual(os.listdir(self.d), [])


class SaltTest(unittest.TestCase):
    def test_its_own_per_run_and_the_same_again(self):
        ids = [f"20261204-2114{i:02d}-{i * 7919 % 65536:04x}" for i in range(40)]
        salts = [guest.salt_us(i) for i in ids]
        self.assertEqual(salts, [guest.salt_us(i) for i in ids])
        self.assertTrue(all(0 <= v < guest.SALT_SPAN_US for v in salts))
        self.assertGreater(len(set(salts)), 35)


if __name__ == "__main__":
    unittest.main()
