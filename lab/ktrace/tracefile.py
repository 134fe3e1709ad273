"""The kernel's trace read into events: one Event per line, with the
kernel stack a `stacktrace` trigger printed after it attached, and the
buffer's own account of what it dropped. The text trace (tracefs' `trace`
file, trace.txt.gz) is read as it is; the raw one (the buffers' pages,
trace/, `ktrace stop --raw`) through trace-cmd, whose report says the
same events in its own words (a sched_switch as `prev:pid [prio] S ==>
next:pid [prio]`, stack frames with their addresses) and without the
irqs-off/softirq columns, which only its latency format has, and that
one cuts task names to 8 characters.

A line the reader does not understand is an error naming the file and the
line, never a guess: an analysis built on a misread trace would explain
stalls that did not happen.
"""
import glob
import gzip
import os
import re
import shutil
import subprocess
import tempfile
import zlib
from collections import deque
from dataclasses import dataclass, field

# "          relay-95      [001] d..2.    12.345678: sched_switch: prev_comm=..."
# The task's name may hold spaces and dashes; the pid is the last -NUMBER
# before the CPU column.
_LINE = re.compile(r"^\s*(?P<comm>.*?)-(?P<pid>\d+)\s+(?:\(\s*[\d-]+\)\s+)?\[(?P<cpu>\d+)\]\s+"
                   r"(?:(?P<flags>\S{4,7})\s+)?(?P<ts>\d+\.\d+):\s+(?P<name>[\w.]+):\s?(?P<body>.*)$")
_FIELD = re.compile(r"(\w+)=(\S+)")
_PROBE = re.compile(r"^\((?P<where>[^)]*)\)\s*(?P<rest>.*)$")
_LOCK = re.compile(r"^(?P<addr>(?:0x)?[0-9a-f]+) \((?P<what>flags|ret)=(?P<val>[^)]*)\)$")
_SWITCH = re.compile(r"^prev_comm=(?P<pc>.*?) prev_pid=(?P<pp>\d+) prev_prio=(?P<ppr>-?\d+) "
                     r"prev_state=(?P<ps>\S+) ==> next_comm=(?P<nc>.*?) next_pid=(?P<np>\d+) "
                     r"next_prio=(?P<npr>-?\d+)$")
# trace-cmd's: "prev:pid [prio] S ==> next:pid [prio]"
_SWITCH_TC = re.compile(r"^(?P<pc>.*):(?P<pp>\d+) \[(?P<ppr>-?\d+)\] (?P<ps>\S+) ==> "
                        r"(?P<nc>.*):(?P<np>\d+) \[(?P<npr>-?\d+)\]$")
# The line a stacktrace trigger prints before the frames.
_STACK = re.compile(r"^\s*(?P<comm>.*?)-(?P<pid>\d+)\s+(?:\(\s*[\d-]+\)\s+)?\[(?P<cpu>\d+)\]\s+"
                    r"(?:\S{4,7}\s+)?\d+\.\d+: (?:kernel_stack:\s+)?<stack trace ?>$")
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
    # The FLAG_COLUMNS ("d.s25"), "" when the trace has none.
    flags: str = ""
    stack: list = field(default_factory=list)   # innermost first, when a trigger printed one


def _fields(name, body):
    """The event's fields as a dict of str and int, by the event's format."""
    if name == "sched_switch":
        m = _SWITCH.match(body) if body.startswith("prev_comm=") else _SWITCH_TC.match(body)
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
    if name in ("local_timer_entry", "reschedule_entry"):
        # "vector=236"
        f = {k: int(v) for k, v in _FIELD.findall(body)}
        return f if "vector" in f else None
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


# The flag columns events carry, in this order, whatever the kernel
# printed: a kernel with lazy preemption (Debian's 6.1 RT) adds two more
# ("d..s216": need-resched-lazy and preempt-lazy-depth), which the
# trace's header names.
FLAG_COLUMNS = ("irqs-off", "need-resched", "hardirq/softirq", "preempt-depth", "migrate-disable")
_HEADER_COLUMN = re.compile(r"^#[\s|/_-]*=> (?P<name>\S+)\s*$")


