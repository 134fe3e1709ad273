#!/usr/bin/env python3
"""report/check's picture checks on screenshots of one's choosing
(tests/integration/report_screenshot.sh: a page whose plots did not load,
the "why" timelines).

  mk/py tests.pylib.report_picture refused RUN_DIR PNG
      exit 0 when the picture check (report.check.screenshot) refuses
      PNG as the page of the result directory RUN_DIR, printing why; 1 when
      it passes it
  mk/py tests.pylib.report_picture why KERNEL CHAIN_JSON SVG
      draw the timeline of one chain (lab.ktrace.page.timeline) into SVG
  mk/py tests.pylib.report_picture boost PNG
      exit 0 printing the width of the boost's bar in a screenshot of a
      timeline (lab.ktrace.page.boost_drawn); 1, saying so, when it has none
"""
import argparse
import json
import sys

from lab import results
from lab.ktrace import page as why
from report import check


def refusal(run_dir, png):
    """Why the picture check refuses PNG as RUN_DIR's page; None when it passes."""
    try:
        check.screenshot(results.load(run_dir)[1], png)
    except check.CheckError as e:
        return str(e)
    return None


def main(argv):
    p = argparse.ArgumentParser(prog="report_picture.py", description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("refused")
    r.add_argument("run_dir")
    r.add_argument("png")
    w = sub.add_parser("why")
    w.add_argument("kernel")
    w.add_argument("chain")
    w.add_argument("svg")
    b = sub.add_parser("boost")
    b.add_argument("png")
    a = p.parse_args(argv)
    if a.cmd == "why":
        with open(a.chain, encoding="utf-8") as f:
            why.timeline(a.kernel, json.load(f), a.svg)
        return 0
    if a.cmd == "boost":
        try:
            print(f"the boost's bar: {why.boost_drawn(a.png)} px")
        except check.CheckError as e:
            print(f"report_picture.py boost: {e}", file=sys.stderr)
            return 1
        return 0
    reason = refusal(a.run_dir, a.png)
    if reason is None:
        print("report_picture.py refused: the picture check passed %s as the page of %s"
              % (a.png, a.run_dir), file=sys.stderr)
        return 1
    print("as expected: %s" % reason)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
