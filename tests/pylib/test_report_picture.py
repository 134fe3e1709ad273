"""report_picture on the model fixture's result directory and made-up
pictures."""
import contextlib
import io
import os
import struct
import tempfile
import unittest
import zlib
from unittest import mock

from tests.pylib import report_picture

MODEL = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures", "report", "model")


def blank_png(path, width=1000, height=800):
    """A white RGB PNG: a page with nothing on it."""
    def chunk(kind, body):
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))
    rows = b"".join(b"\0" + b"\xff" * (3 * width) for _ in range(height))
    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
                + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))


class Refused(unittest.TestCase):
    def setUp(self):
        d = tempfile.TemporaryDirectory()
        self.addCleanup(d.cleanup)
        self.png = os.path.join(d.name, "page.png")
        blank_png(self.png)

    def test_a_blank_page_is_refused(self):
        self.assertEqual(report_picture.refusal(MODEL, self.png), "no verdict badge in the first 300 px")
        with contextlib.redirect_stdout(io.StringIO()) as out:
            self.assertEqual(report_picture.main(["refused", MODEL, self.png]), 0)
        self.assertEqual(out.getvalue(), "as expected: no verdict badge in the first 300 px\n")

    def test_a_page_it_passes(self):
        with mock.patch.object(report_picture.check, "screenshot", return_value={}) as shot:
            self.assertIsNone(report_picture.refusal(MODEL, self.png))
            with contextlib.redirect_stderr(io.StringIO()) as err:
                self.assertEqual(report_picture.main(["refused", MODEL, self.png]), 1)
        self.assertEqual(shot.call_args[0][1], self.png)
        self.assertIn("the picture check passed %s" % self.png, err.getvalue())


if __name__ == "__main__":
    unittest.main()
