"""report/escape.py: each sink's function, fed hostile text."""
import os
import subprocess
import tempfile
import unittest

from report import escape
from report.files import DataError


HOSTILE = ["plain", "it's", 'say "hi"', "a`touch PWNED`b", "6.1\nsystem 'touch PWNED'\n#",
           "back\\slash", "EOD", "\x00\x1b[31m", "<b>&amp;</b>", "%s %d %%", "@^_{x}~"]


def gnuplot_available():
    return subprocess.run(["sh", "-c", "command -v gnuplot"], capture_output=True).returncode == 0


class GnuplotTest(unittest.TestCase):
    def test_string_is_one_line_single_quoted(self):
        for text in HOSTILE:
            q = escape.gnuplot_string(text)
            self.assertTrue(q.startswith("'") and q.endswith("'"), q)
            self.assertNotIn("\n", q)
            # Inside, every quote is doubled: no way out of the literal.
            self.assertNotIn("'", q[1:-1].replace("''", ""), q)

    def test_datum_is_one_field(self):
        for text in HOSTILE:
            d = escape.gnuplot_datum(text)
            self.assertNotIn("\n", d)
            self.assertEqual(d.count('"'), 2, d)

    def test_number(self):
        self.assertEqual(escape.gnuplot_number(2), "2.0")
        self.assertEqual(escape.gnuplot_number(0.5), "0.5")
        for bad in ("1`id`", None, True, float("nan"), float("inf"), [1]):
            with self.assertRaises(DataError):
                escape.gnuplot_number(bad, "x")

    @unittest.skipUnless(gnuplot_available(), "gnuplot not installed")
    def test_gnuplot_runs_nothing_and_prints_the_text(self):
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "x`touch PWNED`.svg")
            script = (f"set terminal svg\nset output {escape.gnuplot_string(out)}\n"
                      "$d << EOD\n")
            script += "".join(f"{i} 1 {escape.gnuplot_datum(t)}\n" for i, t in enumerate(HOSTILE))
            script += "EOD\nset title " + escape.gnuplot_string(" | ".join(HOSTILE)) + \
                " noenhanced\nplot $d using 1:2:xtic(3) title " + \
                escape.gnuplot_string(HOSTILE[4]) + " noenhanced\n"
            p = subprocess.run(["gnuplot"], input=script, text=True, capture_output=True,
                               cwd=d, timeout=60)
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertEqual(sorted(os.listdir(d)), ["x`touch PWNED`.svg"])
            with open(out, encoding="utf-8") as f:
                svg = f.read()
            self.assertIn("a`touch PWNED`b", svg)
            self.assertIn("touch PWNED", svg)


class HtmlTest(unittest.TestCase):
    def test_text_and_attribute(self):
        self.assertEqual(escape.html_text("<b a='1' b=\"2\">&"),
                         "&lt;b a=&#x27;1&#x27; b=&quot;2&quot;&gt;&amp;")
        self.assertEqual(escape.html_text(3.5), "3.5")


class FileNameTest(unittest.TestCase):
    def test_safe_names_stay(self):
        for name in ("stock", "load1", "q10-c30000", "a.b_c-d"):
            self.assertEqual(escape.file_name(name), name)

    def test_unsafe_names_change_and_do_not_collide(self):
        seen = set()
        for name in ("../etc", ".hidden", "a/b", "a b", "a`b`", "a_b-x", "", "é", "a" * 200,
                     "a?b", "a#b"):
            safe = escape.file_name(name)
            self.assertRegex(safe, r"^[A-Za-z0-9_-][A-Za-z0-9_.-]{0,63}$")
            self.assertNotIn(safe, seen)
            seen.add(safe)


class ShellTest(unittest.TestCase):
    def test_word_survives_the_shell(self):
        for text in HOSTILE[:-3] + ["$(touch PWNED)", "a;b", ""]:
            if "\x00" in text:
                continue
            out = subprocess.run(["sh", "-c", "printf %s " + escape.shell_word(text)],
                                 capture_output=True, text=True, timeout=10).stdout
            self.assertEqual(out, text)


if __name__ == "__main__":
    unittest.main()
