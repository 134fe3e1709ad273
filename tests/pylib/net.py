#!/usr/bin/env python3
"""Socket clients and servers of the integration tests, all on 127.0.0.1.

Servers (run until killed, or for as long as they say):
  net.py echo-server PORT          TCP: each connection echoed until EOF, a
                                   thread each
  net.py reset-server PORT         TCP: each connection read once, then reset
  net.py udp-silent PORT READY [--seconds S]
                                   UDP: PORT bound, READY made, nothing read
                                   or answered for S seconds
  net.py udp-junk-echo PORT READY [--idle S]
                                   UDP: each datagram echoed, then one that
                                   answers nothing sent; READY made once
                                   bound; ends after S seconds without one

Clients (exit 0 when what they check holds, 1 naming what did not):
  net.py ipv6-loopback             exit 0 when ::1 can be bound
  net.py send-expect PORT DATA [--half-close] [--timeout S]
                                   DATA sent, the same bytes must come back
                                   (--half-close: shut the sending side,
                                   read to EOF)
  net.py expect-close PORT DATA [--timeout S]
                                   DATA sent, the peer must close (FIN or
                                   reset)
  net.py expect-reset PORT DATA [--timeout S]
                                   DATA sent, the peer must reset, no byte
                                   before
  net.py stall-reader PORT REQUEST [--rcvbuf N] [--pause S] [--timeout S]
                                   REQUEST sent, nothing read for S seconds,
                                   then the peer must reset (not FIN)
  net.py hold-partial-tls PORT N READY [--timeout S]
                                   N handshakes stopped after a record
                                   header's 3 bytes; READY made; each must be
                                   closed within S seconds
  net.py http-clients PORT N READY [--timeout S]
                                   N connections each send GET / first, then
                                   READY is made; each answer must end "ok"
  net.py tls-keep PORT CA READY GO DONE [--wait S]
                                   one TLS connection (CA, name localhost):
                                   GET /, READY made, GO waited for (at most
                                   S seconds), GET / again, DONE made
  net.py silent-clients PORT LIMIT DEADLINE_S
                                   first-byte deadline and connections per
                                   source (tests/integration/tcp_silence.sh)
  net.py source-limit-one PORT HOLD_S
                                   one connection per source, none silent
                                   after HOLD_S (tcp_silence.sh's reload)
  net.py storm READY UNTIL SECONDS [--tcp N:PORT]... [--udp N:PORT]...
                                   N connections (unanswered connects) to
                                   each TCP PORT, a datagram from N sources
                                   to each UDP PORT; READY made; all held
                                   until UNTIL exists (at most SECONDS)
  net.py udp-waiter PORT NEWCOMERS a request, NEWCOMERS new sources, then its
                                   reply ("up:" + request) and a second
                                   request's must come
  net.py udp-send PORT N DATA [--burst K --gap S]
                                   DATA from N new sources, once each (a
                                   pause of S seconds after every K)
  net.py udp-retry PORT OLD NEW READY [--every S] [--tries N]
                                   a request answered OLD + it, READY made,
                                   then one every S seconds until one is
                                   answered NEW + it (N at most)
  net.py udp-keep PORT OLD NEW READY GO DONE [--wait S]
                                   one UDP client socket: k0 answered
                                   OLD + k0, READY made, GO waited for (at
                                   most S seconds), k1..k5 answered NEW +
                                   each, DONE made
  net.py udp-probe PORT [--sources N] [--wait S]
                                   a datagram from each of N new sources:
                                   prints how many came back (the same
                                   bytes) within S seconds
"""
import argparse
import contextlib
import os
import select
import socket
import ssl
import struct
import sys
import threading
import time

HOST = "127.0.0.1"
# The start of a TLS record (a handshake, TLS 1.0), and no more.
TLS_RECORD_HEAD = b"\x16\x03\x01"
# What udp-junk-echo sends after each echo: a reply to nothing sent.
JUNK = b"not a loadgen reply"


class Failed(Exception):
    """What a client checked did not hold."""


def touch(path):
    """Make the empty file PATH."""
    open(path, "w").close()


def connect(port, timeout, source=None):
    """A TCP connection to 127.0.0.1:PORT (from SOURCE, an address)."""
    return socket.create_connection((HOST, port), timeout, (source, 0) if source else None)


def listener(port, backlog=128):
    """A TCP socket listening on 127.0.0.1:PORT (0: any free port)."""
    return socket.create_server((HOST, port), backlog=backlog)


