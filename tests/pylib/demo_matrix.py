"""What make test-matrix asserts of a demo matrix's matrix.json
(tests/request/demo_matrix.sh): every pair in order with a report for each
waker, the kernels each pair should boot, no patched kernel stalling, every
pair FIXED with the AF_UNIX waker, and the default pair with the loopback
UDP waker too. The 6.1 pairs' loopback verdicts are reported, not judged:
Debian's 6.1 RT kernels cut that inversion short (lab/demo/README.md says
why).

    python3 demo_matrix.py MATRIX.JSON

Exit status: 0 it holds; 1 it does not (each failure on a line); 2 usage."""
import json
import re
import sys

WAKERS = ("udp", "unix")
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
        stock_re, patched_re, obtained = EXPECTED.get(name, (None, None, None))
        if stock_re is None:
            continue
        demos = p.get("demos") or {}
        if sorted(demos) != sorted(WAKERS):
            out.append(f"{name}: demos {sorted(demos)}, expected {sorted(WAKERS)}")
        for waker, d in sorted(demos.items()):
            if "error" in d:
                out.append(f"{name}, {waker}: no report: {d['error']}")
            elif (d.get("patched") or {}).get("stalls") != 0:
                out.append(f"{name}, {waker}: the patched kernel stalled "
                           f"{(d.get('patched') or {}).get('stalls')} times")
            elif not d.get("verdict") or not d.get("headline"):
                out.append(f"{name}, {waker}: no verdict")
        if "stock" not in p:
            continue
        if not re.fullmatch(stock_re, str(p["stock"].get("kernel"))):
            out.append(f"{name}: stock kernel {p['stock'].get('kernel')}, expected /{stock_re}/")
        if not re.fullmatch(patched_re, str(p["patched"].get("kernel"))):
            out.append(f"{name}: patched kernel {p['patched'].get('kernel')}, expected /{patched_re}/")
        if obtained not in str(p["patched"].get("obtained")):
            out.append(f"{name}: patched kernel obtained '{p['patched'].get('obtained')}', "
                       f"expected '{obtained}'")
        for waker in WAKERS:
            got = (demos.get(waker) or {}).get("verdict")
            if got and (waker == "unix" or name == "6.12") and got != "fixed":
                out.append(f"{name}, {waker}: verdict {got}, expected fixed")
        if p.get("verdict") != "fixed":
            out.append(f"{name}: the pair's verdict {p.get('verdict')}, expected fixed")
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
