"""The run spec: every parameter of an experiment once, with one name and
one unit, from the command line to spec.json, the guest and the page.

A driver lists its parameters as Param rows; flags() makes the command
line from them (the flag is the name with dashes), resolve() checks the
values and gives the spec's object. Nothing downstream derives a
parameter again: the guest reads spec.json from its initramfs, the report
from the results directory.

A parameter that a program of the tree defines (demo-scenario's and
epmodel's tables, which `--describe` prints) is taken from there with
like(): its name, unit, range and help are the program's, the driver
gives only what is its own (a default, a list of values). The program is
asked when the parameter is first used, not when the table is made, so
that a module of parameters imports without a build. describe() prints a
driver's table in the same shape, for lab/README.md's names table
(labkit.names).
"""
import argparse
import functools
import json
import os
import subprocess
import sys
import tempfile
from dataclasses import asdict, dataclass

from . import TOP

# A name's unit is its last word (lab/README.md).
UNITS = ("pct", "us", "ms", "s", "pps")


@dataclass(frozen=True)
class Param:
    name: str           # the spec's key, snake_case, the unit last (_pct, _us, _pps, _s)
    kind: str           # "int", "ints" (comma-separated), "float", "str"
    default: object
    help: str
    lo: int = None      # the range of every number
    hi: int = None
    choices: tuple = None
    # spec: the lab's parameter this one is, under a name of its own
    # (capacity's cotenant_rate_pps is demo-scenario's rate_pps)
    spec: str = None
    source: str = None  # the program whose table it is taken from (like())

    @property
    def flag(self):
        return "--" + self.name.replace("_", "-")

    @property
    def unit(self):
        u = self.name.rpartition("_")[2]
        return u if "_" in self.name and u in UNITS else None

    @property
    def resolved(self):
        """The Param itself (like()'s stand-in gives the one it stands for)."""
        return self


def described(program):
    """The rows of PROGRAM's parameter table by name (a program of this
    tree whose --describe prints it: demo-scenario, epmodel), from the
    release build, which make brings up to date first. Exits 3 (the build
    failed) when it cannot."""
    return _described(program)


@functools.lru_cache(maxsize=None)
def _described(program):
    binary = os.path.join(TOP, "build", "release", "bin", program)
    p = subprocess.run(["make", "-s", "-C", TOP, "--no-print-directory",
                        os.path.relpath(binary, TOP)], capture_output=True, text=True)
    if p.returncode == 0:
        p = subprocess.run([binary, "--describe"], capture_output=True, text=True)
    try:
        if p.returncode != 0:
            raise ValueError((p.stderr.strip().splitlines() or ["no output"])[-1])
        return {r["name"]: r for r in json.loads(p.stdout)["params"]}
    except (ValueError, KeyError, TypeError) as e:
        print(f"labkit: cannot read {program}'s parameters ({binary} --describe): {e}",
              file=sys.stderr)
        sys.exit(3)


def like(program, param, /, clock="host", **given):
    """The parameter PARAM of PROGRAM's table (described()): its name,
    kind, range, help and its default on CLOCK (a profile of the table's
    defaults: demo-scenario's host or virtual), GIVEN overriding any of
    them (a driver's own default or a narrower range, kind "ints" for a
    list of values; a name of its own, which then stands for PARAM:
    spec). The table is read when the parameter is first used."""
    return _Like(program, param, clock, given)


class _Like:
    """like()'s parameter: a Param once its program's table is read."""

    def __init__(self, program, param, clock, given):
        self._of = (program, param, clock, given)
        self._param = None

    @property
    def resolved(self):
        if self._param is None:
            program, param, clock, given = self._of
            row = described(program)[param]
            d = row["default"]
            fields = {"name": row["name"], "kind": row["type"], "help": row["help"],
                      "source": program, "lo": row.get("min"), "hi": row.get("max"),
                      "default": d.get(clock, d.get("host")) if isinstance(d, dict) else d}
            fields.update(given)
            if fields["name"] != param:
                fields.setdefault("spec", param)
            self._param = Param(**fields)
        return self._param

    def __getattr__(self, attr):
        if attr.startswith("_"):
            raise AttributeError(attr)
        return getattr(self.resolved, attr)


def refusal(program, **values):
    """What PROGRAM (as described()) says of these values of its
    parameters (its --resolve refusing them: "cpu_quota_pct 1 of
    period_us 10000 is 100 us, below ..."), or None when it takes them."""
    described(program)
    argv = [os.path.join(TOP, "build", "release", "bin", program), "--resolve"]
    for name, v in values.items():
        argv += ["--" + name.replace("_", "-"), str(v)]
    p = subprocess.run(argv, capture_output=True, text=True)
    if p.returncode == 0:
        return None
    return p.stderr.strip().splitlines()[0].removeprefix(program + ": ")


def scenario(clock, values, program="demo-scenario"):
    """Every parameter of the scenario as demo-scenario resolves them from
    a run spec of CLOCK whose "scenario" object is VALUES ({name: value}):
    the clock's defaults for what VALUES leave out. SpecError with its own
    words when it refuses them."""
    described(program)
    with tempfile.NamedTemporaryFile("w", suffix=".json", prefix="labkit-spec-") as f:
        json.dump({"clock": clock, "scenario": values}, f)
        f.flush()
        p = subprocess.run([os.path.join(TOP, "build", "release", "bin", program), "--spec", f.name,
                            "--resolve"], capture_output=True, text=True)
    if p.returncode != 0:
        raise SpecError(p.stderr.strip().replace(f"{f.name}: ", "").replace(program + ": ", ""))
    return json.loads(p.stdout)


