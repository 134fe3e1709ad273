#!/usr/bin/env python3
"""The summaries of the UDP benchmarks over their runs: the median of each
figure per kind of forwarder, ratios against a peer, the targets, a table
and the benchmark's JSON.

  summary.py udp_overload OUT SUSTAINABLE RUNS DIR KIND...
  summary.py relay_pps OUT SIZE RUNS DIR

DIR holds one file per kind (ov.KIND; pps.TRAFFIC.KIND and rtt.KIND), one
run a line, the figures of the run separated by blanks. Writes the JSON to
OUT and exits 1 if a target is missed.
"""
import json
import os
import statistics
import sys


def column_medians(path):
    """The median of each column of PATH: one run a line, its figures
    separated by blanks."""
    with open(path, encoding="utf-8") as f:
        rows = [[float(x) for x in line.split()] for line in f]
    return [statistics.median(col) for col in zip(*rows)]


def by_kind(directory, prefix, kinds):
    """{kind: column medians of DIRECTORY/PREFIX+kind}."""
    return {k: column_medians(os.path.join(directory, prefix + k)) for k in kinds}


def check(name, value, target, met):
    return {"name": name, "value": value, "target": target, "met": met}


def finish(path, doc, checks, fmt):
    """Print each check by FMT (name, value, target, verdict), write DOC with
    the checks and whether all were met to PATH; the exit status."""
    for c in checks:
        print(fmt % (c["name"], c["value"], c["target"], "met" if c["met"] else "MISSED"))
    met = all(c["met"] for c in checks)
    doc = dict(doc, checks=checks, targets_met=met)
    with open(path, "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=2)
    return 0 if met else 1


def udp_overload(path, sustainable, runs, directory, kinds):
    """bench/udp_overload.sh: offered and forwarded rates per forwarder."""
    m = by_kind(directory, "ov.", kinds)
    offered = {k: m[k][0] for k in kinds}
    forwarded = {k: m[k][1] for k in kinds}
    s = max(sustainable, 1)
    print("shared CPU 1: forwarder and its sink; sender on CPU 0, runs of 64 x 64 B; median of %d" % runs)
    print("relay's sustainable rate in this layout: %d/s" % sustainable)
    print("%-15s %11s %11s %11s %9s" % ("forwarder", "offered/s", "forwarded/s", "x relay's", "vs nginx"))
    for k in kinds:
        print("%-15s %11.0f %11.0f %11.2f %9.2f" % (k, offered[k], forwarded[k], forwarded[k] / s,
              forwarded[k] / max(forwarded["nginx"], 1)))
    fr = forwarded["relay"]
    checks = [
        check("offered / relay sustainable", offered["relay"] / s, ">= 3", offered["relay"] >= 3 * s),
        check("relay overloaded / sustainable", fr / s, ">= 0.9", fr >= 0.9 * s),
        check("relay / nginx forwarded", fr / max(forwarded["nginx"], 1), ">= 1", fr >= forwarded["nginx"]),
        check("relay / socat forwarded", fr / max(forwarded["socat"], 1), ">= 1", fr >= forwarded["socat"]),
    ]
    print()
    doc = {"bench": "udp_overload", "runs": runs, "sustainable_pps": sustainable,
           "offered_pps": offered, "forwarded_pps": forwarded}
    return finish(path, doc, checks, "%-32s %8.2f  target %-6s %s")


PPS_KINDS = ["direct", "relay", "relay-nobudget", "nginx", "socat"]
TRAFFICS = ["datagram", "segmented"]


def pps_traffic(directory, traffic, kinds=PPS_KINDS):
    """bench/relay_pps.sh's figures of one kind of traffic: rate, CPU 1
    busy and offered rate per path, the rate per busy core and the ratios
    of relay's rate to the others'."""
    m = by_kind(directory, "pps.%s." % traffic, kinds)
    r = {"pps": {k: m[k][0] for k in kinds},
         "cpu1_busy": {k: m[k][1] for k in kinds if k != "direct"},
         "offered_pps": {k: m[k][2] for k in kinds}}
    r["pps_per_cpu1"] = {k: r["pps"][k] / max(r["cpu1_busy"][k], 0.01) for k in kinds if k != "direct"}
    relay = r["pps"]["relay"]
    r["ratios"] = {"relay_vs_nginx": relay / r["pps"]["nginx"],
                   "relay_vs_socat": relay / r["pps"]["socat"],
                   "relay_vs_direct": relay / r["pps"]["direct"],
                   "relay_vs_relay_nobudget": relay / r["pps"]["relay-nobudget"]}
    return r


def relay_pps(path, size, runs, directory):
    """bench/relay_pps.sh: rates per kind of traffic and round trips."""
    kinds = PPS_KINDS
    rtt = by_kind(directory, "rtt.", kinds)
    p50 = {k: rtt[k][0] for k in kinds}
    p99 = {k: rtt[k][1] for k in kinds}
    res = {}
    checks = []
    for t in TRAFFICS:
        r = res[t] = pps_traffic(directory, t)
        ratios = r["ratios"]
        checks += [check("%s: relay pps / nginx pps" % t, ratios["relay_vs_nginx"], ">= 2",
                         ratios["relay_vs_nginx"] >= 2),
                   check("%s: relay pps / socat pps" % t, ratios["relay_vs_socat"], ">= 10",
                         ratios["relay_vs_socat"] >= 10),
                   check("%s: relay / without budget" % t, ratios["relay_vs_relay_nobudget"], ">= 0.95",
                         ratios["relay_vs_relay_nobudget"] >= 0.95)]
    added = p50["relay"] - p50["direct"]
    checks.append(check("relay added p50 (us)", added, "< 10", added < 10))

    print("UDP one way, %d-byte datagrams, 2 sendmmsg senders, median of %d" % (size, runs))
    print("%-10s %-14s %11s %11s %9s %7s %11s" % ("traffic", "path", "offered", "pps",
          "vs direct", "cpu1 %", "pps/cpu1"))
    for t in TRAFFICS:
        r = res[t]
        for k in kinds:
            # The direct path has no forwarder on CPU 1 to be busy.
            busy = "-" if k == "direct" else "%.0f" % (r["cpu1_busy"][k] * 100)
            per_core = "-" if k == "direct" else "%.0f" % r["pps_per_cpu1"][k]
            print("%-10s %-14s %11.0f %11.0f %9.2f %7s %11s" % (t, k, r["offered_pps"][k],
                  r["pps"][k], r["pps"][k] / r["pps"]["direct"], busy, per_core))
    print("(cpu1 %: how busy the CPU the forwarder runs on was; pps/cpu1: the rate per fully")
    print(" used core, the ceiling when the senders, not the forwarder, are the limit;")
    print(" datagram: one datagram per write and read; segmented: runs of 64 (UDP_SEGMENT")
    print(" senders, UDP_GRO sink), relay --udp-gro keeps them, nginx and socat split them)")
    print()
    print("ping-pong through each, one datagram at a time")
    print("%-14s %11s %11s %13s" % ("path", "rtt p50 us", "rtt p99 us", "added p50 us"))
    for k in kinds:
        print("%-14s %11.1f %11.1f %13s" % (k, p50[k], p99[k],
              "-" if k == "direct" else "%.1f" % (p50[k] - p50["direct"])))
    print()
    doc = {"bench": "relay_pps", "size": size, "runs": runs, "traffic": res,
           "rtt_p50_us": p50, "rtt_p99_us": p99,
           "added_p50_us": {k: p50[k] - p50["direct"] for k in kinds if k != "direct"}}
    return finish(path, doc, checks, "%-34s %10.2f  target %-5s %s")


def main(argv):
    if len(argv) >= 6 and argv[1] == "udp_overload":
        return udp_overload(argv[2], int(argv[3]), int(argv[4]), argv[5], argv[6:])
    if len(argv) == 6 and argv[1] == "relay_pps":
        return relay_pps(argv[2], int(argv[3]), int(argv[4]), argv[5])
    sys.exit(__doc__)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