def ipv6_loopback():
    """True when ::1 can be bound."""
    try:
        with socket.socket(socket.AF_INET6) as s:
            s.bind(("::1", 0))
        return True
    except OSError:
        return False


def _serve(lsock, handle, stop, idle):
    """Accept on LSOCK until STOP is set, HANDLE(conn) in a thread each."""
    lsock.settimeout(0.2)
    while not stop.is_set():
        try:
            c, _ = lsock.accept()
        except socket.timeout:
            continue
        c.settimeout(idle)
        threading.Thread(target=handle, args=(c,), daemon=True).start()


def echo_server(lsock, stop=None, idle=None):
    """Echo each connection to LSOCK until its EOF (IDLE: a read's timeout)."""
    def echo(c):
        with c, contextlib.suppress(ConnectionResetError):
            while d := c.recv(65536):
                c.sendall(d)
    _serve(lsock, echo, stop or threading.Event(), idle)


def reset_server(lsock, stop=None, idle=None):
    """Read once from each connection to LSOCK, then reset it."""
    def reset(c):
        c.recv(100)
        c.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        c.close()
    _serve(lsock, reset, stop or threading.Event(), idle)


def read_to_end(s, timeout, allow_data=True):
    """How the peer ends S: "fin" or "reset" (a read waits TIMEOUT at most)."""
    s.settimeout(timeout)
    got = 0
    try:
        while True:
            d = s.recv(1 << 20)
            if not d:
                return "fin"
            if not allow_data:
                raise Failed("got %r, not the end of the connection" % d[:40])
            got += len(d)
    except ConnectionResetError:
        return "reset"
    except socket.timeout:
        raise Failed("the connection was not closed within %g s (%d bytes read)"
                     % (timeout, got)) from None


def send_expect(port, data, half_close=False, timeout=5):
    """Send DATA to PORT; the same bytes must come back."""
    with connect(port, timeout) as s:
        s.sendall(data)
        got = b""
        if half_close:
            s.shutdown(socket.SHUT_WR)
            while d := s.recv(65536):
                got += d
        else:
            while len(got) < len(data) and (d := s.recv(65536)):
                got += d
    if got != data:
        raise Failed("sent %d bytes %r, got back %d: %r" % (len(data), data[:40], len(got), got[:40]))


def expect_close(port, data, timeout=3):
    """Send DATA to PORT; the peer must close the connection (FIN or reset)."""
    with connect(port, 2) as s:
        s.sendall(data)
        return read_to_end(s, timeout)


def expect_reset(port, data, timeout=5):
    """Send DATA to PORT; the peer must reset the connection, sending nothing."""
    with connect(port, 2) as s:
        s.sendall(data)
        if read_to_end(s, timeout, allow_data=False) != "reset":
            raise Failed("closed with a FIN: no reset")


def stall_reader(port, request, rcvbuf=65536, pause=2.5, timeout=5):
    """Send REQUEST to PORT, read nothing for PAUSE s: the peer must reset."""
    with connect(port, 2) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
        s.sendall(request)
        time.sleep(pause)
        if read_to_end(s, timeout) != "reset":
            raise Failed("closed with a FIN: looks like a clean end")


def hold_partial_tls(port, n, ready, timeout=5):
    """N handshakes stopped after 3 bytes; each must be closed in TIMEOUT s."""
    socks = []
    try:
        for _ in range(n):
            s = connect(port, 2)
            socks.append(s)
            s.sendall(TLS_RECORD_HEAD)
        touch(ready)
        deadline = time.monotonic() + timeout
        for i, s in enumerate(socks):
            s.settimeout(max(0.1, deadline - time.monotonic()))
            try:
                d = s.recv(1)
            except ConnectionResetError:
                continue
            except socket.timeout:
                raise Failed("handshake %d of %d not closed within %g s" % (i + 1, n, timeout)) from None
            if d:
                raise Failed("handshake %d of %d got %r" % (i + 1, n, d))
    finally:
        for s in socks:
            s.close()


def http_clients(port, n, ready, timeout=10):
    """N requests for / sent at once, then READY; each answer must end "ok"."""
    socks = []
    try:
        for _ in range(n):
            socks.append(connect(port, 2))
        for s in socks:
            s.sendall(b"GET / HTTP/1.0\r\n\r\n")
        touch(ready)
        for i, s in enumerate(socks):
            s.settimeout(timeout)
            data = b""
            while d := s.recv(4096):
                data += d
            if not data.endswith(b"ok\n"):
                raise Failed("client %d of %d was answered %r" % (i + 1, n, data[-200:]))
    finally:
        for s in socks:
            s.close()


