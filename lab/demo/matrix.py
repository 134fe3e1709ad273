"""matrix: make demo-matrix. The demo on each pair of kernels, one after
the other, then one page: a row per kernel (how it was obtained, its
ep->lock, its CFS throttle model as the kernel that ran has it), a column
per waiter (lab/demo/cells.py), one sentence per fix, and a row per pair
with make demo's verdicts, each linked to that demo's report.

  6.12           the default pair: Debian's linux-source-6.12 with the
                 project's config; stock is the same tree with the fix
                 reversed
  6.1            Debian 12's RT line: Debian's linux 6.1 source with its own
                 RT patches; stock is the fix reversed
  6.1.8-rt       the historical kernel: Debian's linux 6.1.8-1 as bookworm
                 released it (the rwlock as shipped), against Debian's own
                 signed RT image of today (kernel/debian-images.conf)
  debian13       Debian 13's signed 6.16.12 (neither change) against 6.17.13
                 (the epoll change), as shipped
  debian13-task  Debian 13's signed 6.18.12 against 7.3.4, both with both
                 changes (the task-based throttle of v6.18), as shipped
  7.3            Debian 13's linux-source-7.3 built: ep->lock an rwlock
                 again (the task-based throttle alone) against as shipped
  packages       the kernels of --stock-package and --patched-package
                 (as make demo takes them), when given

  lab/demo/matrix [--results DIR] [--pairs P,...] [--runs N[,M]]
                  [--stock-package DEB[,DEB] --patched-package DEB[,DEB]] [FLAG VALUE]...
  lab/demo/matrix --again RUN [MORE...]
                  RUN's matrix.json, .md and .html made anew from its demos' run
                  directories (no guest boots; from its demos' logs if it stopped
                  before its end), with the pairs of each MORE run added

Flags go to every lab/demo/run (scenario parameters, --trace, --clock).
Each pair runs the demo N times with the co-tenant's sends waking the
relay over AF_UNIX (--af-unix 1, the demo's default; N 1), then M times
over loopback UDP (--af-unix 0; M 1, 0: none), each run on its own
trajectory (its run id salts the guest's start).
Writes DIR/<date>-<id>-demo-matrix/ (DIR: results/ in the source tree)
with each pair's run directories, matrix.json, matrix.md and matrix.html,
and points DIR/latest-demo-matrix at it.
Exit status: 0 every demo has its report; 1 one has none (its cell says
why); 2 bad arguments; 7 a kernel package the guest cannot run on;
65 (--again) RUN has neither a matrix.json this program wrote nor a
demo's log.
"""
import io
import json
import os
import re
import subprocess
import sys
import time

from report import formats
from report.files import DataError

from ..labkit import TOP, kernels
from ..labkit.run import LabError, Run, main, write_json
from ..labkit.spec import Parser
from . import cells, matrix_page
from .cells import WAKERS

PROG = "lab/demo/matrix"
HERE = os.path.dirname(os.path.realpath(__file__))
# pair -> (what it is, where its stock and its patched image come from: a
# kernel line of kernel/lines/, "debian:" and a name of
# kernel/debian-images.conf, or "package" (--stock-package/--patched-
# package); the kernel line the run records, None for images given)
PAIRS = {
    "6.12": ("6.12 reconstruction (the default pair)", "6.12", "6.12", "6.12"),
    "6.1": ("6.1-rt reconstruction (Debian 12's RT line)", "6.1", "6.1", "6.1"),
    "6.1.8-rt": ("historical 6.1.8-rt against Debian's signed 6.1 RT image", "6.1.8-rt",
                 "debian:6.1-rt-signed", "6.1"),
    "debian13": ("Debian 13's signed 6.16.12 against 6.17.13, as shipped", "debian:6.16-rt-signed",
                 "debian:6.17-rt-signed", None),
    "debian13-task": ("Debian 13's signed 6.18.12 against 7.3.4, as shipped (both changes each)",
                      "debian:6.18-rt-signed", "debian:7.3-rt-signed", None),
    "7.3": ("7.3 built: ep->lock an rwlock again against as shipped", "7.3", "7.3", "7.3"),
}
PACKAGES = ("the packages given (--stock-package, --patched-package)", "package", "package", None)
DEFAULT_PAIRS = tuple(PAIRS)


