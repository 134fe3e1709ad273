#!/usr/bin/env python3
"""A name server that answers late, for a resolver to wait on
(tests/integration/relay_reload_watchdog.sh, in a network namespace of its
own).

  slow_dns.py serve DELAY LOG [--port 53] [--seconds 140]
      on 127.0.0.1:PORT (UDP), answer every A query with 127.0.0.1 and any
      other type with no records, DELAY seconds after it came (each in a
      thread: many can wait at once); append "MONO query from PEER" and
      "MONO answered type N" to LOG (MONO: time.monotonic()) as they
      happen; stop after SECONDS
"""
import argparse
import socket
import struct
import sys
import threading
import time

HOST = "127.0.0.1"
A = 1
TTL = 60


def answer(query):
    """The response to the DNS QUERY (a datagram of one question): an A
    record of 127.0.0.1 for an A query, no record for any other type.
    Returns (response, the query's type)."""
    qid, = struct.unpack("!H", query[:2])
    i = 12
    while query[i]:                 # the name's labels, to the root's 0
        i += query[i] + 1
    qtype, = struct.unpack("!H", query[i + 1:i + 3])
    question = query[12:i + 5]      # name, type, class
    # a pointer to the name at 12, type A, class IN, the TTL, 4 bytes
    an = struct.pack("!HHHIH4s", 0xC00C, A, 1, TTL, 4, bytes([127, 0, 0, 1]))
    # a response, recursion desired and available, no error; one question
    hdr = struct.pack("!HHHHHH", qid, 0x8180, 1, int(qtype == A), 0, 0)
    return hdr + question + (an if qtype == A else b""), qtype


def serve(sock, delay, log, seconds):
    """Answer each query to SOCK DELAY s after it came, for SECONDS; LOG (a
    file) says when each came and was answered."""
    def late(q, peer):
        time.sleep(delay)
        resp, qtype = answer(q)
        sock.sendto(resp, peer)
        log.write("%.3f answered type %d\n" % (time.monotonic(), qtype))
    end = time.monotonic() + seconds
    sock.settimeout(0.5)
    while time.monotonic() < end:
        try:
            q, peer = sock.recvfrom(512)
        except socket.timeout:
            continue
        log.write("%.3f query from %s\n" % (time.monotonic(), peer))
        threading.Thread(target=late, args=(q, peer), daemon=True).start()


def main(argv):
    p = argparse.ArgumentParser(prog="slow_dns.py", description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("serve")
    s.add_argument("delay", type=float)
    s.add_argument("log")
    s.add_argument("--port", type=int, default=53)
    s.add_argument("--seconds", type=float, default=140)
    a = p.parse_args(argv)
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock, \
            open(a.log, "a", buffering=1) as log:
        sock.bind((HOST, a.port))
        serve(sock, a.delay, log, a.seconds)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
