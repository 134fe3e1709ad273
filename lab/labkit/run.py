"""A run of an experiment: a fresh results directory, the phases it goes
through with progress and an estimate, and the driver's exit codes."""
import datetime
import os
import secrets
import subprocess
import sys
import time

from report import files

# Exit codes every driver shares (each driver's usage names the ones it uses).
EX_OK, EX_VERDICT, EX_USAGE, EX_BUILD, EX_KERNELS, EX_INITRAMFS, EX_REPORT = 0, 1, 2, 3, 4, 5, 6


class LabError(Exception):
    """What stops a driver: the message for its user and the exit code."""

    def __init__(self, code, message):
        super().__init__(message)
        self.code = code


def new_id(now=None):
    """A run id: the UTC time and a random suffix, so two runs in one
    second never share a directory."""
    now = now or datetime.datetime.now(datetime.timezone.utc)
    return now.strftime("%Y%m%d-%H%M%S") + "-" + secrets.token_hex(2)


def write_json(path, obj):
    """OBJ as JSON, the new content of PATH, written as every output of the
    tree is (report.files.new_output: a fresh temporary beside PATH,
    renamed over it, so that a reader sees the old file or the new one and
    a link planted at PATH or at a temporary's name is never written
    through). PATH that is not a regular file is refused: LabError."""
    try:
        files.write_json(path, obj, indent=1)
    except files.DataError as e:
        raise LabError(EX_USAGE, str(e)) from e


def point_latest(results, name, link):
    """Point results/LINK at NAME in one rename."""
    tmp = os.path.join(results, f".{link}.new{os.getpid()}")
    if os.path.lexists(tmp):
        os.unlink(tmp)
    os.symlink(name, tmp)
    os.replace(tmp, os.path.join(results, link))


class Run:
    """One run's results directory and its phases.

    results/<id>[-kind]/ is made new (an existing directory is never
    reused); finish() points results/latest[-kind] at it. Its run.log
    keeps what the driver said, each line with the second of the run it
    was said in: where the time went, after the terminal is gone."""

    def __init__(self, prog, results, kind=None, phases=1, out=None):
        # OUT: where it says what it does; stdout as it is when the run starts.
        self.prog, self.results, self.kind, self.out = prog, results, kind, out or sys.stdout
        self.id = new_id() + (f"-{kind}" if kind else "")
        self.dir = os.path.join(results, self.id)
        os.makedirs(results, exist_ok=True)
        try:
            os.mkdir(self.dir)
        except FileExistsError:
            raise LabError(EX_USAGE, f"{self.dir} exists; not overwriting it")
        self.t0 = time.monotonic()
        self.steps, self.step, self.phases = phases, 0, []

    def path(self, *parts):
        return os.path.join(self.dir, *parts)

    def say(self, text):
        print(text, file=self.out, flush=True)
        el = time.monotonic() - self.t0
        with open(self.path("run.log"), "a", encoding="utf-8") as f:
            f.writelines(f"{el:6.0f} s {line}\n" for line in text.split("\n"))

    def phase(self, name, estimate):
        """Start the next phase: `[i/N] name (estimate)`. Use it in a with
        statement; on leaving it prints how long it took and records it."""
        return _Phase(self, name, estimate)

    def command(self, argv, log, what, every=60, cwd=None, answer=None):
        """Run ARGV with its output in LOG; every EVERY seconds show its
        last line (a build's own progress and estimate), so a long phase is
        never silent. ANSWER: a file for its standard output apart (what it
        answers; LOG then has its standard error). Raises LabError(EX_BUILD)
        naming LOG when it fails."""
        with open(log, "w", encoding="utf-8") as f, \
                open(answer or os.devnull, "w", encoding="utf-8") as a:
            p = subprocess.Popen(argv, stdout=a if answer else f,
                                 stderr=f if answer else subprocess.STDOUT,
                                 stdin=subprocess.DEVNULL, cwd=cwd)
        t0, shown = time.monotonic(), None
        while True:
            try:
                p.wait(timeout=1)
                break
            except subprocess.TimeoutExpired:
                pass
            if time.monotonic() - t0 >= every:
                t0 = time.monotonic()
                line = last_line(log)
                if line and line != shown:
                    self.say(f"      {line}")
                    shown = line
        if p.returncode != 0:
            self.say("".join(tail(log, 20)).rstrip("\n"))
            raise LabError(EX_BUILD, f"{what} failed (log: {log})")

    def save(self, record):
        """Write run.json: RECORD, the phases so far and the wall time."""
        write_json(self.path("run.json"), dict(record, run_id=self.id, phases=self.phases,
                                               wall_s=round(time.monotonic() - self.t0)))

    def finish(self, record):
        """Save RECORD and point the `latest` link at this run."""
        self.save(record)
        point_latest(self.results, self.id, "latest" + (f"-{self.kind}" if self.kind else ""))


class _Phase:
    def __init__(self, run, name, estimate):
        self.run, self.name, self.estimate = run, name, estimate

    def __enter__(self):
        r = self.run
        r.step += 1
        self.t0 = time.monotonic()
        r.say(f"[{r.step}/{r.steps}] {self.name} ({self.estimate})")
        return self

    def __exit__(self, kind, value, tb):
        took = round(time.monotonic() - self.t0)
        self.run.phases.append({"name": self.name, "seconds": took})
        if kind is None:
            self.run.say(f"      done in {took} s")
        return False


def last_line(path):
    lines = tail(path, 1)
    return lines[-1].strip() if lines else ""


def tail(path, n):
    """The last N lines of PATH (a build log can be long: read its end)."""
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            f.seek(max(0, f.tell() - 8192))
            text = f.read().decode("utf-8", "replace")
    except OSError:
        return []
    # A progress line redrawn in place ends in a carriage return.
    return [x.rsplit("\r", 1)[-1] + "\n" for x in text.splitlines()][-n:]


def main(prog, fn, argv=None):
    """Run FN(argv) as a driver's main: a LabError becomes its message on
    stderr and its exit code."""
    try:
        return fn(sys.argv[1:] if argv is None else argv)
    except LabError as e:
        print(f"{prog}: {e}", file=sys.stderr)
        return e.code
    except KeyboardInterrupt:
        print(f"{prog}: interrupted", file=sys.stderr)
        return 130
