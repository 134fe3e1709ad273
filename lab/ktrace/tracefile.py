"""The kernel's trace read into events: one Event per line, with the
kernel stack a `stacktrace` trigger printed after it attached, and the
buffer's own account of what it dropped. The text trace (tracefs' `trace`
file, trace.txt.gz) is read as it is; the raw one (the buffers' pages,
trace/, `ktrace stop --raw`) through trace-cmd, whose report says the
same events in its own words (a sched_switch as `prev:pid [prio] S ==>
next:pid [prio]`, stack frames with their addresses). Its latency format
(report -l) gives the flag columns too, right after the CPU ("1d.s22"),
and cuts the running task's name to 8 characters: the full names come
from the events' own fields (sched_switch, sched_waking).

A line the reader does not understand is an error naming the file and the
line, never a guess: an analysis built on a misread trace would explain
stalls that did not happen.
"""
import glob
import gzip
import os
import re
import stat
import subprocess
import tempfile
import zlib
from collections import deque
from dataclasses import dataclass, field

# "          relay-95      [001] d..2.    12.345678: sched_switch: prev_comm=..."
# The task's name may hold spaces and dashes; the pid is the last -NUMBER
# before the CPU column.
# The CPU column: "[001]" (the kernel's, trace-cmd's), or the CPU with the
# flag columns right after it, "1d.s22" (trace-cmd report -l).
_CPU = r"(?:\[(?P<cpu>\d{1,5})\]\s+(?:(?P<flags>\S{4,7})\s+)?|(?P<lcpu>\d{1,5})(?P<lflags>[^\d\s]\S{3,6})\s+)"
_LINE = re.compile(r"^\s*(?P<comm>.*?)-(?P<pid>\d{1,10})\s+(?:\(\s*[\d-]+\)\s+)?" + _CPU +
                   r"(?P<ts>\d+\.\d+):\s+(?P<name>[\w.]+):\s?(?P<body>.*)$")
_LATENCY_CPU = re.compile(r"^(\d{1,5})([^\d\s]\S{3,6})$")
# The common shapes at once: "comm-pid [cpu] flags ts: name: body" and
# "comm-pid cpuflags ts: name: body" (one match costs what _split's steps
# cost the other lines).
_FAST = re.compile(r"^\s*(.*?)-(\d{1,10})\s+(?:\[(\d{1,5})\]\s+(\S{4,7})\s+|(\d{1,5})([^\d\s]\S{3,6})\s+)"
                   r"(\d+\.\d+): ([a-z_]\w*):\s*(.*)$")
_FIELD = re.compile(r"(\w+)=(\S+)")
_PROBE = re.compile(r"^\((?P<where>[^)]*)\)\s*(?P<rest>.*)$")
_LOCK = re.compile(r"^(?P<addr>(?:0x)?[0-9a-f]{1,16}) \((?P<what>flags|ret)=(?P<val>[^)]*)\)$")
_SWITCH = re.compile(r"^prev_comm=(?P<pc>.*?) prev_pid=(?P<pp>\d{1,10}) prev_prio=(?P<ppr>-?\d{1,4}) "
                     r"prev_state=(?P<ps>\S+) ==> next_comm=(?P<nc>.*?) next_pid=(?P<np>\d{1,10}) "
                     r"next_prio=(?P<npr>-?\d{1,4})$")
# trace-cmd's: "prev:pid [prio] S ==> next:pid [prio]"
_SWITCH_TC = re.compile(r"^(?P<pc>.*):(?P<pp>\d{1,10}) \[(?P<ppr>-?\d{1,4})\] (?P<ps>\S+) ==> "
                        r"(?P<nc>.*):(?P<np>\d{1,10}) \[(?P<npr>-?\d{1,4})\]$")
# The line a stacktrace trigger prints before the frames.
_STACK = re.compile(r"^\s*(?P<comm>.*?)-(?P<pid>\d{1,10})\s+(?:\(\s*[\d-]+\)\s+)?" + _CPU +
                    r"\d+\.\d+: (?:kernel_stack:\s+)?<stack trace ?>$")
