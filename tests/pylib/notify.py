#!/usr/bin/env python3
"""notify.py PATH LOG SECONDS: a fake $NOTIFY_SOCKET (sd_notify's datagram
socket) at PATH for up to SECONDS; LOG gets a line per message: its
CLOCK_MONOTONIC arrival time, a space, the message with its newlines as |.
Ends after a message with STOPPING=1. Bad arguments exit 64.
"""
import socket
import sys
import time


def log_line(when, message):
    return "%.3f %s\n" % (when, message.replace("\n", "|"))


def serve(sock, log, seconds, clock=time.monotonic):
    """Log what SOCK receives until STOPPING=1 or SECONDS have passed."""
    end = clock() + seconds
    sock.settimeout(0.2)
    while clock() < end:
        try:
            msg = sock.recv(4096).decode()
        except socket.timeout:
            continue
        log.write(log_line(clock(), msg))
        if "STOPPING=1" in msg.split("\n"):
            return True
    return False


def main(argv):
    if len(argv) != 3:
        print("usage: notify.py PATH LOG SECONDS", file=sys.stderr)
        return 64
    try:
        seconds = float(argv[2])
    except ValueError:
        print("notify.py: SECONDS: '%s' is not a number" % argv[2], file=sys.stderr)
        return 64
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as s:
        s.bind(argv[0])
        with open(argv[1], "a", buffering=1) as log:
            serve(s, log, seconds)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
