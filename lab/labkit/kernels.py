"""The stock and patched kernel images: make builds them (or takes them
from the cache), kernel/build --print-images says where they are."""
import json
import os
import subprocess
import tarfile

from . import TOP
from .run import EX_KERNELS, LabError, write_json

KERNELS = ("stock", "patched")


def images(run, line="6.12"):
    """{"stock": path, "patched": path} of LINE, built first if need be:
    the build's own progress and estimate show every minute."""
    log = run.path("kernels.log")
    try:
        run.command(["make", "-C", TOP, "--no-print-directory", "kernels", f"KERNEL_LINE={line}"],
                    log, "make kernels")
    except LabError as e:
        raise LabError(EX_KERNELS, str(e))
    return lookup(line)


def historical(run, line):
    """The one image of a historical LINE (kernel/lines/*.conf with
    images=historical), built first if need be."""
    log = run.path(f"kernels-{line}.log")
    try:
        run.command(["make", "-C", TOP, "--no-print-directory", "kernels", f"KERNEL_LINE={line}"],
                    log, "make kernels")
    except LabError as e:
        raise LabError(EX_KERNELS, str(e))
    return _print_images(line).get("historical") or _missing(line, "historical")


def debian_image(run, name):
    """The vmlinuz of Debian's own image NAME (kernel/debian-images.conf),
    fetched and checked first if need be."""
    log = run.path(f"kernels-debian-{name}.log")
    answer = run.path(f"kernels-debian-{name}.image")
    try:
        run.command([os.path.join(TOP, "kernel/debian-image"), name], log, "kernel/debian-image",
                    answer=answer)
    except LabError as e:
        raise LabError(EX_KERNELS, str(e))
    # Its standard output is the image's path, one line; what it says on
    # the way is in the log.
    with open(answer, encoding="utf-8") as f:
        said = f.read().splitlines()
    image = said[0] if len(said) == 1 else ""
    if not os.path.isfile(image):
        raise LabError(EX_KERNELS, f"kernel/debian-image {name} named no image on its standard output "
                       f"({answer}; log: {log})")
    return image


def _print_images(line):
    p = subprocess.run([os.path.join(TOP, "kernel/build"), "--line", line, "--print-images"],
                       capture_output=True, text=True)
    if p.returncode != 0:
        raise LabError(EX_KERNELS, f"kernel/build --print-images: {p.stderr.strip()}")
    found = {}
    for row in p.stdout.splitlines():
        words = row.split(None, 1)
        if len(words) == 2 and os.path.isfile(words[1].strip()):
            found[words[0]] = words[1].strip()
    return found


def _missing(line, kind):
    raise LabError(EX_KERNELS, f"kernel/build --line {line} --print-images names no {kind} image")


def lookup(line="6.12"):
    """Where the built images of LINE are, without building."""
    found = _print_images(line)
    for k in KERNELS:
        if k not in found:
            _missing(line, k)
    return {k: found[k] for k in KERNELS}


# A kernel package the guest cannot run on: exit status of the drivers.
EX_PACKAGE = 7

# Pairs of Debian's own signed images (kernel/debian-images.conf), booted
# as shipped: no compiler needed, the download once.
PAIRS = {
    # Debian 13's 6.16.12 (ep->lock an rwlock_t, the per-cfs_rq throttle
    # model) against 6.17.13 (the epoll change, the same throttle model):
    # the epoll change alone, across one minor version.
    "debian13": {"stock": "6.16-rt-signed", "patched": "6.17-rt-signed"},
}

