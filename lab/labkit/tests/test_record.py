"""lab/labkit/record: a made-up record, its notes and a recorded run, and
each thing check() must find wrong with copies of it; the record of the
tree itself holds."""
import json
import os
import tempfile
import unittest

from lab.labkit import record

RUN = {"date": "2026-12-06T22:51:19Z", "verdict": "fixed",
       "headline": "stock kernel stalled 3 times; patched kernel never stalled"}
GIVES = "FIXED: stock kernel stalled 3 times; patched kernel never stalled"


def row(date="2026-12-06", command="`make demo`", gives="FIXED: something", costs="10 s",
        on="abc1234, quiet", status="current", note="[n](notes/2026-12-06-a.md)", run="-"):
    return f"| {date} | {command} | {gives} | {costs} | {on} | {status} | {note} | {run} |"


class RecordTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)
        d = self.tmp.name
        os.makedirs(os.path.join(d, "notes"))
        for n in ("2026-12-06-a.md", "2026-12-05-b.md"):
            with open(os.path.join(d, "notes", n), "w") as f:
                f.write("# a note\n")
        self.run_dir = os.path.join(d, "run")
        os.makedirs(self.run_dir)
        with open(os.path.join(self.run_dir, "summary.json"), "w") as f:
            json.dump(RUN, f)
        with open(os.path.join(self.run_dir, "run.json"), "w") as f:
            json.dump({"wall_s": 565}, f)

    def problems(self, *rows):
        path = os.path.join(self.tmp.name, "measurements.md")
        with open(path, "w") as f:
            f.write("# Measurements\n\n## make demo\n\n" + record.HEAD + "\n"
                    + "|---" * len(record.COLUMNS) + "|\n" + "\n".join(rows) + "\n")
        return record.check(path)

    def good(self):
        return [row(), row(date="2026-12-05", status="superseded by 2026-12-06",
                           note="[b](notes/2026-12-05-b.md)"),
                row(command="`make demo KERNELS=debian13`", gives=GIVES, costs="565 s, cached",
                    run=self.run_dir)]

    def one(self, rows, expect):
        got = self.problems(*rows)
        self.assertEqual(len(got), 1, got)
        self.assertIn(expect, got[0])

    def test_holds(self):
        self.assertEqual(self.problems(*self.good()), [])

    def test_gives_of_a_run(self):
        self.assertEqual(record.gives(self.run_dir), ("2026-12-06", GIVES, 565))

    def test_missing_note(self):
        rows = self.good()
        rows[0] = row(note="[a](notes/2026-12-06-a.md), [c](notes/2026-12-07-c.md)")
        self.one(rows, "notes/2026-12-07-c.md: no such note")

    def test_unlinked_note(self):
        rows = self.good()
        del rows[1]
        self.one(rows, "notes/2026-12-05-b.md is linked by no row")

    def test_no_note(self):
        rows = self.good() + [row(command="`make check`", note="the note")]
        self.one(rows, "no note linked")

    def test_two_current(self):
        rows = self.good()
        rows[1] = row(date="2026-12-05", note="[b](notes/2026-12-05-b.md)")
        self.one(rows, "a second current row for `make demo`")

    def test_superseded_newer(self):
        rows = self.good()
        rows[0] = row(date="2026-12-04")
        self.one(rows, "newer than the current row of `make demo`")

    def test_status_word(self):
        rows = self.good()
        rows[1] = row(date="2026-12-05", status="old", note="[b](notes/2026-12-05-b.md)")
        self.one(rows, "neither current nor superseded")

    def test_bad_date_and_commit(self):
        rows = self.good()
        rows[0] = row(date="6 Dec")
        self.one(rows, "is not YYYY-MM-DD")
        rows[0] = row(on="yesterday")
        self.one(rows, "neither a commit nor")

    def test_cells(self):
        rows = self.good()
        rows[0] = rows[0][:rows[0].rindex(" | ")] + " |"
        self.one(rows, "7 cells, the head has 8")

    def test_run_figures(self):
        rows = self.good()
        rows[2] = rows[2].replace("stalled 3 times", "stalled 4 times", 1)
        self.one(rows, "gives is not the run's")
        rows = self.good()
        rows[2] = rows[2].replace("565 s", "560 s")
        self.one(rows, "costs does not begin with the run's 565 s")
        rows = self.good()
        rows[2] = rows[2].replace("| 2026-12-06 |", "| 2026-12-05 |", 1)
        self.one(rows, "the run's 2026-12-06")

    def test_unreadable_run(self):
        with open(os.path.join(self.run_dir, "summary.json"), "w") as f:
            f.write('{"date": 5')
        got = self.problems(*self.good())
        self.assertEqual(len(got), 1, got)
        self.assertIn("summary.json", got[0])
        with open(os.path.join(self.run_dir, "summary.json"), "w") as f:
            json.dump(dict(RUN, headline=7), f)
        self.assertIn("headline: expected text, got 7", self.problems(*self.good())[0])
        os.unlink(os.path.join(self.run_dir, "summary.json"))
        self.assertIn("no summary.json or capacity.json", self.problems(*self.good())[0])

    def test_no_table(self):
        path = os.path.join(self.tmp.name, "measurements.md")
        with open(path, "w") as f:
            f.write("# Measurements\n\n| a | b |\n|---|---|\n")
        self.assertIn("no table with the columns", record.check(path)[0])

    def test_the_tree(self):
        self.assertEqual(record.check(), [])


if __name__ == "__main__":
    unittest.main()
