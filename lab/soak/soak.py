#!/usr/bin/env python3
"""lab/soak/soak.py: the soak's arithmetic, for lab/soak/run.

  soak.py capacity SWEEP.json      the sweep's capacity (its target rate), 0 for none
  soak.py verdict RUN SECONDS SLO CAP_U CAP_T RATE_U RATE_T SHARE MAX_LOSS
                  SENT OK PARTIAL FAILED RC_U RC_T HEALTHY
                                   judge the soak: RUN/soak.json (docs/formats.md) and table.txt,
                                   the table on stdout

Exit status: 0 done (verdict: the soak passed); 1 the soak failed a check;
2 bad arguments; 65 a result file is missing or malformed.
"""
import csv
import json
import os
import statistics
import sys

# The soak's bounds (lab/soak/run says why).
LOAD_FRACTION = 0.8
RSS_SLACK_FRACTION, RSS_SLACK_KIB = 0.05, 1024


class SoakError(Exception):
    """A result file is missing or malformed; the message names it."""


def read_json(path):
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        raise SoakError(f"{path}: {e}")


def capacity(sweep):
    """A loadgen sweep's capacity as a whole rate, 0 when it has none."""
    c = sweep.get("capacity") if isinstance(sweep, dict) else None
    return int(c["target_rate"]) if c else 0


def read_rows(path):
    """soak.csv's rows, every column a whole number."""
    try:
        with open(path, encoding="utf-8") as f:
            rows = list(csv.DictReader(f))
        return [{k: int(v) for k, v in r.items()} for r in rows]
    except (OSError, ValueError, TypeError) as e:
        raise SoakError(f"{path}: {e}")