# What the demo's guest needs of a kernel, read from its config: built in
# (=y), since the guest has an initramfs and no modules.
GUEST_NEEDS = (
    ("PREEMPT_RT", "PREEMPT_RT: the stall needs sleeping spinlocks and rwlocks"),
    ("KPROBES", "kprobes: the trace's probes on ep_poll_callback and the CFS throttle"),
    ("KPROBE_EVENTS", "kprobe events in tracefs"),
    ("FTRACE", "the function tracer and tracefs (lab/ktrace)"),
    ("CGROUPS", "cgroups: the co-tenant's quota"),
    ("CGROUP_SCHED", "the cgroup v2 cpu controller"),
    ("FAIR_GROUP_SCHED", "the cpu controller for CFS tasks"),
    ("CFS_BANDWIDTH", "CFS bandwidth control: cpu.max, the quota that throttles"),
    ("SERIAL_8250", "the 8250 serial port the guest's console and results go through"),
    ("SERIAL_8250_CONSOLE", "a console on the 8250 serial port"),
    ("BLK_DEV_INITRD", "an initramfs to boot from"),
    ("RD_GZIP", "a gzip-compressed initramfs"),
    ("DEVTMPFS", "devtmpfs for the guest's /dev"),
    ("BINFMT_ELF", "ELF executables"),
    ("BINFMT_SCRIPT", "#! scripts (the guest's /init)"),
    ("EPOLL", "epoll: what the demo is about"),
    ("UNIX", "AF_UNIX sockets: the co-tenant's waker"),
    ("INET", "IPv4 on loopback: the relay's datagrams"),
)
# The probe lab/ktrace/ktrace places on ep_poll_callback reads the epoll
# instance at the offsets of the image it runs on (facts()). An image
# built before kernel/build recorded them has none: the layout of the 6.1
# and 6.12 lines is taken, said so, and the trace checks it.
ASSUMED_PROBE_EP = "+72(-8(%di))"
ASSUMED_LOCK_OFFSET = 144
# Bounds for what a package may hold: Debian's images are 12-15 MB, their
# configs 300 KB.
MAX_IMAGE = 64 << 20
MAX_CONFIG = 4 << 20


def described(run_dir, images, versions):
    """facts() of each image of IMAGES ({kernel: path}), its release the
    one its header carries (VERSIONS: {kernel: guest.kernel_version()}),
    written to RUN_DIR/KERNEL/kernel.json; and the spec's trace_probes, the
    probe's offsets for each release (what lab/ktrace/ktrace start --spec
    takes). Two images of one release with other offsets cannot share
    an initramfs: LabError."""
    out, probes = {}, {}
    for k, image in images.items():
        f = facts(image)
        f["release"] = (versions.get(k) or "").split(" ")[0] or f["release"]
        if f["release"] in probes and probes[f["release"]] != f["probe_ep"]:
            raise LabError(EX_KERNELS, f"two kernels of release {f['release']} with other probe offsets "
                           f"({probes[f['release']]}, {f['probe_ep']}): one initramfs cannot tell them apart")
        probes[f["release"]] = f["probe_ep"]
        os.makedirs(os.path.join(run_dir, k), exist_ok=True)
        write_json(os.path.join(run_dir, k, "kernel.json"), f)
        out[k] = f
    return out, [{"release": r, "ep": ep} for r, ep in probes.items()]


def pair(run, name):
    """{"stock": path, "patched": path}: the pair NAME of PAIRS, fetched
    and checked first if need be."""
    if name not in PAIRS:
        raise LabError(EX_KERNELS, f"no kernel pair '{name}' (known: {', '.join(sorted(PAIRS))})")
    return {k: debian_image(run, PAIRS[name][k]) for k in KERNELS}


def _package_files(debs, out):
    """The first kernel image in DEBS (/boot/vmlinuz-RELEASE or Debian
    13's /usr/lib/modules/RELEASE/vmlinuz) and its config, from any of
    DEBS, written to OUT/vmlinuz and OUT/config: (release, [problems])."""
    problems, release, found = [], None, {}
    for deb in debs:
        p = subprocess.Popen(["dpkg-deb", "--fsys-tarfile", deb], stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL)
        try:
            with tarfile.open(fileobj=p.stdout, mode="r|") as tar:
                for m in tar:
                    parts = m.name.lstrip("./").split("/")
                    if not m.isfile():
                        continue
                    if "vmlinuz" not in found and (
                            (len(parts) == 2 and parts[0] == "boot" and parts[1].startswith("vmlinuz-"))
                            or (len(parts) == 5 and parts[:3] == ["usr", "lib", "modules"]
                                and parts[4] == "vmlinuz")):
                        release = parts[1][len("vmlinuz-"):] if parts[0] == "boot" else parts[3]
                        kind, limit = "vmlinuz", MAX_IMAGE
                    elif "config" not in found and (
                            (len(parts) == 2 and parts[0] == "boot" and parts[1].startswith("config-"))
                            or (len(parts) == 5 and parts[:3] == ["usr", "lib", "modules"]
                                and parts[4] == "config")):
                        kind, limit = "config", MAX_CONFIG
                    else:
                        continue
                    if m.size > limit:
                        problems.append(f"{deb}: {m.name} is {m.size >> 20} MB, more than a kernel's")
                        continue
                    with open(os.path.join(out, kind), "wb") as f:
                        f.write(tar.extractfile(m).read())
                    found[kind] = m.name
                    if len(found) == 2:
                        break
        except tarfile.TarError as e:
            problems.append(f"{deb}: not a Debian package's file tree ({e})")
        finally:
            p.stdout.close()
            p.kill()
            p.wait()
    if "vmlinuz" not in found:
        problems.append("no /boot/vmlinuz-* or /usr/lib/modules/*/vmlinuz in " + ", ".join(debs))
    elif "config" not in found:
        problems.append(f"no config for {release} (/boot/config-{release}, or Debian 13's "
                        "linux-base-* package: give it after the image's, comma-separated)")
    return release, problems