def flag_layout(names):
    """Where each of FLAG_COLUMNS sits among the columns a trace's header
    NAMES ("irqs-off/BH-disabled" is irqs-off), as a list of indices
    (None for one the kernel does not print), or None for names that are
    FLAG_COLUMNS themselves."""
    at = []
    for want in FLAG_COLUMNS:
        hit = [i for i, n in enumerate(names) if n == want or n.startswith(want + "/")]
        at.append(hit[0] if hit else None)
    return None if at == list(range(len(names))) else at


def _flags_in(flags, layout):
    return "".join(flags[i] if i is not None else "." for i in layout)


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
        # "comm-pid [cpu] ts" (trace-cmd's), or "comm-pid [cpu] flags ts"
        cols, flags = head.rsplit(None, 2), ""
        if len(cols) == 3 and not cols[1].startswith("["):
            cols = head.rsplit(None, 3)
            flags = cols.pop(2) if len(cols) == 4 else ""
        rest3, cpu, ts = cols if len(cols) == 3 else ("", "", "")
        if cpu.startswith("[") and cpu.endswith("]"):
            comm, dash, pid = rest3.strip().rpartition("-")
            name, sep2, body = rest.partition(": ")
            if dash and pid.isdigit() and cpu[1:-1].isdigit() and sep2 and name.isidentifier():
                try:
                    return comm, int(pid), int(cpu[1:-1]), flags, float(ts), name, body.lstrip(" ")
                except ValueError:
                    pass
    m = _LINE.match(line)
    if not m:
        return None
    return (m["comm"].strip(), int(m["pid"]), int(m["cpu"]), m["flags"] or "", float(m["ts"]),
            m["name"], m["body"].lstrip(" "))


def parse(lines, source="trace"):
    """Events from the lines of a text trace, in the order of the file (the
    kernel's merge of its per-CPU buffers, by time)."""
    return list(iparse(lines, source))


def _ts(line):
    """The timestamp of an event's line, cheaply (None when it has none)."""
    head = line.partition(": ")[0]
    try:
        return float(head[head.rfind(" ") + 1:])
    except ValueError:
        return None


def iparse(lines, source="trace", keep=None):
    """parse(), one event at a time: a trace of ten million events is never
    held whole. An event goes out eight events after it came in, by when
    the stack a trigger printed after it (from its CPU, with the other
    CPUs' events merged in between) has been read. KEEP(ts): only the
    events it says yes to (and their stacks) are read further."""
    recent = deque()
    in_stack = None
    skipping = False
    columns, layout = [], None
    for n, line in enumerate(lines, 1):
        line = line.rstrip("\n")
        if not line or line.startswith("#"):
            m = _HEADER_COLUMN.match(line)
            if m:
                columns.append(m["name"])
                layout = flag_layout(columns)
            continue
        frame = line.startswith(" => ") or line.startswith("=> ")
        if keep is not None:
            if frame and skipping:
                continue
            if not frame:
                ts = _ts(line)
                skipping = ts is not None and not keep(ts)
                if skipping:
                    in_stack = None
                    continue
        if frame:
            if in_stack is None:
                raise TraceError(f"{source}:{n}: a stack frame with no <stack trace> line before it")
            # " => func+0x1/0x2" (the kernel's), "=> func (ffffffff81000000)" (trace-cmd's)
            in_stack.append(line.lstrip()[3:].split("+")[0].split(" (")[0].strip())
            continue
        if line.endswith(": <stack trace>") or line.endswith(" <stack trace >"):
            m = _STACK.match(line)
            if not m:
                raise TraceError(f"{source}:{n}: not a trace line: {line[:120]!r}")
            in_stack = None
            # The trigger's stack belongs to the event it fired on: the one
            # before it from the same task on the same CPU.
            pid, cpu = int(m["pid"]), int(m["cpu"])
            for e in reversed(recent):
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
        if flags and columns:
            if len(flags) != len(columns):
                raise TraceError(f"{source}:{n}: {len(flags)} flag columns ({flags!r}), "
                                 f"the header names {len(columns)}")
            if layout:
                flags = _flags_in(flags, layout)
        try:
            f = _fields(name, body)
        except ValueError:
            f = None
        if f is None:
            raise TraceError(f"{source}:{n}: event {name} with fields it should not have: {body[:120]!r}")
        in_stack = None
        recent.append(Event(ts, cpu, pid, comm, name, f, flags))
        if len(recent) > 8:
            yield recent.popleft()
    yield from recent


def read(path):
    """parse() of a trace file (gzip'd or not)."""
    return list(iread(path))


