"""lab/README.md's names table, made from the parameters' tables, and the
check that no two tables disagree.

The tables: the lab programs' (demo-scenario --describe, epmodel
--describe) and the drivers' (their Param rows, labkit.spec.describe):
capacity's, the host A/B's and the soak's. The names of programs outside lab/ that have their own, for
years, are this module's two maps (LOADGEN, DEPLOY), each name checked
against its program (loadgen --help, the files of deploy/).

A row of the names table is a parameter one of those outside programs
knows by another name. It must mean the same
wherever the lab names it: the same unit everywhere, the same range in
the lab's programs, the range of a driver's row taken from a program's
(like()) inside the program's, every default (each value of a list)
inside its table's range. The flags tables of
lab/demo/README.md and lab/model/README.md give the programs' defaults:
they must be theirs.
"""
import importlib
import os
import re
import subprocess

from report.files import write_text

from . import TOP
from . import spec as labspec

# What a parameter is called by loadgen (the demo's co-tenant, the RT
# clients, the host A/B's and the fleet's loadgen@ units).
LOADGEN = {
    "cpu_quota_pct": "`--cpu-quota PCT%`",
    "period_us": "`--quota-period-us`",
    "rate_pps": "`--rate`",
    "senders": "`--threads`",
    "duration_s": "`--duration`",
    "ticker_us": "`--rate` of the host A/B's RT client (1e6 / `ticker_us`)",
    "ticker_lead_us": "`--spin-us` of the host A/B's RT client",
    "list_over_us": "`--list-over-us` of the host A/B's RT client",
}
# ... and by deploy/: the Ansible roles' variables and systemd's settings.
DEPLOY = {
    "cpu_quota_pct": '`loadgen_cpu_quota` (`"10%"`), `CPUQuota=`',
    "period_us": "`CPUQuotaPeriodSec=`",
    "rate_pps": "`loadgen_rate`",
    "senders": "`loadgen_threads`",
    "duration_s": "`loadgen_duration`",
}
HEAD = ("| spec | lab drivers, demo-scenario | loadgen | epmodel | Ansible, systemd |\n"
        "|---|---|---|---|---|\n")
# Where lab/README.md's table is (its first line is HEAD's).
README = os.path.join(TOP, "lab", "README.md")
# The flags tables that repeat a program's defaults.
FLAG_TABLES = {"demo-scenario": os.path.join(TOP, "lab", "demo", "README.md"),
               "epmodel": os.path.join(TOP, "lab", "model", "README.md")}


def _driver(module, *names):
    """The Param rows NAMES of MODULE."""
    m = importlib.import_module(module)
    return [p for n in names for p in getattr(m, n, [])]


def tables():
    """Every table, as --describe prints one: program, params (rows), and
    whether it is a program's (kind "program") or a driver's."""
    out = []
    for program in ("demo-scenario", "epmodel"):
        out.append({"program": program, "kind": "program",
                    "params": list(labspec.described(program).values())})
    for prog, module, names in (
            ("lab/capacity/run", "lab.capacity.run", ("PARAMS",)),
            ("lab/hostab/run", "lab.hostab.params", ("SCENARIO", "PARAMS")),
            ("lab/soak/run", "lab.soak.params", ("PARAMS",))):
        d = labspec.describe(_driver(module, *names), prog)
        out.append(dict(d, kind="driver"))
    return out


def _stands_for(row):
    return row.get("spec") or row["name"]


def row_names():
    """The parameters of the names table: those with a name outside the
    lab (loadgen's, deploy's), in the order of the maps."""
    return list(LOADGEN) + [n for n in DEPLOY if n not in LOADGEN]


def _cells(items):
    return ", ".join(dict.fromkeys(items)) or "-"


def table(tabs):
    """The names table, Markdown."""
    lines = [HEAD]
    for name in row_names():
        rows = [(t, r) for t in tabs for r in t["params"] if _stands_for(r) == name]
        lab = [r for t, r in rows if t["program"] != "epmodel"]
        model = [r for t, r in rows if t["program"] == "epmodel"]
        lines.append("| " + " | ".join((
            _cells(f"`{r['name']}`" for r in lab) if lab else f"`{name}`",
            _cells(f"`{r['flag']}`" for r in lab),
            LOADGEN.get(name, "-"),
            _cells(f"`{r['flag']}`" for r in model),
            DEPLOY.get(name, "-"))) + " |\n")
    return "".join(lines)