def check_package(config, facts):
    """What the guest needs that a kernel lacks, from its CONFIG text and
    relay-preflight's --btf-facts lines FACTS: [problem]."""
    opts = {}
    for line in config.splitlines():
        if line.startswith("CONFIG_") and "=" in line:
            k, v = line[len("CONFIG_"):].split("=", 1)
            opts[k] = v
        elif line.startswith("# CONFIG_") and line.endswith(" is not set"):
            opts[line[len("# CONFIG_"):-len(" is not set")]] = "n"
    missing = []
    for opt, why in GUEST_NEEDS:
        v = opts.get(opt, "n")
        if v == "m":
            missing.append(f"CONFIG_{opt}=m, a module ({why}; the guest loads no modules)")
        elif v != "y":
            missing.append(f"CONFIG_{opt} (={v}: {why})")
    got = btf_facts(facts)
    if "eventpoll_lock" not in got:
        missing.append("BTF with struct eventpoll (its lock type: "
                       + got.get("untold", "not in its BTF") + ")")
    elif not got.get("probe_ep") or "eventpoll.lock" not in got["offsets"]:
        missing.append("the trace probe's offsets (struct epitem, eppoll_entry and eventpoll's lock) "
                       "in its BTF")
    return missing


def btf_facts(text):
    """relay-preflight --btf-facts' lines as a dict: each "key value", and
    the "offset STRUCT.MEMBER BYTES" lines as {"STRUCT.MEMBER": BYTES}
    under "offsets"."""
    out = {"offsets": {}}
    for line in text.splitlines():
        key, _, value = line.partition(" ")
        if key == "offset":
            member, _, n = value.partition(" ")
            if n.isdigit():
                out["offsets"][member] = int(n)
        elif value:
            out[key] = value
    return out


# How each throttle model is named on the page and in the files.
THROTTLE_MODELS = {"cfs_rq": "per cfs_rq", "task": "task-based"}


