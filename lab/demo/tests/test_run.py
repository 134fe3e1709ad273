"""lab/demo/run.py's command line: --kernel-args, words for both guests'
kernel command line, taken as the kernel's param=value words and
nothing a shell or the boot line's quoting would read."""
import contextlib
import io
import unittest

from lab.demo import run


def parse(*argv):
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        try:
            _, driver, _ = run.parse(list(argv))
        except SystemExit as e:
            return e.code, err.getvalue()
    return driver, ""


class KernelArgsTest(unittest.TestCase):
    def test_none_by_default(self):
        self.assertEqual(parse()[0]["kernel_args"], "")

    def test_kernel_words(self):
        self.assertEqual(parse("--kernel-args", "nohz=off rcu_nocbs=0-1 threadirqs")[0]["kernel_args"],
                         "nohz=off rcu_nocbs=0-1 threadirqs")

    def test_refused(self):
        for bad in ("nohz=off; reboot", "init=/bin/sh'", "a=$(x)", 'quiet "x"', "a\nb"):
            code, err = parse("--kernel-args", bad)
            self.assertEqual(code, 2, bad)
            self.assertRegex(err, r"--kernel-args: .+: not a kernel parameter", bad)
        code, err = parse("--host", "--kernel-args", "nohz=off")
        self.assertEqual(code, 2)
        self.assertIn("not with --host", err)


if __name__ == "__main__":
    unittest.main()
