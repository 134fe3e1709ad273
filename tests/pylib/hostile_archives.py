#!/usr/bin/env python3
"""mk/py tests.pylib.hostile_archives DIR: write the corpus of guest results
frames that tests/integration/vm_boot_results.sh replays through
kernel/vm/boot (DIR: tests/fixtures/hostile/vm-results).

Each case is NAME.frame, the bytes a guest writes to its results port
(vm-finish's frame: "RELAY-VM-RESULTS-BEGIN bytes=N", a tar.gz of N
bytes, "RELAY-VM-RESULTS-END status=S"), and a line of expect.tsv: NAME,
boot's exit status, its outcome word, what the case is. The archives are
made here, not by a guest, so that they can hold what a guest's root
could put there: owners, setuid modes, device nodes, links, names that
leave the directory, more data than the guest had memory.
"""
import gzip
import io
import os
import sys
import tarfile

from tests.pylib.corpus import write_expect


def member(name, data=b"", **kw):
    info = tarfile.TarInfo(name)
    info.size = len(data)
    info.mtime = 1735689600
    for k, v in kw.items():
        setattr(info, k, v)
    return info, io.BytesIO(data) if data else None


def archive(members):
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.GNU_FORMAT) as tar:
        tar.addfile(*member(".", type=tarfile.DIRTYPE, mode=0o755))
        for info, data in members:
            tar.addfile(info, data)
    return gzip.compress(raw.getvalue(), mtime=0)


def frame(body, status=0, bytes_word=None):
    word = str(len(body)) if bytes_word is None else bytes_word
    return (b"noise before the frame\n" + f"RELAY-VM-RESULTS-BEGIN bytes={word}\n".encode() + body
            + f"RELAY-VM-RESULTS-END status={status}\n".encode())


def zeros_archive(size):
    """One file of size zero bytes, compressed as the stream goes (a few
    hundred KiB for 130 MiB)."""
    raw = io.BytesIO()
    gz = gzip.GzipFile(fileobj=raw, mode="wb", mtime=0)
    with tarfile.open(fileobj=gz, mode="w|", format=tarfile.GNU_FORMAT) as tar:
        info = tarfile.TarInfo("./big")
        info.size = size
        info.mode = 0o644

        class Zeros(io.RawIOBase):
            left = size

            def readable(self):
                return True

            def readinto(self, b):
                n = min(len(b), self.left)
                b[:n] = bytes(n)
                self.left -= n
                return n
        tar.addfile(info, io.BufferedReader(Zeros(), 1 << 20))
    gz.close()
    return raw.getvalue()


def ok():
    return archive([member("./scenario.json", b'{"ok": true}\n', mode=0o644),
                    member("./sub", type=tarfile.DIRTYPE, mode=0o755),
                    member("./sub/tool", b"#!/bin/sh\necho hi\n", mode=0o755)])


CASES = [
    ("plain", frame(ok()), 0, "ok", "an ordinary archive: files and modes as sent"),
    ("setuid-root", frame(archive([member("./tool", b"\x7fELF not really\n", mode=0o4755, uid=0, gid=0,
                                          uname="root", gname="root")])),
     0, "ok", "a setuid file owned by root: taken as a plain 0755 file of the caller's"),
    ("world-writable", frame(archive([member("./w", b"x\n", mode=0o6777, uid=1234),
                                      member("./d", type=tarfile.DIRTYPE, mode=0o1777)])),
     0, "ok", "setgid, sticky and o+w bits: dropped"),
    ("block-device", frame(archive([member("./sda", type=tarfile.BLKTYPE, mode=0o666, devmajor=8,
                                           devminor=0)])),
     4, "no-results", "a block device node with the host disk's numbers: refused"),
    ("char-device", frame(archive([member("./mem", type=tarfile.CHRTYPE, mode=0o666, devmajor=1,
                                          devminor=1)])),
     4, "no-results", "/dev/mem's numbers: refused"),
    ("fifo", frame(archive([member("./p", type=tarfile.FIFOTYPE, mode=0o644)])),
     4, "no-results", "a FIFO: refused"),
    ("symlink-out", frame(archive([member("./link", type=tarfile.SYMTYPE, linkname="/etc/passwd")])),
     4, "no-results", "a link out of the results: refused"),
    ("hardlink", frame(archive([member("./h", type=tarfile.LNKTYPE, linkname="/etc/shadow")])),
     4, "no-results", "a hard link: refused"),
    ("dotdot", frame(archive([member("../escaped", b"x\n", mode=0o644)])),
     4, "no-results", "a name with '..': refused"),
    ("absolute", frame(archive([member("/tmp/escaped", b"x\n", mode=0o644)])),
     4, "no-results", "an absolute name: refused"),
    ("twice", frame(archive([member("./a", b"1\n"), member("./a", b"2\n")])),
     4, "no-results", "one name twice (the second would overwrite): refused"),
    ("file-then-dir", frame(archive([member("./a", b"1\n"), member("./a/b", b"2\n")])),
     4, "no-results", "a file, then a path through it: refused"),
    ("octal-bytes", frame(ok(), bytes_word="0" + str(len(ok()))),
     0, "ok", "bytes= with a leading 0: decimal, not octal"),
    ("huge-bytes", frame(ok(), bytes_word="99999999999999999999"),
     4, "no-results", "bytes= of 20 digits: no frame"),
    ("bytes-over-memory", frame(ok(), bytes_word="999999999999"),
     4, "no-results", "bytes= beyond the guest's memory: refused before reading"),
    ("bomb", frame(zeros_archive(130 << 20)),
     4, "no-results", "130 MiB of zeros in a few hundred KiB, from a 128 MiB guest: refused"),
    ("damaged", frame(ok()[:-40] + b"\0" * 40),
     4, "no-results", "a damaged archive: refused"),
    ("guest-failed", frame(ok(), status=3),
     1, "failed", "the guest reports a failure: its results kept"),
]


def main(out):
    os.makedirs(out, exist_ok=True)
    for name, body, _, _, _ in CASES:
        with open(os.path.join(out, name + ".frame"), "wb") as f:
            f.write(body)
    write_expect(out, ("exit status of kernel/vm/boot", "outcome", "what it is"),
                 [(name, rc, outcome, what) for name, _, rc, outcome, what in CASES],
                 "tests/pylib/hostile_archives.py")


if __name__ == "__main__":
    main(sys.argv[1])