def iread(path, keep=None):
    with _open(path) as f:
        yield from iparse(f, path, keep)


def iread_raw(d, keep=None):
    """iparse() of a raw trace (DIR: cpuN.raw.gz, tracefs/, kallsyms, as
    `ktrace stop --raw` writes them): trace-cmd makes a trace.dat of the
    pages with the guest's formats and symbols (restore -c -t -k, then
    restore -i), and reports it."""
    gz = sorted(glob.glob(os.path.join(d, "cpu*.raw.gz")),
                key=lambda p: int(re.sub(r"\D", "", os.path.basename(p)) or 0))
    for need in ("tracefs", "kallsyms"):
        if not os.path.exists(os.path.join(d, need)):
            raise TraceError(f"{d}: no {need} (not a trace ktrace stop --raw wrote)")
    if not gz:
        raise TraceError(f"{d}: no cpuN.raw.gz")
    with tempfile.TemporaryDirectory(prefix="ktrace-") as tmp:
        cpus = []
        for path in gz:
            cpus.append(os.path.join(tmp, os.path.basename(path)[:-3]))
            try:
                with gzip.open(path, "rb") as f, open(cpus[-1], "wb") as out:
                    shutil.copyfileobj(f, out, 1 << 20)
            except (OSError, EOFError, zlib.error) as e:
                raise TraceError(f"{path}: {e}")
        head, dat = os.path.join(tmp, "head.dat"), os.path.join(tmp, "trace.dat")
        for argv in (["restore", "-c", "-t", os.path.join(d, "tracefs"), "-k", os.path.join(d, "kallsyms"),
                      "-o", head],
                     ["restore", "-i", head, "-o", dat] + cpus):
            p = _trace_cmd(argv, d, subprocess.PIPE)
            _, err = p.communicate()
            if p.returncode:
                raise TraceError(f"{d}: trace-cmd {argv[0]} exited {p.returncode}: {err.strip()[-300:]}")
        # Its errors to a file: a pipe that nobody reads until the end
        # could fill and stop it.
        with tempfile.TemporaryFile("w+", prefix="ktrace-err-") as err:
            p = _trace_cmd(["report", "-i", dat], d, err)
            try:
                yield from iparse((line for line in p.stdout if not line.startswith("cpus=")), d, keep)
            finally:
                p.stdout.close()
                rc = p.wait()
            if rc:
                err.seek(0)
                raise TraceError(f"{d}: trace-cmd report exited {rc}: {err.read().strip()[-300:]}")


def _trace_cmd(argv, d, stderr):
    """trace-cmd ARGV started, its output to read, its errors to STDERR."""
    try:
        return subprocess.Popen(["trace-cmd"] + argv, stdout=subprocess.PIPE, stderr=stderr,
                                stdin=subprocess.DEVNULL, text=True, errors="replace")
    except FileNotFoundError:
        raise TraceError(f"{d}: a raw trace needs trace-cmd (apt install trace-cmd)")


def read_results(results):
    """The events of a guest's results directory (ievents), as a list."""
    return list(ievents(results))


def ievents(results, keep=None):
    """The trace of a guest's results directory, one event at a time:
    trace.txt.gz, or the raw trace/ (iread_raw); KEEP as for iparse.
    TraceError when it has neither."""
    text, raw = os.path.join(results, "trace.txt.gz"), os.path.join(results, "trace")
    if os.path.exists(text):
        return iread(text, keep)
    if os.path.isdir(raw):
        return iread_raw(raw, keep)
    raise TraceError(f"{results}: no trace.txt.gz and no trace/")


def kept(results):
    """The spans a raw trace kept (trace/kept.txt: "FROM TO" a line, seconds
    on the trace's clock; ktrace stop --keep), [(from, to)]; None when it
    kept every page. TraceError names a line that is not two numbers."""
    path = os.path.join(results, "trace", "kept.txt")
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except FileNotFoundError:
        return None
    except OSError as e:
        raise TraceError(f"{path}: {e}")
    out = []
    for i, ln in enumerate(lines, 1):
        try:
            a, b = (float(x) for x in ln.split())
        except ValueError:
            raise TraceError(f"{path}:{i}: expected FROM TO in seconds, got {ln!r}") from None
        if not 0 <= a <= b:
            raise TraceError(f"{path}:{i}: FROM {a:g} is not at or before TO {b:g}")
        out.append((a, b))
    return out


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
