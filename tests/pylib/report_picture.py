#!/usr/bin/env python3
"""report/check's picture check on a screenshot of one's choosing
(tests/integration/report_screenshot.sh: a page whose plots did not load).

  mk/py tests.pylib.report_picture refused RUN_DIR PNG
      exit 0 when the picture check (report.check.screenshot) refuses
      PNG as the page of the result directory RUN_DIR, printing why; 1 when
      it passes it
"""
import argparse
import sys

from lab import results
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
    a = p.parse_args(argv)
    why = refusal(a.run_dir, a.png)
    if why is None:
        print("report_picture.py refused: the picture check passed %s as the page of %s"
              % (a.png, a.run_dir), file=sys.stderr)
        return 1
    print("as expected: %s" % why)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
