"""lab/unixwake/run: make kernel-unixwake. The demo's inversion with the
co-tenant waking the RT waiter over AF_UNIX (epoll-unixwake), on each
kernel in turn, on the virtual clock; then the table (table.py) and
unixwake.json.

  lab/unixwake/run [--seconds S] [--results DIR] NAME=IMAGE...

S (default 20) is the guest's run; lab/unixwake/kernels prints the
NAME=IMAGE words of make kernel-unixwake. A guest that does not finish
in S x 5 + 90 s of wall time is "hung": a result (the waiter never moved
again), not a failure. The run directory: labkit/series.py.
Exit status: 0 the table was written; 1 a guest failed otherwise; 2 bad
arguments; 5 no initramfs.
"""
import sys

from ..labkit.series import Series, cli
from . import table

SERIES = Series(
    name="unixwake", what="the demo's inversion with an AF_UNIX waker, each kernel in turn",
    program="epoll-unixwake", seconds=20, clock="virtual",
    timeout=lambda s: s * 5 + 90, about=lambda s: s * 2 + 40,
    table=lambda run_dir, names: table.main([run_dir] + names), hung_is_result=True)

if __name__ == "__main__":
    sys.exit(cli(SERIES))
