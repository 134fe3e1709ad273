"""What the host A/B's scenario parameters (params.py: demo-scenario's)
become on a systemd test host: the one place they are translated into
what systemd, relay and loadgen take there.

    mk/py lab.hostab.units SPEC_JSON DIR

writes into DIR (the share's scenario/, the guest's /run/hosttest/scenario)
the files of the scenario, and install.txt, a line "FILE DESTINATION" for
each, which deploy/hostimg/checks' scenario check installs as they are:

- relay.conf: the shipped listeners (udp:// on port, the AF_UNIX
  listener at /run/relay/relay.sock, mode 0660 for loadgen@'s group),
  relay's CPU, priority and tick, its heartbeat for the watchdog;
- loadgen.slice's drop-in: cpu_quota_pct and period_us as CPUQuota= and
  CPUQuotaPeriodSec=;
- the co-tenant, loadgen@cotenant: its scenario file (LOADGEN_ARGS: the
  rate, the senders, the waker) and its drop-in (CPUAffinity=, relay's
  CPU);
- the RT client's unit, relay-rtclient.service: SCHED_FIFO at
  ticker_prio on ticker_cpu, a datagram every ticker_us, woken
  ticker_lead_us early (loadgen --spin-us), the slow ones listed;
- sysctl.conf: with the AF_UNIX waker, room in the socket's queue and
  for relay's send buffer, as demo-scenario gives them;
- scenario.env: what the check itself needs (its waits, the salt, what
  loadgen.slice's cpu.max must read, the trace).

Exit status: 0 written; 65 the spec is not JSON or lacks a parameter; 66
it cannot be read; 73 DIR cannot be written.
"""
import json
import os
import sys

from .params import NAMES

# relay's /metrics as deploy/hostimg/checks scrapes them before and after
# the scenario (its scenario/ files; deploy/monitor/hostab.py reads them).
METRICS_FILES = {"before": "relay-metrics-before.txt", "after": "relay-metrics.txt"}
# Where the scenario's programs write in the guest while it runs
# (deploy/hostimg/checks copies it to the share's out/scenario after): a
# tmpfs, not the share. On the stock kernel the share's 9p requests wait
# behind the stall itself (deploy/README.md, "A hung stock test host"),
# and the watch that ends each stall must not write where it waits.
GUEST_OUT = "/run/relay-scenario"
# The shipped relay.conf's AF_UNIX listener, which loadgen@'s group may reach.
SOCKET = "/run/relay/relay.sock"
# deploy/hostimg/checks' admin port (its http()).
ADMIN_PORT = 9310
# demo-scenario's for the AF_UNIX waker (lab/demo/scenario/main.c): the
# socket's queue (net.unix.max_dgram_qlen), and relay's send buffer, which
# holds every answer until the throttled co-tenant reads it. Under
# relay.service relay has no CAP_NET_ADMIN: net.core.wmem_max and
# rmem_max bound its socket_buffer.
UNIX_QLEN = 4096
UNIX_SNDBUF = 8388608
RT_UNIT = "relay-rtclient.service"
COTENANT = "cotenant"
SLICE_CGROUP = "/sys/fs/cgroup/loadgen.slice"
# The RT client runs this long before the co-tenant starts and after it
# stops, so that it sees every stall the co-tenant causes.
RT_MARGIN_S = 1


# The parameters no file here carries: the guest hands spec.json itself to
# demo-scenario --watch, and the verdict reads it (lab/hostab/judge.py).
BY_SPEC = {"watchdog_cpu": "demo-scenario --watch", "watchdog_prio": "demo-scenario --watch",
           "poll_ms": "demo-scenario --watch", "late_ms": "the verdict"}


class SpecError(Exception):
    """The spec lacks a parameter, or one is not a whole number."""


def quota_us(pct, period_us):
    """cpu.max's quota for pct percent of a CPU every period_us, as
    lib/cgroup.c's cg_quota_us and systemd's CPUQuota= make it (to the
    nearest microsecond, a half up)."""
    return (2 * pct * period_us + 100) // 200


def period_text(period_us):
    """CPUQuotaPeriodSec= for period_us: whole milliseconds as ms, else us."""
    return f"{period_us // 1000}ms" if period_us % 1000 == 0 else f"{period_us}us"


def settings(sc):
    """The derived values of the scenario object SC (spec.json's)."""
    rt_rate = 1e6 / sc["ticker_us"]
    return {
        "cpu_quota": f"{sc['cpu_quota_pct']}%",
        "cpu_quota_period": period_text(sc["period_us"]),
        "cpu_max": f"{quota_us(sc['cpu_quota_pct'], sc['period_us'])} {sc['period_us']}",
        # loadgen counts rates in thousandths of a datagram a second
        "rt_rate": f"{rt_rate:.3f}".rstrip("0").rstrip("."),
        "rt_cpu": sc["cpu"] if sc["ticker_cpu"] < 0 else sc["ticker_cpu"],
        "rt_duration_s": sc["duration_s"] + 2 * RT_MARGIN_S,
        # a datagram a stall holds back is answered once the watchdog ends
        # the stall: within stall_ms and lift_ms
        "rt_timeout_ms": sc["stall_ms"] + sc["lift_ms"],
        "udp": f"udp://127.0.0.1:{sc['port']}",
        "cotenant_target": f"unix://{SOCKET}" if sc["af_unix"] else f"udp://127.0.0.1:{sc['port']}",
    }


