"""lab/capacity/run: make capacity. What the fix buys, in RT load rate at a
latency objective: for each repeat, a guest per kernel (stock and patched
PREEMPT_RT) searches, for each co-tenant quota (and co-tenant rate), the
highest RT load rate that meets the objectives (lab/capacity/grid,
loadgen sweep --search); each repeat is a trajectory of its own (its own
boots, its own salt), so that the interval over them is what the next
run can be held to. Then report/capacity writes capacity.json, the table
and the page.

  lab/capacity/run [--quick] [--results DIR] [--PARAMETER VALUE]...
                   [--stock-image BZIMAGE --patched-image BZIMAGE]

Every parameter (--help lists them with their defaults) goes once into
spec.json, which the guests read from their initramfs and the report from
the results directory. --quick is the small plan of make test (one
repeat, one search from 117 to 468 pps, a 10 % quota, 8 s steps); parameters given
beside it still win. Writes DIR/<date>-<id>-capacity/ (DIR: results/ in the
source tree) and points DIR/latest-capacity at it.

Exit status: 0 the report is written (whatever it says); 2 bad arguments;
3 the build failed; 4 no kernels; 5 no initramfs; 6 no report.
"""
import glob
import os
import re
import subprocess
import sys
import time

from ..labkit import TOP, guest, kernels
from ..labkit.run import EX_REPORT, LabError, Run, last_line, main, write_json
from ..labkit.spec import Param, Parser, SpecError, flags, like, refusal, resolve, scenario

PROG = "lab/capacity/run"
HERE = os.path.dirname(os.path.realpath(__file__))
# A traced guest's RAM: the grid gives each CPU's trace buffer a quarter of
# it (a cell with 11 million events needed some 350 MiB on the relay's CPU).
TRACED_MEMORY_MB = 2048

