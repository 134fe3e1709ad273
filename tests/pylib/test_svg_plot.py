"""svg_plot's look at a plot, on made-up SVG files."""
import contextlib
import io
import os
import tempfile
import unittest

from tests.pylib import svg_plot

WORDS = ["p99.9", "objective p99", "knee"]


def svg(elements, texts=WORDS, root="svg"):
    """An SVG document of ELEMENTS elements (the root among them) whose
    <text> elements say TEXTS."""
    body = "".join("<text>%s</text>" % t for t in texts)
    body += "<path d='M0 0 L1 1'/>" * (elements - 1 - len(texts))
    return "<%s xmlns='http://www.w3.org/2000/svg'>%s</%s>" % (root, body, root)


class Drawn(unittest.TestCase):
    def setUp(self):
        d = tempfile.TemporaryDirectory()
        self.addCleanup(d.cleanup)
        self.path = os.path.join(d.name, "latency.svg")

    def write(self, text):
        with open(self.path, "w", encoding="utf-8") as f:
            f.write(text)
        return self.path

    def test_a_drawn_plot(self):
        svg_plot.drawn(self.write(svg(51)), WORDS)

    def test_an_empty_frame(self):
        with self.assertRaisesRegex(svg_plot.Failed, "has 50 elements, not more than 50"):
            svg_plot.drawn(self.write(svg(50)), WORDS)

    def test_a_word_missing(self):
        with self.assertRaisesRegex(svg_plot.Failed, "does not name 'knee'$"):
            svg_plot.drawn(self.write(svg(80, WORDS[:2])), WORDS)

    def test_not_svg(self):
        with self.assertRaisesRegex(svg_plot.Failed, "is a <html>, not an <svg>"):
            html = svg(80, root="html").replace(" xmlns='http://www.w3.org/2000/svg'", "")
            svg_plot.drawn(self.write(html), WORDS)
        with self.assertRaisesRegex(svg_plot.Failed, "is not XML"):
            svg_plot.drawn(self.write(svg(80)[:-3]), WORDS)

    def test_main_exits_1_naming_it(self):
        self.write(svg(10))
        with contextlib.redirect_stderr(io.StringIO()) as err:
            self.assertEqual(svg_plot.main(["drawn", self.path, "knee"]), 1)
        self.assertIn("svg_plot.py drawn: %s has 10 elements" % self.path, err.getvalue())
        with contextlib.redirect_stderr(io.StringIO()) as err:
            self.assertEqual(svg_plot.main(["drawn", self.path + ".missing"]), 1)
        self.assertIn("No such file", err.getvalue())
        self.write(svg(60))
        self.assertEqual(svg_plot.main(["drawn", self.path] + WORDS), 0)


if __name__ == "__main__":
    unittest.main()
