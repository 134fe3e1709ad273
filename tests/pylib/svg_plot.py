#!/usr/bin/env python3
"""The plots report/sweep draws, looked at (tests/integration/loadgen_capacity.sh).

  svg_plot.py drawn FILE WORD...
      FILE is an SVG drawing (its root an <svg> of more than 50 elements:
      curves, not an empty frame) whose text names each WORD; exit 1
      naming what is not so.
"""
import argparse
import sys
import xml.etree.ElementTree as ET

MIN_ELEMENTS = 50


class Failed(Exception):
    """The file is not the plot it should be."""


def drawn(path, words, min_elements=MIN_ELEMENTS):
    """PATH is an SVG of more than MIN_ELEMENTS elements naming each of WORDS."""
    try:
        root = ET.parse(path).getroot()
    except ET.ParseError as e:
        raise Failed("%s is not XML: %s" % (path, e)) from None
    if not root.tag.endswith("svg"):
        raise Failed("%s is a <%s>, not an <svg>" % (path, root.tag))
    n = sum(1 for _ in root.iter())
    if n <= min_elements:
        raise Failed("%s has %d elements, not more than %d: nothing drawn" % (path, n, min_elements))
    with open(path, encoding="utf-8") as f:
        text = f.read()
    missing = [w for w in words if w not in text]
    if missing:
        raise Failed("%s does not name %s" % (path, ", ".join(repr(w) for w in missing)))


def main(argv):
    p = argparse.ArgumentParser(prog="svg_plot.py", description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    d = sub.add_parser("drawn")
    d.add_argument("file")
    d.add_argument("words", nargs="*")
    a = p.parse_args(argv)
    try:
        drawn(a.file, a.words)
    except (Failed, OSError) as e:
        print("svg_plot.py %s: %s" % (a.cmd, e), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