# The default grid; lab/capacity/README.md says why these values. The
# lowest RT load is light on purpose: on the stock kernel a light RT load
# is what the stall catches. The co-tenant's parameters are demo-scenario's
# (the grid runs it for each cell): their names, ranges and units come
# from its table, the defaults of the period and the senders too; the
# scenario's other parameters are its own for the clock (the co-tenant's
# waker among them), resolved once into spec.json's "scenario".
PARAMS = [
    Param("clock", "str", "virtual", "the guests' clock (kernel/vm/boot)", choices=("virtual", "host")),
    Param("guest_timeout_s", "int", 0, "a guest not done by then counts as hung; "
          "0: 40 host seconds per guest second of the longest searches, + 180", lo=0),
    Param("rt_rate_from_pps", "int", 117, "the RT load a search starts at", lo=1, hi=1000000),
    Param("rt_rate_to_pps", "int", 60000, "the highest RT load a search may try: a search that "
          "meets it says 'at least', a ceiling of the load generator's", lo=1, hi=1000000),
    Param("resolution_pct", "int", 5, "a search bisects until the rate that missed is within this "
          "of the one that met", lo=1, hi=100),
    Param("repeats", "int", 3, "independent repeats of each kernel's grid, each a guest of its own "
          "(its own boot and salt) with one search per cell: a cell's capacity is the median of its "
          "repeats with the interval over them, or unstable when some found one and some none",
          lo=1, hi=20),
    Param("step_s", "int", 4, "seconds of each step", lo=1, hi=600),
    Param("step_samples", "int", 40000, "a step whose rate sends this many datagrams in less than "
          "step_s ends there (at least 1 s): a high rate's p99.9 needs no more, and the steps "
          "near the patched kernel's capacity cost a third; 0: every step lasts step_s",
          lo=0, hi=100000000),
    like("demo-scenario", "cpu_quota_pct", kind="ints", default=[10, 25, 50],
         help="the co-tenant's cpu.max quotas, % of one CPU per period"),
    like("demo-scenario", "rate_pps", name="cotenant_rate_pps", kind="ints", default=[30000],
         help="the co-tenant's rates"),
    Param("cotenant_demand_pct", "int", 150, "the co-tenant's CPU demand, % of its quota: each "
          "sender busy-waits before each send for its share of it, so that every quota is "
          "filled and throttled; 0: no busy-wait (30000 pps alone fills only a 10 % quota)",
          lo=0, hi=1000),
    like("demo-scenario", "period_us", help="the cpu.max period"),
    like("demo-scenario", "senders", help="the co-tenant's sender threads"),
    like("demo-scenario", "af_unix", default=None,
         help="1: the co-tenant wakes the relay over AF_UNIX, 0: over loopback UDP (the demo's two "
              "wakers, lab/demo/README.md); unset: the scenario's own for the clock (AF_UNIX on the "
              "virtual one)"),
    Param("planned_rate_pps", "int", 117, "the RT load whose tightest co-tenant quota each "
          "kernel's quota search finds", lo=1, hi=1000000),
    Param("quota_search", "str", "on", "after the cells, search each kernel's tightest co-tenant "
          "quota for planned_rate_pps", choices=("on", "off")),
    Param("threshold_demand_pct", "int", 0, "in the quota search the co-tenant busy-waits for this "
          "share of one CPU on top of its sends (0: none; its sends alone stalled the stock kernel "
          "below a 46 % quota), so "
          "that a quota below its demand throttles it and one above does not", lo=0, hi=99),
    like("demo-scenario", "cpu_quota_pct", name="threshold_quota_pct", kind="ints", default=[10, 95],
         help="the lowest and the highest quota the quota search tries"),
    Param("threshold_resolution_pct", "int", 5, "the quota search bisects until the quota that met "
          "is within this many points of the one that missed", lo=1, hi=50),
    Param("rt_priority", "int", 40, "the RT client's SCHED_FIFO priority", lo=1, hi=98),
    Param("pause_ms", "int", 200, "the pause between two steps", lo=0, hi=60000),
    Param("trace", "str", "on", "record each cell's kernel trace and say, for each step that missed, "
          "whether it was the ready-list lock held by a throttled task, the relay's CPU, or loss "
          "(lab/ktrace)", choices=("on", "off")),
]
# The quick plan's rates are off the quota period's grid on purpose. At a
# rate that is a whole number of datagrams per 10 ms period (300, 500,
# 1000 pps) the RT client's sends fall at the same phases of every period,
# and whether they keep the stall from forming is settled once for the
# whole step. At 117 pps (117 and 100 have no common factor) the phase
# moves every period and the stalls come at a steady rate, about one a
# second; an 8 s step expects about eight. One search from 117 to 468 pps
# (117, 234, 468: three steps where every one meets) and one quota, the
# tightest: what a guest costs to emulate grows with the co-tenant's CPU,
# and so does its trace (10 s steps cost make test a 1000 s lane).
# At 10 % the co-tenant's 30000 pps fill the quota without a busy-wait,
# which would only thin out its time in ep_poll_callback.
QUICK = {"rt_rate_from_pps": 117, "rt_rate_to_pps": 468, "repeats": 1,
         "cpu_quota_pct": [10], "step_s": 8, "planned_rate_pps": 117,
         "cotenant_demand_pct": 0, "quota_search": "off"}
DEFAULT_SLO = ["p99.9=2ms"]
# What lab/capacity/grid gives demo-scenario for each cell (its rate, quota
# and busy-wait, and a run longer than the searches): left out of the
# spec's scenario, which says everything else the co-tenant ran with.
CELL_KEYS = ("rate_pps", "cpu_quota_pct", "spin_us", "duration_s", "grace_s")
# The co-tenant of a cell has no RT ticker: the RT client is the load.
SCENARIO = {"ticker_us": 0}
SLO = re.compile(r"^(p[0-9]+(\.[0-9]+)?|max)=[0-9]+(\.[0-9]+)?(us|ms|s)$")