_SOFTIRQ = re.compile(r"^vec=(?P<vec>\d{1,2}) \[action=(?P<action>\w{1,16})\]$")
_COMM_PID = re.compile(r"^comm=(?P<comm>.*?) pid=(?P<pid>\d{1,10}) (?P<rest>.*)$")


class TraceError(Exception):
    """The trace cannot be read: which file, which line, what was wrong."""


@dataclass(slots=True)
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
    if name in ("softirq_raise", "softirq_entry", "softirq_exit"):
        # "vec=8 [action=HRTIMER]"
        m = _SOFTIRQ.match(body)
        return {"vec": int(m["vec"]), "action": m["action"]} if m else None
    if name in ("timer_expire_entry", "timer_expire_exit"):
        # "timer=00000000c3a0d2f2 function=process_timeout now=4294892345
        # baseclk=4294892345" (the exit: the timer alone)
        f = dict(_FIELD.findall(body))
        if "timer" not in f or ("function" in f) != (name == "timer_expire_entry"):
            return None
        out = {"timer": int(f["timer"], 16)}
        if "function" in f:
            out["function"] = re.split(r"[+/]", f["function"])[0]
        return out
    if name in ("local_timer_entry", "reschedule_entry"):
        # "vector=236"
        f = {k: int(v) for k, v in _FIELD.findall(body)}
        return f if "vector" in f else None
    if name in ("hrtimer_start", "hrtimer_expire_entry"):
        # The kernel's "hrtimer=ffff888003a1c0e8 function=sched_cfs_period_timer
        # expires=123 softexpires=123 mode=ABS|PINNED", trace-cmd's
        # "hrtimer=0xffff888003a1c0e8 now=123 function=sched_cfs_period_timer"
        f = dict(_FIELD.findall(body))
        if "hrtimer" not in f or "function" not in f:
            return None
        out = {"hrtimer": int(f["hrtimer"], 16), "function": re.split(r"[+/]", f["function"])[0]}
        for k in ("expires", "softexpires", "now"):
            if k in f:
                out[k] = int(f[k])
        return out if ("now" in out) == (name == "hrtimer_expire_entry") and \
            ("expires" in out) == (name == "hrtimer_start") else None
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


# A trace line is some hundred bytes (a kprobe's fields, a stack frame);
# one longer than this is not a trace's, and reading it whole could take
# all the memory there is.
MAX_LINE = 64 << 10


