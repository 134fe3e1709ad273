"""One guest: the initramfs that carries the spec and the programs, and
its boot under QEMU (kernel/vm/mkinitramfs and kernel/vm/boot)."""
import hashlib
import json
import os
import subprocess

from . import TOP
from .run import EX_INITRAMFS, LabError, write_json

SPEC_IN_GUEST = "/etc/lab/spec.json"
# The span of salt_us(): five of the demo's quota periods on the virtual
# clock, a hundred of the kernel's ticks.
SALT_SPAN_US = 100000


def salt_us(run_id):
    """How long the guest sleeps before its experiment starts, from the run
    id: 0 to SALT_SPAN_US of its clock. A guest on the virtual clock
    replays one trajectory for one boot; the spec's bytes in the initramfs
    move the boot only when they move its unpacking, and two runs of a
    series once gave identical figures. Started this much later, the
    experiment meets the kernel's tick and timers at other phases: each
    run its own trajectory. (The same run id does not always replay it:
    two boots of one initramfs parted when the host's timing served two
    vCPUs' timers due at one instant in the other order.)"""
    return int(hashlib.sha256(run_id.encode()).hexdigest()[:12], 16) % SALT_SPAN_US


def initramfs(init, files, spec_path, out, log):
    """Pack busybox, INIT as /init, FILES ({guest path: host path}) and the
    spec at SPEC_IN_GUEST into OUT, a plain cpio archive (an emulated guest
    unpacks a gzip slowly); returns its sha256. The spec holds the
    run id, so every run's initramfs differs and a guest on the virtual
    clock follows a trajectory of its own (the same initramfs replays the
    same one)."""
    argv = [os.path.join(TOP, "kernel/vm/mkinitramfs"), "--init", init,
            "--add", f"{spec_path}:{SPEC_IN_GUEST}", "--compress", "none", "--out", out]
    for guest, host in sorted(files.items()):
        argv += ["--add", f"{host}:{guest}"]
    with open(log, "w", encoding="utf-8") as f:
        p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=f, text=True)
    if p.returncode != 0:
        raise LabError(EX_INITRAMFS, f"mkinitramfs failed (log: {log})")
    return p.stdout.strip()


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def boot(image, initrd, out, clock, timeout, log=None, memory_mb=None, append=None):
    """Start one guest (kernel/vm/boot) in the background: the Popen.
    Its console goes to OUT/console.log, its /results to OUT/results.
    memory_mb: the guest's RAM when not boot's default (a traced guest
    holds its trace buffers); append: words for the kernel command line.
    The guest ends with the driver, however the driver ends (SIGTERM to
    boot when it exits, which passes it on)."""
    os.makedirs(out, exist_ok=True)
    argv = ["setpriv", "--pdeathsig", "TERM",
            os.path.join(TOP, "kernel/vm/boot"), "--kernel", image, "--initrd", initrd,
            "--out", out, "--clock", clock, "--timeout", str(timeout)]
    if memory_mb:
        argv += ["--memory-mb", str(memory_mb)]
    if append:
        argv += ["--append", append]
    sink = open(log or os.path.join(out, "boot.log"), "w", encoding="utf-8")
    with sink:
        return subprocess.Popen(argv, stdout=sink, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL)


def explain(results, name, log, sweep=None, missed_only=False, kernel=None):
    """Start lab/ktrace/explain on a guest's results (chains.json beside
    them; with sweep, each step's cause too, and with missed_only from the
    missed steps' spans alone) in the background: the Popen. KERNEL: the
    kernel.json of the image (labkit.kernels.described), whose offsets
    the analysis takes. What it says goes to LOG."""
    argv = [os.path.join(TOP, "lab/ktrace/explain"), results, "--name", name]
    if kernel and os.path.exists(kernel):
        argv += ["--kernel", kernel]
    if sweep:
        argv += ["--sweep", sweep] + (["--missed-only"] if missed_only else [])
    with open(log, "w", encoding="utf-8") as sink:
        return subprocess.Popen(argv, stdout=sink, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)


def outcome(out):
    """kernel/vm/boot's one word for the guest (no-results when it left none)."""
    try:
        with open(os.path.join(out, "outcome"), encoding="utf-8") as f:
            return f.read().strip() or "no-results"
    except OSError:
        return "no-results"


def record(out, **fields):
    """Add the driver's facts (outcome, exit status, image, initramfs hash,
    wall time...) to the boot.json kernel/vm/boot wrote."""
    path = os.path.join(out, "boot.json")
    rec = {}
    if os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            rec = json.load(f)
    rec.update(fields)
    write_json(path, rec)


def kernel_version(image):
    """The version string a bzImage carries in its header (as file(1) says)."""
    p = subprocess.run(["file", "-b", image], capture_output=True, text=True)
    for part in p.stdout.split(","):
        part = part.strip()
        if part.startswith("version "):
            return part[len("version "):]
    return None
