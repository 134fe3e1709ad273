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

from lab.demo import runs
from lab.labkit import guest
from lab.labkit import run as labrun
from lab.labkit import spec
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

    def test_refusal_is_the_programs(self):
        self.assertIsNone(spec.refusal("demo-scenario", cpu_quota_pct=10, period_us=10000))
        self.assertIn("below the 1000 us cpu.max allows",
                      spec.refusal("demo-scenario", cpu_quota_pct=1, period_us=10000))

    def test_describe_a_drivers_table(self):
        d = spec.describe([spec.Param("share", "float", 0.5, "a share", lo=0, hi=1),
                           spec.Param("period_us", "int", 100000, "p", lo=1000, hi=1000000,
                                      env="PERIOD_MS", env_per=1000),
                           spec.Param("clock", "str", "virtual", "c", choices=("virtual", "host"))],
                          "lab/x/run")
        self.assertEqual(d["program"], "lab/x/run")
        self.assertEqual(d["params"][0], {"name": "share", "flag": "--share", "type": "float",
                                          "unit": None, "default": 0.5, "help": "a share",
                                          "min": 0, "max": 1})
        self.assertEqual((d["params"][1]["unit"], d["params"][1]["env"], d["params"][1]["env_per"]),
                         ("us", "PERIOD_MS", 1000))
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
                                  "--period-us", "20000")
        self.assertEqual(rc, 0, err)
        got = self.evaluated(out, "cpu_quota_pct", "checks", "late_ms", "spec", "guest_env", "results")
        ds = spec.described("demo-scenario")
        self.assertEqual((got["cpu_quota_pct"], got["checks"], got["results"]), ("20", "all", ""))
        self.assertNotEqual(got["late_ms"], str(ds["late_ms"]["default"]["host"]))
        self.assertIn("checks=all scenario.duration_s=10 ", got["spec"])
        self.assertIn("scenario.cpu_quota_pct=20 scenario.period_us=20000", got["spec"])
        self.assertEqual(got["guest_env"].splitlines(),
                         ["DURATION=10", "RATE=30000", "THREADS=2", "QUOTA_PCT=20", "PERIOD_MS=20",
                          "RT_RATE=500"])

    def test_the_host_ab_refusals_and_help(self):
        for argv, words in ((["--period-us", "1500"], "not a whole number of 1000"),
                            (["--duration-s", "3"], "3 is outside 5..3600"),
                            (["--cpu-quota-pct", "101"], "101 is outside 1..100"),
                            (["--checks", "some"], "expected one of scenario, all"),
                            (["--bogus"], "unrecognized arguments: --bogus")):
            rc, out, err = self.shell("lab.hostab.params", *argv)
            self.assertEqual((rc, out), (2, ""), argv)
            self.assertIn(f"lab/hostab/run: {argv[0]}" if "bogus" not in argv[0] else words, err)
            self.assertIn(words, err)
        rc, out, err = self.shell("lab.hostab.params", "--help")
        self.assertEqual((rc, out), (0, "exit 0\n"))
        self.assertIn("--rt-rate-pps", err)

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
                            "2263x | 37375 of 37375 | - / - | 0 (0) / 0 (0) | 0/2 | 451 s | fixed |")
        s = json.loads(json.dumps(self.SUMMARY))
        s["stock"]["guest_freezes"] = {"max_ms": 5.009, "outside": [{}], "explained": [
            {"text": "5.009 ms on CPU 0 at 12.345 s: CPU 0 stayed idle ..."}]}
        s["patched"]["guest_freezes"] = {"max_ms": 0.06, "outside": [], "explained": []}
        self.assertIn("| 5.01 ms / 0.06 ms | 1 (1) / 0 (0) |", runs.row(3, s, 451))
        self.assertEqual(runs.freezes(3, s),
                         ["- run 3, stock, explained: 5.009 ms on CPU 0 at 12.345 s: CPU 0 stayed idle ..."])

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


class SaltTest(unittest.TestCase):
    def test_its_own_per_run_and_the_same_again(self):
        ids = [f"20261204-2114{i:02d}-{i * 7919 % 65536:04x}" for i in range(40)]
        salts = [guest.salt_us(i) for i in ids]
        self.assertEqual(salts, [guest.salt_us(i) for i in ids])
        self.assertTrue(all(0 <= v < guest.SALT_SPAN_US for v in salts))
        self.assertGreater(len(set(salts)), 35)


if __name__ == "__main__":
    unittest.main()
