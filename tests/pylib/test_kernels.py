"""lab/labkit/kernels: what a kernel package must have for the demo's
guest, read from its config and BTF; the packages' files found in either
of Debian's layouts; a refusal naming what is missing."""
import json
import os
import subprocess
import tempfile
import unittest

from lab.labkit import kernels
from lab.labkit import run as labrun

FACTS = ("eventpoll_lock spinlock_t\nthrottle_model task\noffset eventpoll.lock 144\noffset epitem.ep 72\n"
         "probe_ep +72(-8(%di))\n")
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
        # other offsets are the image's own: the probe takes them
        self.assertEqual(kernels.check_package(CONFIG, FACTS.replace("+72(-8(%di))", "+80(-8(%di))")), [])
        for gone in ("probe_ep +72(-8(%di))\n", "offset eventpoll.lock 144\n"):
            got = kernels.check_package(CONFIG, FACTS.replace(gone, ""))
            self.assertRegex(got[0], r"^the trace probe's offsets .* in its BTF")

    def test_btf_facts(self):
        self.assertEqual(kernels.btf_facts(FACTS + "offset eventpoll.wq x\nalone\n"),
                         {"eventpoll_lock": "spinlock_t", "throttle_model": "task",
                          "probe_ep": "+72(-8(%di))",
                          "offsets": {"eventpoll.lock": 144, "epitem.ep": 72}})


def manifest(d, kind, doc, image):
    """IMAGE in D beside a manifest.json of DOC: its path."""
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "manifest.json"), "w") as f:
        json.dump(dict(doc, images_kind=kind), f)
    open(os.path.join(d, image), "w").close()
    return os.path.join(d, image)


class FactsTest(unittest.TestCase):
    """What the driver knows of an image before it boots, from whatever is
    beside it, and where each fact came from."""

    def test_each_source(self):
        offs = {"eventpoll.lock": 152, "epitem.ep": 80}
        with tempfile.TemporaryDirectory() as d:
            deb_img = manifest(os.path.join(d, "deb"), "debian-image", {
                "obtained": "Debian's linux-image-x 1, as shipped",
                "kernel_release": "6.16.12+deb13-rt-amd64",
                "btf_eventpoll_lock": "rwlock_t", "btf_throttle_model": "cfs_rq", "btf_offsets": offs,
                "probe_ep": "+80(-8(%di))"}, "vmlinuz")
            f = kernels.facts(deb_img)
            self.assertEqual((f["lock"], f["lock_from"], f["throttle_model"], f["throttle_from"],
                              f["probe_ep"], f["offsets"], f["offsets_from"]),
                             ("rwlock_t", "its BTF", "cfs_rq", "its BTF", "+80(-8(%di))", offs, "its BTF"))
            built = {"package": "linux-source-7.3", "version": "7.3.4-1",
                     "kernel_releases": {"stock": "7.3.4-relay-stock", "patched": "7.3.4-relay-patched"},
                     "eventpoll_source": {"stock": {"struct_eventpoll_lock": "rwlock_t"},
                                          "patched": {"struct_eventpoll_lock": "spinlock_t"}},
                     "probe_offsets": {"stock": offs, "patched": offs},
                     "probe_ep": {"stock": "+80(-8(%di))", "patched": "+80(-8(%di))"}}
            stock = manifest(os.path.join(d, "ab"), "ab", built, "bzImage-stock")
            f = kernels.facts(stock)
            self.assertEqual((f["release"], f["lock"], f["throttle_model"], f["probe_ep"], f["offsets_from"]),
                             ("7.3.4-relay-stock", "rwlock_t", None, "+80(-8(%di))",
                              "its compiler (kernel/build)"))
            self.assertEqual(f["obtained"], "Debian's linux-source-7.3 7.3.4-1, the fix reversed "
                             "(built by kernel/build)")
            # a manifest from before the offsets were recorded: said so
            old = manifest(os.path.join(d, "old"), "ab", {k: v for k, v in built.items()
                                                          if not k.startswith("probe")}, "bzImage-patched")
            f = kernels.facts(old)
            self.assertEqual((f["lock"], f["probe_ep"], f["offsets"]),
                             ("spinlock_t", kernels.ASSUMED_PROBE_EP, {"eventpoll.lock": 144}))
            self.assertRegex(f["offsets_from"], r"^assumed: nothing beside the image records them")
            with open(os.devnull, "w") as devnull:
                r = labrun.Run("t", d, out=devnull)
                got, probes = kernels.described(r.dir, {"stock": stock, "patched": deb_img},
                                                {"stock": "7.3.4-relay-stock (root@h) #1", "patched": None})
                self.assertEqual(probes, [{"release": "7.3.4-relay-stock", "ep": "+80(-8(%di))"},
                                          {"release": "6.16.12+deb13-rt-amd64", "ep": "+80(-8(%di))"}])
                with open(r.path("stock", "kernel.json")) as f:
                    self.assertEqual(json.load(f)["lock"], "rwlock_t")
                # one release, two layouts: one initramfs cannot hold both
                with self.assertRaises(labrun.LabError):
                    kernels.described(r.dir, {"stock": stock, "patched": old},
                                      {"stock": "7.3.4-relay-stock", "patched": "7.3.4-relay-stock"})


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
