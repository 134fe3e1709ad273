"""lab/demo/run: make demo. The stock and the patched PREEMPT_RT kernel,
booted with one initramfs under QEMU, run the same scenario; the report
says whether the fix shows.

  lab/demo/run [--results DIR] [--clock virtual|host] [--host]
               [--guest-timeout-s S] [--stock-image BZIMAGE --patched-image BZIMAGE]
               [--stock-package DEB[,DEB] --patched-package DEB[,DEB]]
               [--kernels debian13] [--SCENARIO-PARAMETER VALUE]...

Every scenario parameter is demo-scenario's (`demo-scenario --help`: the
name with dashes, its unit in the name, e.g. --cpu-quota-pct 5,
--rate-pps 30000, --duration-s 60). The run spec (spec.json in the
results directory) holds each of them resolved once, with the clock and
the run id; the guest's init hands it to demo-scenario, the report reads
it. --host runs the scenario once on this machine instead of in the
guests: the same files and the same report. --stock-image/--patched-image
boot these images instead of the ones `make kernels` builds.
--stock-package/--patched-package boot the kernels of these packages (a
linux-image-*.deb such as Ubuntu's -realtime or Debian's; Debian 13's
split linux-binary-*.deb,linux-base-*.deb), once their config and BTF
show that the guest can run on them (lab/labkit/kernels.py GUEST_NEEDS).
--kernels debian13 boots Debian 13's signed 6.16.12 (stock) and 6.17.13
(patched) as shipped: no compiler needed.

Writes DIR/<date>-<id>/ (DIR: results/ in the source tree; never reused)
and points DIR/latest at it.
Exit status: 0 the report is written (whatever it says); 2 bad arguments;
3 the build failed; 4 no kernels; 5 no initramfs; 6 no report; 7 a kernel
package the guest cannot run on (what it lacks is named).
"""
import json
import os
import re
import subprocess
import sys
import time

from ..labkit import TOP, guest, kernels
from ..labkit.run import EX_REPORT, EX_USAGE, LabError, Run, last_line, main, write_json
from ..labkit.spec import Param, Parser, SpecError, flags, resolve

PROG = "lab/demo/run"
HERE = os.path.dirname(os.path.realpath(__file__))
# A traced guest's RAM: room for lab/ktrace/ktrace's buffers (96 MiB per
# CPU, lab/demo/init) beside the run.
TRACED_MEMORY_MB = 640

PARAMS = [
    Param("clock", "str", "virtual", "the guests' clock (kernel/vm/boot)", choices=("virtual", "host")),
    Param("kernel_line", "str", "6.12", "the stock and patched pair's Debian kernel line (kernel/lines/)",
          choices=("6.12", "6.1", "7.3")),
    Param("trace", "str", "on", "record the kernel's trace in the guests and explain every stall from it "
          "(lab/ktrace); off: the same run without it, to measure what tracing costs", choices=("on", "off")),
    Param("guest_timeout_s", "int", 0, "a guest that has not finished by then counts as hung; "
          "0: (duration_s + grace_s) x 20 + 120 on the virtual clock, + 120 on the host's, "
          "three times that with the trace on", lo=0),
    Param("kernel_args", "str", "", "words added to both guests' kernel command line (kernel/vm/boot "
          "--append), such as nohz=off: a kernel's boot options tried without building it again"),
]
# What a word of kernel_args may hold: the kernel's own param=value,list
# syntax, nothing a shell or the boot line's quoting would read.
KERNEL_ARG = re.compile(r"[A-Za-z0-9_.,:/+-]+(=[A-Za-z0-9_.,:/+-]*)?")