def tls_keep(port, ca, ready, go, done, wait=10):
    """One TLS connection: GET /, READY, GO (waited WAIT s at most), GET /, DONE."""
    ctx = ssl.create_default_context(cafile=ca)
    with ctx.wrap_socket(connect(port, 5), server_hostname="localhost") as s:
        s.settimeout(5)

        def get(when):
            s.sendall(b"GET / HTTP/1.1\r\nHost: localhost\r\n\r\n")
            data = b""
            while not data.endswith(b"ok\n"):
                chunk = s.recv(4096)
                if not chunk:
                    raise Failed("connection closed %s (after %r)" % (when, data[-200:]))
                data += chunk
        get("at the first request")
        touch(ready)
        end = time.monotonic() + wait
        while time.monotonic() < end and not os.path.exists(go):
            time.sleep(0.1)
        get("at the second request")
    touch(done)


def silent_clients(port, limit, deadline):
    """LIMIT - 1 silent clients and a talker from 127.0.0.1: one more is
    reset, 127.0.0.2 is served, the silent ones end at DEADLINE s (not
    before), the talker stays. Returns when the silent ones ended."""
    with contextlib.ExitStack() as held:
        def conn(source):
            return held.enter_context(connect(port, 10, source))
        t0 = time.monotonic()
        silent = [conn(HOST) for _ in range(limit - 1)]
        talker = conn(HOST)
        talker.sendall(b"hi")
        if (d := talker.recv(2)) != b"hi":
            raise Failed("the talker was answered %r, not b'hi'" % d)
        try:    # reset at once: maybe before connect() even returns
            got = conn(HOST).recv(1)
            raise Failed("connection %d from one address was served: %r" % (limit + 1, got))
        except ConnectionResetError:
            pass
        other = conn("127.0.0.2")
        other.sendall(b"other")
        if other.recv(5) != b"other":
            raise Failed("another address was not served")
        for s in silent:
            if s.recv(1) != b"":
                raise Failed("a silent client got bytes")
        took = time.monotonic() - t0
        if took < deadline - 0.05:
            raise Failed("silent clients closed after %.2f s, before the deadline" % took)
        talker.sendall(b"still")
        if talker.recv(5) != b"still":
            raise Failed("the talker was closed")
    return took


def source_limit_one(port, hold):
    """A connection held HOLD s: a second from the address is reset, the
    first is still served."""
    with connect(port, 10) as a:
        time.sleep(hold)   # longer than a deadline of before: not silent
        try:
            with connect(port, 10) as b:
                b.recv(1)
            raise Failed("a second connection was served under max_conns_per_source = 1")
        except ConnectionResetError:
            pass
        a.sendall(b"x")
        if a.recv(1) != b"x":
            raise Failed("the first connection was not served")


def storm(tcp, udp, ready, until, seconds):
    """Connects to each (N, PORT) of TCP and datagrams from N sources to each
    of UDP, READY made, all held until UNTIL exists or SECONDS passed."""
    held = []
    try:
        for n, port in tcp:
            for _ in range(n):
                s = socket.socket()
                held.append(s)
                s.setblocking(False)
                try:
                    s.connect_ex((HOST, port))
                except OSError:
                    pass
        for n, port in udp:
            for _ in range(n):
                u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
                held.append(u)
                u.sendto(b"storm", (HOST, port))
        touch(ready)
        end = time.monotonic() + seconds
        while time.monotonic() < end and not os.path.exists(until):
            time.sleep(0.1)
    finally:
        for s in held:
            s.close()


def udp_waiter(port, newcomers, timeout=3):
    """Request A1, NEWCOMERS new sources, then A1's reply; then A2's."""
    to = (HOST, port)
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as a:
        a.bind((HOST, 0))
        a.settimeout(timeout)
        a.sendto(b"A1" + b"a" * 75, to)
        time.sleep(0.05)
        others = []
        try:
            for i in range(newcomers):
                o = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
                others.append(o)
                o.bind((HOST, 0))
                o.sendto(b"N%02d" % i + b"n" * 20, to)
            for req in (b"A1", b"A2"):
                if req == b"A2":
                    a.sendto(b"A2" + b"a" * 75, to)
                try:
                    d = a.recv(2048)
                except socket.timeout:
                    raise Failed("no reply to %s within %g s" % (req.decode(), timeout)) from None
                if d != b"up:" + req + b"a" * 75:
                    raise Failed("the reply to %s was %r" % (req.decode(), d))
        finally:
            for o in others:
                o.close()