def files(spec):
    """{name: (destination in the guest or None, text)} for a run spec."""
    sc = spec.get("scenario") if isinstance(spec, dict) else None
    if not isinstance(sc, dict):
        raise SpecError("no scenario object")
    for n in NAMES:
        if not isinstance(sc.get(n), int) or isinstance(sc.get(n), bool):
            raise SpecError(f"scenario.{n}: expected a whole number, got {sc.get(n)!r}")
    s = settings(sc)
    head = "# lab/hostab/units.py: the host A/B's scenario (its run spec)\n"
    unix = sc["af_unix"] == 1
    relay = (head + "[relay]\n"
             f"listen = {s['udp']}\n"
             f"listen = unix://{SOCKET}\n"
             "unix_mode = 0660\n"
             "upstream = echo\n"
             f"admin = 127.0.0.1:{ADMIN_PORT}\n"
             f"cpus = {sc['cpu']}\n"
             "sched = fifo\n"
             f"rt_priority = {sc['relay_prio']}\n"
             # the scenario is about a relay that stays SCHED_FIFO
             "rt_budget = 100\n"
             f"tick_us = {sc['tick_us']}\n"
             + (f"socket_buffer = {UNIX_SNDBUF}\n" if unix else "")
             + "stats_file = /var/lib/relay/stats.json\n"
             "heartbeat = /run/relay/heartbeat\n"
             # the co-tenant's group: /metrics then says when relay was
             # late while it was throttled (deploy/monitor/hostab.py)
             "watch_cgroups = loadgen.slice\n")
    cotenant = (head + f"LOADGEN_ARGS=--target {s['cotenant_target']} --rate {sc['rate_pps']} "
                f"--threads {sc['senders']} --spin-us {sc['spin_us']} --duration {sc['duration_s']} "
                "--no-progress\n")
    rt = (head + "[Unit]\nDescription=RT client of relay (the host A/B's scenario)\n"
          "[Service]\nType=exec\nCPUSchedulingPolicy=fifo\n"
          f"CPUSchedulingPriority={sc['ticker_prio']}\nCPUAffinity={s['rt_cpu']}\n"
          f"ExecStart=/usr/bin/loadgen --target {s['udp']} --rate {s['rt_rate']} "
          f"--duration {s['rt_duration_s']} --timeout {s['rt_timeout_ms']} "
          f"--spin-us {sc['ticker_lead_us']} --list-over-us {sc['list_over_us']} --no-progress "
          f"--watch-cgroup {SLICE_CGROUP} --json {GUEST_OUT}/rt-client.json "
          f"--hgrm {GUEST_OUT}/rt-client.hgrm\n"
          f"StandardOutput=file:{GUEST_OUT}/rt-client.txt\nStandardError=inherit\n")
    sysctl = head + (f"net.unix.max_dgram_qlen = {UNIX_QLEN}\nnet.core.wmem_max = {UNIX_SNDBUF}\n"
                     f"net.core.rmem_max = {UNIX_SNDBUF}\n" if unix else "")
    env = {"DURATION_S": sc["duration_s"], "GRACE_S": sc["grace_s"], "RT_MARGIN_S": RT_MARGIN_S,
           "SALT_US": spec.get("salt_us", 0), "TRACE": spec.get("trace", "off"),
           "CPU_MAX": f"'{s['cpu_max']}'", "ADMIN_PORT": ADMIN_PORT, "SCENARIO_DIR": GUEST_OUT,
           "RT_UNIT": RT_UNIT,
           "COTENANT": f"loadgen@{COTENANT}.service", "SLICE_CGROUP": SLICE_CGROUP}
    return {
        "relay.conf": ("/etc/relay/relay.conf", relay),
        "cotenant.conf": (f"/etc/relay/loadgen/{COTENANT}.conf", cotenant),
        "slice.conf": ("/etc/systemd/system/loadgen.slice.d/scenario.conf",
                       head + f"[Slice]\nCPUQuota={s['cpu_quota']}\n"
                       f"CPUQuotaPeriodSec={s['cpu_quota_period']}\n"),
        "cotenant-unit.conf": (f"/etc/systemd/system/loadgen@{COTENANT}.service.d/scenario.conf",
                               head + f"[Service]\nCPUAffinity={sc['cpu']}\n"),
        RT_UNIT: (f"/run/systemd/system/{RT_UNIT}", rt),
        "sysctl.conf": (None, sysctl),
        "scenario.env": (None, head + "".join(f"{k}={v}\n" for k, v in env.items())),
    }


def write(spec, out):
    """The files of SPEC's scenario into OUT, and install.txt."""
    made = files(spec)
    os.makedirs(out, exist_ok=True)
    for name, (_, text) in made.items():
        with open(os.path.join(out, name), "x", encoding="utf-8") as f:
            f.write(text)
    with open(os.path.join(out, "install.txt"), "x", encoding="utf-8") as f:
        f.writelines(f"{name} {dest}\n" for name, (dest, _) in made.items() if dest)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 2:
        print("usage: mk/py lab.hostab.units SPEC_JSON DIR", file=sys.stderr)
        return 2
    try:
        with open(argv[0], encoding="utf-8") as f:
            spec = json.load(f)
    except OSError as e:
        print(f"lab.hostab.units: {argv[0]}: {e.strerror or e}", file=sys.stderr)
        return 66
    except ValueError as e:
        print(f"lab.hostab.units: {argv[0]}: {e}", file=sys.stderr)
        return 65
    try:
        write(spec, argv[1])
    except SpecError as e:
        print(f"lab.hostab.units: {argv[0]}: {e}", file=sys.stderr)
        return 65
    except OSError as e:
        print(f"lab.hostab.units: {e}", file=sys.stderr)
        return 73
    return 0


if __name__ == "__main__":
    sys.exit(main())