def _lines(f, source):
    """The lines of f, each refused (TraceError) past MAX_LINE bytes; read
    a megabyte at a time (a line at a time costs as much as the line's
    parsing)."""
    n, rest = 0, ""
    while True:
        block = f.read(1 << 20)
        if not block:
            if rest:
                yield rest
            return
        lines = (rest + block).split("\n")
        rest = lines.pop()
        for line in lines:
            if len(line) > MAX_LINE:
                raise TraceError(f"{source}:{n + 1}: a line of more than {MAX_LINE} bytes: not a trace")
            n += 1
            yield line
        if len(rest) > MAX_LINE:
            raise TraceError(f"{source}:{n + 1}: a line of more than {MAX_LINE} bytes: not a trace")


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
        # "comm-pid [cpu] ts" (trace-cmd's), "comm-pid [cpu] flags ts", or
        # "comm-pid cpuflags ts" (trace-cmd report -l)
        cols, flags = head.rsplit(None, 2), ""
        lat = _LATENCY_CPU.match(cols[1]) if len(cols) == 3 else None
        if lat:
            cols[1], flags = f"[{lat[1]}]", lat[2]
        elif len(cols) == 3 and not cols[1].startswith("["):
            cols = head.rsplit(None, 3)
            flags = cols.pop(2) if len(cols) == 4 else ""
        rest3, cpu, ts = cols if len(cols) == 3 else ("", "", "")
        if cpu.startswith("[") and cpu.endswith("]"):
            comm, dash, pid = rest3.strip().rpartition("-")
            name, sep2, body = rest.partition(": ")
            if (dash and pid.isdigit() and len(pid) <= 10 and cpu[1:-1].isdigit() and len(cpu) <= 7
                    and sep2 and name.isidentifier()):
                try:
                    return comm, int(pid), int(cpu[1:-1]), flags, float(ts), name, body.lstrip(" ")
                except ValueError:
                    pass
    m = _LINE.match(line)
    if not m:
        return None
    return (m["comm"].strip(), int(m["pid"]), int(m["cpu"] or m["lcpu"]), m["flags"] or m["lflags"] or "",
            float(m["ts"]), m["name"], m["body"].lstrip(" "))


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
            pid, cpu = int(m["pid"]), int(m["cpu"] or m["lcpu"])
            for e in reversed(recent):
                if e.pid == pid and e.cpu == cpu and not e.stack:
                    in_stack = e.stack
                    break
            if in_stack is None:
                in_stack = []   # a stack of an event we did not keep
            continue
        m = _FAST.match(line)
        if m:
            comm, pid, c, flags, lc, lf, ts, name, body = m.groups()
            pid, cpu, flags, ts = int(pid), int(c or lc), flags or lf, float(ts)
        else:
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
    try:
        with _open(path) as f:
            yield from iparse(_lines(f, path), path, keep)
    except (OSError, EOFError, zlib.error) as e:
        raise TraceError(f"{path}: {e}")


# What a raw trace may hold, whatever its statistics say: a guest's
# buffer per CPU (lab/ktrace/ktrace start: 160 MiB) fits many times, and a
# guest's symbols and event formats are some megabytes.
RAW_CPU_MAX = 1 << 30
RAW_META_MAX = 64 << 20
_RAW_NAME = re.compile(r"^cpu(\d{1,5})\.raw\.gz$")


def raw_limit(cpu_stats):
    """How many bytes one CPU's pages may unpack to: what its buffer held
    (trace-stats.txt's bytes, the events' and their pages' headers, some
    1 % more) twice over, and never more than RAW_CPU_MAX."""
    held = (cpu_stats or {}).get("bytes")
    if held is None:
        return RAW_CPU_MAX
    return min(RAW_CPU_MAX, int(2 * held) + (1 << 20))


def _regular_tree(path, limit):
    """The bytes of the regular files under path (a file or a directory of
    them), refused (TraceError) past limit or when anything there is not a
    regular file or a directory (a link to /dev/zero would never end)."""
    total, todo = 0, [path]
    while todo:
        p = todo.pop()
        st = os.lstat(p)
        if stat.S_ISDIR(st.st_mode):
            todo.extend(os.path.join(p, n) for n in os.listdir(p))
        elif stat.S_ISREG(st.st_mode):
            total += st.st_size
        else:
            raise TraceError(f"{p}: not a regular file or a directory")
        if total > limit:
            raise TraceError(f"{path}: more than {limit >> 20} MiB (not a trace's)")
    return total


def _gunzip(path, out, limit):
    """path (gzip) unpacked into out, refused (TraceError naming path) once
    it passes limit bytes: a small file can hold gigabytes of zeros."""
    n = 0
    try:
        with gzip.open(path, "rb") as f, open(out, "wb") as dst:
            while True:
                block = f.read(1 << 20)
                if not block:
                    return n
                n += len(block)
                if n > limit:
                    raise TraceError(f"{path}: unpacks to more than {limit} bytes, more than its "
                                     "CPU's buffer held (trace-stats.txt): not its pages")
                dst.write(block)
    except (OSError, EOFError, zlib.error) as e:
        raise TraceError(f"{path}: {e}")


