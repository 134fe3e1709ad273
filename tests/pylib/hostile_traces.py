#!/usr/bin/env python3
"""tests/pylib/hostile_traces.py DIR: write the corpus of hostile guest
results that tests/pylib/test_ktrace_hostile.py replays through
lab/ktrace/explain (DIR: tests/fixtures/hostile/traces).

Each case is a directory NAME/, a guest's results as explain reads them
(scenario.json, trace-stats.txt, trace-probes.txt, and trace.txt.gz or
the raw trace/), made from the excerpts in tests/fixtures/ktrace with one
thing changed, and a line of expect.tsv: NAME, explain's exit status,
words its error must hold, what the case is. The changes are what a
guest's root could write there: numbers longer than Python converts,
lines that never end, pages that unpack to gigabytes, JSON nested past
the interpreter's stack, fields of the wrong type.
"""
import gzip
import json
import os
import re
import shutil
import sys

from tests.pylib.corpus import write_expect

TOP = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
KTRACE = os.path.join(TOP, "tests", "fixtures", "ktrace")
DIGITS = "9" * 4400


# The stock excerpt's first lines: the header and a few hundred events,
# enough for the reader to meet each change.
HEAD_LINES = 300


def text_trace(edit):
    """The stock excerpt's first HEAD_LINES lines with edit(lines) applied,
    as trace.txt.gz."""
    def make(d):
        with gzip.open(os.path.join(KTRACE, "stock", "trace.txt.gz"), "rt", encoding="utf-8") as f:
            lines = f.read().split("\n")[:HEAD_LINES]
        with gzip.GzipFile(os.path.join(d, "trace.txt.gz"), "wb", 9, mtime=0) as f:
            f.write("\n".join(edit(lines)).encode())
    return make


def side_case(*changes):
    """A case whose trace is never read (the change comes first): the short
    trace, and the changes."""
    def make(d):
        text_trace(lambda ls: ls)(d)
        for c in changes:
            c(d)
    return make


def first_event(pattern, repl):
    """An edit: the first event line that matches pattern, with its first
    match replaced."""
    def edit(lines):
        for i, ln in enumerate(lines):
            if ln and not ln.startswith("#") and " => " not in ln and re.search(pattern, ln):
                lines[i] = re.sub(pattern, repl, ln, count=1)
                break
        return lines
    return edit


def endless_line(lines):
    """A line of 1 MiB with no end: read whole, a bigger one takes all memory."""
    return lines[:20] + ["  relay-71  [001] " + "x" * (1 << 20)]


def side_file(name, text):
    def make(d):
        with open(os.path.join(d, name), "w", encoding="utf-8") as f:
            f.write(text)
    return make


def scenario(edit):
    def make(d):
        path = os.path.join(d, "scenario.json")
        with open(path, encoding="utf-8") as f:
            scen = json.load(f)
        with open(path, "w", encoding="utf-8") as f:
            f.write(edit(scen))
    return make


def typed(**fields):
    def edit(scen):
        scen.update(fields)
        return json.dumps(scen)
    return edit


def raw_bomb(d):
    """cpu0's pages: 8 MiB of zeros in a few KiB of gzip, where the trace's
    statistics say its buffer held 1.4 MB."""
    with gzip.GzipFile(os.path.join(d, "trace", "cpu0.raw.gz"), "wb", 9, mtime=0) as f:
        block = bytes(1 << 20)
        for _ in range(8):
            f.write(block)


# (name, base excerpt, change, exit status, words of the error, what it is)
CASES = [
    ("pid-digits", "stock", text_trace(first_event(r"-(\d+)(\s+\[)", "-" + DIGITS + r"\2")),
     65, "not a trace line", "a task's pid of 4400 digits (int() refuses past 4300)"),
    ("cpu-digits", "stock", text_trace(first_event(r"\[(\d+)\]", "[" + DIGITS + "]")),
     65, "not a trace line", "a CPU column of 4400 digits"),
    ("field-digits", "stock", text_trace(first_event(r"prev_pid=\d+", "prev_pid=" + DIGITS)),
     65, "fields it should not have", "a sched_switch pid field of 4400 digits"),
    ("lock-digits", "stock", text_trace(
        lambda ls: [re.sub(r"contention_begin: [0-9a-f]+", "contention_begin: " + "f" * 5000, x, count=1)
                    for x in ls]),
     65, "fields it should not have", "a lock address of 5000 hex digits"),
    ("endless-line", "stock", text_trace(endless_line),
     65, "a line of more than", "a trace line of 1 MiB that never ends"),
    ("stats-cpu-digits", "stock", side_case(side_file("trace-stats.txt", f"cpu{DIGITS}\nentries: 1\n")),
     65, "trace-stats.txt:1: not a per-CPU statistic", "a CPU of 4400 digits in the trace's statistics"),
    ("stats-infinite", "stock", side_case(side_file("trace-stats.txt", "cpu0\ndropped events: 1e400\n")),
     65, "trace-stats.txt:2: dropped events is not a number", "a count that is infinite as a float"),
    ("stats-huge", "stock", side_case(side_file("trace-stats.txt", "cpu0\nentries: 1\n" * 4200)),
     65, "not a regular file of at most", "statistics of 67 KB, where a guest's are some hundred bytes"),
    ("probes-digits", "stock", side_case(side_file("trace-probes.txt", f"  ep_cb  1  {DIGITS}\n")),
     65, "trace-probes.txt:1: not a kprobe_profile line", "a kprobe miss count of 4400 digits"),
    ("scenario-deep", "stock", side_case(scenario(lambda s: "[" * 5000 + "]" * 5000)),
     65, "scenario.json", "scenario.json nested 5000 deep (past the JSON reader's stack)"),
    ("scenario-digits", "stock", side_case(scenario(lambda s: json.dumps(s).replace(
        f'"t0_mono_ns": {s["t0_mono_ns"]}', '"t0_mono_ns": ' + DIGITS))),
     65, "scenario.json", "t0_mono_ns of 4400 digits"),
    ("scenario-stall-types", "stock", side_case(scenario(typed(stalls=[1, "two", {"start_s": "x"}]))),
     65, "scenario.json: stalls[0]", "stalls that are not records"),
    ("scenario-listed-types", "stock",
     side_case(scenario(typed(ticker={"enabled": True, "listed": [{"due_s": None, "echo_s": []}]}))),
     65, "scenario.json: ticker.listed[0]", "a listed RT datagram without its times"),
    ("scenario-params-types", "stock",
     side_case(scenario(typed(params={"relay_prio": "50", "ticker_lead_us": []}))),
     65, "scenario.json: params", "parameters of the wrong type"),
    ("raw-bomb", "stock-raw", raw_bomb,
     65, "cpu0.raw.gz: unpacks to more than", "cpu0's pages: 8 MiB of zeros in 8 KiB of gzip"),
]


def main(out):
    if os.path.isdir(out):
        shutil.rmtree(out)
    os.makedirs(out)
    for name, base, change, _, _, _ in CASES:
        d = os.path.join(out, name)
        shutil.copytree(os.path.join(KTRACE, base), d)
        change(d)
    write_expect(out, ("exit status of lab/ktrace/explain", "words its error holds", "what it is"),
                 [(name, rc, words, what) for name, _, _, rc, words, what in CASES],
                 "tests/pylib/hostile_traces.py")


if __name__ == "__main__":
    main(sys.argv[1])