def udp_send(port, n, data, burst=0, gap=0):
    """DATA to PORT from N new sources, once each, a pause of GAP s after
    every BURST of them (0: none) (all open until the last is sent: a
    closed one's port could come again)."""
    socks = []
    try:
        for i in range(n):
            c = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            socks.append(c)
            c.sendto(data, (HOST, port))
            if burst and i % burst == burst - 1:
                time.sleep(gap)
    finally:
        for c in socks:
            c.close()


def udp_bind(port):
    """A UDP socket bound to 127.0.0.1:PORT (0: any free port)."""
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        s.bind((HOST, port))
    except OSError:
        s.close()
        raise
    return s


def udp_silent(sock, ready, seconds=60):
    """SOCK (bound) neither read nor answered for SECONDS; READY made first."""
    with sock:
        touch(ready)
        time.sleep(seconds)


def udp_junk_echo(sock, ready, idle=20):
    """Each datagram to SOCK (bound) echoed, then JUNK to its sender; READY
    made first. Returns after IDLE s without a datagram."""
    with sock:
        touch(ready)
        sock.settimeout(idle)
        while True:
            try:
                d, peer = sock.recvfrom(2048)
            except socket.timeout:
                return
            sock.sendto(d, peer)
            sock.sendto(JUNK, peer)


def udp_retry(port, old, new, ready, every=0.25, tries=60, timeout=2):
    """A request answered OLD + it (within TIMEOUT s), READY made; then a
    request every EVERY s, TRIES at most, until one is answered with NEW
    first. Returns how many retries were sent before that one."""
    to = (HOST, port)
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind((HOST, 0))
        s.settimeout(timeout)
        s.sendto(b"first", to)
        try:
            d = s.recv(100)
        except socket.timeout:
            raise Failed("no reply to the first request within %g s" % timeout) from None
        if d != old + b"first":
            raise Failed("the first request was answered %r, not %r" % (d, old + b"first"))
        touch(ready)
        for i in range(tries):
            t = time.monotonic() + every
            s.sendto(b"retry%d" % i, to)
            while time.monotonic() < t:
                s.settimeout(max(0.001, t - time.monotonic()))
                try:
                    d = s.recv(100)
                except (socket.timeout, ConnectionRefusedError):
                    continue
                if d.startswith(new):
                    return i
    raise Failed("never answered with %r in %d retries" % (new, tries))


def udp_keep(port, old, new, ready, go, done, wait=10, count=5, timeout=2):
    """One client socket: k0 answered OLD + k0, READY made, GO waited for
    (WAIT s at most), k1..kCOUNT answered NEW + each, DONE made."""
    to = (HOST, port)
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.settimeout(timeout)

        def ping(i, prefix):
            req = b"k%d" % i
            s.sendto(req, to)
            try:
                d, _ = s.recvfrom(100)
            except socket.timeout:
                raise Failed("no reply to %s within %g s" % (req.decode(), timeout)) from None
            if d != prefix + req:
                raise Failed("%s was answered %r, not %r" % (req.decode(), d, prefix + req))
        ping(0, old)
        touch(ready)
        end = time.monotonic() + wait
        while time.monotonic() < end and not os.path.exists(go):
            time.sleep(0.1)
        for i in range(1, count + 1):
            ping(i, new)
    touch(done)


def udp_probe(port, sources=64, wait=2):
    """A datagram to PORT from each of SOURCES new sources: how many come
    back (the same bytes, to their own source) within WAIT s."""
    socks = {}
    try:
        for i in range(sources):
            s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            socks[s] = b"probe%d" % i
            s.bind((HOST, 0))
            s.setblocking(False)
            s.sendto(socks[s], (HOST, port))
        answered = set()
        end = time.monotonic() + wait
        while len(answered) < len(socks) and time.monotonic() < end:
            r, _, _ = select.select(list(socks), [], [], 0.1)
            for s in r:
                try:
                    d = s.recv(100)
                except OSError:       # ICMP port unreachable: nothing bound
                    continue
                if d == socks[s]:
                    answered.add(s)
        return len(answered)
    finally:
        for s in socks:
            s.close()


def _count_port(text):
    n, _, port = text.partition(":")
    try:
        return int(n), int(port)
    except ValueError:
        raise argparse.ArgumentTypeError("'%s' is not N:PORT" % text) from None


