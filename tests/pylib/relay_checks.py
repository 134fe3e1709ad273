#!/usr/bin/env python3
"""What relay records about itself, read back (tests/integration/relay_metrics.sh).

  relay_checks.py heartbeat FILE PACKETS
      the --heartbeat file (lib/heartbeat.h): magic RELAYHB1, version 1,
      one loop whose seq, mono_ns and ticks advance over 0.2 s (with no
      traffic: the timer's ticks), at least PACKETS datagrams counted, its
      last update less than 100 ms old
  relay_checks.py timeseries FILE STALL_US RX
      the stats file's time series (relay.timeseries.csv): its header, at
      least 10 windows 0.1 s apart in order, one whose tick lateness max is
      STALL_US or more (a stall), datagrams (rx_count) adding up to RX

Each exits 0 when it holds, 1 naming what did not.
"""
import argparse
import csv
import struct
import sys
import time

MAGIC = b"RELAYHB1"
# struct heartbeat_file: magic, version, nloops, pid, start_mono_ns
HEADER = struct.Struct("<8sIIQQ")
# struct heartbeat_loop, the first one at 64: seq, mono_ns, ticks, packets, cpu, tid
LOOP = struct.Struct("<QQQQii")
LOOP_AT = 64
MAX_AGE_NS = 100_000_000
COLUMNS = ["t_s", "count", "p50_us", "p99_us", "max_us"]
WINDOW_S = 0.1
MIN_WINDOWS = 10


class Failed(Exception):
    """What a check looked at is not as it should be."""


def beat(path):
    """The heartbeat file's header and first loop: a dict of their fields."""
    with open(path, "rb") as f:
        b = f.read()
    if len(b) < LOOP_AT + LOOP.size:
        raise Failed("%s has %d bytes, not a header and a loop" % (path, len(b)))
    magic, version, nloops, _, _ = HEADER.unpack_from(b, 0)
    seq, mono, ticks, packets, _, _ = LOOP.unpack_from(b, LOOP_AT)
    return {"magic": magic, "version": version, "nloops": nloops,
            "seq": seq, "mono_ns": mono, "ticks": ticks, "packets": packets}


def monotonic_ns():
    return time.clock_gettime_ns(time.CLOCK_MONOTONIC)


def heartbeat(path, packets, pause=0.2, sleep=time.sleep, now_ns=monotonic_ns):
    """The heartbeat file PATH advances over PAUSE s and counts PACKETS or
    more datagrams; its last update is less than MAX_AGE_NS old."""
    a = beat(path)
    sleep(pause)
    b = beat(path)
    if (a["magic"], a["version"], a["nloops"]) != (MAGIC, 1, 1):
        raise Failed("not relay's heartbeat of one loop: %s" % a)
    stuck = [k for k in ("seq", "mono_ns", "ticks") if not b[k] > a[k]]
    if stuck:
        raise Failed("%s did not advance in %g s: %s, then %s" % (", ".join(stuck), pause, a, b))
    if b["packets"] < packets:
        raise Failed("%d datagrams counted, not %d or more" % (b["packets"], packets))
    age = now_ns() - beat(path)["mono_ns"]
    if age >= MAX_AGE_NS:
        raise Failed("the last update is %.1f ms old" % (age / 1e6))


def timeseries(path, stall_us, rx):
    """The time series PATH: its windows, a stall of STALL_US, RX datagrams."""
    with open(path, encoding="utf-8") as f:
        rows = list(csv.reader(line for line in f if not line.startswith("#")))
    if not rows or rows[0][:len(COLUMNS)] != COLUMNS:
        raise Failed("the header is %s, not %s..." % (rows[0] if rows else "missing", ",".join(COLUMNS)))
    rows = rows[1:]
    ts = [float(r[0]) for r in rows]
    if len(ts) < MIN_WINDOWS:
        raise Failed("%d windows, not %d or more" % (len(ts), MIN_WINDOWS))
    if ts != sorted(ts):
        raise Failed("the windows are out of order: %s" % ts)
    steps = {round(b - a, 3) for a, b in zip(ts, ts[1:])}
    if steps != {WINDOW_S}:
        raise Failed("windows %s s apart, not %g" % (sorted(steps), WINDOW_S))
    worst = max(int(r[4] or 0) for r in rows)
    if worst < stall_us:
        raise Failed("the largest tick lateness is %d us, not %d or more" % (worst, stall_us))
    got = sum(int(r[5]) for r in rows)
    if got != rx:
        raise Failed("the windows count %d datagrams, not %d" % (got, rx))


def main(argv):
    p = argparse.ArgumentParser(prog="relay_checks.py", description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    h = sub.add_parser("heartbeat")
    h.add_argument("file")
    h.add_argument("packets", type=int)
    t = sub.add_parser("timeseries")
    t.add_argument("file")
    t.add_argument("stall_us", type=int)
    t.add_argument("rx", type=int)
    a = p.parse_args(argv)
    try:
        if a.cmd == "heartbeat":
            heartbeat(a.file, a.packets)
        else:
            timeseries(a.file, a.stall_us, a.rx)
    except (Failed, OSError, ValueError, IndexError) as e:
        print("relay_checks.py %s: %s: %s" % (a.cmd, a.file, e), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
