"""What make test-matrix asserts of a demo matrix's matrix.json
(tests/request/demo_matrix.sh): every pair in order with its report, the
kernels each pair should boot, no patched kernel stalling, the default
pair FIXED, and every pair FIXED with the AF_UNIX waker
(kernel/selftests/unixwake). The 6.1 pairs' demo verdicts are reported,
not judged: their stock kernels do not stall with the demo's loopback
waker (lab/demo/README.md says why).

    python3 demo_matrix.py MATRIX.JSON

Exit status: 0 it holds; 1 it does not (each failure on a line); 2 usage."""
import json
import re
import sys

# pair -> (stock release, patched release, what "obtained" must say of the patched one)
EXPECTED = {
    "6.12": (r"6\.12\.\d+-relay-stock", r"6\.12\.\d+-relay-patched", "Debian's linux-source-6.12"),
    "6.1": (r"6\.1\.\d+-rt\d+-relay-stock", r"6\.1\.\d+-rt\d+-relay-patched", "with its own RT patches"),
    "6.1.8-rt": (r"6\.1\.8-rt\d+-relay-historical", r"6\.1\.0-\d+-rt-amd64", "as shipped"),
}


def problems(matrix):
    """Each way MATRIX (the parsed matrix.json) falls short, as text."""
    out = []
    pairs = matrix.get("pairs") or []
    names = [p.get("pair") for p in pairs]
    if names != list(EXPECTED):
        out.append(f"pairs {names}, expected {list(EXPECTED)}")
    for p in pairs:
        name = p.get("pair")
        if "error" in p:
            out.append(f"{name}: no report: {p['error']}")
            continue
        stock_re, patched_re, obtained = EXPECTED.get(name, (None, None, None))
        if stock_re is None:
            continue
        if not re.fullmatch(stock_re, str(p["stock"].get("kernel"))):
            out.append(f"{name}: stock kernel {p['stock'].get('kernel')}, expected /{stock_re}/")
        if not re.fullmatch(patched_re, str(p["patched"].get("kernel"))):
            out.append(f"{name}: patched kernel {p['patched'].get('kernel')}, expected /{patched_re}/")
        if obtained not in str(p["patched"].get("obtained")):
            out.append(f"{name}: patched kernel obtained '{p['patched'].get('obtained')}', "
                       f"expected '{obtained}'")
        if p["patched"].get("stalls") != 0:
            out.append(f"{name}: the patched kernel stalled {p['patched'].get('stalls')} times")
        if not p.get("verdict") or not p.get("headline"):
            out.append(f"{name}: no verdict")
        u = p.get("unixwake") or {}
        if u.get("verdict") != "fixed":
            out.append(f"{name}: AF_UNIX waker verdict {u.get('verdict')}, expected fixed")
    fixed = [p for p in pairs if p.get("pair") == "6.12"]
    if fixed and fixed[0].get("verdict") != "fixed":
        out.append(f"6.12: verdict {fixed[0].get('verdict')}, expected fixed")
    return out


def main(argv):
    if len(argv) != 2:
        print(__doc__.split("\n\n")[1].strip(), file=sys.stderr)
        return 2
    with open(argv[1], encoding="utf-8") as f:
        found = problems(json.load(f))
    for line in found:
        print(line)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