def parse(argv):
    ap = Parser(prog=PROG, description="stock vs patched: RT load meeting a latency objective")
    ap.add_argument("--quick", action="store_true", help="the small grid of make test")
    ap.add_argument("--slo", action="append", metavar="PCT=LATENCY",
                    help=f"an objective, repeatable (default {' '.join(DEFAULT_SLO)})")
    ap.add_argument("--results", default=os.path.join(TOP, "results"), help="where run directories go")
    ap.add_argument("--stock-image", help="boot this stock image")
    ap.add_argument("--patched-image", help="boot this patched image")
    flags(ap, PARAMS)
    args = ap.parse_args(argv)
    if bool(args.stock_image) != bool(args.patched_image):
        ap.error("give both --stock-image and --patched-image, or neither")
    for f in (args.stock_image, args.patched_image):
        if f and not os.path.isfile(f):
            ap.error(f"{f}: no such file")
    for s in args.slo or []:
        if not SLO.match(s):
            ap.error(f"--slo '{s}': expected PERCENTILE=LATENCY, e.g. p99.9=2ms")
    try:
        spec = resolve(args, PARAMS, QUICK if args.quick else None)
    except SpecError as e:
        ap.error(str(e))
    if spec["rt_rate_from_pps"] > spec["rt_rate_to_pps"]:
        ap.error("--rt-rate-from-pps is above --rt-rate-to-pps")
    q = spec["threshold_quota_pct"]
    if len(q) != 2 or q[0] >= q[1]:
        ap.error(f"--threshold-quota-pct {','.join(map(str, q))}: two quotas, the lowest first")
    # cpu.max takes no quota under 1000 us: demo-scenario, which sets the
    # quota in the guest, says so here, before the build and the boot
    for name in ("cpu_quota_pct", "threshold_quota_pct"):
        why = refusal("demo-scenario", cpu_quota_pct=min(spec[name]), period_us=spec["period_us"])
        if why:
            ap.error(f"--{name.replace('_', '-')} {min(spec[name])}: {why}")
    spec["slo"] = args.slo or DEFAULT_SLO
    try:
        own = {k: spec.pop(k) for k in ("period_us", "senders", "af_unix")}
        scen = spec_scenario(spec["clock"], dict(SCENARIO, **{k: v for k, v in own.items() if v is not None}),
                             spec)
    except SpecError as e:
        ap.error(str(e))
    return args, spec, scen


def spec_scenario(clock, values, grid):
    """The scenario every cell runs (demo-scenario's, resolved for CLOCK
    from VALUES and its defaults, checked with the grid's tightest cell),
    without what the grid gives each cell: spec.json's "scenario"."""
    cell = {"cpu_quota_pct": min(grid["cpu_quota_pct"]), "rate_pps": min(grid["cotenant_rate_pps"])}
    return {k: v for k, v in scenario(clock, dict(values, **cell)).items() if k not in CELL_KEYS}


def max_steps(grid):
    """The most steps one search can take (as lab/capacity/grid runs
    them, from the lowest rate): the first, doublings to the highest rate,
    then halvings of a gap of at most 100 % to the resolution."""
    n, r, g = 1, grid["rt_rate_from_pps"], 100
    while r < grid["rt_rate_to_pps"]:
        r, n = r * 2, n + 1
    while g > grid["resolution_pct"]:
        g, n = (g + 1) // 2, n + 1
    return n


def max_probes(grid):
    """The most probes of the quota search: the highest quota, the lowest,
    then halvings of their gap to the resolution (lab/capacity/grid)."""
    if grid["quota_search"] != "on":
        return 0
    n, (lo, hi) = 2, grid["threshold_quota_pct"]
    while hi - lo > grid["threshold_resolution_pct"]:
        lo, n = (hi + lo) // 2, n + 1
    return n


def plural(n, one, many=None):
    return f"{n} {one if n == 1 else many or one + 's'}"


