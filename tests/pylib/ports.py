#!/usr/bin/env python3
"""Loopback ports for the tests and benchmarks.

  ports.py free udp|tcp LEDGER
      print a port that nothing on 127.0.0.1 listens on now and that the
      file LEDGER (lines "udp/PORT", "tcp/PORT"; made when missing) does not
      name, and add it there: the kernel may pick a port twice, and two
      listeners of one test on one port would share its traffic.
  ports.py hold udp|tcp PORT FILE SECONDS
      bind PORT (0: any free one) on 127.0.0.1 (and listen, for tcp), write
      the port to FILE once bound, keep it SECONDS, then exit.
  ports.py unbound udp|tcp PORT
      exit 0 when nothing holds PORT on 127.0.0.1 now (a bind without
      SO_REUSEPORT succeeds), 1 when something does.

Bad arguments exit 64, no port found 69.
"""
import os
import socket
import sys
import time

KINDS = {"udp": socket.SOCK_DGRAM, "tcp": socket.SOCK_STREAM}
TRIES = 100


class UsageError(Exception):
    pass


def kind_of(name):
    try:
        return KINDS[name]
    except KeyError:
        raise UsageError("unknown socket kind '%s' (udp or tcp)" % name) from None


def read_ledger(path):
    try:
        with open(path) as f:
            return set(f.read().split())
    except FileNotFoundError:
        return set()


def free_port(kind, ledger, bind=None):
    """A port of KIND ("udp", "tcp") that LEDGER does not name; recorded there.

    bind(kind) returns a port the kernel picked (for the tests: a fake).
    """
    sock_kind = kind_of(kind)
    bind = bind or (lambda _: _bind_any(sock_kind))
    given = read_ledger(ledger)
    for _ in range(TRIES):
        key = "%s/%d" % (kind, bind(kind))
        if key not in given:
            with open(ledger, "a") as f:
                f.write(key + "\n")
            return int(key.split("/")[1])
    raise LookupError("no new %s port in %d tries" % (kind, TRIES))


def _bind_any(sock_kind):
    with socket.socket(socket.AF_INET, sock_kind) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def hold(kind, port, path, seconds, sleep=time.sleep):
    """Bind PORT of KIND, write its number to PATH (atomically), keep it SECONDS."""
    sock_kind = kind_of(kind)
    with socket.socket(socket.AF_INET, sock_kind) as s:
        s.bind(("127.0.0.1", port))
        if sock_kind == socket.SOCK_STREAM:
            s.listen()
        with open(path + ".tmp", "w") as f:
            f.write("%d\n" % s.getsockname()[1])
        os.rename(path + ".tmp", path)
        sleep(seconds)


def unbound(kind, port):
    """True when PORT of KIND can be bound on 127.0.0.1 now (no SO_REUSEPORT)."""
    with socket.socket(socket.AF_INET, kind_of(kind)) as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def _number(what, text):
    try:
        n = float(text) if what == "SECONDS" else int(text)
    except ValueError:
        raise UsageError("%s: '%s' is not a number" % (what, text)) from None
    if n < 0 or (what == "PORT" and n > 65535):
        raise UsageError("%s: %s is out of range" % (what, text))
    return n


def main(argv):
    try:
        if len(argv) == 3 and argv[0] == "free":
            print(free_port(argv[1], argv[2]))
        elif len(argv) == 5 and argv[0] == "hold":
            hold(argv[1], _number("PORT", argv[2]), argv[3], _number("SECONDS", argv[4]))
        elif len(argv) == 3 and argv[0] == "unbound":
            return 0 if unbound(argv[1], _number("PORT", argv[2])) else 1
        else:
            raise UsageError("usage: ports.py free udp|tcp LEDGER | "
                             "hold udp|tcp PORT FILE SECONDS | unbound udp|tcp PORT")
    except UsageError as e:
        print("ports.py: %s" % e, file=sys.stderr)
        return 64
    except LookupError as e:
        print("ports.py: %s" % e, file=sys.stderr)
        return 69
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