def pair_info(pair):
    return PACKAGES if pair == "packages" else PAIRS[pair]


def why(run_dir):
    """What the stock kernel's trace says (its guest's chains.json,
    lab/ktrace), in a line; None when the run had the trace off."""
    path = os.path.join(run_dir, "stock", "results", "chains.json")
    if not os.path.exists(path):
        return None
    try:
        c = formats.read(formats.Chains, path)
    except DataError:
        return None
    t, w = c.totals, c.contentions
    parts = [f"{t.stalls_explained} of {t.stalls} stalls explained"] if t.stalls else []
    if w.rt_waits:
        parts.append(f"{w.rt_waits} RT waits on ep->lock, longest {w.rt_wait_us['max'] / 1000:.2f} ms")
        if w.lent_by_others:
            by = ", ".join(f"{k} ({n})" for k, n in (w.lent_by or {}).items())
            parts.append(f"{w.lent_by_others} ended when another task lent the throttled holder "
                         f"its priority through another lock: {by}")
    return "; ".join(parts) or "no RT wait on ep->lock"


def demo(run_dir, waker):
    """What one demo saw: its summary's verdict and each kernel's figures
    (the pair's row), and each kernel's observation (the table's cells)."""
    path = os.path.join(run_dir, "summary.json")
    s = formats.read(formats.DemoSummary, path)
    d = {"run": os.path.basename(run_dir), "verdict": s.verdict, "headline": s.headline,
         "stock_trace": why(run_dir)}
    obs = {}
    for k in ("stock", "patched"):
        ks = getattr(s, k)
        if ks is None:
            raise DataError(f"{path}: {k}: missing (not a run of both kernels)")
        lat = ks.rt_latency_us
        d[k] = {"kernel": ks.kernel, "stalls": ks.stalls, "worst_stall_ms": ks.worst_stall_ms,
                "rt_p99_9_ms": None if lat is None else lat.p99_9 / 1000,
                "rt_max_ms": None if lat is None else lat.max / 1000}
        # the cells read the summary whole, as the writer wrote it
        obs[k] = cells.observe(formats.raw(s), k, waker)
    return d, obs


def verdict(demos):
    """A pair's verdict from its demos' ({waker: [demo]}; lab/demo/README.md,
    "The kernel pairs"): not fixed when the patched kernel failed in any;
    fixed when a waker showed the stock kernel's inversion and the patched
    kernel was clean with it; otherwise invalid, then incomplete, if a
    demo was, else no effect."""
    ds = [d for runs in demos.values() for d in runs]
    words = [d.get("verdict") for d in ds if "error" not in d]
    if len(words) < len(ds) or not ds:
        words.append("incomplete")
    for w in ("not fixed", "fixed", "invalid", "incomplete"):
        if w in words:
            return w
    return "no effect"


def waker_verdict(runs):
    """One waker's demos of a pair in words: "fixed" when all agree, else
    each verdict with how many runs gave it ("fixed 2 of 3, no effect 1 of
    3")."""
    words = [d.get("verdict") or "no report" if "error" not in d else "no report" for d in runs]
    if not words:
        return "not run"
    if len(set(words)) == 1:
        return words[0]
    return ", ".join(f"{w} {words.count(w)} of {len(words)}" for w in sorted(set(words), key=words.index))


def pair_row(pair, runs):
    """One pair's row from RUNS, {waker: [each demo's run directory, or the
    error that left it without one]}, and its kernels' observations
    ({"stock": [...], "patched": [...]})."""
    r = {"pair": pair, "what": pair_info(pair)[0], "demos": {}}
    obs = {"stock": [], "patched": []}
    for waker, got in runs.items():
        r["demos"][waker] = []
        for x in got:
            if isinstance(x, LabError):
                r["demos"][waker].append({"error": str(x)})
                continue
            try:
                d, o = demo(x, waker)
            except DataError as e:
                r["demos"][waker].append({"error": str(e)})
                continue
            r["demos"][waker].append(d)
            for k in obs:
                obs[k].append(o[k])
    r["verdict"] = verdict(r["demos"])
    r["wakers"] = {w: waker_verdict(ds) for w, ds in r["demos"].items()}
    return r, obs


