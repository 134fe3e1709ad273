"""The kernel's text trace (tracefs' `trace` file, as lab/ktrace/ktrace
writes it) read into events: one Event per line, with the kernel stack a
`stacktrace` trigger printed after it attached, and the buffer's own
account of what it dropped.

A line the reader does not understand is an error naming the file and the
line, never a guess: an analysis built on a misread trace would explain
stalls that did not happen.
"""
import gzip
import re
from dataclasses import dataclass, field

# "          relay-95      [001] d..2.    12.345678: sched_switch: prev_comm=..."
# The task's name may hold spaces and dashes; the pid is the last -NUMBER
# before the CPU column.
_LINE = re.compile(r"^\s*(?P<comm>.*?)-(?P<pid>\d+)\s+(?:\(\s*[\d-]+\)\s+)?\[(?P<cpu>\d+)\]\s+"
                   r"(?:(?P<flags>\S{4,6})\s+)?(?P<ts>\d+\.\d+):\s+(?P<name>[\w.]+):\s?(?P<body>.*)$")
_FIELD = re.compile(r"(\w+)=(\S+)")
_PROBE = re.compile(r"^\((?P<where>[^)]*)\)\s*(?P<rest>.*)$")
_LOCK = re.compile(r"^(?P<addr>(?:0x)?[0-9a-f]+) \((?P<what>flags|ret)=(?P<val>[^)]*)\)$")
_SWITCH = re.compile(r"^prev_comm=(?P<pc>.*?) prev_pid=(?P<pp>\d+) prev_prio=(?P<ppr>-?\d+) "
                     r"prev_state=(?P<ps>\S+) ==> next_comm=(?P<nc>.*?) next_pid=(?P<np>\d+) "
                     r"next_prio=(?P<npr>-?\d+)$")
# The line a stacktrace trigger prints before the frames.
_STACK = re.compile(r"^\s*(?P<comm>.*?)-(?P<pid>\d+)\s+(?:\(\s*[\d-]+\)\s+)?\[(?P<cpu>\d+)\]\s+"
                    r"(?:\S{4,6}\s+)?\d+\.\d+: <stack trace>$")
_COMM_PID = re.compile(r"^comm=(?P<comm>.*?) pid=(?P<pid>\d+) (?P<rest>.*)$")


class TraceError(Exception):
    """The trace cannot be read: which file, which line, what was wrong."""


@dataclass
class Event:
    ts: float           # seconds, CLOCK_MONOTONIC (trace_clock mono)
    cpu: int
    pid: int            # the task running when it fired
    comm: str
    name: str           # sched_switch, contention_begin, ep_cb, ...
    fields: dict
    # The irqs-off/need-resched/hardirq-softirq/preempt columns ("d.s25"),
    # "" when the trace has none.
    flags: str = ""
    stack: list = field(default_factory=list)   # innermost first, when a trigger printed one


def _fields(name, body):
    """The event's fields as a dict of str and int, by the event's format."""
    if name == "sched_switch":
        m = _SWITCH.match(body)
        if not m:
            return None
        return {"prev_comm": m["pc"], "prev_pid": int(m["pp"]), "prev_prio": int(m["ppr"]),
                "prev_state": m["ps"], "next_comm": m["nc"], "next_pid": int(m["np"]),
                "next_prio": int(m["npr"])}
    if name in ("contention_begin", "contention_end"):
        m = _LOCK.match(body)
        if not m:
            return None
        f = {"lock": int(m["addr"], 16)}
        if m["what"] == "flags":
            f["flags"] = m["val"]
        else:
            f["ret"] = int(m["val"])
        return f
    if name in ("sched_waking", "sched_wakeup", "sched_pi_setprio"):
        m = _COMM_PID.match(body)
        if not m:
            return None
        f = {"comm": m["comm"], "pid": int(m["pid"])}
        for k, v in _FIELD.findall(m["rest"]):
            f[k] = int(v)
        return f
    m = _PROBE.match(body)
    if m:   # a kprobe or kretprobe event: (where) name=value...
        f = {"where": m["where"]}
        for k, v in _FIELD.findall(m["rest"]):
            f[k] = int(v, 16) if v.startswith("0x") else v
        return f
    return None


