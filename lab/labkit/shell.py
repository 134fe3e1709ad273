"""lab/lab: labkit for the drivers written in shell.

  lab/lab new-id                        print a new run id
  lab/lab new-run RESULTS [KIND]        make RESULTS/<id>[-KIND]/, print its path
  lab/lab latest RUN_DIR [KIND]         point RUN_DIR's parent's latest[-KIND] at it
  lab/lab salt RUN_ID                   print the run's salt_us (labkit.guest.salt_us)
  lab/lab spec RUN_DIR NAME=VALUE...    write RUN_DIR/spec.json: a NAME a.b nests,
                                        a VALUE that reads as a number is one,
                                        one that reads as a JSON object is one
  lab/lab kernels RUN_DIR KERNEL=IMAGE...
                                        what each kernel IMAGE is (labkit.kernels.facts)
                                        to RUN_DIR/KERNEL/kernel.json, and the trace
                                        probe's offsets for each to the spec's
                                        trace_probes (what ktrace start --spec reads)
  lab/lab flags TABLE [FLAG]...         a shell driver's flags by its parameter
                                        table (the module TABLE, lab.hostab.params:
                                        driver_flags()), resolved, as shell code to eval
  lab/lab names [--check [README]|--write]
                                        lab/README.md's names table, made from the
                                        parameters' tables (labkit.names); --check:
                                        exit 1 saying where the README (or that
                                        copy of it) or two tables disagree;
                                        --write: put it in lab/README.md
  lab/lab record --check [RECORD]       docs/measurements.md against its notes and
                                        its recorded runs (labkit.record): exit 1
                                        naming each row that does not hold
  lab/lab record --gives RUN_DIR        a recorded run's date, "gives" and "costs",
                                        as its row of the record has them

Exit status: 0 done; 1 names --check or record --check found a
disagreement; 2 bad arguments; 65 a recorded run cannot be read; 73 the
directory cannot be made.
"""
import argparse
import contextlib
import importlib
import json
import os
import shlex
import sys

from . import guest, kernels, names, record
from . import spec as labspec
from .run import LabError, Run, new_id, point_latest, write_json


def value(text):
    """A number when TEXT reads as one, an object when it reads as a JSON
    object (a program's --resolve), else the text."""
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    if text.startswith("{"):
        try:
            return json.loads(text)
        except ValueError:
            pass
    return text


def spec(run, pairs):
    """The run spec from NAME=VALUE pairs; a.b=1 is {"a": {"b": 1}}."""
    out = {}
    for pair in pairs:
        name, eq, text = pair.partition("=")
        if not eq or not name or "" in name.split("."):
            raise LabError(2, f"'{pair}': expected NAME=VALUE")
        *path, last = name.split(".")
        node = out
        for key in path:
            node = node.setdefault(key, {})
            if not isinstance(node, dict):
                raise LabError(2, f"'{pair}': {key} is a value, not a group")
        if last in node:
            raise LabError(2, f"'{pair}': {name} given twice")
        node[last] = value(text)
    write_json(os.path.join(run, "spec.json"), out)


def kernels_of(run, pairs):
    """kernels.described() of the images of KERNEL=IMAGE PAIRS, their
    probes added to RUN/spec.json as its trace_probes."""
    images = {}
    for pair in pairs:
        k, eq, image = pair.partition("=")
        if not eq or not k or not os.path.isfile(image):
            raise LabError(2, f"'{pair}': expected KERNEL=IMAGE, an image that exists")
        images[k] = image
    path = os.path.join(run, "spec.json")
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        raise LabError(65, f"{path}: {e}") from e
    _, doc["trace_probes"] = kernels.described(run, images,
                                               {k: guest.kernel_version(i) for k, i in images.items()})
    write_json(path, doc)


