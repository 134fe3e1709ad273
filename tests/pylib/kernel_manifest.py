"""The proofs in the manifest.json of a kernel build (kernel/build): the
trees differ only by the series, and the stock kernel's eventpoll takes the
RT rwlock where the patched one takes the RT spinlock.

  kernel_manifest.py images MANIFEST   tests/vm/kernel_build_proofs.sh: the
                                       images' manifest (nm of eventpoll.o,
                                       the two images differ)
  kernel_manifest.py debs MANIFEST     tests/vm/kernel_debs.sh: the
                                       packages' manifest (nm, and the lock
                                       type in each package's BTF)
  kernel_manifest.py historical MANIFEST
                                       a historical line's manifest (one
                                       image, Debian's tree as shipped: the
                                       rwlock in its source and its
                                       eventpoll.o, its source verified)
"""
import json
import sys


def read(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def rwlock_calls(locks):
    return [x for x in locks if x.startswith(("rt_read", "rt_write"))]


def probe_offsets(m):
    """A failure of the probe offsets M records for each kernel, or None;
    a manifest from before they were recorded has none to check."""
    for k, offsets in m.get("probe_offsets", {}).items():
        if len(offsets) != 8 or not m["probe_ep"][k].endswith("(%di))"):
            return "%s: probe offsets %s, probe_ep %r" % (k, offsets, m["probe_ep"][k])
    return None


def images(m):
    """The first failure of the images' manifest M, or None (then prints
    what each eventpoll.o calls)."""
    if m["differing_files"] != ["fs/eventpoll.c"]:
        return "trees differ in %s, expected only fs/eventpoll.c" % m["differing_files"]
    s, p = set(m["eventpoll_locks"]["stock"]), set(m["eventpoll_locks"]["patched"])
    if not {"rt_read_lock", "rt_write_lock"} <= s:
        return "stock eventpoll.o calls %s, not rt_read_lock/rt_write_lock" % sorted(s)
    if "rt_spin_lock" not in p:
        return "patched eventpoll.o does not call rt_spin_lock"
    if rwlock_calls(p):
        return "patched eventpoll.o calls %s" % sorted(p)
    if m["images"]["stock"]["sha256"] == m["images"]["patched"]["sha256"]:
        return "stock and patched images are identical"
    bad = probe_offsets(m)
    if bad:
        return bad
    print("ok: stock eventpoll.o calls", " ".join(sorted(s)))
    print("ok: patched eventpoll.o calls", " ".join(sorted(p)))
    return None


def debs(m):
    """The first failure of the packages' manifest M, or None (then prints
    the BTF proof and the build times)."""
    p = m["packages"]
    if m["differing_files"] != ["fs/eventpoll.c"]:
        return "trees differ in %s" % m["differing_files"]
    if p["stock"]["btf_eventpoll_lock"] != "rwlock_t":
        return "stock BTF lock %s" % p["stock"]["btf_eventpoll_lock"]
    if p["patched"]["btf_eventpoll_lock"] != "spinlock_t":
        return "patched BTF lock %s" % p["patched"]["btf_eventpoll_lock"]
    locks = m["eventpoll_locks"]
    if not {"rt_read_lock", "rt_write_lock"} <= set(locks["stock"]):
        return "stock eventpoll.o locks %s, not rt_read_lock/rt_write_lock" % sorted(locks["stock"])
    if rwlock_calls(locks["patched"]):
        return "patched eventpoll.o locks %s" % sorted(locks["patched"])
    print("ok: BTF struct eventpoll.lock: stock rwlock_t, patched spinlock_t; "
          "built in %(stock)s s + %(patched)s s" % m["build_seconds"])
    return None


def historical(m):
    """The first failure of a historical line's manifest M, or None (then
    prints what it proves)."""
    if m.get("images_kind") != "historical" or list(m["images"]) != ["historical"]:
        return "not a historical line's manifest: images %s" % sorted(m["images"])
    if m["series"] or m["differing_files"]:
        return "a historical kernel has no series, but %s" % (m["series"] or m["differing_files"])
    src = m["eventpoll_source"]["historical"]
    if (src["struct_eventpoll_lock"], src["ep_poll_callback_lock"]) != ("rwlock_t", "read_lock_irqsave"):
        return "fs/eventpoll.c has %(struct_eventpoll_lock)s, %(ep_poll_callback_lock)s" % src
    locks = set(m["eventpoll_locks"]["historical"])
    if not {"rt_read_lock", "rt_write_lock"} <= locks:
        return "eventpoll.o calls %s, not rt_read_lock/rt_write_lock" % sorted(locks)
    files = {f["file"]: f["sha256"] for f in m["source"]["files"]}
    if not any(f.endswith(".dsc") for f in files):
        return "no .dsc among the source files %s" % sorted(files)
    print("ok: %s %s as shipped: struct eventpoll's lock %s, ep_poll_callback() %s, eventpoll.o calls %s"
          % (m["package"], m["version"], src["struct_eventpoll_lock"], src["ep_poll_callback_lock"],
             " ".join(sorted(locks))))
    print("ok: %d RT patches; %s" % (len(m["source"]["rt_patches"]),
                                     ", ".join("%s %s" % kv for kv in sorted(files.items()))))
    return None


CHECKS = {"images": images, "debs": debs, "historical": historical}

if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in CHECKS:
        sys.exit(__doc__)
    failure = CHECKS[sys.argv[1]](read(sys.argv[2]))
    if failure:
        print("FAIL:", failure, file=sys.stderr)
        sys.exit(1)
