"""The run spec: every parameter of an experiment once, with one name and
one unit, from the command line to spec.json, the guest and the page.

A driver lists its parameters as Param rows; flags() makes the command
line from them (the flag is the name with dashes), resolve() checks the
values and gives the spec's object. Nothing downstream derives a
parameter again: the guest reads spec.json from its initramfs, the report
from the results directory.
"""
import argparse
from dataclasses import dataclass


@dataclass(frozen=True)
class Param:
    name: str           # the spec's key, snake_case, the unit last (_pct, _us, _pps, _s)
    kind: str           # "int", "ints" (comma-separated), "str"
    default: object
    help: str
    lo: int = None      # the range of every number
    hi: int = None
    choices: tuple = None

    @property
    def flag(self):
        return "--" + self.name.replace("_", "-")


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
            v = int(w.strip())
        except ValueError:
            raise SpecError(f"{p.flag} '{text}': expected "
                            f"{'whole numbers, comma-separated' if p.kind == 'ints' else 'a whole number'}")
        if (p.lo is not None and v < p.lo) or (p.hi is not None and v > p.hi):
            raise SpecError(f"{p.flag} '{text}': {v} is outside {p.lo}..{p.hi}")
        out.append(v)
    if p.kind == "ints":
        if len(set(out)) != len(out):
            raise SpecError(f"{p.flag} '{text}': a value is given twice")
        return out
    return out[0]


def flags(parser, params):
    """Add one flag per parameter to an argparse parser, its help ending in
    the default."""
    for p in params:
        d = ",".join(map(str, p.default)) if isinstance(p.default, list) else p.default
        parser.add_argument(p.flag, dest=p.name, default=None, metavar=p.name.upper(),
                            help=f"{p.help} (default {d})".replace("%", "%%"))


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
        d = ",".join(map(str, p.default)) if isinstance(p.default, list) else p.default
        rows.append(f"| `{p.name}` (`{p.flag}`) | {d} | {p.help} |")
    return "\n".join(rows) + "\n"


class Parser(argparse.ArgumentParser):
    """argparse that exits 2 with the driver's name on a bad command line."""

    def error(self, message):
        self.print_usage()
        self.exit(2, f"{self.prog}: {message}\n")
