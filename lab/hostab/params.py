"""The host A/B's parameters (lab/hostab/run reads them through `lab/lab
flags`). The scenario's are demo-scenario's table, every row of it, with
its names, units, ranges, help and its defaults on the virtual clock,
which the test hosts keep: the demo and the host A/B run one scenario,
the same co-tenant waker (af_unix) and, from the run id, the same kind
of salt (lab/labkit/guest.py). What systemd and the guest take for each
(CPUQuota=, CPUQuotaPeriodSec=, the RT client's unit and command line,
relay.conf) is lab/hostab/units.py, the one place they are translated;
lab/hostab/tests/test_units.py fails when a row of demo-scenario's
table is missing here or reaches no file of the guest.

Three rows take less here than in demo-scenario, for the test host's own
reasons: duration_s at least 5 s (the guest's check), relay_prio at most
50 (relay.service's LimitRTPRIO=), and ticker_us at least 100 (the RT
client is what the verdict judges: there must be one, and loadgen paces
it at 1e6 / ticker_us datagrams per second).
"""
from ..labkit.spec import Param, like

PROG = "lab/hostab/run"
# demo-scenario's table, row by row (demo-scenario --describe).
NAMES = ("duration_s", "rate_pps", "senders", "spin_us", "cpu_quota_pct", "period_us", "tick_us",
         "cpu", "watchdog_cpu", "relay_prio", "watchdog_prio", "ticker_us", "ticker_prio",
         "ticker_cpu", "ticker_lead_us", "late_ms", "list_over_us", "stall_ms", "poll_ms",
         "lift_ms", "port", "af_unix", "grace_s")
NARROWER = {"duration_s": {"lo": 5}, "relay_prio": {"hi": 50}, "ticker_us": {"lo": 100}}
SCENARIO = [like("demo-scenario", n, clock="virtual", **NARROWER.get(n, {})) for n in NAMES]
PARAMS = [
    Param("checks", "str", "scenario", "scenario: the boot, the install, relay-preflight and the "
          "scenario on both hosts; all: every check of deploy/hostimg/checks on both; "
          "all-patched: every check on the patched host, the scenario's on the stock one "
          "(make test's)", choices=("scenario", "all", "all-patched")),
    Param("trace", "str", "on", "record the kernel's trace in the guests and explain every late "
          "RT datagram from it (lab/ktrace); off: the same run without it", choices=("on", "off")),
]
# Not in the spec: where the run goes.
OWN = [
    Param("results", "str", "", "where run directories go (default: results/ in the source tree)"),
]
