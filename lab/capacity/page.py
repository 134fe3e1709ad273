"""page: report/capacity, the report of a make capacity run.

  report/capacity RUN_DIR [--check [--no-screenshot]]

RUN_DIR is what lab/capacity/run leaves: run.json and, per kernel
(stock, patched), boot.json and results/grid/q<QUOTA>-c<RATE>/sweep.json.
Writes RUN_DIR/capacity.json (the interface: slo, headline,
kernels.<k>.by_quota[].{cpu_quota_pct, capacity_pps, steps}), table.txt,
plots/*.svg and capacity.html, and prints the table with the headline last.
--check instead checks those files and, unless told not to (or without
chromium), a headless Chromium screenshot of the page (capacity.png).

Exit status: 0 done; 1 the check failed; 64 bad command line; 65 a result
file is missing or malformed; 69 gnuplot is missing or failed.
"""
import datetime
import os
import shutil
import sys

from report import capacity, cli
from report.check import CheckError, shoot
from report.files import DataError, ToolError, write_json, write_text


def check(run_dir, screenshot):
    shot = None
    if screenshot and shutil.which("chromium"):
        shot = os.path.join(run_dir, "capacity.png")
        rc = shoot(os.path.join(run_dir, "capacity.html"), shot, 1000, 3000)
        if rc != 0:
            raise CheckError(f"screenshot failed (exit {rc})")
    elif screenshot:
        print("capacity: chromium not installed: the page was not looked at",
              file=sys.stderr)
    counts = capacity.check(run_dir, shot)
    print(f"capacity: {run_dir}: page whole" + (f"; {shot} shows {counts}" if shot else ""))


def main(argv=None):
    ap = cli.Parser(prog="capacity",
                    description="capacity.json, table, plots and page of a make capacity run.")
    ap.add_argument("dir", help="the run directory")
    ap.add_argument("--check", action="store_true", help="check the report instead of writing it")
    ap.add_argument("--no-screenshot", action="store_true", help="with --check: no Chromium")
    args = ap.parse_args(argv)
    try:
        if args.check:
            check(args.dir, not args.no_screenshot)
            return 0
        cap = capacity.build(args.dir)
        write_json(os.path.join(args.dir, "capacity.json"), cap, indent=2)
        text = capacity.table(cap)
        write_text(os.path.join(args.dir, "table.txt"), text)
        made = capacity.draw_all(cap, os.path.join(args.dir, "plots"))
        now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
        write_text(os.path.join(args.dir, "capacity.html"), capacity.render_page(cap, made, now))
        sys.stdout.write(text)
    except CheckError as e:
        print(f"capacity: {args.dir}: {e}", file=sys.stderr)
        return 1
    except DataError as e:
        print(f"capacity: {e}", file=sys.stderr)
        return 65
    except ToolError as e:
        print(f"capacity: {e}", file=sys.stderr)
        return 69
    return 0


if __name__ == "__main__":
    sys.exit(main())
