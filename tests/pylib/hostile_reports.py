#!/usr/bin/env python3
"""mk/py tests.pylib.hostile_reports write|replay DIR: the corpus of
type-confused result files that tests/integration/report_hostile_files.sh
replays through the commands that read them (DIR:
tests/fixtures/hostile/reports).

A case is one line of DIR/expect.tsv: its name, the command, the recorded
run it starts from (a directory under tests/fixtures/), the file in that
run it changes, where in that file (a path of keys and list indices,
"/stock/stalls"; "/" the whole file) and what goes there, as raw JSON
text ("delete": the key is removed; "deep": 100000 nested lists; "digits:N":
a whole number of N digits). The
cases are drawn by a seeded generator from every place in each file, so
the corpus is the same on every machine (write), and the one committed is
the one this module writes (the test compares them).

replay runs each case in a copy of its run, in this process (the commands
are Python functions taking their argv), and holds it to what every
reader of a result file promises: it ends with 0, or with 65 and one line
naming the file and the field; never a traceback, never another status.
"""
import contextlib
import io
import json
import os
import random
import shutil
import sys
import tempfile

from lab import results
from lab.capacity import page as capacity_page
from tests.pylib.corpus import write_expect

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FIXTURES = os.path.join(TOP, "tests", "fixtures")

# What replaces a value: each a type or a number no reader expects there.
VALUES = ['"x"', '""', "[]", "[1, 2]", "{}", '{"a": 1}', "null", "true", "false", "-1", "0",
          "1e400", "-1e400", "NaN", "Infinity", "123456789012345678901234567890", "0.5",
          '"1\\n2"', "delete"]
# Numbers of 4300 digits (the most Python's json reads; no float holds
# one) and 4301 (which it refuses with a ValueError of its own), written
# "digits:N" in the corpus.
HUGE = "digits:4300"
HUGER = "digits:4301"

# command, the run it starts from, the file it changes, how many cases,
# and where the file's copy comes from when the run does not hold it.
TARGETS = [
    ("render", "report/demo-virtual", "summary.json", 40, "report/expected/demo-virtual/summary.json"),
    ("render", "report/testhost", "summary.json", 20, "report/expected/testhost/summary.json"),
    ("summarize", "report/demo-virtual", "stock/results/scenario.json", 40, None),
    ("summarize", "report/demo-virtual", "stock/results/chains.json", 40,
     "report/capacity/stock/r1/results/grid/q10-c30000/cotenant/chains.json"),
    ("capacity", "report/capacity", "stock/r1/results/grid/q10-c30000/cell.json", 15, None),
    ("capacity", "report/capacity", "patched/r1/results/grid/q25-c30000/cotenant/chains.json", 25, None),
    ("capacity", "report/capacity", "spec.json", 20, None),
]
# The same for every file: the whole of it replaced.
WHOLE = ["[]", '"summary"', "1", "null", "deep", HUGER, "{", ""]
COMMANDS = {
    "render": lambda d: results.main(["render", d]),
    "summarize": lambda d: results.main(["summarize", d]),
    "capacity": lambda d: capacity_page.main([d]),
}


def places(obj, path=""):
    """Every place in OBJ as a path ("/a/0/b"), lists by their first two
    elements (the rest are alike). A key with a "/" in it (a task's name,
    "rcuc/1") cannot be named by such a path: it and what it holds are
    left out."""
    out = []
    if isinstance(obj, dict):
        for k, v in obj.items():
            if "/" in k:
                continue
            out.append(f"{path}/{k}")
            out += places(v, f"{path}/{k}")
    elif isinstance(obj, list):
        for i, v in enumerate(obj[:2]):
            out.append(f"{path}/{i}")
            out += places(v, f"{path}/{i}")
    return out


def base(run, file, source):
    return os.path.join(FIXTURES, source or os.path.join(run, file))


