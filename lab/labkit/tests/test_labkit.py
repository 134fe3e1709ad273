"""lab/labkit: the run spec, a run's directory and phases, the guest's salt."""
import argparse
import json
import os
import subprocess
import tempfile
import unittest
from unittest import mock

from lab.labkit import TOP, guest, kernels
from lab.labkit import run as labrun
from lab.labkit import spec
from lab.labkit.run import LabError


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

    def test_read_back(self):
        plan = {"cpu_quota_pct": [10, 25], "period_us": 10000, "clock": "host", "other": "x"}
        self.assertIs(spec.read_back(plan, PARAMS, "spec.json: capacity"), plan)
        self.assertEqual(spec.read_back({}, PARAMS, "w"), {})   # an older run's fewer
        for key, value, words in (("cpu_quota_pct", 10, "expected whole numbers in 1..100, got 10"),
                                  ("cpu_quota_pct", [10, 0], "in 1..100, got [10, 0]"),
                                  ("cpu_quota_pct", [], "got []"),
                                  ("period_us", True, "period_us: expected a whole number in 1000..1000000"),
                                  ("period_us", float("nan"), "got NaN"),
                                  ("period_us", int("9" * 4300), "in 1000..1000000, got 99999"),
                                  ("clock", "wall", "text (one of virtual, host), got \"wall\"")):
            with self.assertRaises(spec.SpecError) as e:
                spec.read_back(dict(plan, **{key: value}), PARAMS, "spec.json: capacity")
            self.assertIn(words, str(e.exception))
            self.assertTrue(str(e.exception).startswith(f"spec.json: capacity.{key}: "))
        with self.assertRaisesRegex(spec.SpecError, "^w: expected an object"):
            spec.read_back([], PARAMS, "w")


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


class SaltTest(unittest.TestCase):
    def test_its_own_per_run_and_the_same_again(self):
        ids = [f"20261204-2114{i:02d}-{i * 7919 % 65536:04x}" for i in range(40)]
        salts = [guest.salt_us(i) for i in ids]
        self.assertEqual(salts, [guest.salt_us(i) for i in ids])
        self.assertTrue(all(0 <= v < guest.SALT_SPAN_US for v in salts))
        self.assertGreater(len(set(salts)), 35)


class DebianImageTest(unittest.TestCase):
    """kernels.debian_image: the image is what kernel/debian-image says on
    its standard output, whatever it says on its standard error."""

    def setUp(self):
        self.d = tempfile.mkdtemp()
        self.addCleanup(subprocess.run, ["rm", "-rf", self.d])
        os.makedirs(os.path.join(self.d, "kernel"))
        self.image = os.path.join(self.d, "vmlinuz")
        open(self.image, "w").close()

    def answer(self, script):
        """debian_image's answer with kernel/debian-image a shell SCRIPT."""
        tool = os.path.join(self.d, "kernel", "debian-image")
        with open(tool, "w") as f:
            f.write("#!/bin/sh\n" + script)
        os.chmod(tool, 0o755)
        with mock.patch.object(kernels, "TOP", self.d), open(os.devnull, "w") as out:
            r = labrun.Run("t", os.path.join(self.d, "results"), out=out)
            return kernels.debian_image(r, "6.1-rt-signed")

    def test_the_path_on_stdout_not_the_last_word_said(self):
        said = f'echo "fetching" >&2; echo {self.image}; echo "kept it ({self.d}/elsewhere)" >&2\n'
        self.assertEqual(self.answer(said), self.image)

    def test_no_path_or_two_is_no_image(self):
        for script in (f"echo {self.image} >&2\n", f"echo {self.image}; echo {self.image}\n",
                       "echo /nonexistent\n"):
            with self.assertRaises(LabError) as e:
                self.answer(script)
            self.assertEqual(e.exception.code, labrun.EX_KERNELS)
            self.assertIn("named no image on its standard output", str(e.exception))


class ImageFactsTest(unittest.TestCase):
    """kernels.facts on an image that nothing beside it describes (a test
    host image's kernel as dpkg installed it) reads the image's own BTF;
    lab/lab kernels writes that and the probe's offsets to the run."""

    def setUp(self):
        self.d = tempfile.mkdtemp()
        self.addCleanup(subprocess.run, ["rm", "-rf", self.d])

    def image(self, model):
        path = os.path.join(self.d, f"vmlinuz-{model}")
        with open(os.path.join(TOP, "tests/fixtures/btf", f"rt-{model}.o"), "rb") as src, \
                open(path, "wb") as dst:
            dst.write(src.read())
        return path

    def test_the_lock_and_the_throttle_model_from_its_btf(self):
        for model, lock, throttle in (("rwlock-cfs_rq", "rwlock_t", "cfs_rq"),
                                      ("spinlock-task", "spinlock_t", "task")):
            f = kernels.facts(self.image(model))
            self.assertEqual((f["lock"], f["lock_from"]), (lock, "its BTF"), model)
            self.assertEqual((f["throttle_model"], f["throttle_from"]), (throttle, "its BTF"), model)
            self.assertEqual(f["obtained"], f"the image vmlinuz-{model}")
            # The fixtures' BTF has no struct epitem: no probe offsets
            # there, so the assumed ones, said so.
            self.assertTrue(f["offsets_from"].startswith("assumed"), f["offsets_from"])

    def test_lab_kernels_writes_each_kernel_and_the_probes(self):
        run = os.path.join(self.d, "run")
        os.makedirs(run)
        with open(os.path.join(run, "spec.json"), "w") as f:
            json.dump({"clock": "virtual"}, f)
        lab = os.path.join(TOP, "lab/lab")
        images = {"stock": self.image("rwlock-cfs_rq"), "patched": self.image("spinlock-cfs_rq")}
        subprocess.run([lab, "kernels", run] + [f"{k}={i}" for k, i in images.items()], check=True)
        with open(os.path.join(run, "spec.json")) as f:
            doc = json.load(f)
        self.assertEqual(doc["clock"], "virtual")
        self.assertIn("trace_probes", doc)
        for k, lock in (("stock", "rwlock_t"), ("patched", "spinlock_t")):
            with open(os.path.join(run, k, "kernel.json")) as f:
                self.assertEqual(json.load(f)["lock"], lock)
        bad = subprocess.run([lab, "kernels", run, "stock=" + os.path.join(self.d, "none")],
                             capture_output=True, text=True)
        self.assertEqual(bad.returncode, 2)
        self.assertIn("stock=", bad.stderr)


if __name__ == "__main__":
    unittest.main()