def fixes_of(rows):
    """matrix.json's fixes: for each, its sentence and the comparisons it
    is made of (cells.comparisons)."""
    comps = cells.comparisons(rows)
    return {fix: {"sentence": cells.sentence(fix, cs), "comparisons": cs} for fix, cs in comps.items()}, comps


def images(run, pair, given):
    """The stock and patched images of PAIR, built, fetched or unpacked
    first if need be (GIVEN: the packages of the pair "packages")."""
    if pair == "packages":
        return kernels.packages(run, given)
    _, stock_from, patched_from, _ = PAIRS[pair]
    if stock_from == patched_from:
        return kernels.images(run, stock_from)

    def one(where, kind):
        if where.startswith("debian:"):
            return kernels.debian_image(run, where.removeprefix("debian:"))
        return kernels.historical(run, where) if kind == "stock" else kernels.images(run, where)[kind]
    return {"stock": one(stock_from, "stock"), "patched": one(patched_from, "patched")}


def parse(argv):
    ap = Parser(prog=PROG, description="make demo on each kernel pair, and one page of them",
                epilog="Other flags go to every lab/demo/run.")
    ap.add_argument("--results", default=os.path.join(TOP, "results"), help="where run directories go")
    ap.add_argument("--pairs", help=f"which pairs, in order ({','.join(DEFAULT_PAIRS)}; "
                    "packages: the kernels of --stock-package and --patched-package; "
                    "default: all, packages too when given)")
    ap.add_argument("--runs", default="1,1", help="N[,M]: each pair's demos with the AF_UNIX waker, "
                    "and with the loopback UDP waker (0: none); default 1,1")
    ap.add_argument("--stock-package", help="the stock kernel of the pair 'packages' (DEB, or DEB,DEB)")
    ap.add_argument("--patched-package", help="its patched kernel")
    args, rest = ap.parse_known_args(argv)
    if bool(args.stock_package) != bool(args.patched_package):
        ap.error("give both --stock-package and --patched-package, or neither")
    known = DEFAULT_PAIRS + (("packages",) if args.stock_package else ())
    pairs = args.pairs.split(",") if args.pairs else list(known)
    bad = [p for p in pairs if p not in known]
    if bad:
        ap.error(f"--pairs: {','.join(bad)}: not one of {','.join(known)}"
                 + ("" if args.stock_package else " (packages needs --stock-package and --patched-package)"))
    try:
        runs = [int(x) for x in args.runs.split(",")]
    except ValueError:
        runs = []
    if len(runs) == 1:
        runs.append(1)
    if len(runs) != 2 or not 1 <= runs[0] <= 20 or not 0 <= runs[1] <= 20:
        ap.error(f"--runs {args.runs}: expected N[,M], N 1-20 AF_UNIX demos and M 0-20 loopback UDP ones")
    driver = ("--kernel-line", "--stock-image", "--patched-image", "--af-unix", "--kernels")
    chosen = [a for a in rest if a.split("=")[0] in driver]
    if chosen:
        ap.error(f"{chosen[0]}: the matrix chooses each pair's kernels and wakers")
    given = {"stock": args.stock_package, "patched": args.patched_package}
    return args.results, pairs, dict(zip(WAKERS, runs)), given, rest


def run_demo(run, pair, imgs, waker, i, rest):
    """One demo of PAIR with WAKER (its I-th): its run directory, or a
    LabError that says why it has none."""
    log = run.path(f"demo-{pair}-{waker}-{i}.log")
    line = pair_info(pair)[3]
    argv = ([os.path.join(HERE, "run"), "--results", run.dir] + (["--kernel-line", line] if line else [])
            + ["--stock-image", imgs["stock"], "--patched-image", imgs["patched"]] + WAKERS[waker][1] + rest)
    with open(log, "w", encoding="utf-8") as f:
        rc = subprocess.run(argv, stdout=f, stderr=subprocess.STDOUT).returncode
    latest = os.path.realpath(run.path("latest"))
    if rc != 0 or not os.path.exists(os.path.join(latest, "summary.json")):
        return LabError(1, f"lab/demo/run exited {rc} (log: {log})")
    return latest