def _manifest(image):
    try:
        with open(os.path.join(os.path.dirname(image), "manifest.json"), encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def facts(image):
    """What is known of the kernel IMAGE before it boots, and from where:
    how it was obtained; struct eventpoll's lock type; its CFS throttle
    model (None when nothing but its running symbols can tell: the trace
    reads them); the struct offsets the trace probe and its analysis need
    (offsets, probe_ep) and their source. From the manifest beside a
    cached image (kernel/build, kernel/debian-image), or the package.json
    beside a package's (packages())."""
    out = {"image": image, "obtained": None, "release": None,
           "lock": None, "lock_from": None, "throttle_model": None, "throttle_from": None,
           "offsets": {}, "probe_ep": None, "offsets_from": None}
    pkg = os.path.join(os.path.dirname(image), "package.json")
    m = _manifest(image)

    def from_btf(lines, obtained, release):
        got = btf_facts("\n".join(lines))
        out.update(obtained=obtained, release=release, lock=got.get("eventpoll_lock"), lock_from="its BTF",
                   throttle_model=got.get("throttle_model"), offsets=got["offsets"],
                   probe_ep=got.get("probe_ep"), offsets_from="its BTF")

    if os.path.exists(pkg):
        with open(pkg, encoding="utf-8") as f:
            p = json.load(f)
        from_btf(p.get("btf_facts") or [],
                 "the package " + ", ".join(os.path.basename(d) for d in p.get("packages", [])),
                 p.get("kernel_release"))
    elif m is None and os.path.isfile(image):
        # Nothing beside it says what it is (a test host image's kernel as
        # dpkg installed it): its own BTF does.
        got = subprocess.run([os.path.join(TOP, "deploy/preflight"), "--btf-facts", image],
                             capture_output=True, text=True)
        if got.returncode == 0:
            from_btf(got.stdout.splitlines(), "the image " + os.path.basename(image), None)
    elif m and m.get("images_kind") == "debian-image":
        out.update(obtained=m.get("obtained"), release=m.get("kernel_release"),
                   lock=m.get("btf_eventpoll_lock") or None, lock_from="its BTF",
                   throttle_model=m.get("btf_throttle_model") or None,
                   offsets=m.get("btf_offsets") or {}, probe_ep=m.get("probe_ep") or None,
                   offsets_from="its BTF")
    elif m:
        kind = os.path.basename(image).removeprefix("bzImage-")
        src = m.get("source") or {}
        what = f"Debian's {m.get('package', '?')} {m.get('version') or src.get('version', '?')}"
        if m.get("images_kind") == "historical":
            what += " with its own RT patches, as shipped"
        else:
            if src.get("rt_patches"):
                what += " with its own RT patches"
            what += ", the fix reversed" if kind == "stock" else ", as its source has it"
        own = (m.get("eventpoll_source") or {}).get(kind) or {}
        out.update(obtained=m.get("obtained") or what + " (built by kernel/build)",
                   release=(m.get("kernel_releases") or {}).get(kind),
                   lock=own.get("struct_eventpoll_lock"), lock_from="its fs/eventpoll.c as built",
                   offsets=(m.get("probe_offsets") or {}).get(kind) or {},
                   probe_ep=(m.get("probe_ep") or {}).get(kind) if isinstance(m.get("probe_ep"), dict)
                   else None, offsets_from="its compiler (kernel/build)")
    if out["throttle_model"]:
        out["throttle_from"] = "its BTF"
    if not out["probe_ep"] or "eventpoll.lock" not in out["offsets"]:
        out.update(probe_ep=ASSUMED_PROBE_EP, offsets={"eventpoll.lock": ASSUMED_LOCK_OFFSET},
                   offsets_from="assumed: nothing beside the image records them (the 6.1 and 6.12 "
                   "lines' layout; the trace checks it)")
    return out


def packages(run, given):
    """{"stock": path, "patched": path}: the vmlinuz of each kernel package
    GIVEN ({"stock": "A.deb[,B.deb]", ...}: an image package, with Debian
    13's linux-base-* after it), once it is known that the guest can run on
    it. Raises LabError(EX_PACKAGE) naming what a package lacks."""
    images, refusals = {}, []
    for k in KERNELS:
        debs = given[k].split(",")
        out = run.path(f"kernel-{k}")
        os.makedirs(out)
        for deb in debs:
            if not os.path.isfile(deb):
                raise LabError(EX_PACKAGE, f"--{k}-package: {deb}: no such file")
        release, problems = _package_files(debs, out)
        facts = ""
        if not problems:
            p = subprocess.run([os.path.join(TOP, "deploy/preflight"), "--btf-facts",
                                os.path.join(out, "vmlinuz")], capture_output=True, text=True)
            facts = p.stdout if p.returncode == 0 else "untold " + p.stderr.strip()
            with open(os.path.join(out, "config"), encoding="utf-8", errors="replace") as f:
                problems = check_package(f.read(), facts)
        write_json(os.path.join(out, "package.json"),
                   {"packages": debs, "kernel_release": release, "btf_facts": facts.splitlines(),
                    "missing": problems})
        if problems:
            refusals.append(f"the {k} package ({given[k]}) cannot run the guest: " + "; ".join(problems))
        else:
            images[k] = os.path.join(out, "vmlinuz")
            btf = ", ".join(x for x in facts.splitlines()
                            if x.startswith(("eventpoll_lock", "throttle_model")))
            run.say(f"      [{k}] {release}: the guest can run on it "
                    f"({len(GUEST_NEEDS)} options built in, BTF: {btf})")
    if refusals:
        raise LabError(EX_PACKAGE, "\n".join(refusals))
    return images
