"""A series of guests: each named kernel booted in turn with one initramfs
that runs one guest program for a number of seconds, then the
experiment's table of what each guest left. The drivers of lab/falseneg
and lab/unixwake are one Series each.

  lab/EXPERIMENT/run [--seconds S] [--results DIR] NAME=IMAGE...

The run directory, DIR/<date>-<id>-EXPERIMENT/ (DIR: results/ in the
source tree; DIR/latest-EXPERIMENT points at it), holds spec.json (the
seconds, the clock and each kernel's image), NAME/ per kernel
(kernel/vm/boot's files, boot.json with the driver's facts) and what the
table writes. The guest reads its seconds from the kernel command line
(relay.seconds=S).
"""
import os
import time
from dataclasses import dataclass
from typing import Callable

from . import TOP, guest
from .run import EX_USAGE, LabError, Run, main, write_json
from .spec import Param, Parser, SpecError, flags, resolve


@dataclass(frozen=True)
class Series:
    name: str             # the experiment: its folder in lab/, the kind of its run directories
    what: str             # a line of what it finds out, for --help
    program: str          # the guest program, a static build's (build/static/bin/PROGRAM)
    seconds: int          # the default of --seconds
    clock: str            # the guests' clock (kernel/vm/boot --clock)
    timeout: Callable     # the seconds of the run -> a guest's wall-time limit
    about: Callable       # the seconds of the run -> the wall time a guest takes, about
    table: Callable       # table(run_dir, names) -> exit status, having written the table
    hung_is_result: bool = False   # a guest that hung is a finding, not a failure

    @property
    def prog(self):
        return f"lab/{self.name}/run"

    def params(self):
        return [Param("seconds", "int", self.seconds, "each guest's run, in guest seconds",
                      lo=1, hi=86400)]


def parse(series, argv):
    ap = Parser(prog=series.prog, description=series.what,
                epilog="NAME=IMAGE: a kernel image to boot, and its name in the table.")
    ap.add_argument("--results", default=os.path.join(TOP, "results"), help="where run directories go")
    flags(ap, series.params())
    ap.add_argument("kernels", nargs="+", metavar="NAME=IMAGE")
    args = ap.parse_args(argv)
    try:
        spec = resolve(args, series.params())
    except SpecError as e:
        ap.error(str(e))
    kernels = {}
    for k in args.kernels:
        name, eq, image = k.partition("=")
        if not eq or not name or "/" in name or name.startswith("."):
            ap.error(f"'{k}': expected NAME=IMAGE, NAME a plain word")
        if name in kernels:
            ap.error(f"{name}: named twice")
        if not os.path.isfile(image):
            ap.error(f"{name}: no image {image}")
        kernels[name] = os.path.realpath(image)
    return args.results, spec["seconds"], kernels


def run(series, argv):
    """The whole series: 0 every guest ran (whatever it found) and the
    table has each; 1 one did not."""
    results, seconds, kernels = parse(series, argv)
    binary = os.path.join(TOP, "build", "static", "bin", series.program)
    if not os.access(binary, os.X_OK):
        raise LabError(EX_USAGE, f"{binary} is not built (make static)")
    run = Run(series.prog, results, kind=series.name, phases=len(kernels) + 2)
    spec = {"experiment": series.name, "run_id": run.id, "clock": series.clock,
            "seconds": seconds, "kernels": kernels}
    write_json(run.path("spec.json"), spec)
    timeout = series.timeout(seconds)
    record = {"date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    with run.phase(f"initramfs: busybox, {series.program}, the spec", "a few seconds"):
        initrd = run.path("initramfs.cpio.gz")
        record["initramfs_sha256"] = guest.initramfs(
            os.path.join(TOP, "lab", series.name, "guest-init"), {f"/bin/{series.program}": binary},
            run.path("spec.json"), initrd, run.path("initramfs.log"))
    status = 0
    for name, image in kernels.items():
        with run.phase(f"{name}: {seconds} s on the {series.clock} clock",
                       f"about {series.about(seconds)} s, at most {timeout} s"):
            t0 = time.monotonic()
            p = guest.boot(image, initrd, run.path(name), series.clock, timeout,
                           append=f"relay.seconds={seconds}")
            p.wait()
            out = guest.outcome(run.path(name))
            guest.record(run.path(name), clock=series.clock, outcome=out, exit_status=p.returncode,
                         initramfs_sha256=record["initramfs_sha256"], kernel_image=image,
                         wall_s=round(time.monotonic() - t0), timeout_s=timeout, attempts=1)
            if p.returncode == 0:
                run.say(f"      outcome: {out}")
            elif series.hung_is_result and out == "hung":
                run.say(f"      {name}: hung: no result after {timeout} s")
            else:
                run.say(f"      {name}: the guest did not finish ({out}; see "
                        f"{run.path(name, 'console.log')})")
                status = 1
    os.unlink(initrd)
    with run.phase("the table", "a second"):
        if series.table(run.dir, list(kernels)) != 0:
            status = 1
    run.finish(dict(record, status=status))
    run.say(f"results: {run.dir} (also {os.path.join(results, 'latest-' + series.name)})")
    return status


def cli(series):
    """The experiment's lab/EXPERIMENT/run: its exit status."""
    return main(series.prog, lambda argv: run(series, argv))
