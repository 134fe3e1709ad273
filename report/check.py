"""Check that a result directory's report is whole: the files parse, the
page names only plots that exist, and (with a screenshot) that a browser
shows the verdict at the top and every column's curves."""
import html.parser
import os
import subprocess
import xml.etree.ElementTree as ET

from . import png
from .page import badge_colour
from .plots import COLOURS


# report/screenshot: headless Chromium's picture of a page.
SCREENSHOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "screenshot")


class CheckError(Exception):
    """The report is not whole; the message says what is missing."""


def shoot(page, png_path, width, height):
    """report/screenshot of PAGE into PNG_PATH, WIDTH x HEIGHT px: its
    exit status (69: no chromium)."""
    return subprocess.run([SCREENSHOT, page, png_path, str(width), str(height)]).returncode


class _Images(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.srcs = []

    def handle_starttag(self, tag, attrs):
        if tag == "img":
            self.srcs.append(dict(attrs).get("src", ""))


def read_texts(run_dir, names):
    """The text of each named file of run_dir; CheckError names the one
    that cannot be read."""
    out = []
    for name in names:
        try:
            with open(os.path.join(run_dir, name), encoding="utf-8") as f:
                out.append(f.read())
        except OSError as e:
            raise CheckError(str(e))
    return out


def files(run_dir, view):
    """The table, the page and its plots of RUN_DIR, whose VIEW the page
    was made from, parse."""
    table, page = read_texts(run_dir, ("table.txt", "report.html"))
    if "\nverdict: " not in table:
        raise CheckError("table.txt has no verdict line")
    has_data = any(c.hgrm or c.timeseries for c in view.columns)
    plots(run_dir, page, "report.html", has_data)


def plots(run_dir, page, name, needed):
    """The page shows exactly the SVG plots in run_dir/plots, each a drawn
    plot (at least one when needed)."""
    parser = _Images()
    parser.feed(page)
    if needed and not parser.srcs:
        raise CheckError(f"{name} shows no plots")
    for src in parser.srcs:
        path = os.path.join(run_dir, src)
        try:
            root = ET.parse(path).getroot()
        except (OSError, ET.ParseError) as e:
            raise CheckError(f"{src}: {e}")
        if not root.tag.endswith("svg") or sum(1 for _ in root.iter()) < 50:
            raise CheckError(f"{src}: not a drawn SVG plot")
    plot_dir = os.path.join(run_dir, "plots")
    on_disk = sorted(os.listdir(plot_dir)) if os.path.isdir(plot_dir) else []
    if sorted(os.path.basename(s) for s in parser.srcs) != on_disk:
        raise CheckError(f"{name} shows {parser.srcs}, plots/ holds {on_disk}")


def screenshot(view, png_path):
    """The screenshot (report/screenshot, 1000 px wide) shows the verdict
    badge near the top, a curve in every column's colour, and no blank band
    above the end of the page."""
    width, height, counts, ink = png.colour_counts(
        png_path, [badge_colour(view.verdict)] +
        [COLOURS[i % len(COLOURS)] for i in range(len(view.columns))])
    if sum(1 for y in range(min(300, height)) if ink[y] > 0.5) < 30 or \
            counts[badge_colour(view.verdict)] < 10000:
        raise CheckError("no verdict badge in the first 300 px")
    for i, c in enumerate(view.columns):
        colour = COLOURS[i % len(COLOURS)]
        if (c.hgrm or c.timeseries) and counts[colour] < 1000:
            raise CheckError(f"no {c.key} curve ({colour}) on the page: the plots did not load")
    # A blank band between two drawn ones is a plot that did not show.
    end = max((y for y in range(height) if ink[y] > 0.05), default=0)
    for top in range(0, end - 400, 400):
        if max(ink[top:top + 400]) <= 0.05:
            raise CheckError(f"rows {top}-{top + 400} of the page are blank")
    return counts
