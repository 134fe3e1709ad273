"""docs/measurements.md, the record of what each make target gives and
costs, checked against the notes it links and the recorded runs it
quotes.

The record is a Markdown table per target, every one with the columns of
HEAD; a row is one measurement. check() holds it to what it says of
itself:

- every row's note links (`[text](notes/NAME.md)`) name files that
  exist, and every file in docs/notes/ is linked by a row;
- a row's date is a date, its status `current` or `superseded ...`;
  within a table a command has at most one current row, and no row of
  that command is newer than it;
- a row whose run cell names a recorded run (a directory under
  tests/fixtures/) has that run's date, gives what the run's summary
  says (gives()) and costs, first, the run's seconds.

A row's figures are otherwise the note's: a test cannot tell a
hand-copied figure from a note's prose, so those rows say where they come
from instead.
"""
import glob
import json
import os
import re

from . import TOP

RECORD = os.path.join(TOP, "docs", "measurements.md")
HEAD = "| date | command | gives | costs | on | status | note | run |"
COLUMNS = [c.strip() for c in HEAD.strip("|").split("|")]
NOTE = re.compile(r"\[[^\]]+\]\(notes/([^)]+)\)")
DATE = re.compile(r"\d{4}-\d{2}-\d{2}$")
ON = re.compile(r"(-|\(?[0-9a-f]{7,40}\)?)([ ,]|$)")
# Where a recorded run's summary is: in its directory, or (for the report's
# fixtures, which hold a run as it was before the report) what the report
# made of it, under tests/fixtures/report/expected/NAME/.
SUMMARIES = ("summary.json", "capacity.json")
EXPECTED = os.path.join("tests", "fixtures", "report", "expected")


class RecordError(Exception):
    """A recorded run that cannot be read."""


def _cells(line):
    return [c.strip() for c in line.strip()[1:-1].split("|")]


def tables(text):
    """[(heading, first line number, [row dicts with "line"])] of TEXT."""
    out, heading, lines = [], None, text.split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("## "):
            heading = line[3:]
        if line.strip() == HEAD:
            rows, start = [], i + 1
            i += 2   # the rule under the head
            while i < len(lines) and lines[i].startswith("|"):
                cells = _cells(lines[i])
                row = dict(zip(COLUMNS, cells + [""] * (len(COLUMNS) - len(cells))))
                row["line"], row["width"] = i + 1, len(cells)
                rows.append(row)
                i += 1
            out.append((heading, start, rows))
            continue
        i += 1
    return out


def _summary(run_dir):
    here = [os.path.join(run_dir, s) for s in SUMMARIES]
    there = [os.path.join(TOP, EXPECTED, os.path.basename(run_dir), s) for s in SUMMARIES]
    for path in here + there:
        if os.path.isfile(path):
            return path
    raise RecordError(f"{run_dir}: no {' or '.join(SUMMARIES)} here or in {EXPECTED}/")


def _load(path):
    try:
        with open(path) as f:
            obj = json.load(f)
    except (OSError, ValueError) as e:
        raise RecordError(f"{path}: {e}") from e
    if not isinstance(obj, dict):
        raise RecordError(f"{path}: not a JSON object")
    return obj


def _text(obj, key, path):
    v = obj.get(key)
    if not isinstance(v, str) or not v:
        raise RecordError(f"{path}: {key}: expected text, got {v!r}")
    return v


def gives(run_dir):
    """(date, gives, seconds) of the recorded run RUN_DIR (relative to the
    top or absolute): the date of its summary, its verdict and headline
    (a capacity run: its headline), and its wall time (run.json's wall_s,
    else the sum of its phases; None when it has neither)."""
    run_dir = os.path.join(TOP, run_dir)
    path = _summary(run_dir)
    s = _load(path)
    headline = _text(s, "headline", path)
    verdict = s.get("verdict")
    if isinstance(verdict, dict):
        verdict = verdict.get("word")
    text = f"{verdict.upper()}: {headline}" if isinstance(verdict, str) else headline
    seconds = s.get("wall_s")
    run_json = os.path.join(run_dir, "run.json")
    if os.path.isfile(run_json):
        r = _load(run_json)
        if isinstance(r.get("wall_s"), (int, float)):
            seconds = r["wall_s"]
        elif isinstance(r.get("phases"), list):
            seconds = sum(p.get("seconds", 0) for p in r["phases"] if isinstance(p, dict))
    return _text(s, "date", path)[:10], text, seconds


def _check_run(row, where):
    try:
        date, text, seconds = gives(row["run"])
    except RecordError as e:
        return [f"{where}: {e}"]
    problems = []
    if row["date"] != date:
        problems.append(f"{where}: the date is {row['date']}, the run's {date}")
    if row["gives"] != text:
        problems.append(f"{where}: gives is not the run's:\n  row: {row['gives']}\n  run: {text}")
    if seconds is not None and not row["costs"].startswith(f"{seconds:g} s"):
        problems.append(f"{where}: costs does not begin with the run's {seconds:g} s: {row['costs']}")
    return problems


def check(path=RECORD, notes=None):
    """The problems of the record at PATH (a list of messages; none: it
    holds), its notes in NOTES (default: notes/ beside it)."""
    notes = notes or os.path.join(os.path.dirname(path), "notes")
    name = os.path.relpath(path, TOP) if path.startswith(TOP) else path
    with open(path) as f:
        found = tables(f.read())
    problems, linked = [], set()
    if not found:
        return [f"{name}: no table with the columns {HEAD}"]
    for heading, start, rows in found:
        if not rows:
            problems.append(f"{name}:{start}: the table of {heading!r} has no row")
        current = {}
        for row in rows:
            where = f"{name}:{row['line']}"
            if row["width"] != len(COLUMNS):
                problems.append(f"{where}: {row['width']} cells, the head has {len(COLUMNS)}")
                continue
            if not DATE.match(row["date"]):
                problems.append(f"{where}: date {row['date']!r} is not YYYY-MM-DD")
            if not ON.match(row["on"]):
                problems.append(f"{where}: 'on' begins with neither a commit nor '-': {row['on']!r}")
            links = NOTE.findall(row["note"])
            if not links:
                problems.append(f"{where}: no note linked (notes/NAME.md)")
            for n in links:
                linked.add(n)
                if not os.path.isfile(os.path.join(notes, n)):
                    problems.append(f"{where}: notes/{n}: no such note")
            status = row["status"]
            if status == "current":
                if row["command"] in current:
                    problems.append(f"{where}: a second current row for {row['command']} "
                                    f"(line {current[row['command']]['line']})")
                else:
                    current[row["command"]] = row
            elif not status.startswith("superseded"):
                problems.append(f"{where}: status {status!r} is neither current nor superseded")
            if row["run"] != "-":
                problems.extend(_check_run(row, where))
        for row in rows:
            cur = current.get(row["command"])
            if cur is not None and DATE.match(row["date"]) and row["date"] > cur["date"]:
                problems.append(f"{name}:{row['line']}: newer than the current row of "
                                f"{row['command']} (line {cur['line']})")
    for n in sorted(os.path.basename(p) for p in glob.glob(os.path.join(notes, "*.md"))):
        if n not in linked:
            problems.append(f"{name}: notes/{n} is linked by no row")
    return problems
