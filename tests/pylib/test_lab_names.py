"""lab/labkit/names: lab/README.md's names table from made-up tables, the
disagreements it must find between them, and the README flags tables'
defaults held to their program's."""
import copy
import os
import tempfile
import unittest

from lab.labkit import names


def row(name, lo, hi, default, **more):
    return dict({"name": name, "flag": "--" + name.replace("_", "-"), "type": "int",
                 "unit": name.rpartition("_")[2] if "_" in name else None,
                 "min": lo, "max": hi, "default": default, "help": name}, **more)


def made_up():
    """demo-scenario, epmodel and two drivers, all agreeing."""
    return [
        {"program": "demo-scenario", "kind": "program", "params": [
            row("cpu_quota_pct", 1, 100, {"host": 10, "virtual": 5}),
            row("period_us", 1000, 1000000, {"host": 10000, "virtual": 20000}),
            row("senders", 1, 64, {"host": 2, "virtual": 2}),
            row("rate_pps", 1, 1000000, {"host": 2000, "virtual": 30000})]},
        {"program": "epmodel", "kind": "program", "params": [
            row("cpu_quota_pct", 1, 100, {"host": 5}),
            row("producers", 1, 64, {"host": 2}, spec="senders")]},
        {"program": "lab/capacity/run", "kind": "driver", "params": [
            row("cpu_quota_pct", 1, 100, [10, 25, 50], type="ints", source="demo-scenario"),
            row("cotenant_rate_pps", 1, 1000000, [30000], spec="rate_pps", source="demo-scenario")]},
        {"program": "lab/hostab/run", "kind": "driver", "params": [
            row("period_us", 1000, 1000000, 20000, source="demo-scenario"),
            row("duration_s", 5, 3600, 15, source="demo-scenario")]},
    ]


class TableTest(unittest.TestCase):
    def test_rows_and_cells(self):
        t = names.table(made_up())
        self.assertTrue(t.startswith(names.HEAD))
        rows = t[len(names.HEAD):].splitlines()
        self.assertEqual([r.split(" | ")[0] for r in rows][:3],
                         ["| `cpu_quota_pct`", "| `period_us`", "| `rate_pps`, `cotenant_rate_pps`"])
        quota = rows[0].split(" | ")
        self.assertEqual(quota[1:4], ["`--cpu-quota-pct`", "`--cpu-quota PCT%`", "`--cpu-quota-pct`"])
        period = rows[1].split(" | ")
        self.assertEqual(period[4], "`CPUQuotaPeriodSec=` |")
        senders = next(r for r in rows if r.startswith("| `senders`")).split(" | ")
        self.assertEqual((senders[2], senders[3]), ("`--threads`", "`--producers`"))
        # a parameter known outside the lab only by the lab's table still
        # has a row; one no outside program knows has none
        self.assertTrue(any(r.startswith("| `duration_s`") for r in rows))
        self.assertFalse(any("tick_us" in r for r in rows))

    def test_the_committed_table_is_cut_at_its_end(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "README.md")
            t = names.table(made_up())
            with open(path, "w") as f:
                f.write("# x\n\nabove\n\n" + t + "\n## next\n| not | this |\n")
            self.assertEqual(names.committed(path), t)


class DisagreementTest(unittest.TestCase):
    def said(self, change):
        tabs = made_up()
        change(tabs)
        return names.disagreements(tabs)

    def test_none_when_they_agree(self):
        self.assertEqual(names.disagreements(made_up()), [])

    def test_a_programs_range(self):
        said = self.said(lambda t: t[1]["params"][0].update(max=99))
        self.assertEqual(said, ["epmodel's cpu_quota_pct takes 1..99, demo-scenario's 1..100"])

    def test_a_drivers_range_outside_the_programs(self):
        said = self.said(lambda t: t[3]["params"][0].update(max=2000000))
        self.assertEqual(said, ["lab/hostab/run's period_us takes 1000..2000000, outside "
                                "demo-scenario's 1000..1000000"])
        # a driver may take less, and a row of its own may take another
        self.assertEqual(self.said(lambda t: t[3]["params"][0].update(min=2000)), [])
        self.assertEqual(self.said(lambda t: t[3]["params"][0].pop("source")), [])

    def test_a_default_outside_its_range(self):
        said = self.said(lambda t: t[2]["params"][0].update(default=[10, 25, 150]))
        self.assertEqual(said, ["lab/capacity/run's cpu_quota_pct's default 150 is outside its 1..100"])
        said = self.said(lambda t: t[0]["params"][0]["default"].update(virtual=0))
        self.assertEqual(said, ["demo-scenario's cpu_quota_pct's default 0 is outside its 1..100"])

    def test_another_unit(self):
        said = self.said(lambda t: t[1]["params"][1].update(unit="pps"))
        self.assertEqual(said, ["epmodel's producers is in pps, demo-scenario's senders in no unit"])


class ReadmeTest(unittest.TestCase):
    TEXT = ("| flag | default | |\n|---|---|---|\n"
            "| `--rate-pps PPS` | 2000 (virtual clock: 30000) | x |\n"
            "| `--cpu-quota-pct PCT` / `--period-us N` | 10 / 10000 (virtual clock: 5 / 20000) | y |\n"
            "| `--senders N` | 2 | z |\n| `--out DIR` | `.` | not a parameter |\n")

    def said(self, text, program="demo-scenario"):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "README.md")
            with open(path, "w") as f:
                f.write(text)
            saved = copy.copy(names.FLAG_TABLES)
            names.FLAG_TABLES[program] = path
            try:
                return [s.split(": ", 1)[1] for s in names.readme_defaults(made_up())]
            finally:
                names.FLAG_TABLES.clear()
                names.FLAG_TABLES.update(saved)

    def test_the_defaults_as_the_program_has_them(self):
        self.assertEqual(self.said(self.TEXT), [])

    def test_a_default_of_either_clock_that_is_not(self):
        text = self.TEXT.replace("(virtual clock: 5 / 20000)", "(virtual clock: 5 / 10000)")
        self.assertEqual(self.said(text),
                         ["--period-us 10000 on the virtual clock, demo-scenario's default 20000"])
        self.assertEqual(self.said(self.TEXT.replace("| 2 | z |", "| 3 | z |")),
                         ["--senders 3 on the host clock, demo-scenario's default 2",
                          "--senders 3 on the virtual clock, demo-scenario's default 2"])


if __name__ == "__main__":
    unittest.main()