def _open(path):
    if path.endswith(".gz"):
        return gzip.open(path, "rt", encoding="utf-8", errors="replace")
    return open(path, encoding="utf-8", errors="replace")


def holds_bh(flags):
    """Whether the task an event fired in held its CPU's softirq lock: BH
    disabled ("D", "b" in the first column) or serving softirqs ("s", "H"
    in the third). On PREEMPT_RT both hold the per-CPU softirq_ctrl lock,
    and while a task holds it no other runs the CPU's softirqs."""
    return len(flags) >= 3 and (flags[0] in "Db" or flags[2] in "sH")


def _split(line):
    """(comm, pid, cpu, flags, ts, name, body) of a trace line, or None. The fast
    way: the first ": " ends the timestamp, and the columns before it are
    read from the right (a task's name may hold spaces); the regex when
    that does not add up."""
    head, sep, rest = line.partition(": ")
    if sep:
        cols = head.rsplit(None, 3)
        if len(cols) == 4 and cols[1].startswith("[") and cols[1].endswith("]"):
            comm, dash, pid = cols[0].strip().rpartition("-")
            name, sep2, body = rest.partition(": ")
            if dash and pid.isdigit() and cols[1][1:-1].isdigit() and sep2 and name.isidentifier():
                try:
                    return comm, int(pid), int(cols[1][1:-1]), cols[2], float(cols[3]), name, body
                except ValueError:
                    pass
    m = _LINE.match(line)
    if not m:
        return None
    return (m["comm"].strip(), int(m["pid"]), int(m["cpu"]), m["flags"] or "", float(m["ts"]),
            m["name"], m["body"])


def parse(lines, source="trace"):
    """Events from the lines of a text trace, in the order of the file (the
    kernel's merge of its per-CPU buffers, by time)."""
    events = []
    in_stack = None
    for n, line in enumerate(lines, 1):
        line = line.rstrip("\n")
        if not line or line.startswith("#"):
            continue
        if line.startswith(" => "):
            if in_stack is None:
                raise TraceError(f"{source}:{n}: a stack frame with no <stack trace> line before it")
            in_stack.append(line[4:].split("+")[0].strip())
            continue
        if line.endswith(": <stack trace>"):
            m = _STACK.match(line)
            if not m:
                raise TraceError(f"{source}:{n}: not a trace line: {line[:120]!r}")
            in_stack = None
            # The trigger's stack belongs to the event it fired on: the one
            # before it from the same task on the same CPU.
            pid, cpu = int(m["pid"]), int(m["cpu"])
            for e in reversed(events[-8:]):
                if e.pid == pid and e.cpu == cpu and not e.stack:
                    in_stack = e.stack
                    break
            if in_stack is None:
                in_stack = []   # a stack of an event we did not keep
            continue
        parts = _split(line)
        if parts is None:
            raise TraceError(f"{source}:{n}: not a trace line: {line[:120]!r}")
        comm, pid, cpu, flags, ts, name, body = parts
        try:
            f = _fields(name, body)
        except ValueError:
            f = None
        if f is None:
            raise TraceError(f"{source}:{n}: event {name} with fields it should not have: {body[:120]!r}")
        in_stack = None
        events.append(Event(ts, cpu, pid, comm, name, f, flags))
    return events


def read(path):
    """parse() of a trace file (gzip'd or not)."""
    with _open(path) as f:
        return parse(f, path)


def stats(path):
    """lab/ktrace/ktrace's trace-stats.txt: {cpu: {"entries": n, "overrun": n,
    "dropped events": n, ...}}."""
    out, cpu = {}, None
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if re.fullmatch(r"cpu\d+", line):
                cpu = int(line[3:])
                out[cpu] = {}
            elif ":" in line and cpu is not None:
                k, v = line.split(":", 1)
                try:
                    out[cpu][k.strip()] = float(v.strip())
                except ValueError:
                    raise TraceError(f"{path}:{n}: {k.strip()} is not a number: {v.strip()!r}")
            elif line:
                raise TraceError(f"{path}:{n}: not a per-CPU statistic: {line[:80]!r}")
    return out
