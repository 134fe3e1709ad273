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
                                "slo=p50=5ms"], capture_output=True, text=True)
            self.assertEqual(p.returncode, 0, p.stderr)
            with open(os.path.join(d, "spec.json")) as f:
                self.assertEqual(json.load(f), {"experiment": "soak", "slo": "p50=5ms",
                                                "scenario": {"rate_pps": 2000}})
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


if __name__ == "__main__":
    unittest.main()
