"""lab/labkit/kernels: what a kernel package must have for the demo's
guest, read from its config and BTF; the packages' files found in either
of Debian's layouts; a refusal naming what is missing."""
import os
import subprocess
import tempfile
import unittest

from lab.labkit import kernels
from lab.labkit import run as labrun

FACTS = "eventpoll_lock spinlock_t\nthrottle_model task\nprobe_ep +72(-8(%di))\n"
CONFIG = "".join(f"CONFIG_{o}=y\n" for o, _ in kernels.GUEST_NEEDS)


def deb(d, name, files):
    """A Debian package NAME.deb in D holding FILES {path: bytes}."""
    root = os.path.join(d, name)
    os.makedirs(os.path.join(root, "DEBIAN"))
    with open(os.path.join(root, "DEBIAN", "control"), "w") as f:
        f.write(f"Package: {name}\nVersion: 1\nArchitecture: all\n"
                "Maintainer: t <t@localhost>\nDescription: t\n")
    for path, data in files.items():
        os.makedirs(os.path.dirname(os.path.join(root, path)), exist_ok=True)
        with open(os.path.join(root, path), "wb") as f:
            f.write(data)
    subprocess.run(["dpkg-deb", "--root-owner-group", "--build", root, f"{root}.deb"], check=True,
                   capture_output=True)
    return f"{root}.deb"


class CheckTest(unittest.TestCase):
    def test_every_need_built_in(self):
        self.assertEqual(kernels.check_package(CONFIG, FACTS), [])

    def test_missing_module_and_off_named(self):
        config = (CONFIG.replace("CONFIG_KPROBES=y", "# CONFIG_KPROBES is not set")
                  .replace("CONFIG_SERIAL_8250=y", "CONFIG_SERIAL_8250=m")
                  .replace("CONFIG_CFS_BANDWIDTH=y\n", ""))
        got = kernels.check_package(config, FACTS)
        self.assertEqual(len(got), 3, got)
        self.assertRegex(got[0], r"^CONFIG_KPROBES \(=n: kprobes")
        self.assertRegex(got[1], r"^CONFIG_CFS_BANDWIDTH \(=n: CFS bandwidth control")
        self.assertRegex(got[2], r"^CONFIG_SERIAL_8250=m, a module .*the guest loads no modules")

    def test_btf_needed_and_its_probe_offsets(self):
        self.assertRegex(kernels.check_package(CONFIG, "untold it has no BTF")[0],
                         r"^BTF with struct eventpoll \(its lock type: it has no BTF\)")
        got = kernels.check_package(CONFIG, FACTS.replace("+72(-8(%di))", "+80(-8(%di))"))
        self.assertRegex(got[0], r"BTF gives ep_poll_callback's epoll instance at \+80\(-8\(%di\)\), "
                         r"lab/ktrace/ktrace reads \+72")


class PackageTest(unittest.TestCase):
    def test_layouts_and_refusal(self):
        with tempfile.TemporaryDirectory() as d:
            image = deb(d, "img", {"boot/vmlinuz-7.0-rt": b"not a kernel",
                                   "boot/config-7.0-rt": CONFIG.encode()})
            out = os.path.join(d, "o1")
            os.makedirs(out)
            self.assertEqual(kernels._package_files([image], out), ("7.0-rt", []))
            with open(os.path.join(out, "config"), "rb") as f:
                self.assertEqual(f.read(), CONFIG.encode())
            binary = deb(d, "bin", {"usr/lib/modules/7.3-rt/vmlinuz": b"x"})
            base = deb(d, "base", {"usr/lib/modules/7.3-rt/config": b"CONFIG_X=y\n"})
            out = os.path.join(d, "o2")
            os.makedirs(out)
            self.assertEqual(kernels._package_files([binary, base], out), ("7.3-rt", []))
            release, problems = kernels._package_files([binary], out)
            self.assertRegex(problems[0], r"^no config for 7.3-rt .*linux-base-\* package")
            with open(os.devnull, "w") as devnull:
                r = labrun.Run("t", d, out=devnull)
                with self.assertRaises(labrun.LabError) as e:
                    kernels.packages(r, {"stock": image, "patched": f"{binary},{base}"})
            self.assertEqual(e.exception.code, kernels.EX_PACKAGE)
            said = str(e.exception).splitlines()
            self.assertRegex(said[0], r"^the stock package \(.*img.deb\) cannot run the guest: "
                             r"BTF with struct eventpoll")
            self.assertRegex(said[1], r"^the patched package .* cannot run the guest: CONFIG_PREEMPT_RT \(=n")
            self.assertTrue(os.path.isfile(r.path("kernel-stock", "package.json")))


if __name__ == "__main__":
    unittest.main()