def parse(argv):
    ap = Parser(prog=PROG, description="stock vs patched PREEMPT_RT kernel under QEMU, and the report",
                epilog="Scenario parameters: demo-scenario --help.")
    ap.add_argument("--results", default=os.path.join(TOP, "results"), help="where run directories go")
    ap.add_argument("--host", action="store_true", help="run the scenario once on this machine")
    ap.add_argument("--stock-image", help="boot this stock image")
    ap.add_argument("--patched-image", help="boot this patched image")
    ap.add_argument("--stock-package",
                    help="boot the kernel of this package (DEB, or DEB,DEB of a split image)")
    ap.add_argument("--patched-package", help="boot the kernel of this package")
    ap.add_argument("--kernels", choices=sorted(kernels.PAIRS),
                    help="boot this pair of Debian's signed images")
    flags(ap, PARAMS)
    args, rest = ap.parse_known_args(argv)
    scenario = {}
    while rest:
        name = rest.pop(0)
        if not name.startswith("--") or not rest:
            ap.error(f"unexpected argument '{name}' (scenario parameters are --NAME VALUE)")
        value = rest.pop(0)
        key = name[2:].replace("-", "_")
        scenario[key] = int(value) if value.lstrip("-").isdigit() else value
    if bool(args.stock_image) != bool(args.patched_image):
        ap.error("give both --stock-image and --patched-image, or neither")
    if bool(args.stock_package) != bool(args.patched_package):
        ap.error("give both --stock-package and --patched-package, or neither")
    if sum(map(bool, (args.stock_image, args.stock_package, args.kernels))) > 1:
        ap.error("--stock-image, --stock-package and --kernels exclude each other")
    for f in (args.stock_image, args.patched_image):
        if f and not os.path.isfile(f):
            ap.error(f"{f}: no such file")
    try:
        driver = resolve(args, PARAMS)
    except SpecError as e:
        ap.error(str(e))
    bad = [w for w in driver["kernel_args"].split(" ") if w and not KERNEL_ARG.fullmatch(w)]
    if bad:
        ap.error(f"--kernel-args: {', '.join(map(repr, bad))}: not a kernel parameter (param or "
                 "param=value, letters, digits and _.,:/+-, words apart by spaces)")
    if args.host and driver["kernel_args"]:
        ap.error("--kernel-args is for the guests' kernels, not with --host")
    if args.host:
        driver["clock"] = "host"
    return args, driver, scenario


def resolve_scenario(run, bin_dir, given, clock):
    """The scenario's parameters, every one, as demo-scenario resolves
    them from the clock's defaults (demo-scenario --help shows both,
    lab/demo/scenario/params.h says why they differ) and the command
    line's: checked here, before any guest boots."""
    path = run.path("spec.json")
    write_json(path, {"clock": clock, "scenario": given})
    p = subprocess.run([os.path.join(bin_dir, "demo-scenario"), "--spec", path, "--resolve"],
                       capture_output=True, text=True)
    if p.returncode != 0:
        raise LabError(EX_USAGE, p.stderr.strip().replace("demo-scenario: ", ""))
    return json.loads(p.stdout)


def guest_timeout(driver, scenario):
    if driver["guest_timeout_s"]:
        return driver["guest_timeout_s"]
    span = scenario["duration_s"] + scenario["grace_s"]
    # On the virtual clock a guest second costs 2-5 host seconds on a quiet
    # host and several times that on a loaded one; nothing the host does
    # can make the guest late there, so the limit only catches an
    # emulation that stopped. On the host clock a host busy with other
    # guests can slow it down several times over.
    # Writing out the trace costs the guest about as much host time again
    # as the run, and more on a host busy with other guests (a 15 s demo
    # beside two other guest pairs took over 1440 s to bring its trace
    # back).
    traced = 3 if driver["trace"] == "on" else 1
    return (span * 20 + 120) * traced if driver["clock"] == "virtual" else span * traced + 120


def boot_both(run, images, initrd, spec, timeout, done=None):
    """Both kernels with the same initramfs: side by side on the virtual
    clock (guest time is instruction count, neither can make the other
    late), one after the other on the host clock. DONE(kernel) is called
    as each guest ends, while the other may still run."""
    clock = spec["clock"]
    memory = TRACED_MEMORY_MB if spec.get("trace") == "on" else None
    append = spec.get("kernel_args") or None
    used = guest.sha256(initrd)   # hashed again right before the boots
    order = [["stock", "patched"]] if clock == "virtual" else [["stock"], ["patched"]]
    for group in order:
        started = {}
        for k in group:
            # A guest whose APIC timer failed its calibration (a busy host)
            # is another machine: boot it again, at most 5 times.
            started[k] = [guest.boot(images[k], initrd, run.path(k), clock, timeout, memory_mb=memory,
                                     append=append), 1,
                          time.monotonic()]
        shown = time.monotonic()
        while started:
            if time.monotonic() - shown >= 30:   # kernel/vm/boot says how long it has left
                shown = time.monotonic()
                for k in started:
                    run.say(f"      [{k}] {last_line(run.path(k, 'boot.log'))}")
            for k, (p, attempt, t0) in list(started.items()):
                if p.poll() is None:
                    continue
                degraded = run.path(k, "results", "clock-degraded")
                if os.path.exists(degraded) and attempt < 5:
                    run.say(f"      [{k}] the guest's APIC timer failed calibration: booting again "
                            f"({attempt + 1}/5)")
                    os.unlink(degraded)
                    started[k] = [guest.boot(images[k], initrd, run.path(k), clock, timeout,
                                             memory_mb=memory, append=append), attempt + 1, t0]
                    continue
                problem = None
                if os.path.exists(degraded):
                    with open(degraded, encoding="utf-8") as f:
                        problem = f.read().strip()
                out = guest.outcome(run.path(k))
                guest.record(run.path(k), clock=clock, outcome=out, exit_status=p.returncode,
                             initramfs_sha256=used, kernel_image=images[k],
                             wall_s=round(time.monotonic() - t0), timeout_s=timeout,
                             attempts=attempt, problem=problem)
                run.say(f"      [{k}] outcome: {out}")
                del started[k]
                if done:
                    done(k)
            time.sleep(1)


