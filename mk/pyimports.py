"""pyimports: every module of the Python package tree imports the way an
installed package is imported (mk/py: from the top of the tree, never from
the caller's directory or the module's own), so that no module leans on a
sys.path edit or on the directory it was started from.

  mk/py mk.pyimports FILE.py...
  PYTHON -P mk/pyimports.py --from DIR FILE.py...

Each FILE (a path from the top of the tree) must lie in a package (a
directory with an __init__.py, up to the top of the tree); prints "FILE:
why" for each one that does not or that fails to import. --from: each one
must be imported from under DIR (an installed copy's site-packages; run
by another interpreter, a venv's, -P keeping the tree off its path).
Exit status: 0 every one imports; 1 one does not; 2 usage.
"""
import argparse
import importlib
import os
import sys
import traceback

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def module_name(path):
    """The dotted name of the module at PATH (relative to the top of the
    tree), or None when a directory on its way has no __init__.py."""
    parts = os.path.normpath(path).split(os.sep)
    for i in range(1, len(parts)):
        if not os.path.exists(os.path.join(TOP, *parts[:i], "__init__.py")):
            return None
    name = parts[-1].removesuffix(".py")
    return ".".join(parts[:-1] + ([] if name == "__init__" else [name]))


def problems(paths, under=None):
    """[(path, why)] of the modules that do not import (from under UNDER,
    when given)."""
    out = []
    for path in paths:
        name = module_name(path)
        if name is None:
            out.append((path, "not in a package (a directory on its way has no __init__.py)"))
            continue
        try:
            importlib.import_module(name)
        except BaseException as e:  # a module that exits or raises on import is a finding too
            where = traceback.extract_tb(e.__traceback__)[-1]
            out.append((path, f"import {name}: {type(e).__name__}: {e} "
                              f"({os.path.relpath(where.filename, TOP)}:{where.lineno})"))
            continue
        got = os.path.realpath(sys.modules[name].__file__)
        if under and os.path.commonpath([got, os.path.realpath(under)]) != os.path.realpath(under):
            out.append((path, f"import {name}: came from {got}, not from under {under}"))
    return out


def main(argv):
    ap = argparse.ArgumentParser(prog="pyimports", description="Does each module import as installed?")
    ap.add_argument("--from", dest="under", metavar="DIR", help="each must come from under DIR")
    ap.add_argument("files", nargs="*", metavar="FILE.py")
    args = ap.parse_args(argv)
    found = problems(args.files, args.under)
    for path, why in found:
        print(f"{path}: {why}")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