def committed(path=README):
    """The names table as lab/README.md has it (HEAD and its rows)."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    at = text.find(HEAD.splitlines()[0])
    if at < 0:
        return ""
    rows = re.match(r"(?:\|.*\n)*", text[at:]).group(0)
    return rows


def _values(row):
    d = row["default"]
    vals = list(d.values()) if isinstance(d, dict) else [d]
    return [x for v in vals for x in (v if isinstance(v, list) else [v])]


def disagreements(tabs):
    """What two tables, or a table and its own range, say differently of a
    parameter of the names table: a list of sentences, empty when none."""
    out = []
    for name in row_names():
        rows = [(t, r) for t in tabs for r in t["params"] if _stands_for(r) == name]
        programs = [(t, r) for t, r in rows if t["kind"] == "program"]
        ref_t, ref = programs[0] if programs else (None, None)
        for t, r in rows:
            where = f"{t['program']}'s {r['name']}"
            if ref and r.get("unit") != ref.get("unit"):
                out.append(f"{where} is in {r.get('unit') or 'no unit'}, {ref_t['program']}'s "
                           f"{name} in {ref.get('unit') or 'no unit'}")
            if ref and "min" in ref and t["kind"] == "program" and \
                    (r.get("min"), r.get("max")) != (ref["min"], ref["max"]):
                out.append(f"{where} takes {r.get('min')}..{r.get('max')}, "
                           f"{ref_t['program']}'s {ref['min']}..{ref['max']}")
            if ref and "min" in ref and r.get("source") and \
                    not (ref["min"] <= (r.get("min") if r.get("min") is not None else ref["min"])
                         and (r.get("max") if r.get("max") is not None else ref["max"]) <= ref["max"]):
                out.append(f"{where} takes {r.get('min')}..{r.get('max')}, outside "
                           f"{ref_t['program']}'s {ref['min']}..{ref['max']}")
            for v in _values(r):
                if isinstance(v, (int, float)) and not (
                        (r.get("min") is None or v >= r["min"]) and (r.get("max") is None or v <= r["max"])):
                    out.append(f"{where}'s default {v} is outside its {r.get('min')}..{r.get('max')}")
    return out


# A row of a README's flags table: its flags, its defaults ("2000
# (virtual clock: 30000)", two flags and defaults split by " / ").
FLAG_ROW = re.compile(r"^\| (`--[^|]*`) \| ([^|]*) \|", re.M)


def readme_defaults(tabs):
    """Where a README's flags table gives a program's parameter another
    default than the program's table: a list of sentences."""
    out = []
    for t in tabs:
        path = FLAG_TABLES.get(t["program"])
        if not path:
            continue
        by_flag = {r["flag"]: r for r in t["params"]}
        with open(path, encoding="utf-8") as f:
            text = f.read()
        for flags, said in FLAG_ROW.findall(text):
            host, _, virt = said.strip().partition(" (virtual clock: ")
            flags = [f.strip("` ").split()[0] for f in flags.split(" / ")]
            host = host.split(" / ")
            virt = virt.rstrip(")").split(" / ") if virt else host
            for n, flag in enumerate(flags):
                r = by_flag.get(flag)
                if not r or n >= len(host):
                    continue
                for clock, given in (("host", host[n]), ("virtual", virt[min(n, len(virt) - 1)])):
                    want = r["default"].get(clock, r["default"].get("host"))
                    if given.strip() != str(want):
                        out.append(f"{os.path.relpath(path, TOP)}: {flag} {given.strip()} on the "
                                   f"{clock} clock, {t['program']}'s default {want}")
    return out


def unknown_names():
    """The names of LOADGEN and DEPLOY their programs do not have."""
    out = []
    loadgen = os.path.join(TOP, "build", "release", "bin", "loadgen")
    labspec.described("demo-scenario")      # makes the release build of the tree's programs
    subprocess.run(["make", "-s", "-C", TOP, "--no-print-directory", "build/release/bin/loadgen"],
                   capture_output=True)
    helped = subprocess.run([loadgen, "--help"], capture_output=True, text=True).stdout
    for name, cell in LOADGEN.items():
        flag = re.search(r"`(--[a-z-]+)", cell).group(1)
        if not re.search(rf"^\s+{re.escape(flag)}\b", helped, re.M):
            out.append(f"loadgen has no {flag} (LOADGEN[{name!r}])")
    files = subprocess.run(["git", "-C", TOP, "ls-files", "deploy"], capture_output=True,
                           text=True).stdout.split()
    text = ""
    for f in files:
        try:
            with open(os.path.join(TOP, f), encoding="utf-8") as fh:
                text += fh.read()
        except (OSError, UnicodeDecodeError):
            pass
    for name, cell in DEPLOY.items():
        for word in re.findall(r"`([A-Za-z_]+=?)`", cell):
            if word not in text:
                out.append(f"deploy/ has no {word} (DEPLOY[{name!r}])")
    return out


def check(path=README):
    """Every problem: the committed names table differing from the one the
    tables make, tables disagreeing, names their programs lack."""
    tabs = tables()
    out = disagreements(tabs) + readme_defaults(tabs) + unknown_names()
    if committed(path) != table(tabs):
        out.append(f"{os.path.relpath(path, TOP)}'s names table is not the one the tables make "
                   "(make names-table writes it)")
    return out


def write(path=README):
    """lab/README.md with the names table the tables make."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    old = committed(path)
    if not old:
        raise ValueError(f"{path}: no names table (a line starting {HEAD.splitlines()[0]!r})")
    write_text(path, text.replace(old, table(tables()), 1))
