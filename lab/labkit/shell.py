"""lab/lab: labkit for the drivers written in shell.

  lab/lab new-id                        print a new run id
  lab/lab new-run RESULTS [KIND]        make RESULTS/<id>[-KIND]/, print its path
  lab/lab latest RUN_DIR [KIND]         point RUN_DIR's parent's latest[-KIND] at it
  lab/lab spec RUN_DIR NAME=VALUE...    write RUN_DIR/spec.json: a NAME a.b nests,
                                        a VALUE that reads as a number is one

Exit status: 0 done; 2 bad arguments; 73 the directory cannot be made.
"""
import os
import sys

from .run import LabError, Run, new_id, point_latest, write_json


def value(text):
    """A number when TEXT reads as one, else the text."""
    for kind in (int, float):
        try:
            return kind(text)
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


def lab(argv):
    if argv[:1] == ["new-id"] and len(argv) == 1:
        print(new_id())
    elif argv[:1] == ["new-run"] and len(argv) in (2, 3):
        try:
            print(Run("lab", argv[1], kind=argv[2] if len(argv) == 3 else None).dir)
        except (OSError, LabError) as e:
            print(f"lab: {e}", file=sys.stderr)
            return 73
    elif argv[:1] == ["latest"] and len(argv) in (2, 3):
        run = os.path.abspath(argv[1])
        if not os.path.isdir(run):
            print(f"lab: {argv[1]}: no such run directory", file=sys.stderr)
            return 2
        point_latest(os.path.dirname(run), os.path.basename(run),
                     "latest" + (f"-{argv[2]}" if len(argv) == 3 else ""))
    elif argv[:1] == ["spec"] and len(argv) >= 3 and os.path.isdir(argv[1]):
        try:
            spec(argv[1], argv[2:])
        except LabError as e:
            print(f"lab: {e}", file=sys.stderr)
            return e.code
    else:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(lab(sys.argv[1:]))
