"""dupes: no block of MIN (10) or more lines stands twice in the tree's code.

  mk/py mk.dupes [--min N] FILE...

Of the FILEs, the code is read: C (.c, .h), Python (.py), shell (.sh),
make (.mk, Makefile), and every file whose first line is a #! line (the
extensionless scripts too). Blank lines, comment-only lines and the
lines that only import or include are passed over, and white space is
folded; a run of MIN such lines that stands in two files is one finding,
grown to the whole run the two share: "a.py:10-24 ~ b.sh:40-56: 15
lines". Fixtures and corpora are data: the caller leaves them out.
Exit status: 0 none; 1 a block stands twice; 2 usage.
"""
import argparse
import hashlib
import os
import re
import sys

CODE = {".c": "c", ".h": "c", ".py": "py", ".sh": "sh", ".mk": "sh"}
# A line that says nothing of what the code does: a comment, an import.
PASSED = {
    "c": re.compile(r"^(//|/\*|\*|#\s*include\b)"),
    "py": re.compile(r"^(#|import\s|from\s+\S+\s+import\s)"),
    "sh": re.compile(r"^#"),
}


def kind(path, first_line):
    """The language of PATH (for its comments), or None when it is not code."""
    name = os.path.basename(path)
    ext = os.path.splitext(name)[1]
    if ext in CODE:
        return CODE[ext]
    if name == "Makefile":
        return "sh"
    if first_line.startswith("#!"):
        return "py" if "python" in first_line else "sh"
    return None


def lines(path):
    """[(line number, folded text)] of the lines of PATH that count, or
    None when PATH is not code."""
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except (OSError, UnicodeDecodeError):
        return None
    rows = text.split("\n")
    lang = kind(path, rows[0] if rows else "")
    if lang is None:
        return None
    out = []
    for n, row in enumerate(rows, 1):
        folded = " ".join(row.split())
        if folded and not PASSED[lang].match(folded):
            out.append((n, folded))
    return out


def _key(window):
    return hashlib.sha1("\n".join(window).encode()).digest()


def find(paths, least=10):
    """[(path a, first, last, path b, first, last, lines)] of every run of
    at least LEAST counted lines that two files share, each run whole."""
    code = {}
    for p in paths:
        got = lines(p)
        if got and len(got) >= least:
            code[p] = got
    seen = {}    # window -> [(path, index)]
    for p, rows in code.items():
        texts = [t for _, t in rows]
        for i in range(len(rows) - least + 1):
            seen.setdefault(_key(texts[i:i + least]), []).append((p, i))
    starts = {}  # (a, b) -> set of (index in a, index in b) that begin a shared window
    for places in seen.values():
        for x in range(len(places)):
            for y in range(x + 1, len(places)):
                (a, i), (b, j) = sorted((places[x], places[y]))
                if a != b:
                    starts.setdefault((a, b), set()).add((i, j))
    found = []
    for (a, b), pairs in sorted(starts.items()):
        for i, j in sorted(pairs):
            if (i - 1, j - 1) in pairs:
                continue    # inside a run already begun
            n = least
            while (i + n - least + 1, j + n - least + 1) in pairs:
                n += 1
            ra, rb = code[a], code[b]
            found.append((a, ra[i][0], ra[i + n - 1][0], b, rb[j][0], rb[j + n - 1][0], n))
    return found


def main(argv):
    ap = argparse.ArgumentParser(prog="dupes", description="Blocks of code that stand twice.")
    ap.add_argument("--min", type=int, default=10, help="the lines a block needs (10)")
    ap.add_argument("files", nargs="*")
    args = ap.parse_args(argv)
    if args.min < 2:
        ap.error("--min: at least 2")
    found = find(args.files, args.min)
    for a, a0, a1, b, b0, b1, n in found:
        print(f"{a}:{a0}-{a1} ~ {b}:{b0}-{b1}: {n} lines stand in both")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
