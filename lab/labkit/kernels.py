"""The stock and patched kernel images: make builds them (or takes them
from the cache), kernel/build --print-images says where they are."""
import os
import subprocess

from . import TOP
from .run import EX_KERNELS, LabError

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