def parser():
    p = argparse.ArgumentParser(prog="net.py", description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)

    def cmd(name, fn, *args):
        c = sub.add_parser(name)
        c.set_defaults(fn=fn)
        for a in args:
            if isinstance(a, tuple):
                c.add_argument(a[0], **a[1])
            else:
                c.add_argument(a, type=_ARG_TYPES.get(a, str))
        return c

    data = ("data", {"type": os.fsencode})
    cmd("ipv6-loopback", lambda a: ipv6_loopback())
    cmd("echo-server", lambda a: echo_server(listener(a.port)), "port")
    cmd("reset-server", lambda a: reset_server(listener(a.port, 8)), "port")
    cmd("send-expect", lambda a: send_expect(a.port, a.data, a.half_close, a.timeout),
        "port", data, ("--half-close", {"action": "store_true"}),
        ("--timeout", {"type": float, "default": 5}))
    cmd("expect-close", lambda a: expect_close(a.port, a.data, a.timeout), "port", data,
        ("--timeout", {"type": float, "default": 3}))
    cmd("expect-reset", lambda a: expect_reset(a.port, a.data, a.timeout), "port", data,
        ("--timeout", {"type": float, "default": 5}))
    cmd("stall-reader", lambda a: stall_reader(a.port, a.request, a.rcvbuf, a.pause, a.timeout),
        "port", ("request", {"type": os.fsencode}), ("--rcvbuf", {"type": int, "default": 65536}),
        ("--pause", {"type": float, "default": 2.5}), ("--timeout", {"type": float, "default": 5}))
    cmd("hold-partial-tls", lambda a: hold_partial_tls(a.port, a.n, a.ready, a.timeout),
        "port", "n", "ready", ("--timeout", {"type": float, "default": 5}))
    cmd("http-clients", lambda a: http_clients(a.port, a.n, a.ready, a.timeout),
        "port", "n", "ready", ("--timeout", {"type": float, "default": 10}))
    cmd("tls-keep", lambda a: tls_keep(a.port, a.ca, a.ready, a.go, a.done, a.wait),
        "port", "ca", "ready", "go", "done", ("--wait", {"type": float, "default": 10}))
    cmd("silent-clients",
        lambda a: print("silent clients closed after %.2f s" % silent_clients(a.port, a.limit, a.deadline)),
        "port", "limit", ("deadline", {"type": float}))
    cmd("source-limit-one", lambda a: source_limit_one(a.port, a.hold), "port", ("hold", {"type": float}))
    cmd("storm", lambda a: storm(a.tcp, a.udp, a.ready, a.until, a.seconds),
        "ready", "until", ("seconds", {"type": float}),
        ("--tcp", {"type": _count_port, "action": "append", "default": []}),
        ("--udp", {"type": _count_port, "action": "append", "default": []}))
    cmd("udp-waiter", lambda a: udp_waiter(a.port, a.newcomers), "port", "newcomers")
    cmd("udp-send", lambda a: udp_send(a.port, a.n, a.data, a.burst, a.gap), "port", "n", data,
        ("--burst", {"type": int, "default": 0}), ("--gap", {"type": float, "default": 0}))
    cmd("udp-silent", lambda a: udp_silent(udp_bind(a.port), a.ready, a.seconds),
        "port", "ready", ("--seconds", {"type": float, "default": 60}))
    cmd("udp-junk-echo", lambda a: udp_junk_echo(udp_bind(a.port), a.ready, a.idle),
        "port", "ready", ("--idle", {"type": float, "default": 20}))
    cmd("udp-retry",
        lambda a: print("answered with %s after %d retries"
                        % (a.new.decode(), udp_retry(a.port, a.old, a.new, a.ready, a.every, a.tries))),
        "port", ("old", {"type": os.fsencode}), ("new", {"type": os.fsencode}), "ready",
        ("--every", {"type": float, "default": 0.25}), ("--tries", {"type": int, "default": 60}))
    cmd("udp-keep", lambda a: udp_keep(a.port, a.old, a.new, a.ready, a.go, a.done, a.wait),
        "port", ("old", {"type": os.fsencode}), ("new", {"type": os.fsencode}),
        "ready", "go", "done", ("--wait", {"type": float, "default": 10}))
    cmd("udp-probe", lambda a: print(udp_probe(a.port, a.sources, a.wait)), "port",
        ("--sources", {"type": int, "default": 64}), ("--wait", {"type": float, "default": 2}))
    return p


_ARG_TYPES = {"port": int, "n": int, "limit": int, "newcomers": int}


def main(argv):
    a = parser().parse_args(argv)
    try:
        return 1 if a.fn(a) is False else 0
    except Failed as e:
        print("net.py %s: %s" % (a.cmd, e), file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
