"""lab/falseneg/run: make kernel-falseneg. Does epoll_wait() with a zero
timeout ever miss a ready event? Boots each kernel in turn on the host
clock (its two vCPUs really run at once, as the race needs) with
epoll-falseneg, two passes of S seconds (one ready event, then eight),
then the table (table.py) and falseneg.json.

  lab/falseneg/run [--seconds S] [--results DIR] NAME=BZIMAGE...

S defaults to 30; lab/falseneg/kernels prints the NAME=BZIMAGE words of
make kernel-falseneg. The run directory: labkit/series.py.
Exit status: 0 every guest ran (whatever it found); 1 one did not; 2 bad
arguments; 5 no initramfs.
"""
import sys

from ..labkit.series import Series, cli
from . import table

SERIES = Series(
    name="falseneg", what="does epoll_wait(..., 0) miss a ready event? each kernel in turn",
    program="epoll-falseneg", seconds=30, clock="host",
    # two passes of S, and the boot; a busy host's guests take longer
    timeout=lambda s: s * 2 + 300, about=lambda s: s * 2 + 30,
    table=lambda run_dir, names: table.main([run_dir] + names))

if __name__ == "__main__":
    sys.exit(cli(SERIES))