def document(pairs, rows, runs):
    """matrix.json: the pairs (make demo's verdicts), the kernels (a row
    each, its cells), the fixes, and what they protect on 7.x."""
    fixes, comps = fixes_of(rows)
    return {"runs": runs, "pairs": pairs, "kernels": rows, "fixes": fixes,
            "on_7x": cells.on_7x(rows, comps)}, fixes


def tables(done):
    """The pairs' rows and the kernels' rows of DONE, [(pair, {waker: [a
    demo's run directory, or the LabError that left it without one]})]."""
    prows, krows = [], []
    for pair, got in done:
        r, obs = pair_row(pair, got)
        prows.append(r)
        krows += [cells.row(pair, k, obs[k]) for k in ("stock", "patched") if obs[k]]
    return prows, krows


def write(where, done, runs):
    """matrix.json, matrix.md and matrix.html into the directory WHERE, of
    DONE (tables()) and RUNS (the demos each pair was to run per waker);
    the kernels' rows and the fixes."""
    prows, krows = tables(done)
    doc, fixes = document(prows, krows, runs)
    write_json(os.path.join(where, "matrix.json"), doc)
    with open(os.path.join(where, "matrix.md"), "w", encoding="utf-8") as f:
        f.write(matrix_page.markdown(krows, prows, fixes, doc["on_7x"]))
    with open(os.path.join(where, "matrix.html"), "w", encoding="utf-8") as f:
        f.write(matrix_page.page(krows, prows, fixes, doc["on_7x"],
                                 time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), PROG))
    return krows, fixes


# demo-PAIR-WAKER-I.log, lab/demo/run's output for one demo of a matrix
# run, and the line that names its run directory.
DEMO_LOG = re.compile(r"demo-(.+)-(unix|udp)-(\d+)\.log")
RESULTS_LINE = re.compile(r"^results: (\S+)", re.M)


def _from_logs(where):
    """What a matrix run in WHERE that has no matrix.json (stopped before
    its end) ran, from its demos' logs: (done, runs). Pairs in PAIRS'
    order, a demo whose log names no run directory an error."""
    got = {}

    def numbered(n):
        return [int(x) if x.isdigit() else x for x in re.split(r"(\d+)", n)]
    for name in sorted(os.listdir(where), key=numbered):
        m = DEMO_LOG.fullmatch(name)
        if not m:
            continue
        with open(os.path.join(where, name), encoding="utf-8", errors="replace") as f:
            dirs = RESULTS_LINE.findall(f.read())
        ok = dirs and os.path.exists(os.path.join(dirs[-1], "summary.json"))
        got.setdefault(m.group(1), {}).setdefault(m.group(2), []).append(
            dirs[-1] if ok else LabError(1, f"no report (log: {os.path.join(where, name)})"))
    if not got:
        raise LabError(65, f"{where}: neither a matrix.json nor a demo's log (demo-PAIR-WAKER-N.log)")
    order = list(DEFAULT_PAIRS) + ["packages"]
    done = [(p, {w: got[p][w] for w in WAKERS if w in got[p]})
            for p in sorted(got, key=lambda p: order.index(p) if p in order else len(order))]
    runs = {w: max(len(g.get(w, [])) for _, g in done) for w in WAKERS}
    return done, runs


def recorded(where):
    """What the matrix run in the directory WHERE ran: (done, runs) as
    write() takes them, each demo's run directory, from its matrix.json
    or, when it stopped before writing one, from its demos' logs."""
    path = os.path.join(where, "matrix.json")
    if not os.path.exists(path) and os.path.isdir(where):
        return _from_logs(where)
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
        done = [(p["pair"], {w: [os.path.join(where, d["run"]) if d.get("run") else LabError(1, d["error"])
                                 for d in ds] for w, ds in p["demos"].items()})
                for p in doc["pairs"]]
        return done, doc["runs"]
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise LabError(65, f"{path}: not a matrix this program wrote ({e})")


