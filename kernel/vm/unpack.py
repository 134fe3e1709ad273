"""kernel/vm/unpack.py: a guest's results archive (a tar.gz on stdin),
unpacked into a new directory as data, never as a system image.

  mk/py kernel.vm.unpack --max-bytes N DIR < results.tar.gz     (kernel/vm/boot)

The archive comes from a guest, whose root can put anything in it: a file
of mode 4755 owned by uid 0, a device node with the host disk's numbers,
a link out of DIR. Run as root, tar would recreate all of them. So only
regular files and directories are taken, each owned by whoever runs this
and given plain modes (0644, or 0755 where the archive gave the owner x;
0755 for directories): no setuid, setgid or sticky bit, no write for
others. Names must stay inside DIR (no absolute path, no '..'), each file
is created once (O_EXCL, O_NOFOLLOW), and the unpacked size is bounded by
N bytes in all (an honest archive cannot hold more than the guest's
memory, where /results lived) and by MAX_MEMBERS entries: the archive's
compressed size, which the frame around it gives, bounds nothing of what
it unpacks to.

DIR must not exist yet; on any refusal it is removed again, so a results
directory is either whole or absent.

Exit status: 0 unpacked, 64 usage, 65 the archive was refused (the reason
on stderr, naming the member), 73 DIR could not be created.
"""
import argparse
import gzip
import os
import shutil
import stat
import sys
import tarfile
import zlib

EX_USAGE, EX_DATAERR, EX_CANTCREAT = 64, 65, 73
MAX_MEMBERS = 100_000
CHUNK = 1 << 20
# tar pads its end to a 10 KiB record; anything much longer is not tar's.
MAX_TRAILER = 1 << 20


class Refused(Exception):
    """The archive holds something that is not plain data."""


def member_path(name):
    """The member's name as a relative path of normal components, or
    Refused."""
    parts = [p for p in name.split("/") if p not in ("", ".")]
    if name.startswith("/"):
        raise Refused(f"'{name}': an absolute path")
    if ".." in parts:
        raise Refused(f"'{name}': a path with '..'")
    if any("\0" in p for p in parts):
        raise Refused(f"'{name}': a name with a NUL byte")
    return parts


def make_dirs(root_fd, parts):
    """The directory parts below root_fd (created 0755 where missing), as a
    descriptor; never follows a link (there are none: none is created)."""
    fd = os.dup(root_fd)
    try:
        for p in parts:
            try:
                os.mkdir(p, 0o755, dir_fd=fd)
            except FileExistsError:
                pass
            nxt = os.open(p, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
            os.close(fd)
            fd = nxt
        return fd
    except NotADirectoryError:
        os.close(fd)
        raise Refused(f"'{'/'.join(parts)}': a directory where a file already is")
    except BaseException:
        os.close(fd)
        raise


def unpack(stream, root, max_bytes, max_members=MAX_MEMBERS):
    """Unpack the tar.gz stream into the new directory root. Returns
    (files, bytes); raises Refused."""
    os.mkdir(root, 0o755)
    root_fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    files = total = members = 0
    try:
        # gzip, not tarfile's own "r|gz": it checks the stream's CRC and
        # length at its end, which is read below.
        gz = gzip.GzipFile(fileobj=stream, mode="rb")
        with tarfile.open(fileobj=gz, mode="r|") as tar:
            for m in tar:
                members += 1
                if members > max_members:
                    raise Refused(f"more than {max_members} entries")
                parts = member_path(m.name)
                if m.isdir():
                    if parts:
                        os.close(make_dirs(root_fd, parts))
                    continue
                if not m.isreg():
                    kind = ("a symbolic link" if m.issym() else "a hard link" if m.islnk()
                            else "a device node" if m.ischr() or m.isblk()
                            else "a FIFO" if m.isfifo() else "not a regular file")
                    raise Refused(f"'{m.name}': {kind}; only regular files and directories are taken")
                if not parts:
                    raise Refused(f"'{m.name}': a file with no name")
                total += m.size
                if total > max_bytes:
                    raise Refused(f"'{m.name}': the archive unpacks to more than {max_bytes} bytes")
                d = make_dirs(root_fd, parts[:-1])
                try:
                    mode = 0o755 if m.mode & stat.S_IXUSR else 0o644
                    try:
                        fd = os.open(parts[-1], os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW,
                                     mode, dir_fd=d)
                    except FileExistsError:
                        raise Refused(f"'{m.name}': in the archive twice")
                    except IsADirectoryError:
                        raise Refused(f"'{m.name}': a file where a directory already is")
                finally:
                    os.close(d)
                src = tar.extractfile(m)
                with os.fdopen(fd, "wb") as out:
                    left = m.size
                    while left > 0:
                        chunk = src.read(min(CHUNK, left))
                        if not chunk:
                            raise Refused(f"'{m.name}': cut short")
                        out.write(chunk)
                        left -= len(chunk)
                    # The umask must not take what the mode above gives.
                    os.fchmod(out.fileno(), mode)
                files += 1
        # The rest of the stream, after the archive's end: zeros, then the
        # gzip trailer, which the read to its end checks.
        rest = 0
        while chunk := gz.read(CHUNK):
            rest += len(chunk)
            if rest > MAX_TRAILER:
                raise Refused(f"more than {MAX_TRAILER} bytes after the archive's end")
    except (tarfile.TarError, EOFError, zlib.error, gzip.BadGzipFile) as e:
        raise Refused(f"damaged: {e}")
    finally:
        os.close(root_fd)
    return files, total


def main(argv=None):
    ap = argparse.ArgumentParser(prog="unpack", description=__doc__.split("\n\n")[0])
    ap.add_argument("--max-bytes", type=int, required=True, help="the unpacked size allowed, in all")
    ap.add_argument("dir", help="the directory to create")
    try:
        args = ap.parse_args(argv)
    except SystemExit as e:
        return EX_USAGE if e.code else 0
    if args.max_bytes <= 0:
        print("unpack: --max-bytes must be positive", file=sys.stderr)
        return EX_USAGE
    try:
        files, total = unpack(sys.stdin.buffer, args.dir, args.max_bytes)
    except FileExistsError:
        print(f"unpack: {args.dir} already exists", file=sys.stderr)
        return EX_CANTCREAT
    except Refused as e:
        shutil.rmtree(args.dir, ignore_errors=True)
        print(f"unpack: the results archive was refused: {e}", file=sys.stderr)
        return EX_DATAERR
    except OSError as e:
        shutil.rmtree(args.dir, ignore_errors=True)
        print(f"unpack: {args.dir}: {e.strerror}", file=sys.stderr)
        return EX_CANTCREAT
    print(f"unpack: {files} files, {total} bytes", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