def progress(out):
    """Where the guest writing to OUT is, from its console: (cell, steps
    taken in all cells, steps taken in this cell, the rate, whether this
    cell's search has ended, the quota search's probe: 0 before it) or
    None before the first cell."""
    try:
        with open(os.path.join(out, "console.log"), encoding="utf-8", errors="replace") as f:
            text = f.read()
    except OSError:
        return None
    cells = [m.start() for m in re.finditer(r"^grid: cell \d+ of \d+", text, re.M)]
    if not cells:
        return None
    step = re.compile(r"loadgen sweep: search \d+ of \d+, step \d+: (\S+ pps)")
    mine = step.findall(text, cells[-1])
    ended = re.search(r"^search \d+: ", text[cells[-1]:], re.M) is not None
    probes = re.findall(r"^grid: threshold probe (\d+):", text, re.M)
    return (len(cells), len(step.findall(text)), len(mine), mine[-1] if mine else "-", ended,
            int(probes[-1]) if probes else 0)


class Guest:
    """One guest of the run: a kernel's grid in one repeat, in its own
    directory (KERNEL/rREPEAT), booted with lab.repeat=REPEAT on its command
    line (lab/capacity/init takes that repeat's salt from the spec)."""

    def __init__(self, run, kernel, repeat):
        self.kernel, self.repeat = kernel, repeat
        self.name = f"{kernel} r{repeat}"
        self.out = run.path(kernel, f"r{repeat}")
        self.proc = self.t0 = self.wall_s = None
        self.began = None       # when its first step began (s since the guests' phase)

    def boot(self, image, initrd, clock, timeout, memory):
        self.t0 = time.monotonic()
        self.proc = guest.boot(image, initrd, self.out, clock, timeout, memory_mb=memory,
                               append=f"lab.repeat={self.repeat}")

    def running(self):
        return self.proc is not None and self.proc.poll() is None


def watch(run, guests, start, slots, ncells, steps, probes, explainer=None):
    """Every guest of GUESTS, at most SLOTS at once (an emulated guest keeps
    a host CPU busy), START(guest) booting each in turn; their progress, a
    line when one moves on and every 30 s otherwise, with the time left
    at most: the wall seconds a step took on that kernel so far, times the
    steps to go at most (STEPS a cell, PROBES for the quota search) of
    the running guests and of those still to boot, shared by the slots.
    A search ends at its first miss of the lowest rate, at the highest
    rate or at its resolution, usually well before the most. A guest that
    ended has its cells' traces explained (EXPLAINER) on the host CPUs
    the running guests leave."""
    t0, last, shown = time.monotonic(), None, 0.0
    todo, done = list(guests), []
    pace = {}       # kernel -> (steps seen, wall seconds a step)
    per_guest = ncells * steps + probes
    while todo or any(g.running() for g in guests):
        while todo and sum(g.running() for g in guests) < slots:
            g = todo.pop(0)
            start(g)
            run.say(f"      {time.monotonic() - t0:.0f} s: {g.name} booted")
        time.sleep(5)
        el = time.monotonic() - t0
        parts, where_all, left = [], [], 0.0
        for g in guests:
            if g.proc is None or g in done:
                continue
            if not g.running():
                done.append(g)
                g.wall_s = round(time.monotonic() - g.t0)
                run.say(f"      {el:.0f} s: {g.name} finished (exit {g.proc.returncode})")
                if explainer:
                    explainer.add(g)
                continue
            where = progress(g.out)
            if where is None:
                parts.append(f"{g.name}: booting")
                left += per_guest
                continue
            cell, total, here, rate, ended, probe = where
            where_all.append((g.name, cell, total, ended, probe))
            if total and g.began is None:
                g.began = el
            if total > 1:
                seen, _ = pace.get(g.kernel, (0, 0))
                if total > seen:
                    pace[g.kernel] = (total, (el - g.began) / (total - 1))
            togo = (ncells - cell) * steps + (0 if ended else steps - here + 1) + probes
            if probe:
                togo = probes - probe + 1
            left += togo
            doing = "ending the cell" if ended else f"step {here} ({rate})"
            parts.append(f"{g.name}: " + (f"quota search, probe {probe} of at most {probes}" if probe
                                          else f"cell {cell}/{ncells}, {doing}"))
        left += per_guest * len(todo)
        if pace:
            each = max(p for _, p in pace.values())
            estimate = f"~{each * left / slots:.0f} s left at most"
        else:
            estimate = "? s left"
        if where_all != last or el - shown >= 30:
            queued = f"; {len(todo)} to boot" if todo else ""
            run.say(f"      {el:.0f} s: {'; '.join(parts) or 'between guests'}{queued}; {estimate}")
            last, shown = where_all, el
        if explainer:
            explainer.pump((os.cpu_count() or 1) - sum(g.running() for g in guests))
    return round(time.monotonic() - t0)