def driver_flags(table, argv):
    """ARGV of the shell driver whose parameter table is the module TABLE
    (lab.hostab.params: PROG, its docstring, and the lists PARAMS for the
    spec's top level, SCENARIO for its "scenario" object and OWN for
    flags the spec does not hold, each optional), resolved, as shell code
    for its eval: NAME=VALUE per parameter, spec the array of lab/lab
    spec's NAME=VALUE pairs (the scenario's as scenario.NAME).
    --help prints the usage on stderr and gives "exit 0"; a bad command
    line exits 2 (Parser)."""
    m = importlib.import_module(table)
    groups = {"": getattr(m, "PARAMS", []), "scenario.": getattr(m, "SCENARIO", []),
              None: getattr(m, "OWN", [])}
    params = [p for ps in groups.values() for p in ps]
    ap = labspec.Parser(prog=m.PROG, add_help=False, description=(m.__doc__ or "").strip(),
                        formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-h", "--help", action="store_true", help="this text")
    labspec.flags(ap, params)
    # the driver evals what goes to stdout: the usage goes to stderr
    with contextlib.redirect_stdout(sys.stderr):
        args = ap.parse_args(argv)
        if args.help:
            ap.print_help()
            return "exit 0\n"
        try:
            values = labspec.resolve(args, params)
        except labspec.SpecError as e:
            ap.error(str(e))
    out = [f"{name}={shlex.quote(str(v))}" for name, v in values.items()]
    pairs = [f"{prefix}{p.name}={values[p.name]}" for prefix, ps in groups.items()
             if prefix is not None for p in ps]
    out.append("spec=(" + " ".join(shlex.quote(x) for x in pairs) + ")")
    return "\n".join(out) + "\n"


def lab(argv):
    if argv[:1] == ["new-id"] and len(argv) == 1:
        print(new_id())
    elif argv[:1] == ["new-run"] and len(argv) in (2, 3):
        try:
            print(Run("lab", argv[1], kind=argv[2] if len(argv) == 3 else None).dir)
        except (OSError, LabError) as e:
            print(f"lab: {e}", file=sys.stderr)
            return 73
    elif argv[:1] == ["salt"] and len(argv) == 2:
        print(guest.salt_us(argv[1]))
    elif argv[:1] == ["latest"] and len(argv) in (2, 3):
        run = os.path.abspath(argv[1])
        if not os.path.isdir(run):
            print(f"lab: {argv[1]}: no such run directory", file=sys.stderr)
            return 2
        point_latest(os.path.dirname(run), os.path.basename(run),
                     "latest" + (f"-{argv[2]}" if len(argv) == 3 else ""))
    elif argv[:1] == ["flags"] and len(argv) >= 2:
        try:
            code = driver_flags(argv[1], argv[2:])
        except ImportError as e:
            print(f"lab: flags {argv[1]}: no such table ({e})", file=sys.stderr)
            return 2
        sys.stdout.write(code)
    elif argv[:1] == ["names"] and (argv[1:] in ([], ["--write"]) or argv[1:2] == ["--check"]
                                    and len(argv) <= 3):
        if argv[1:] == ["--write"]:
            names.write()
        elif argv[1:2] == ["--check"]:
            problems = names.check(*argv[2:])
            for p in problems:
                print(f"lab names: {p}", file=sys.stderr)
            return 1 if problems else 0
        else:
            sys.stdout.write(names.table(names.tables()))
    elif argv[:2] == ["record", "--check"] and len(argv) <= 3:
        problems = record.check(*[os.path.abspath(a) for a in argv[2:]])
        for p in problems:
            print(f"lab record: {p}", file=sys.stderr)
        return 1 if problems else 0
    elif argv[:2] == ["record", "--gives"] and len(argv) == 3:
        try:
            date, text, seconds = record.gives(os.path.abspath(argv[2]))
        except record.RecordError as e:
            print(f"lab record: {e}", file=sys.stderr)
            return 65
        print(f"| {date} | | {text} | {'' if seconds is None else f'{seconds:g} s'} |")
    elif argv[:1] in (["kernels"], ["spec"]) and len(argv) >= 3 and os.path.isdir(argv[1]):
        try:
            (kernels_of if argv[0] == "kernels" else spec)(argv[1], argv[2:])
        except LabError as e:
            print(f"lab: {e}", file=sys.stderr)
            return e.code
    else:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(lab(sys.argv[1:]))