class Explain:
    """lab/ktrace/explain on each guest's trace, started as soon as that
    guest has ended (the stock guest's is read while the patched guest
    still runs, on the CPU the stock guest left): chains.json beside its
    results. A trace that cannot be read is said on the page (the summary
    finds no chains.json), not the end of the run."""

    def __init__(self, run):
        self.run, self.started = run, {}

    def start(self, k):
        if os.path.isdir(self.run.path(k, "results")):
            self.started[k] = guest.explain(self.run.path(k, "results"), k, self.run.path(k, "explain.log"),
                                            kernel=self.run.path(k, "kernel.json"))

    def wait(self):
        for k, p in self.started.items():
            p.wait()
            self.run.say(f"      [{k}] {last_line(self.run.path(k, 'explain.log'))}")


def report(run):
    for argv in ([os.path.join(TOP, "report/summarize"), run.dir],
                 [os.path.join(TOP, "report/render"), run.dir]):
        p = subprocess.run(argv, capture_output=True, text=True)
        sys.stdout.write("".join(x + "\n" for x in p.stdout.splitlines() if not x.startswith("report: ")))
        if p.returncode != 0:
            raise LabError(EX_REPORT, f"{os.path.basename(argv[0])} failed: {p.stderr.strip()}")
    # What a reader's browser shows (report.png), and a check that it is whole.
    argv = [os.path.join(TOP, "report/check"), run.dir]
    if subprocess.run(["sh", "-c", "command -v chromium"], capture_output=True).returncode == 0:
        argv.insert(1, "--screenshot")
    with open(run.path("check.log"), "w", encoding="utf-8") as f:
        if subprocess.run(argv, stdout=f, stderr=subprocess.STDOUT).returncode != 0:
            raise LabError(EX_REPORT, f"the report is not whole ({run.path('check.log')})")


