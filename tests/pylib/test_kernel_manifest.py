"""kernel_manifest.py: the proofs of a kernel build's manifest.json, on a
made-up manifest shaped as kernel/build writes it."""
import contextlib
import copy
import io
import os
import unittest

from tests.pylib import kernel_manifest

MANIFEST = {
    "differing_files": ["fs/eventpoll.c"],
    "eventpoll_locks": {"stock": ["rt_read_lock", "rt_read_unlock", "rt_spin_lock", "rt_spin_unlock",
                                  "rt_write_lock", "rt_write_unlock"],
                        "patched": ["rt_spin_lock", "rt_spin_unlock"]},
    "build_seconds": {"stock": 555, "patched": 15},
    "images": {"stock": {"sha256": "aa"}, "patched": {"sha256": "bb"}},
    "packages": {"stock": {"btf_eventpoll_lock": "rwlock_t"},
                 "patched": {"btf_eventpoll_lock": "spinlock_t"}},
}


HISTORICAL = {
    "images_kind": "historical", "package": "linux", "version": "6.1.8-1",
    "series": [], "differing_files": [],
    "eventpoll_source": {"historical": {"struct_eventpoll_lock": "rwlock_t",
                                        "ep_poll_callback_lock": "read_lock_irqsave"}},
    "eventpoll_locks": {"historical": ["rt_read_lock", "rt_read_unlock", "rt_write_lock"]},
    "source": {"files": [{"file": "linux_6.1.8-1.dsc", "sha256": "d1"},
                         {"file": "linux_6.1.8.orig.tar.xz", "sha256": "o1"}],
               "rt_patches": [{"patch": "a.patch"}, {"patch": "b.patch"}]},
    "images": {"historical": {"sha256": "cc"}},
}


# kernel/build's manifest of the 7.3 line as built (linux-source-7.3
# 7.3.4-1~bpo13+1, ep->lock an rwlock again against as shipped): the
# factorial's proofs as the build recorded them.
LINE_7_3 = kernel_manifest.read(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures",
                                             "kernel", "7.3", "manifest.json"))


def edited(path, value, base=MANIFEST):
    m = copy.deepcopy(base)
    d = m
    for key in path[:-1]:
        d = d[key]
    d[path[-1]] = value
    return m


def run(check, m):
    with contextlib.redirect_stdout(io.StringIO()) as out:
        failure = check(m)
    return failure, out.getvalue()


