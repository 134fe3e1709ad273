#!/usr/bin/env python3
"""Clients that hold relay's admin endpoint to its limits, on 127.0.0.1
(tests/integration/relay_admin_limits.sh). Each exits 0 saying what it
saw, or 1 naming what did not hold.

  admin_client.py long-header PORT
      a request whose header never ends (2 MiB of it, in 8 s at most) must
      be cut off: reset, closed, or answered 4xx
  admin_client.py silent PORT
      a connection that says nothing must be closed within 11 s
  admin_client.py cap PORT PID
      40 idle connections may take at most 16 of process PID's
      descriptors; a request for /healthz behind them must be answered 200
"""
import argparse
import os
import socket
import sys
import time

HOST = "127.0.0.1"
# One line of the header that never ends.
PAD = b"X-Pad: " + b"a" * 1000 + b"\r\n"


class Failed(Exception):
    """What a client checked did not hold."""


def long_header(port, size=2 << 20, seconds=8, wait=3):
    """Send a header that never ends, SIZE bytes in SECONDS at most; the
    server must cut it off (a reset, a close or a 4xx answer, at the latest
    WAIT s after the last line). Returns the bytes sent."""
    with socket.create_connection((HOST, port)) as s:
        s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n")
        sent, cut = 0, False
        deadline = time.monotonic() + seconds
        try:
            while sent < size and time.monotonic() < deadline:
                s.sendall(PAD)
                sent += len(PAD)
        except (BrokenPipeError, ConnectionResetError):
            cut = True
        if not cut:
            s.settimeout(wait)
            try:
                d = s.recv(100)
                cut = d == b"" or d.startswith(b"HTTP/1.1 4")
            except ConnectionResetError:
                cut = True
            except socket.timeout:
                cut = False
    if not cut:
        raise Failed("a %d-byte header was still being read" % sent)
    return sent


def silent(port, within=11, timeout=12):
    """A connection that sends nothing must be closed (FIN or reset) within
    WITHIN s, with no byte sent to it. Returns how long that took."""
    with socket.create_connection((HOST, port)) as s:
        s.settimeout(timeout)
        t0 = time.monotonic()
        try:
            d = s.recv(100)
        except ConnectionResetError:
            d = b""
        except socket.timeout:
            raise Failed("a silent connection was still open after %g s" % timeout) from None
        took = time.monotonic() - t0
    if d != b"" or took >= within:
        raise Failed("a silent connection got %r after %.1f s (limit %g s)" % (d, took, within))
    return took


def settled(count, settle):
    """COUNT() once it has stopped changing: SETTLE s, then until two reads
    SETTLE/4 apart agree (at most 10 x SETTLE in all), so that a server a
    loaded host slows down still gets to accept what it will."""
    time.sleep(settle)
    deadline = time.monotonic() + 9 * settle
    now = count()
    while time.monotonic() < deadline:
        time.sleep(settle / 4)
        before, now = now, count()
        if now == before:
            break
    return now


def cap(port, fds, idle=40, limit=16, settle=1, timeout=30):
    """IDLE connections held SETTLE s may take at most LIMIT more of the
    server's descriptors (FDS() counts them); a request for /healthz behind
    them must be answered 200 within TIMEOUT s. Returns the descriptors
    they took and how long the request took."""
    base = fds()
    conns = []
    try:
        for _ in range(idle):
            conns.append(socket.create_connection((HOST, port)))
        held = settled(fds, settle) - base
        if held > limit:
            raise Failed("%d idle admin connections took %d descriptors" % (idle, held))
        t0 = time.monotonic()
        with socket.create_connection((HOST, port)) as s:
            s.settimeout(timeout)
            s.sendall(b"GET /healthz HTTP/1.0\r\n\r\n")
            try:
                reply = s.recv(100)
            except socket.timeout:
                raise Failed("a request behind %d idle connections was not answered within %g s"
                             % (idle, timeout)) from None
        took = time.monotonic() - t0
        if not reply.startswith(b"HTTP/1.0 200"):
            raise Failed("a request behind %d idle connections was answered %r" % (idle, reply))
        return held, took
    finally:
        for c in conns:
            c.close()


def proc_fds(pid):
    """A counter of process PID's open descriptors."""
    return lambda: len(os.listdir("/proc/%d/fd" % pid))


def main(argv):
    p = argparse.ArgumentParser(prog="admin_client.py", description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    for name in ("long-header", "silent", "cap"):
        c = sub.add_parser(name)
        c.add_argument("port", type=int)
        if name == "cap":
            c.add_argument("pid", type=int)
    a = p.parse_args(argv)
    try:
        if a.cmd == "long-header":
            print("cut off after %d bytes sent" % long_header(a.port))
        elif a.cmd == "silent":
            print("silent connection closed after %.1f s" % silent(a.port))
        else:
            held, took = cap(a.port, proc_fds(a.pid))
            print("40 idle connections held %d descriptors; a request behind them answered in %.1f s"
                  % (held, took))
    except Failed as e:
        print("admin_client.py %s: %s" % (a.cmd, e), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
