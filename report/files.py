"""Readers for the result formats in docs/formats.md, and the one way
results are written."""
import contextlib
import csv
import json
import math
import os
import stat
import tempfile


# The largest magnitude a number of a result file may have: what a 64-bit
# counter holds. No writer of ours makes a larger one, and past it a whole
# number may not become a float at all (Python's json reads integers of
# up to 4300 digits).
NUMBER_MAX = 2 ** 63


class DataError(Exception):
    """A result file is missing or does not parse; the message names it."""


class ToolError(Exception):
    """A program the report needs (gnuplot) is missing or failed."""


def _writable(path):
    """Refuse PATH when something other than a regular file is there: a
    results directory handed to us may hold a link to a file elsewhere
    where an output goes, and the output must not go through it."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    if not stat.S_ISREG(st.st_mode):
        kind = "a symbolic link" if stat.S_ISLNK(st.st_mode) else "not a regular file"
        raise DataError(f"{path}: {kind}; refusing to write through it")


@contextlib.contextmanager
def new_output(path):
    """A fresh temporary file beside PATH, for a writer that takes a path
    (gnuplot, chromium): its name is yielded, and it is renamed over PATH
    when the block ends without an error, removed otherwise. As
    lib/newfile.c does for the C programs: made with O_EXCL under a
    random name, so nothing planted can be written through, and a reader
    sees the old file or the new one, never half of one."""
    _writable(path)
    fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(path) + ".",
                               dir=os.path.dirname(path) or ".")
    try:
        os.fchmod(fd, 0o644)
        os.close(fd)
        yield tmp
        _writable(path)
        os.rename(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def write_text(path, text):
    """TEXT as the new content of PATH (new_output's rules)."""
    with new_output(path) as tmp, open(tmp, "w", encoding="utf-8") as f:
        f.write(text)


def write_json(path, obj, indent=1):
    """OBJ as JSON, the new content of PATH (new_output's rules)."""
    write_text(path, json.dumps(obj, indent=indent) + "\n")


def output_dir(path):
    """PATH as a directory to write into, made if missing; a link or a
    file there is refused."""
    try:
        os.mkdir(path, 0o755)
    except FileExistsError:
        if not stat.S_ISDIR(os.lstat(path).st_mode):
            raise DataError(f"{path}: not a directory (a symbolic link?); refusing to write into it")
    return path


class LongNumber(str):
    """A whole number of more digits than Python's int() reads (4300),
    kept as its digits: the reader that expected a number then names the
    field (not the parser, which cannot say where it was)."""

    def __repr__(self):
        return f"a number of {len(self.lstrip('-'))} digits"


def _whole(digits):
    return int(digits) if len(digits) <= 4300 else LongNumber(digits)


def read_json(path):
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f, parse_int=_whole)
    except FileNotFoundError:
        raise DataError(f"{path}: no such file")
    except (OSError, ValueError) as e:
        raise DataError(f"{path}: {e}")
    except RecursionError:
        raise DataError(f"{path}: nested too deeply to be a result file")


def number(value, where, optional=False):
    """VALUE if it is a finite number (None too when OPTIONAL), else a
    DataError naming WHERE: a result file's wrong type is bad data, never a
    crash."""
    if value is None and optional:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) \
            or (isinstance(value, int) and abs(value) >= NUMBER_MAX) or not math.isfinite(value):
        raise DataError(f"{where}: expected a number, got {quoted(value)}")
    return value


def quoted(value):
    """VALUE of a result file as an error message quotes it: its JSON, cut
    short; a number too long to quote by its digits."""
    if isinstance(value, LongNumber) or (isinstance(value, int) and abs(value) >= NUMBER_MAX):
        return f"a number of {len(str(value).lstrip('-'))} digits"
    return json.dumps(value)[:60]


def _hgrm_rows(path):
    """Every row of an HdrHistogram percentile distribution as
    (value, percentile, total count, 1/(1-p) or None for the 100 % row)."""
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except OSError as e:
        raise DataError(f"{path}: {e}")
    if not lines or lines[0].split()[:2] != ["Value", "Percentile"]:
        raise DataError(f"{path}: not an HdrHistogram percentile distribution")
    rows = []
    for n, line in enumerate(lines[1:], 2):
        fields = line.split()
        if not fields or line.startswith("#"):
            continue
        try:
            value, pct = float(fields[0]), float(fields[1])
            count = int(fields[2])
            inverse = float(fields[3]) if len(fields) >= 4 and pct < 1.0 else None
        except (IndexError, ValueError):
            raise DataError(f"{path}:{n}: expected value, percentile, count, 1/(1-p); got {line!r}")
        rows.append((value, pct, count, inverse))
    return rows


def read_hgrm(path):
    """The percentile distribution as [(value_ms, percentile 0..1, 1/(1-p))].

    The 100 % row has no finite 1/(1-p) and is left out, as the HdrHistogram
    plotter does; its value is the max, which the tables report anyway.
    """
    return [(v, p, x) for v, p, _, x in _hgrm_rows(path) if x is not None]


def hgrm_counts(path):
    """[(value_ms, samples at or below it)] of every percentile row, the
    100 % row (the max, all samples) last."""
    rows = [(v, n) for v, _, n, _ in _hgrm_rows(path)]
    if not rows:
        raise DataError(f"{path}: no percentile rows")
    return rows


def _number(text):
    return float(text) if text.strip() else math.nan


def read_timeseries(path):
    """Rows of a *.timeseries.csv as dicts of floats (nan for empty fields)."""
    rows = []
    try:
        with open(path, encoding="utf-8", newline="") as f:
            body = [line for line in f if not line.startswith("#")]
    except OSError as e:
        raise DataError(f"{path}: {e}")
    reader = csv.DictReader(body)
    need = {"t_s", "count", "max_us"}
    if not reader.fieldnames or not need <= set(reader.fieldnames):
        raise DataError(f"{path}: expected the columns {sorted(need)}")
    for n, row in enumerate(reader, 2):
        try:
            rows.append({k: _number(v) for k, v in row.items() if k})
        except ValueError:
            raise DataError(f"{path}:{n}: expected numbers")
    return rows


def read_events(path):
    """Rows of an *.events.csv: dicts with t_s, kind, duration_ms, detail."""
    try:
        with open(path, encoding="utf-8", newline="") as f:
            body = [line for line in f if not line.startswith("#")]
    except OSError as e:
        raise DataError(f"{path}: {e}")
    events = []
    for n, row in enumerate(csv.DictReader(body), 2):
        try:
            events.append({"t_s": float(row["t_s"]), "kind": row["kind"],
                           "duration_ms": _number(row.get("duration_ms") or ""),
                           "detail": row.get("detail") or ""})
        except (KeyError, TypeError, ValueError):
            raise DataError(f"{path}:{n}: expected t_s,kind,duration_ms,detail")
    return events
