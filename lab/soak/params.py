"""The soak's parameters (lab/soak/run reads them through `lab/lab
flags`), each once in the run's spec.json.

The sweeps find the sustainable rates: each one's capacity is the highest
rate that, with every lower step, kept its rate and the objective with
nothing lost, found by a coarse sweep (FROM:TO:STEPS) and a finer one up
to the coarse step that failed; when every step meets the objective the
top one is taken, a floor. The objective is on the median: the tail on a
shared host measures the neighbours, while a queue building up in the
path moves the median, and loss or a missed rate fails a step anyway.
"""
from ..labkit.spec import Param

PROG = "lab/soak/run"
PARAMS = [
    Param("duration_s", "int", 600, "seconds of UDP and TCP at once, after 10 s of warm-up",
          lo=30, hi=86400),
    Param("slo", "str", "p50=5ms", "what every sweep step must meet (loadgen --slo)"),
    Param("udp_sweep", "str", "1k:150k:8", "the coarse UDP sweep, FROM:TO:STEPS (whole numbers, "
          "k or M)"),
    Param("tcp_sweep", "str", "1k:100k:8", "the coarse TCP sweep, FROM:TO:STEPS"),
    Param("step_s", "int", 3, "seconds of each sweep step", lo=1, hi=3600),
    Param("udp_share", "float", 0.5, "UDP's share of the path in the soak, above 0 and below 1 "
          "(TCP has the rest)", lo=0, hi=1),
    Param("max_loss", "float", 0.0001, "the share of UDP datagrams the soak may lose, below 1 "
          "(TCP may lose none)", lo=0, hi=1),
]
# Not in the spec: where the run goes.
OWN = [
    Param("results", "str", "", "where run directories go (default: results/ in the source tree)"),
]