def iread_raw(d, keep=None, cpu_stats=None):
    """iparse() of a raw trace (DIR: cpuN.raw.gz, tracefs/, kallsyms, as
    `ktrace stop --raw` writes them): trace-cmd makes a trace.dat of the
    pages with the guest's formats and symbols (restore -c -t -k, then
    restore -i), and reports it. CPU_STATS (stats() of its
    trace-stats.txt) bounds what each CPU's pages may unpack to
    (raw_limit)."""
    gz = []
    for path in glob.glob(os.path.join(d, "cpu*.raw.gz")):
        m = _RAW_NAME.match(os.path.basename(path))
        if not m:
            raise TraceError(f"{path}: not a CPU's pages (cpuN.raw.gz)")
        gz.append((int(m[1]), path))
    gz.sort()
    for need in ("tracefs", "kallsyms"):
        if not os.path.exists(os.path.join(d, need)):
            raise TraceError(f"{d}: no {need} (not a trace ktrace stop --raw wrote)")
        _regular_tree(os.path.join(d, need), RAW_META_MAX)
    if not gz:
        raise TraceError(f"{d}: no cpuN.raw.gz")
    with tempfile.TemporaryDirectory(prefix="ktrace-") as tmp:
        cpus = []
        for cpu, path in gz:
            cpus.append(os.path.join(tmp, os.path.basename(path)[:-3]))
            _gunzip(path, cpus[-1], raw_limit((cpu_stats or {}).get(cpu)))
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
            # -l: the flag columns, which the plain report leaves out.
            p = _trace_cmd(["report", "-l", "-i", dat], d, err)
            try:
                yield from iparse((line for line in _lines(p.stdout, d) if not line.startswith("cpus=")),
                                  d, keep)
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
        st = os.path.join(results, "trace-stats.txt")
        return iread_raw(raw, keep, stats(st) if os.path.exists(st) else None)
    raise TraceError(f"{results}: no trace.txt.gz and no trace/")


def kept(results):
    """The spans a raw trace kept (trace/kept.txt: "FROM TO" a line, seconds
    on the trace's clock; ktrace stop --keep), [(from, to)]; None when it
    kept every page. TraceError names a line that is not two numbers."""
    path = os.path.join(results, "trace", "kept.txt")
    if not os.path.lexists(path):
        return None
    lines = small_text(path)
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


# The trace's side files (its statistics, the probes' hits, the kept
# spans) are a few hundred bytes.
SIDE_FILE_MAX = 64 << 10


def small_text(path):
    """The lines of one of the trace's side files, refused (TraceError) when
    it is not a regular file of at most SIDE_FILE_MAX bytes."""
    try:
        st = os.stat(path)
        if not stat.S_ISREG(st.st_mode) or st.st_size > SIDE_FILE_MAX:
            raise TraceError(f"{path}: not a regular file of at most {SIDE_FILE_MAX >> 10} KiB")
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read(SIDE_FILE_MAX + 1).splitlines()
    except OSError as e:
        raise TraceError(f"{path}: {e}")


# A statistic's value: a count or seconds, as the kernel prints them.
_STAT_VALUE = re.compile(r"^\d{1,20}(?:\.\d{1,9})?$")


def stats(path):
    """lab/ktrace/ktrace's trace-stats.txt: {cpu: {"entries": n, "overrun": n,
    "dropped events": n, ...}}."""
    out, cpu = {}, None
    for n, line in enumerate(small_text(path), 1):
        line = line.strip()
        if re.fullmatch(r"cpu\d{1,5}", line):
            cpu = int(line[3:])
            out[cpu] = {}
        elif ":" in line and cpu is not None:
            k, v = line.split(":", 1)
            if not _STAT_VALUE.match(v.strip()):
                raise TraceError(f"{path}:{n}: {k.strip()} is not a number: {v.strip()[:40]!r}")
            out[cpu][k.strip()] = float(v.strip())
        elif line:
            raise TraceError(f"{path}:{n}: not a per-CPU statistic: {line[:80]!r}")
    return out
