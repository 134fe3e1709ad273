"""The readers of the files that cross a process (docs/formats.md): what
the guests, relay, loadgen, the drivers and the kernel harness write and
the judges and pages read. Each reader checks what it reads and names the
file and the field of what is wrong (DataError)."""
import re

from .files import DataError

# relay-preflight's lines: "LEVEL    WHAT: TEXT" (deploy/preflight, say).
FIX = "epoll ready-list fix"
PREFLIGHT_LINE = re.compile(r"^(ok|warn|act|note|unknown)\s+" + re.escape(FIX) + r": (.*)$")

PCT_KEYS = ("p50", "p99", "p99_9", "p99_99", "max")


def pcts(obj, where):
    """A percentile object (docs/formats.md) with the keys a page shows."""
    if not isinstance(obj, dict) or any(k not in obj for k in PCT_KEYS):
        raise DataError(f"{where}: expected a percentile object with {', '.join(PCT_KEYS)}")
    return {k: obj[k] for k in obj if k in PCT_KEYS + ("p90", "count", "mean")}


def text_lines(path):
    """The lines of a text file; DataError naming it when it cannot be read."""
    try:
        with open(path, encoding="utf-8") as f:
            return f.read().splitlines()
    except OSError as e:
        raise DataError(f"{path}: {e.strerror or e}")


def release(path):
    """The kernel release from a `uname -a` line."""
    fields = (text_lines(path) or [""])[0].split()
    if len(fields) < 3 or fields[0] != "Linux":
        raise DataError(f"{path}: expected a `uname -a` line")
    return fields[2]


def preflight_release(path):
    """The kernel release relay-preflight spoke of (its "kernel X (...)" line)."""
    fields = (text_lines(path) or [""])[0].split()
    if len(fields) < 2 or fields[0] != "kernel":
        raise DataError(f"{path}: expected relay-preflight's \"kernel RELEASE\" line first")
    return fields[1]


def preflight(path):
    """What relay-preflight said of the fix: (level, text)."""
    for line in text_lines(path):
        m = PREFLIGHT_LINE.match(line)
        if m:
            return m.group(1), m.group(2)
    raise DataError(f"{path}: relay-preflight said nothing of the {FIX}")


def cpu_stat(path):
    """A cgroup v2 cpu.stat as {key: int}; nr_periods and nr_throttled needed."""
    out = {}
    for n, line in enumerate(text_lines(path), 1):
        fields = line.split()
        if len(fields) != 2 or not fields[1].isdigit():
            raise DataError(f"{path}:{n}: expected 'key value', got {line!r}")
        out[fields[0]] = int(fields[1])
    for key in ("nr_periods", "nr_throttled"):
        if key not in out:
            raise DataError(f"{path}: no {key}")
    return out


def cpu_max(path):
    """A cgroup v2 cpu.max ("QUOTA PERIOD", QUOTA "max" for none) as
    (its text, the quota in % of one CPU or None)."""
    line = " ".join(text_lines(path)).strip()
    m = re.fullmatch(r"(max|\d+) (\d+)", line)
    if not m or int(m.group(2)) == 0:
        raise DataError(f"{path}: expected 'QUOTA PERIOD' (QUOTA a number or max), got {line!r}")
    quota = None if m.group(1) == "max" else 100.0 * int(m.group(1)) / int(m.group(2))
    return line, quota
