"""One shape for every experiment's results: a View of columns (kernels,
lock variants, hosts) and sections of rows. The terminal table, the plots
and the page only read a View; each experiment's page module makes its
own (lab/<experiment>/page.py)."""
import glob
from dataclasses import dataclass, field

from .formats import PCT_KEYS

PCT_LABELS = {"p50": "p50", "p99": "p99", "p99_9": "p99.9", "p99_99": "p99.99", "max": "max"}


@dataclass
class Column:
    key: str
    label: str
    data: object                               # its results: a record of report.formats
    hgrm: dict = field(default_factory=dict)   # distribution name -> path
    timeseries: str = None
    events: str = None


@dataclass
class View:
    kind: str
    title: str
    columns: list
    sections: list            # [(title, [(row label, [cell per column])])]
    verdict: str
    headline: str
    facts: list               # [(label, text)]
    caveats: list
    distributions: list       # [(name, title)] for the percentile plots
    signal_ms: float = None   # late limit drawn on the plots
    clock: str = None         # the guests' clock: virtual | host (None: no guests)
    cost: dict = None
    why: list = None          # [(kernel, what its trace explained, or None)]
    heading: str = "Latency and stalls"   # the table's, on the page
    explain: dict = field(default_factory=dict)   # plot file prefix -> what its caption explains
    note: str = None          # the caveat the page shows right under the table
    trailer: list = field(default_factory=list)   # terminal lines between the table and the verdict


def ms(us):
    """Microseconds as a short millisecond figure."""
    if us is None:
        return "-"
    v = us / 1000.0
    for limit, digits in ((1, 3), (10, 2), (100, 1)):
        if v < limit:
            return f"{v:.{digits}f}"
    return f"{v:.0f}"


def count(v):
    return "-" if v is None else str(v)


def pct_rows(columns, of):
    """A row per percentile of each column's percentile object, OF(column)
    (a formats.Percentiles or None), in ms; where it has none, the
    column's outcome (its data's, when it has one)."""
    rows = []
    for p in PCT_KEYS:
        cells = []
        for c in columns:
            obj = of(c)
            cells.append(ms(getattr(obj, p)) if obj else getattr(c.data, "outcome", "-"))
        rows.append((PCT_LABELS[p], cells))
    return rows


def first(pattern):
    """The first file matching PATTERN, by name; None when none does."""
    hits = sorted(glob.glob(pattern))
    return hits[0] if hits else None
