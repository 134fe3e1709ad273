"""results: the commands on a result directory of any experiment.

  report/summarize RUN_DIR   summary.json of a demo run
  report/summarize --testhost RUN_DIR
                             the same of a run on systemd test hosts
  report/render DIR          the table, the plots and the page
  report/check DIR [--screenshot]
                             is the report whole?

Each command's own help says more (report/render --help).
"""
import datetime
import json
import os
import sys

from report import check as checks
from report import cli, formats, table
from report.files import DataError, ToolError, output_dir, read_json, write_json, write_text

from .demo import judge as demo_judge
from .demo import page as demo_page
from .fleet import page as fleet_page
from .hostab import judge as hostab_judge
from .hostab import page as hostab_page
from .model import page as model_page


def load(run_dir):
    """The page module of the experiment that made RUN_DIR, and the View of
    its results, with its run spec (spec.json, the parameters the driver
    resolved) among the facts."""
    page, view = _load(run_dir)
    path = os.path.join(run_dir, "spec.json")
    if os.path.exists(path):
        spec = read_json(path)
        view.facts.append(("run spec (spec.json)",
                           json.dumps(spec, sort_keys=True, separators=(", ", ": "))))
    return page, view


def _load(run_dir):
    merged = os.path.join(run_dir, "merged.json")
    path = os.path.join(run_dir, "summary.json")
    if not os.path.exists(path) and os.path.exists(merged):
        return fleet_page, fleet_page.view_of(run_dir, formats.read(formats.Merged, merged))
    obj = read_json(path)
    if not isinstance(obj, dict):
        raise DataError(f"{path}: expected an object")
    if obj.get("kind") == "testhost":
        return hostab_page, hostab_page.view_of(run_dir, formats.parse(formats.HostSummary, obj, path))
    if any(k in obj for k in demo_judge.KERNEL_ORDER):
        return demo_page, demo_page.view_of(run_dir, formats.parse(formats.DemoSummary, obj, path))
    if any(k in obj for k, _ in model_page.MODEL_VARIANTS):
        return model_page, model_page.view_of(run_dir, formats.parse(formats.ModelSummary, obj, path))
    raise DataError(f"{path}: neither a demo (stock/patched/host) "
                    "nor a model (rwlock/pi_mutex/mutex) summary")


def summarize(argv):
    """summarize RUN_DIR: write RUN_DIR/summary.json from a demo run.
    summarize --testhost RUN_DIR: the same from a run of the scenario on
    systemd test hosts (lab/hostab/run).

    A demo's RUN_DIR holds spec.json (the run spec: the clock and every
    scenario parameter), run.json (the driver's record: run id, date,
    initramfs hash, kernels, phase timings) and one directory per kernel
    (stock, patched or host) with boot.json and results/. The summary
    names are the interface scripts and the README rely on: per kernel
    stalls, worst_stall_ms, relay_latency_us, loadgen_latency_us,
    throttled_periods; initramfs_sha256, params, verdict. A test host
    run's RUN_DIR holds stock/ and patched/ as the guests left them, and
    its spec.json (lab/hostab/judge.py); its summary has verdict.holds, and
    the spec's scenario parameters as params.

    Exit status: 0 written; 64 bad command line; 65 a result file is
    missing or malformed, or summary.json is there as something other
    than a file (a link is never written through)."""
    ap = cli.Parser(prog="summarize", description="Combine the per-kernel results of a demo run.")
    ap.add_argument("dir", help="the run directory")
    ap.add_argument("--testhost", action="store_true",
                    help="a run on systemd test hosts (lab/hostab/run)")
    args = ap.parse_args(argv)
    try:
        if args.testhost:
            s = hostab_judge.build(args.dir)
        else:
            s = demo_judge.build(args.dir)
        write_json(os.path.join(args.dir, "summary.json"), s, indent=2)
    except DataError as e:
        print(f"summarize: {e}", file=sys.stderr)
        return 65
    return 0


def render(argv):
    """render DIR: the report of one result directory.

    DIR holds a summary.json: a demo run (stock/patched kernels, or one host
    run) or the userspace model (rwlock/pi_mutex/mutex). Prints the
    side-by-side table and the verdict, and writes DIR/table.txt,
    DIR/plots/*.svg and DIR/report.html.

    Exit status: 0 written; 64 bad command line; 65 a result file is missing
    or malformed; 69 gnuplot is missing or failed."""
    ap = cli.Parser(prog="render", description="Write the table, plots and HTML page of a result directory.")
    ap.add_argument("dir", help="a result directory with a summary.json")
    ap.add_argument("--no-html", action="store_true", help="print the table only")
    args = ap.parse_args(argv)
    try:
        page, view = load(args.dir)
        text = table.render(view)
        write_text(os.path.join(args.dir, "table.txt"), text)
        sys.stdout.write(text)
        if args.no_html:
            return 0
        made = page.draw(view, output_dir(os.path.join(args.dir, "plots")))
        now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
        out = os.path.join(args.dir, "report.html")
        write_text(out, page.html(view, made, now))
        print(f"report: {os.path.abspath(out)}")
        return 0
    except DataError as e:
        print(f"render: {e}", file=sys.stderr)
        return 65
    except ToolError as e:
        print(f"render: {e}", file=sys.stderr)
        return 69


def check(argv):
    """check DIR [--screenshot]: is the report of a result directory whole?

    The summary, table, page and plots must exist and parse, and the page
    must show exactly the plots in DIR/plots. With --screenshot, headless
    Chromium renders the page into DIR/report.png, and the picture must show
    the verdict badge at the top and every column's curves.

    Exit status: 0 whole; 1 something is missing (said on stderr); 64 bad
    command line; 69 chromium is not installed."""
    ap = cli.Parser(prog="check", description="Check the report files of a result directory.")
    ap.add_argument("dir")
    ap.add_argument("--screenshot", action="store_true",
                    help="also render the page in headless Chromium and look at it")
    args = ap.parse_args(argv)
    try:
        try:
            _, view = load(args.dir)
        except DataError as e:
            raise checks.CheckError(str(e))
        checks.files(args.dir, view)
        if args.screenshot:
            shot = os.path.join(args.dir, "report.png")
            rc = checks.shoot(os.path.join(args.dir, "report.html"), shot, 1000, 2600)
            if rc == 69:
                return 69
            if rc != 0:
                raise checks.CheckError(f"screenshot failed (exit {rc})")
            counts = checks.screenshot(view, shot)
            print(f"check: {shot} shows the verdict and the plots {counts}")
    except checks.CheckError as e:
        print(f"check: {args.dir}: {e}", file=sys.stderr)
        return 1
    print(f"check: {args.dir}: report whole")
    return 0


COMMANDS = {"summarize": summarize, "render": render, "check": check}


def main(argv):
    if not argv or argv[0] not in COMMANDS:
        print(__doc__.strip(), file=sys.stderr)
        return 64
    return COMMANDS[argv[0]](argv[1:])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