class ManifestTest(unittest.TestCase):
    def test_both_hold(self):
        self.assertEqual(run(kernel_manifest.images, MANIFEST),
                         (None, "ok: stock eventpoll.o calls rt_read_lock rt_read_unlock rt_spin_lock "
                          "rt_spin_unlock rt_write_lock rt_write_unlock\n"
                          "ok: patched eventpoll.o calls rt_spin_lock rt_spin_unlock\n"))
        self.assertEqual(run(kernel_manifest.debs, MANIFEST),
                         (None, "ok: BTF struct eventpoll.lock: stock rwlock_t, patched spinlock_t; "
                          "built in 555 s + 15 s\n"))

    def test_images_failures(self):
        for path, value, failure in (
                (["differing_files"], ["fs/eventpoll.c", "Makefile"],
                 "trees differ in ['fs/eventpoll.c', 'Makefile'], expected only fs/eventpoll.c"),
                (["eventpoll_locks", "stock"], ["rt_spin_lock"],
                 "stock eventpoll.o calls ['rt_spin_lock'], not rt_read_lock/rt_write_lock"),
                (["eventpoll_locks", "patched"], ["rt_spin_unlock"],
                 "patched eventpoll.o does not call rt_spin_lock"),
                (["eventpoll_locks", "patched"], ["rt_spin_lock", "rt_read_unlock"],
                 "patched eventpoll.o calls ['rt_read_unlock', 'rt_spin_lock']"),
                (["images", "patched", "sha256"], "aa", "stock and patched images are identical")):
            self.assertEqual(run(kernel_manifest.images, edited(path, value)), (failure, ""))

    def test_debs_failures(self):
        for path, value, failure in (
                (["differing_files"], [], "trees differ in []"),
                (["packages", "stock", "btf_eventpoll_lock"], "spinlock_t", "stock BTF lock spinlock_t"),
                (["packages", "patched", "btf_eventpoll_lock"], "rwlock_t", "patched BTF lock rwlock_t"),
                (["eventpoll_locks", "stock"], ["rt_read_lock"],
                 "stock eventpoll.o locks ['rt_read_lock'], not rt_read_lock/rt_write_lock"),
                (["eventpoll_locks", "patched"], ["rt_write_lock"],
                 "patched eventpoll.o locks ['rt_write_lock']")):
            self.assertEqual(run(kernel_manifest.debs, edited(path, value)), (failure, ""))

    def test_line_7_3_holds(self):
        self.assertEqual(run(kernel_manifest.images, LINE_7_3),
                         (None, "ok: stock eventpoll.o calls rt_read_lock rt_read_unlock rt_spin_lock "
                          "rt_spin_unlock rt_write_lock rt_write_unlock\n"
                          "ok: patched eventpoll.o calls rt_spin_lock rt_spin_unlock\n"))
        self.assertEqual(LINE_7_3["eventpoll_source"]["stock"],
                         {"struct_eventpoll_lock": "rwlock_t", "ep_poll_callback_lock": "read_lock_irqsave"})
        self.assertEqual(LINE_7_3["eventpoll_source"]["patched"]["struct_eventpoll_lock"], "spinlock_t")

    def test_line_7_3_failures(self):
        offsets = dict(LINE_7_3["probe_offsets"]["stock"])
        del offsets["eventpoll.ovflist"]
        for path, value, failure in (
                (["differing_files"], ["fs/eventpoll.c", "kernel/sched/fair.c"],
                 "trees differ in ['fs/eventpoll.c', 'kernel/sched/fair.c'], expected only fs/eventpoll.c"),
                (["eventpoll_locks", "stock"], ["rt_spin_lock", "rt_spin_unlock"],
                 "stock eventpoll.o calls ['rt_spin_lock', 'rt_spin_unlock'], "
                 "not rt_read_lock/rt_write_lock"),
                (["probe_offsets", "stock"], offsets,
                 "stock: probe offsets %s, probe_ep '+72(-8(%%di))'" % offsets)):
            self.assertEqual(run(kernel_manifest.images, edited(path, value, LINE_7_3)), (failure, ""))

    def test_historical_holds(self):
        self.assertEqual(run(kernel_manifest.historical, HISTORICAL),
                         (None, "ok: linux 6.1.8-1 as shipped: struct eventpoll's lock rwlock_t, "
                          "ep_poll_callback() read_lock_irqsave, eventpoll.o calls rt_read_lock "
                          "rt_read_unlock rt_write_lock\n"
                          "ok: 2 RT patches; linux_6.1.8-1.dsc d1, linux_6.1.8.orig.tar.xz o1\n"))

    def test_historical_failures(self):
        for path, value, failure in (
                (["images"], {"stock": {}, "patched": {}},
                 "not a historical line's manifest: images ['patched', 'stock']"),
                (["series"], ["0001.patch"], "a historical kernel has no series, but ['0001.patch']"),
                (["eventpoll_source", "historical", "struct_eventpoll_lock"], "spinlock_t",
                 "fs/eventpoll.c has spinlock_t, read_lock_irqsave"),
                (["eventpoll_locks", "historical"], ["rt_spin_lock"],
                 "eventpoll.o calls ['rt_spin_lock'], not rt_read_lock/rt_write_lock"),
                (["source", "files"], [{"file": "x.tar.xz", "sha256": "x"}],
                 "no .dsc among the source files ['x.tar.xz']")):
            self.assertEqual(run(kernel_manifest.historical, edited(path, value, HISTORICAL)), (failure, ""))


if __name__ == "__main__":
    unittest.main()