def _linked(where, got):
    """GOT's run directories as links in WHERE (each demo's page linked
    from WHERE's as from its own run's)."""
    out = {}
    for w, xs in got.items():
        out[w] = []
        for x in xs:
            if not isinstance(x, LabError) and \
                    os.path.realpath(os.path.dirname(x)) != os.path.realpath(where):
                link = os.path.join(where, os.path.basename(x))
                if not os.path.lexists(link):
                    os.symlink(os.path.relpath(os.path.realpath(x), where), link)
                x = link
            out[w].append(x)
    return out


def again(where, more=(), out=sys.stdout):
    """--again DIR [MORE...]: the matrix's files of DIR made anew from its
    demos' run directories (no guest boots), with the pairs of each MORE
    matrix run added (a pair DIR has too, replaced): a page of this
    version of the code from the runs of an earlier one, or of the pairs
    of several runs."""
    done, runs = recorded(where)
    for m in more:
        d2, r2 = recorded(m)
        for pair, got in d2:
            done = [x for x in done if x[0] != pair] + [(pair, _linked(where, got))]
        runs = {w: max(runs.get(w, 0), r2.get(w, 0)) for w in WAKERS}
    krows, fixes = write(where, done, runs)
    say(krows, fixes, out)
    print(f"page: {os.path.join(where, 'matrix.html')}", file=out)
    return 0


def say(krows, fixes, out):
    """The terminal's lines: a line per kernel, a sentence per fix."""
    for r in krows:
        print(f"  {r['kernel']} ({r['lock']}, {cells.model_name(r['model'])}): " + "; ".join(
            f"{w} {c['word']}" for w, c in r["cells"].items() if c), file=out)
    for f in fixes.values():
        print(f["sentence"], file=out)


def matrix(argv):
    if argv[:1] == ["--again"]:
        if len(argv) < 2 or any(a.startswith("-") for a in argv[1:]):
            print(f"usage: {PROG} --again DIR [MORE...] (demo-matrix runs' directories)", file=sys.stderr)
            return 2
        return again(argv[1], argv[2:])
    results, pairs, runs, given, rest = parse(argv)
    demos = sum(runs.values())
    run = Run(PROG, results, kind="demo-matrix", phases=(1 + demos) * len(pairs) + 1)
    done, status = [], 0
    for pair in pairs:
        what = pair_info(pair)[0]
        try:
            with run.phase(f"kernels of {what}", "seconds from the cache, a minute to fetch a Debian image, "
                           "about 25 minutes to build a line on 2 cores"):
                imgs = images(run, pair, given)
        except LabError as e:
            if e.code == kernels.EX_PACKAGE:
                raise
            done.append((pair, {w: [e] * n for w, n in runs.items() if n}))
            status = 1
            continue
        got = {}
        for waker, (name, _) in WAKERS.items():
            got[waker] = []
            for i in range(1, runs[waker] + 1):
                with run.phase(f"make demo, {name} waker, run {i} of {runs[waker]}: {what}",
                               "5-10 minutes with the trace, on 2 free cores"):
                    x = run_demo(run, pair, imgs, waker, i, rest)
                    if isinstance(x, LabError):
                        status = 1
                        run.say(f"      no report: {x}")
                    got[waker].append(x)
        got = {w: x for w, x in got.items() if x}
        done.append((pair, got))
        r, _ = pair_row(pair, got)
        for waker, ds in r["demos"].items():
            for d in ds:
                if "error" not in d:
                    run.say(f"      {WAKERS[waker][0]}: {d['verdict']}: {d['headline']}")
        run.say(f"      the pair: {r['verdict'].upper()}")
    with run.phase("the matrix: matrix.json, matrix.md, matrix.html", "a second"):
        krows, fixes = write(run.dir, done, runs)
    run.say("")
    lines = io.StringIO()
    say(krows, fixes, lines)
    run.say(lines.getvalue().rstrip("\n"))
    run.finish({"pairs": pairs, "runs": runs, "status": status})
    run.say(f"page: {run.path('matrix.html')}")
    return status


if __name__ == "__main__":
    sys.exit(main(PROG, matrix))
