"""lab/labkit/series.py: the command line of a series, and a whole run
with the guests stood in for (what each boot was given, what the run
directory holds, which outcomes fail the run)."""
import contextlib
import io
import json
import os
import subprocess
import tempfile
import unittest
from unittest import mock

from lab.labkit import series


class Table:
    """The experiment's table: records what it was asked, exits with RC."""

    def __init__(self, rc=0):
        self.rc, self.calls = rc, []

    def __call__(self, run_dir, names):
        self.calls.append((run_dir, names))
        return self.rc


def a_series(table, hung_is_result=False):
    return series.Series(name="probe", what="a probe", program="epoll-probe", seconds=7, clock="host",
                         timeout=lambda s: s + 100, about=lambda s: s, table=table,
                         hung_is_result=hung_is_result)


class SeriesTest(unittest.TestCase):
    def setUp(self):
        self.d = tempfile.mkdtemp()
        self.addCleanup(subprocess.run, ["rm", "-rf", self.d])
        self.images = {}
        for k in ("a", "b"):
            self.images[k] = os.path.join(self.d, f"bzImage-{k}")
            open(self.images[k], "w").close()
        self.results = os.path.join(self.d, "results")

    def refused(self, argv, what):
        err = io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()), \
                self.assertRaises(SystemExit) as e:
            series.parse(a_series(Table()), argv)
        self.assertEqual(e.exception.code, 2)
        self.assertIn(what, err.getvalue())

    def test_the_command_line(self):
        results, seconds, kernels = series.parse(a_series(Table()), [f"a={self.images['a']}"])
        self.assertEqual((seconds, kernels), (7, {"a": os.path.realpath(self.images["a"])}))
        self.assertEqual(series.parse(a_series(Table()), ["--seconds", "3", f"b={self.images['b']}"])[1], 3)
        self.refused([], "NAME=IMAGE")
        self.refused([self.images["a"]], "expected NAME=IMAGE")
        self.refused(["../x=" + self.images["a"]], "NAME a plain word")
        self.refused([f"a={self.images['a']}", f"a={self.images['b']}"], "a: named twice")
        self.refused(["a=/nonexistent"], "a: no image /nonexistent")
        self.refused(["--seconds", "0", f"a={self.images['a']}"], "--seconds '0'")

    def run_series(self, outcomes, table, hung_is_result=False):
        """A run with a stand-in for each boot, whose guest ends with
        OUTCOMES[name]: (exit status, outcome word)."""
        boots = []

        def boot(image, initrd, out, clock, timeout, append=None):
            name = os.path.basename(out)
            boots.append((name, image, clock, timeout, append))
            os.makedirs(out)
            rc, word = outcomes[name]
            with open(os.path.join(out, "outcome"), "w") as f:
                f.write(word + "\n")
            return subprocess.Popen(["sh", "-c", f"exit {rc}"])

        def initramfs(init, files, spec_path, out, log):
            open(out, "w").close()
            return "f00d"
        argv = [f"{k}={v}" for k, v in self.images.items()] + ["--results", self.results]
        with mock.patch.object(series.guest, "boot", boot), \
                mock.patch.object(series.guest, "initramfs", initramfs), \
                mock.patch.object(series.os, "access", lambda path, mode: True), \
                contextlib.redirect_stdout(io.StringIO()):
            rc = series.run(a_series(table, hung_is_result), argv)
        return rc, boots, os.path.realpath(os.path.join(self.results, "latest-probe"))

    def test_a_run(self):
        table = Table()
        rc, boots, run = self.run_series({"a": (0, "ok"), "b": (0, "ok")}, table)
        self.assertEqual(rc, 0)
        self.assertEqual(boots, [("a", os.path.realpath(self.images["a"]), "host", 107, "relay.seconds=7"),
                                 ("b", os.path.realpath(self.images["b"]), "host", 107, "relay.seconds=7")])
        self.assertEqual(table.calls, [(run, ["a", "b"])])
        with open(os.path.join(run, "spec.json")) as f:
            spec = json.load(f)
        self.assertEqual({k: spec[k] for k in ("experiment", "clock", "seconds")},
                         {"experiment": "probe", "clock": "host", "seconds": 7})
        self.assertEqual(spec["run_id"], os.path.basename(run))
        with open(os.path.join(run, "a", "boot.json")) as f:
            boot = json.load(f)
        self.assertEqual((boot["outcome"], boot["exit_status"], boot["initramfs_sha256"], boot["timeout_s"]),
                         ("ok", 0, "f00d", 107))
        self.assertFalse(os.path.exists(os.path.join(run, "initramfs.cpio.gz")))

    def test_what_fails_a_run(self):
        self.assertEqual(self.run_series({"a": (0, "ok"), "b": (4, "no-results")}, Table())[0], 1)
        self.assertEqual(self.run_series({"a": (0, "ok"), "b": (3, "hung")}, Table())[0], 1)
        # a hung guest is a finding where the series says so; the table's exit counts too
        self.assertEqual(self.run_series({"a": (3, "hung"), "b": (0, "ok")}, Table(), True)[0], 0)
        self.assertEqual(self.run_series({"a": (0, "ok"), "b": (0, "ok")}, Table(1))[0], 1)

    def test_the_guest_program_must_be_built(self):
        with mock.patch.object(series.os, "access", lambda path, mode: False), \
                contextlib.redirect_stdout(io.StringIO()), self.assertRaises(series.LabError) as e:
            series.run(a_series(Table()), [f"a={self.images['a']}", "--results", self.results])
        self.assertIn("build/static/bin/epoll-probe is not built", str(e.exception))
        self.assertFalse(os.path.exists(self.results))


if __name__ == "__main__":
    unittest.main()