def demo(argv):
    args, driver, given = parse(argv)
    host = args.host
    images = {"stock": os.path.realpath(args.stock_image),
              "patched": os.path.realpath(args.patched_image)} if args.stock_image else None
    steps = 3 if host else 5 - bool(images) + (driver["trace"] == "on")
    run = Run(PROG, args.results, phases=steps)
    variant = "release" if host else "static"
    bin_dir = os.path.join(TOP, "build", variant, "bin")
    with run.phase(f"build: {variant} relay, loadgen, demo-scenario, labspec",
                   "seconds when built, about 1-2 minutes from scratch"):
        run.command(["make", "-C", TOP, "--no-print-directory", f"-j{os.cpu_count()}", variant],
                    run.path("build.log"), "the build")
    scenario = resolve_scenario(run, bin_dir, given, driver["clock"])
    spec = {"experiment": "demo", "run_id": run.id, "mode": "host" if host else "vm",
            "clock": driver["clock"], "kernel_line": driver["kernel_line"],
            "trace": "off" if host else driver["trace"], "scenario": scenario}
    if not host:
        spec["guest_timeout_s"] = guest_timeout(driver, scenario)
        spec["salt_us"] = guest.salt_us(run.id)
        spec["kernel_args"] = " ".join(driver["kernel_args"].split())
    write_json(run.path("spec.json"), spec)
    record = {"date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "initramfs_sha256": None}
    if host:
        with run.phase(f"this host: run {scenario['duration_s']} s",
                       f"about {scenario['duration_s'] + 2} s"):
            if os.geteuid() != 0:
                raise LabError(EX_USAGE, "--host needs root (cgroup quota, SCHED_FIFO)")
            out = run.path("host", "results")
            os.makedirs(out)
            t0 = time.monotonic()
            with open(os.path.join(out, "scenario.log"), "w", encoding="utf-8") as log:
                rc = subprocess.run([os.path.join(bin_dir, "demo-scenario"), "--spec", run.path("spec.json"),
                                     "--relay", os.path.join(bin_dir, "relay"),
                                     "--loadgen", os.path.join(bin_dir, "loadgen"), "--out", out],
                                    stdout=log, stderr=subprocess.STDOUT).returncode
            guest.record(run.path("host"), outcome="ok" if rc == 0 else "failed", exit_status=rc,
                         wall_s=round(time.monotonic() - t0), attempts=1)
            run.say(f"      outcome: {'ok' if rc == 0 else 'failed'} (exit {rc})")
        record["kernels"] = {"host": os.uname().release}
    else:
        if not images and args.stock_package:
            with run.phase("kernels: the stock and patched packages, checked for what the guest needs",
                           "a few seconds"):
                images = kernels.packages(run, {"stock": args.stock_package, "patched": args.patched_package})
        elif not images and args.kernels:
            with run.phase(f"kernels: {args.kernels}, Debian's signed images as shipped",
                           "seconds from the cache, about a minute to fetch (350 MB)"):
                images = kernels.pair(run, args.kernels)
        if not images:
            with run.phase(f"kernels: stock and patched PREEMPT_RT {driver['kernel_line']}",
                           "seconds from the cache, about 15 minutes to build on 2 cores: "
                           "the build's progress shows every minute"):
                images = kernels.images(run, driver["kernel_line"])
        record["kernels"] = {k: guest.kernel_version(images[k]) for k in images}
        # What each image is (kernel.json beside its results), and the
        # trace probe's offsets for each, which the guest takes by its
        # release.
        facts, spec["trace_probes"] = kernels.described(run.dir, images, record["kernels"])
        write_json(run.path("spec.json"), spec)
        for k, f in facts.items():
            run.say(f"      [{k}] {f['release']}: ep->lock {f['lock'] or '?'} ({f['lock_from']}), "
                    f"throttle model {kernels.THROTTLE_MODELS.get(f['throttle_model'], 'from its symbols')}, "
                    f"probe {f['probe_ep']} ({f['offsets_from']})")
        with run.phase("initramfs: busybox, relay, loadgen, demo-scenario, the spec", "a few seconds"):
            initrd = run.path("initramfs.cpio")
            record["initramfs_sha256"] = guest.initramfs(
                os.path.join(HERE, "init"),
                dict({f"/bin/{b}": os.path.join(bin_dir, b)
                      for b in ("relay", "loadgen", "demo-scenario", "labspec", "ktrace-drain")},
                     **{"/bin/ktrace": os.path.join(TOP, "lab/ktrace/ktrace")}),
                run.path("spec.json"), initrd, run.path("initramfs.log"))
        timeout = spec["guest_timeout_s"]
        d = scenario["duration_s"]
        why = Explain(run)
        done = why.start if spec["trace"] == "on" else None
        if driver["clock"] == "virtual":
            with run.phase(f"stock and patched kernels side by side: boot and run {d} s each "
                           "under QEMU (virtual clock)" + (", each trace explained as its guest ends"
                                                           if done else ""),
                           f"about {d * 4 + 40} s on 2 free host CPUs, at most {timeout} s"):
                boot_both(run, images, initrd, spec, timeout, done)
        else:
            with run.phase(f"stock, then patched kernel: boot and run {d} s each under QEMU "
                           "(host clock)", f"about {2 * (d + 8)} s, at most {2 * timeout} s"):
                boot_both(run, images, initrd, spec, timeout, done)
        os.unlink(initrd)
        if done:
            with run.phase("why: each kernel's trace, every stall, slow RT datagram and freeze explained "
                           "(lab/ktrace)", "some seconds after the last guest"):
                why.wait()
        # The cost side: what `make kernel-selftests` measured, when it has run.
        cost = os.path.join(TOP, "build/kernel/selftests-6.12/cost.json")
        if os.path.exists(cost):
            with open(cost, encoding="utf-8") as src, open(run.path("cost.json"), "w") as dst:
                dst.write(src.read())
    run.save(record)
    with run.phase("report: summary, table, plots, HTML", "a few seconds"):
        print()
        report(run)
    run.finish(record)
    run.say(f"results: {run.dir} (also {os.path.join(args.results, 'latest')}); "
            f"{round(time.monotonic() - run.t0)} s in all")
    run.say(f"report: {run.path('report.html')}")
    return 0


if __name__ == "__main__":
    sys.exit(main(PROG, demo))