def cases():
    """[(name, command, run, file, place, value)] of the corpus."""
    out = []
    for command, run, file, n, source in TARGETS:
        with open(base(run, file, source)) as f:
            obj = json.load(f)
        where = sorted(places(obj))
        rng = random.Random(f"{command} {run} {file}")
        picked = rng.sample(where, min(n, len(where)))
        stem = f"{os.path.basename(run)}-{file.replace('/', '-').removesuffix('.json')}"
        for i, place in enumerate(picked):
            out.append((f"{stem}-{i:02d}", command, run, file, place, rng.choice(VALUES)))
        out += [(f"{stem}-whole-{i}", command, run, file, "/", v) for i, v in enumerate(WHOLE)]
        # the digits, each in a place of its own
        out += [(f"{stem}-{v.replace(':', '-')}", command, run, file, rng.choice(where), v)
                for v in (HUGE, HUGER)]
    return out


def _keys(place):
    return [int(k) if k.isdigit() else k for k in place.strip("/").split("/")]


def mutated(text, place, value):
    """TEXT (a JSON document) with VALUE put at PLACE, as text."""
    if value == "deep":
        value = "[" * 100000 + "]" * 100000
    elif value.startswith("digits:"):
        value = "9" * int(value.split(":")[1])
    if place == "/":
        return value
    obj = json.loads(text)
    *up, last = _keys(place)
    parent = obj
    for k in up:
        parent = parent[k]
    if value == "delete":
        del parent[last]
        return json.dumps(obj, indent=1)
    mark = "\u0000hostile\u0000"
    parent[last] = mark
    return json.dumps(obj, indent=1).replace(json.dumps(mark), value)


def write(out_dir):
    os.makedirs(out_dir, exist_ok=True)
    write_expect(out_dir, ["command", "run", "file", "place", "value"], cases(),
                 "tests/pylib/hostile_reports.py")


def read(corpus):
    with open(os.path.join(corpus, "expect.tsv")) as f:
        return [tuple(line.rstrip("\n").split("\t")) for line in f if not line.startswith("#")]


def judge(name, file, place, status, err):
    """What is wrong with a case's ending (None: nothing)."""
    if status == "traceback":
        return f"a traceback:\n{err}"
    if status == 0:
        return None
    if status != 65:
        return f"exit {status}, not 0 or 65: {err.strip()}"
    lines = err.strip().split("\n")
    if len(lines) != 1:
        return f"{len(lines)} lines on stderr, not one: {err.strip()}"
    if os.path.basename(file) not in err:
        return f"the error does not name {os.path.basename(file)}: {err.strip()}"
    field = next((str(k) for k in reversed(_keys(place)) if isinstance(k, str)), None) \
        if place != "/" else None
    if field is not None and field not in err and "expected an object" not in err:
        return f"the error does not name {field}: {err.strip()}"
    return None


def run_case(tmp, case):
    """(status or "traceback", stderr) of CASE run in a copy of its run under TMP."""
    name, command, run, file, place, value = case
    d = os.path.join(tmp, name)
    shutil.copytree(os.path.join(FIXTURES, run), d, symlinks=True)
    source = next(t[4] for t in TARGETS if t[:3] == (command, run, file))
    with open(base(run, file, source)) as f:
        text = f.read()
    with open(os.path.join(d, file), "w") as f:
        f.write(mutated(text, place, value))
    err = io.StringIO()
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
            status = COMMANDS[command](d)
    except SystemExit as e:
        status = e.code
    except Exception:   # noqa: BLE001 (what the corpus is here to find)
        import traceback
        return "traceback", traceback.format_exc()
    finally:
        shutil.rmtree(d)
    return status, err.getvalue()


def replay(corpus, only=None):
    bad = 0
    counts = {}
    with tempfile.TemporaryDirectory() as tmp:
        for case in read(corpus):
            if only and only not in case[0]:
                continue
            status, err = run_case(tmp, case)
            counts[status] = counts.get(status, 0) + 1
            wrong = judge(case[0], case[3], case[4], status, err)
            if wrong:
                bad += 1
                print(f"{case[0]}: {case[1]} with {case[3]} {case[4]} = {case[5][:40]}: {wrong}")
    total = sum(counts.values())
    print(f"{total} cases: " + ", ".join(f"{n} exit {s}" for s, n in sorted(counts.items(), key=str))
          + f"; {bad} wrong")
    return 1 if bad or not total else 0


def main(argv):
    if len(argv) in (2, 3) and argv[0] == "replay":
        return replay(argv[1], *argv[2:])
    if len(argv) == 2 and argv[0] == "write":
        write(argv[1])
        return 0
    print(__doc__.split("\n\n")[0], file=sys.stderr)
    return 64


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