class Explainer:
    """lab/ktrace/explain on every cell's trace, with its sweep, from the
    missed steps' spans alone: chains.json beside the co-tenant's results
    says each missed step's cause, and the stalls in them. A guest's cells
    are queued when it ends and explained while the other guests still
    run, on the CPUs they leave free. A cell whose trace cannot be read
    keeps loadgen's own account of its steps."""

    def __init__(self, run):
        self.run, self.todo, self.running = run, [], []

    def add(self, g):
        grid = os.path.join(g.out, "results", "grid")
        for cell in sorted(os.listdir(grid)) if os.path.isdir(grid) else []:
            res, sweep = os.path.join(grid, cell, "cotenant"), os.path.join(grid, cell, "sweep.json")
            if os.path.exists(os.path.join(res, "trace")) and os.path.exists(sweep):
                self.todo.append((g.name, g.kernel, cell, res, sweep,
                                  os.path.join(grid, cell, "explain.log")))
        # The biggest first: the last to end is then a small one.
        self.todo.sort(key=lambda job: -sum(os.path.getsize(p) for p in glob.glob(
            os.path.join(job[3], "trace", "cpu*.raw.gz"))))

    def pump(self, slots):
        """Say what ended; start queued cells while fewer than SLOTS run."""
        for job in [j for j in self.running if j[0].poll() is not None]:
            self.running.remove(job)
            self.run.say(f"      [{job[1]}] {last_line(job[2])}")
        while self.todo and len(self.running) < slots:
            name, kernel, cell, res, sweep, log = self.todo.pop(0)
            self.running.append((guest.explain(res, f"{name} {cell}", log, sweep, missed_only=True,
                                               kernel=self.run.path(kernel, "kernel.json")),
                                 f"{name} {cell}", log))

    def drain(self):
        while self.todo or self.running:
            self.pump(os.cpu_count() or 1)
            time.sleep(0.2)


