"""deploy/hostimg/vcpus.py: where a test host's vCPUs are, asked of QEMU's
monitor (deploy/hostimg/boot --monitor), when the guest itself can no
longer say: each vCPU's instruction pointer sampled a number of times,
as symbols of the kernel's System.map (the guest boots with nokaslr),
whether it ran with interrupts on, and the kernel text addresses on its
stack at the last sample (a backtrace without frame pointers: what the
stack holds, not what called what).

  mk/py deploy.hostimg.vcpus --monitor SOCKET --system-map FILE [--samples N]

Exit status: 0 written; 65 the System.map unreadable; 69 the monitor did
not answer.
"""
import argparse
import bisect
import collections
import re
import socket
import sys
import time

EX_DATAERR, EX_UNAVAILABLE = 65, 69
PROMPT = b"(qemu) "
# The kernel's text in the x86-64 layout without KASLR.
TEXT_LO, TEXT_HI = 0xffffffff80000000, 0xffffffffc0000000
STACK_WORDS = 48
RFLAGS_IF = 1 << 9


class SystemMap:
    """Text symbols of a System.map, to name an address."""

    def __init__(self, text):
        rows = []
        for line in text.splitlines():
            parts = line.split()
            if len(parts) == 3 and parts[1] in "tTwW":
                try:
                    rows.append((int(parts[0], 16), parts[2]))
                except ValueError:
                    continue
        if not rows:
            raise ValueError("no text symbols")
        rows.sort()
        # what lies past the text's end is data, not code
        self.end = next((a for a, n in rows if n == "_etext"), TEXT_HI)
        self.addrs = [a for a, _ in rows]
        self.names = [n for _, n in rows]

    def name(self, addr):
        """symbol+0xoff for a kernel text address; None outside it."""
        if not TEXT_LO <= addr < self.end:
            return None
        i = bisect.bisect_right(self.addrs, addr) - 1
        if i < 0:
            return None
        return f"{self.names[i]}+{addr - self.addrs[i]:#x}"


def registers(text):
    """{cpu: {"rip", "rsp", "rflags", "cpl", "halted"}} from 'info
    registers -a'."""
    out = {}
    for block in re.split(r"\n(?=CPU#\d+)", text):
        m = re.match(r"CPU#(\d+)", block.strip())
        if not m:
            continue
        regs = {k.lower(): int(v, 16) for k, v in re.findall(r"\b(RIP|RSP|RFL)=([0-9a-f]+)", block)}
        cpl = re.search(r"CPL=(\d)", block)
        if "rip" in regs:
            out[int(m.group(1))] = {"rip": regs["rip"], "rsp": regs.get("rsp"),
                                    "rflags": regs.get("rfl"), "cpl": int(cpl.group(1)) if cpl else None,
                                    "halted": "HLT=1" in block}
    return out


def words(text):
    """The 64-bit words of an 'x /Ngx' dump."""
    return [int(w, 16) for line in text.splitlines() if ":" in line
            for w in line.split(":", 1)[1].split()]


class Monitor:
    """QEMU's human monitor on a unix socket."""

    def __init__(self, path, timeout=10):
        self.s = socket.socket(socket.AF_UNIX)
        self.s.settimeout(timeout)
        self.s.connect(path)
        self._until_prompt()

    def _until_prompt(self):
        buf = b""
        while not buf.endswith(PROMPT):
            got = self.s.recv(65536)
            if not got:
                raise OSError("the monitor closed")
            buf += got
        return buf[:-len(PROMPT)].decode("utf-8", "replace")

    def ask(self, command):
        self.s.sendall(command.encode() + b"\n")
        text = self._until_prompt()
        # the monitor echoes the command line first
        return text.split("\n", 1)[1] if "\n" in text else ""


def report(mon, smap, samples, interval_s):
    """The report's lines."""
    seen = collections.defaultdict(collections.Counter)
    irqs_off = collections.Counter()
    last = {}
    for _ in range(samples):
        last = registers(mon.ask("info registers -a"))
        for cpu, r in last.items():
            where = "halted (idle)" if r["halted"] else (
                smap.name(r["rip"]) or f"{r['rip']:#x} (CPL {r['cpl']})")
            seen[cpu][where] += 1
            if r["rflags"] is not None and not r["rflags"] & RFLAGS_IF:
                irqs_off[cpu] += 1
        time.sleep(interval_s)
    lines = []
    for cpu in sorted(seen):
        lines.append(f"CPU {cpu}: {samples} samples, interrupts off in {irqs_off[cpu]}")
        for where, n in seen[cpu].most_common(12):
            lines.append(f"  {n:4d}  {where}")
        r = last.get(cpu)
        if r and r["rsp"] and r["cpl"] == 0:
            mon.ask(f"cpu {cpu}")
            stack = [smap.name(w) for w in words(mon.ask(f"x /{STACK_WORDS}gx {r['rsp']:#x}"))]
            lines.append("  on its stack: " + (" < ".join(s for s in stack if s) or "no kernel text"))
    return lines


def main(argv=None):
    ap = argparse.ArgumentParser(prog="deploy.hostimg.vcpus", description=__doc__.split("\n\n")[0])
    ap.add_argument("--monitor", required=True, metavar="SOCKET")
    ap.add_argument("--system-map", required=True, metavar="FILE")
    ap.add_argument("--samples", type=int, default=50)
    ap.add_argument("--interval-s", type=float, default=0.1)
    a = ap.parse_args(argv)
    try:
        with open(a.system_map, encoding="utf-8", errors="replace") as f:
            smap = SystemMap(f.read())
    except (OSError, ValueError) as e:
        print(f"deploy.hostimg.vcpus: {a.system_map}: {e}", file=sys.stderr)
        return EX_DATAERR
    try:
        mon = Monitor(a.monitor)
        lines = report(mon, smap, max(1, a.samples), a.interval_s)
    except OSError as e:
        print(f"deploy.hostimg.vcpus: the monitor at {a.monitor}: {e}", file=sys.stderr)
        return EX_UNAVAILABLE
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
