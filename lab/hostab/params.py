"""The host A/B's parameters (lab/hostab/run reads them through `lab/lab
flags`): the scenario's are demo-scenario's (their names, units, ranges
and help from its table), with this experiment's defaults and the names
the test host's guest knows them by (its scenario.env, which
deploy/hostimg/checks sources).

The defaults: the co-tenant's quota is loadgen.slice's own (10 % of
100 ms), so a stall can last up to 90 ms. On the virtual clock the
patched kernel's latencies here stayed under 8 ms (RT client and relay's
own, nine runs), and the stock kernel's relay waited 64-204 ms: a late
limit of 20 ms lies between. The guest's check needs at least 5 s of the
RT client.
"""
from ..labkit.spec import Param, like

PROG = "lab/hostab/run"
SCENARIO = [
    like("demo-scenario", "duration_s", default=10, lo=5, env="DURATION",
         help="seconds the RT client measures"),
    like("demo-scenario", "rate_pps", default=30000, env="RATE",
         help="the co-tenant's offered rate, datagrams per second"),
    like("demo-scenario", "senders", default=2, env="THREADS", help="the co-tenant's sender threads"),
    like("demo-scenario", "cpu_quota_pct", default=10, env="QUOTA_PCT",
         help="loadgen.slice's CPUQuota=, % of one CPU per period"),
    # systemd's CPUQuotaPeriodSec= takes it in whole milliseconds here:
    # lab/hostab/run refuses any other
    like("demo-scenario", "period_us", default=100000, env="PERIOD_MS", env_per=1000,
         help="loadgen.slice's CPUQuotaPeriodSec=, a whole number of ms"),
    like("demo-scenario", "rate_pps", name="rt_rate_pps", spec=None, default=500, env="RT_RATE",
         help="the RT client's rate, datagrams per second"),
    like("demo-scenario", "late_ms", default=20,
         help="a datagram or wake-up this late shows the stall (the host judges by it)"),
]
PARAMS = [
    Param("checks", "str", "scenario", "scenario: the boot, the install, relay-preflight and the "
          "scenario; all: every check of deploy/hostimg/checks on both hosts",
          choices=("scenario", "all")),
]
# Not in the spec: where the run goes.
OWN = [
    Param("results", "str", "", "where run directories go (default: results/ in the source tree)"),
]