def describe(params, program):
    """A driver's table as demo-scenario --describe prints its own: a row
    per parameter (name, flag, type, unit, min, max, default, help, and
    choices, spec and source where given)."""
    rows = []
    for p in (q.resolved for q in params):
        r = {"name": p.name, "flag": p.flag, "type": p.kind, "unit": p.unit,
             "default": p.default, "help": p.help}
        if p.lo is not None or p.hi is not None:
            r.update(min=p.lo, max=p.hi)
        r.update({k: v for k, v in asdict(p).items()
                  if k in ("choices", "spec", "source") and v})
        rows.append(r)
    return {"program": program, "params": rows}


class SpecError(Exception):
    """A parameter's value is out of its range or not of its kind."""


def _parse(p, text):
    if p.kind == "str":
        if p.choices and text not in p.choices:
            raise SpecError(f"{p.flag} '{text}': expected one of {', '.join(p.choices)}")
        return text
    words = text.split(",") if p.kind == "ints" else [text]
    out = []
    for w in words:
        try:
            v = float(w.strip()) if p.kind == "float" else int(w.strip())
        except ValueError:
            raise SpecError(f"{p.flag} '{text}': expected " + {
                "ints": "whole numbers, comma-separated", "float": "a number"}.get(
                    p.kind, "a whole number"))
        if (p.lo is not None and v < p.lo) or (p.hi is not None and v > p.hi):
            raise SpecError(f"{p.flag} '{text}': {v} is outside {p.lo}..{p.hi}")
        out.append(v)
    if p.kind == "ints":
        if len(set(out)) != len(out):
            raise SpecError(f"{p.flag} '{text}': a value is given twice")
        return out
    return out[0]


def _kind_of(p, v):
    """Is V, read back from a spec.json, of P's kind and in its range?"""
    if p.kind == "str":
        return isinstance(v, str) and (not p.choices or v in p.choices)
    if p.kind == "ints":
        one = Param(p.name, "int", None, "", p.lo, p.hi)
        return isinstance(v, list) and len(v) > 0 and all(_kind_of(one, x) for x in v)
    number = (int, float) if p.kind == "float" else int
    if isinstance(v, bool) or not isinstance(v, number) or v != v or v in (float("inf"), float("-inf")):
        return False
    return (p.lo is None or v >= p.lo) and (p.hi is None or v <= p.hi)


def read_back(obj, params, where):
    """OBJ, a spec's object as a judge reads it back from spec.json (WHERE
    names it there), with every parameter of PARAMS it holds of the row's
    kind and inside its range: what the driver resolved. A SpecError
    naming the parameter if one is not (a parameter it lacks is the
    judge's to miss: older runs have fewer)."""
    if not isinstance(obj, dict):
        raise SpecError(f"{where}: expected an object")
    for p in params:
        if p.name in obj and not _kind_of(p, obj[p.name]):
            want = {"ints": "whole numbers", "float": "a number", "str": "text"}.get(p.kind, "a whole number")
            rng = f" in {p.lo}..{p.hi}" if p.lo is not None or p.hi is not None else ""
            choice = f" (one of {', '.join(p.choices)})" if p.choices else ""
            got = json.dumps(obj[p.name])[:60]
            raise SpecError(f"{where}.{p.name}: expected {want}{rng}{choice}, got {got}")
    return obj


def flags(parser, params):
    """Add one flag per parameter to an argparse parser, its help ending in
    the default."""
    for p in params:
        d = ",".join(map(str, p.default)) if isinstance(p.default, list) else p.default
        said = p.help if d in ("", None) else f"{p.help} (default {d})"
        parser.add_argument(p.flag, dest=p.name, default=None, metavar=p.name.upper(),
                            help=said.replace("%", "%%"))


def resolve(args, params, overrides=None):
    """The spec's object: every parameter, from the command line or its
    default (OVERRIDES: defaults that depend on another choice, such as
    the clock; the command line still wins)."""
    spec = {}
    for p in params:
        given = getattr(args, p.name, None)
        if given is None:
            v = (overrides or {}).get(p.name, p.default)
            spec[p.name] = list(v) if isinstance(v, list) else v
        else:
            spec[p.name] = _parse(p, given)
    return spec


def table(params):
    """The parameters as a Markdown table: name, default, meaning."""
    rows = ["| parameter (flag) | default | meaning |", "|---|---|---|"]
    for p in params:
        d = ",".join(map(str, p.default)) if isinstance(p.default, list) else \
            "-" if p.default is None else p.default
        rows.append(f"| `{p.name}` (`{p.flag}`) | {d} | {p.help} |")
    return "\n".join(rows) + "\n"


class Parser(argparse.ArgumentParser):
    """argparse that exits 2 with the driver's name on a bad command line."""

    def error(self, message):
        self.print_usage()
        self.exit(2, f"{self.prog}: {message}\n")