def flat(rows, key):
    """The median of KEY over the first third of the rows and the last."""
    third = max(1, len(rows) // 3)
    return (statistics.median(r[key] for r in rows[:third]),
            statistics.median(r[key] for r in rows[-third:]))


def checks(rows, udp, tcp, a):
    """Every check of the soak: [{name, ok, detail}]. A holds the
    numbers the run measured (rates, reloads, exit codes)."""
    out = []

    def check(name, ok, detail):
        out.append({"name": name, "ok": bool(ok), "detail": detail})

    u_loss = udp["lost"] / udp["sent"] if udp["sent"] else 1.0
    check("udp loss", a["rc_u"] == 0 and u_loss <= a["max_loss"],
          "lost %d of %d (%.4f %%), bound %.4f %%"
          % (udp["lost"], udp["sent"], 100 * u_loss, 100 * a["max_loss"]))
    check("tcp loss", a["rc_t"] == 0 and tcp["lost"] == 0 and tcp["sent"] > 0,
          "lost %d of %d messages, bound 0" % (tcp["lost"], tcp["sent"]))
    check("rates kept", udp["rate_ok"] and tcp["rate_ok"],
          "UDP %.0f/s of %d, TCP %.0f/s of %d" % (udp["achieved_rate"], a["rate_u"],
                                                  tcp["achieved_rate"], a["rate_t"]))
    f, last = flat(rows, "rss_kib")
    check("rss flat", last <= f + max(RSS_SLACK_FRACTION * f, RSS_SLACK_KIB),
          "median %d KiB in the first third, %d in the last (bound +max(5 %%, 1 MiB))" % (f, last))
    f, last = flat(rows, "fds_base")
    check("fds flat", last <= f, "median %d in the first third, %d in the last (bound +0)" % (f, last))
    check("reloads applied", a["ok"] == a["sent"] and a["part"] == 0 and a["failed"] == 0,
          "%d sent: %d applied, %d partial, %d failed" % (a["sent"], a["ok"], a["part"], a["failed"]))
    check("healthy at the end", a["healthy"], "/healthz")
    return out


def table(rows, udp, tcp, cs, verdict, a):
    lines = ["soak: %d s at 80 %% of the sustainable rate (SLO %s): UDP %d/s of %d, TCP %d/s of %d"
             % (a["secs"], a["slo"], a["rate_u"], a["cap_u"], a["rate_t"], a["cap_t"]), "",
             "%6s %9s %5s %8s %11s %13s %6s %6s %9s" % (
                 "t_s", "rss_kib", "fds", "fds_base", "udp_rx/s", "tcp_bytes/s", "drops",
                 "demote", "reloads")]
    for r in rows:
        lines.append("%6d %9d %5d %8d %11d %13d %6d %6d %9d" % (
            r["t_s"], r["rss_kib"], r["fds"], r["fds_base"], r["udp_rx_pps"],
            r["tcp_rx_bytes_ps"], r["drops"], r["rt_demotions"], r["reloads_applied"]))
    lines.append("")
    for p, j in (("UDP", udp), ("TCP", tcp)):
        c = j["latency_us"]["corrected"]
        lines.append("%s: sent %d, received %d, lost %d, late %d; p50 %s us, p99 %s us, max %s us"
                     % (p, j["sent"], j["received"], j["lost"], j["late"], c.get("p50"),
                        c.get("p99"), c.get("max")))
    lines.append("")
    for c in cs:
        lines.append("%-20s %-4s %s" % (c["name"], "ok" if c["ok"] else "FAIL", c["detail"]))
    lines.append("verdict: " + verdict)
    return "\n".join(lines) + "\n"


def verdict(run, a):
    """Judge the soak in RUN: write soak.json and table.txt; the table
    and whether every check held."""
    rows = read_rows(os.path.join(run, "soak.csv"))
    if not rows:
        raise SoakError(f"{run}/soak.csv: no rows")
    udp, tcp = (read_json(os.path.join(run, p + "-soak.json")) for p in ("udp", "tcp"))
    try:
        cs = checks(rows, udp, tcp, a)
        text = table(rows, udp, tcp, cs, "pass" if all(c["ok"] for c in cs) else "FAIL", a)
    except (KeyError, TypeError) as e:
        raise SoakError(f"{run}: a loadgen result lacks {e}")
    held = all(c["ok"] for c in cs)
    keep = ("sent", "received", "lost", "late", "achieved_rate", "latency_us")
    out = {"tool": "lab/soak/run", "duration_s": a["secs"], "slo": a["slo"],
           "sustainable": {"udp_pps": a["cap_u"], "tcp_mps": a["cap_t"]},
           "load": {"fraction": LOAD_FRACTION, "udp_share": a["share"], "udp_pps": a["rate_u"],
                    "tcp_mps": a["rate_t"]},
           "udp": {k: udp[k] for k in keep}, "tcp": {k: tcp[k] for k in keep},
           "reloads": {"sent": a["sent"], "applied": a["ok"], "partial": a["part"],
                       "failed": a["failed"]},
           "checks": cs, "verdict": "pass" if held else "FAIL", "rows": rows}
    with open(os.path.join(run, "soak.json"), "w", encoding="utf-8") as f:
        json.dump(out, f, indent=1)
    with open(os.path.join(run, "table.txt"), "w", encoding="utf-8") as f:
        f.write(text)
    return text, held


NUMBERS = (("secs", int), ("slo", str), ("cap_u", int), ("cap_t", int), ("rate_u", int),
           ("rate_t", int), ("share", float), ("max_loss", float), ("sent", int), ("ok", int),
           ("part", int), ("failed", int), ("rc_u", int), ("rc_t", int),
           ("healthy", lambda t: t == "true"))


def main(argv):
    try:
        if argv[:1] == ["capacity"] and len(argv) == 2:
            print(capacity(read_json(argv[1])))
            return 0
        if argv[:1] == ["verdict"] and len(argv) == 2 + len(NUMBERS):
            try:
                a = {name: kind(text) for (name, kind), text in zip(NUMBERS, argv[2:])}
            except ValueError as e:
                print(f"soak.py: {e}", file=sys.stderr)
                return 2
            text, held = verdict(argv[1], a)
            sys.stdout.write(text)
            return 0 if held else 1
    except SoakError as e:
        print(f"soak.py: {e}", file=sys.stderr)
        return 65
    print(__doc__.split("\n\n")[1], file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