def capacity(argv):
    args, grid, scen = parse(argv)
    clock = grid.pop("clock")
    timeout = grid.pop("guest_timeout_s")
    repeats = grid.pop("repeats")
    ncells = len(grid["cpu_quota_pct"]) * len(grid["cotenant_rate_pps"])
    # The longest grid of one guest in guest seconds; the hard limit in
    # wall time. A guest second of a busy guest took ~10 wall seconds on a
    # quiet 2-core host (the quick grid: 310 s for its 30 s), and more than
    # 25 beside make test's other guests (not done after 787 s); nothing
    # the host does can make a guest on the virtual clock late, so the
    # limit only has to catch an emulation that stopped.
    steps = max_steps(grid)
    probes = max_probes(grid)
    grid_s = ncells * (steps * (grid["step_s"] + 1) + 8) + probes * (grid["step_s"] + 8)
    timeout = timeout or grid_s * 40 + 180
    images = {"stock": os.path.realpath(args.stock_image),
              "patched": os.path.realpath(args.patched_image)} if args.stock_image else None
    run = Run(PROG, args.results, kind="capacity", phases=5 - bool(images) + (grid["trace"] == "on"))
    # Each repeat's own trajectory on the virtual clock: its salt, the
    # same for its stock and its patched guest.
    spec = {"experiment": "capacity", "run_id": run.id, "clock": clock, "guest_timeout_s": timeout,
            "repeats": repeats, "salts_us": [guest.salt_us(f"{run.id}/r{r}") for r in range(1, repeats + 1)],
            "scenario": scen, "capacity": grid}
    write_json(run.path("spec.json"), spec)
    bin_dir = os.path.join(TOP, "build", "static", "bin")
    with run.phase("build: static relay, loadgen, demo-scenario, labspec, ktrace-drain",
                   "seconds when built"):
        run.command(["make", "-C", TOP, "--no-print-directory", f"-j{os.cpu_count()}", "static"],
                    run.path("build.log"), "the build")
    if not images:
        with run.phase("kernels: stock and patched PREEMPT_RT 6.12",
                       "seconds from the cache, about 15 minutes to build on 2 cores: "
                       "the build's progress shows every minute"):
            images = kernels.images(run)
    record = {"date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
              "kernels": {k: guest.kernel_version(images[k]) for k in images}}
    _, spec["trace_probes"] = kernels.described(run.dir, images, record["kernels"])
    write_json(run.path("spec.json"), spec)
    with run.phase("initramfs: busybox, the binaries, the grid, the spec", "a few seconds"):
        initrd = run.path("initramfs.cpio")
        files = {f"/bin/{b}": os.path.join(bin_dir, b)
                 for b in ("relay", "loadgen", "demo-scenario", "labspec", "ktrace-drain")}
        files["/bin/capacity-grid"] = os.path.join(HERE, "grid")
        files["/bin/ktrace"] = os.path.join(TOP, "lab/ktrace/ktrace")
        record["initramfs_sha256"] = guest.initramfs(os.path.join(HERE, "init"), files,
                                                     run.path("spec.json"), initrd,
                                                     run.path("initramfs.log"))
    # The longest first: a patched grid climbs to its capacity at every
    # quota, a stock one mostly ends at its first rate.
    guests = [Guest(run, k, r) for r in range(1, repeats + 1) for k in ("patched", "stock")]
    slots = min(len(guests), max(1, os.cpu_count() or 1))
    with run.phase(f"{plural(repeats, 'repeat')} of stock and patched, {plural(slots, 'guest')} at a time: "
                   f"{plural(ncells, 'cell')} each, a search a cell, steps of {grid['step_s']} s",
                   f"at most {steps} steps a cell and {probes} of the quota search a guest, "
                   f"{grid_s} s of guest time each; at most {timeout} s a guest"):
        used = guest.sha256(initrd)
        memory = TRACED_MEMORY_MB if grid["trace"] == "on" else None
        explainer = Explainer(run) if grid["trace"] == "on" else None

        def start(g):
            g.boot(images[g.kernel], initrd, clock, timeout, memory)
        record["guest_wall_s"] = watch(run, guests, start, slots, ncells, steps, probes, explainer)
        for g in guests:
            out = guest.outcome(g.out)
            guest.record(g.out, outcome=out, exit_status=g.proc.returncode, initramfs_sha256=used,
                         kernel_image=images[g.kernel], version=record["kernels"][g.kernel],
                         timeout_s=timeout, repeat=g.repeat,
                         salt_us=spec["salts_us"][g.repeat - 1],
                         wall_s=g.wall_s)
            run.say(f"      {g.name}: {out} (exit {g.proc.returncode})")
        os.unlink(initrd)
    if grid["trace"] == "on":
        with run.phase("why: each cell's trace, the cause of each step that missed (lab/ktrace)",
                       "the cells the guests' phase left, some seconds a million events, "
                       f"{os.cpu_count()} at once"):
            explainer.drain()
    run.save(record)
    with run.phase("report: capacity.json, table, plots, page", "a few seconds"):
        rep = os.path.join(TOP, "report/capacity")
        if subprocess.run([rep, run.dir]).returncode != 0:
            raise LabError(EX_REPORT, "report/capacity failed")
        with open(run.path("check.log"), "w", encoding="utf-8") as f:
            if subprocess.run([rep, "--check", run.dir], stdout=f, stderr=subprocess.STDOUT).returncode:
                raise LabError(EX_REPORT, f"the capacity page is not whole ({run.path('check.log')})")
    run.finish(record)
    latest = os.path.join(args.results, "latest-capacity")
    run.say(f"results: {run.dir} (also {latest}); {round(time.monotonic() - run.t0)} s in all")
    run.say(f"page: {run.path('capacity.html')}")
    return 0


if __name__ == "__main__":
    sys.exit(main(PROG, capacity))
