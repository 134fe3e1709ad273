"""lab/ktrace/explain on hostile guest results: the corpus of
tests/fixtures/hostile/traces (written by tests/pylib/hostile_traces.py),
each case replayed with its own TMPDIR and a cap on the size of any file
it writes. Every case must end with its exit status and an error that
names the file and what was wrong: no traceback, nothing left in TMPDIR,
no file larger than the cap."""
import os
import resource
import shutil
import subprocess
import tempfile
import unittest

TOP = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
CORPUS = os.path.join(TOP, "tests", "fixtures", "hostile", "traces")
# Past what any case may unpack once bounded (the raw bomb's CPU held
# 1.4 MB, so its pages may take about 4 MB), short of what it would
# unpack unbounded (8 MiB).
FSIZE = 6 << 20


def cases():
    with open(os.path.join(CORPUS, "expect.tsv"), encoding="utf-8") as f:
        for line in f:
            if line.strip() and not line.startswith("#"):
                name, rc, words, what = line.rstrip("\n").split("\t")
                yield name, int(rc), words, what


def capped():
    resource.setrlimit(resource.RLIMIT_FSIZE, (FSIZE, FSIZE))


class HostileTraceTest(unittest.TestCase):
    def explain(self, results, tmp):
        out = os.path.join(tmp, "out", "chains.json")
        os.makedirs(os.path.dirname(out))
        scratch = os.path.join(tmp, "scratch")
        os.makedirs(scratch)
        env = dict(os.environ, TMPDIR=scratch)
        p = subprocess.run([os.path.join(TOP, "lab", "ktrace", "explain"), results, "--name", "x",
                            "--out", out], capture_output=True, text=True, env=env,
                           preexec_fn=capped, timeout=120)
        return p, os.listdir(scratch)

    def test_every_case(self):
        seen = 0
        for name, rc, words, what in cases():
            with self.subTest(case=name, what=what):
                tmp = tempfile.mkdtemp()
                self.addCleanup(shutil.rmtree, tmp)
                results = os.path.join(tmp, name)
                shutil.copytree(os.path.join(CORPUS, name), results)
                p, left = self.explain(results, tmp)
                self.assertEqual(p.returncode, rc, p.stderr[-2000:])
                self.assertNotIn("Traceback", p.stderr)
                self.assertIn(words, p.stderr)
                self.assertTrue(p.stderr.startswith("explain: "), p.stderr[:200])
                self.assertEqual(left, [], "left in TMPDIR")
                seen += 1
        self.assertGreaterEqual(seen, 10)

    def test_the_corpus_is_what_the_writer_writes(self):
        """The committed corpus is hostile_traces.py's output, case for case."""
        tmp = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, tmp)
        subprocess.run([os.path.join(TOP, "mk", "py"), "tests.pylib.hostile_traces", tmp], check=True)

        def files(top):
            return sorted(os.path.relpath(os.path.join(d, f), top) for d, _, fs in os.walk(top) for f in fs)
        self.assertEqual(files(tmp), files(CORPUS))
        for rel in files(CORPUS):
            with open(os.path.join(tmp, rel), "rb") as a, open(os.path.join(CORPUS, rel), "rb") as b:
                self.assertEqual(a.read(), b.read(), rel)

    def test_a_link_to_an_endless_file_is_refused(self):
        """kallsyms (handed to trace-cmd) linked to /dev/zero: refused
        before anything reads it. (A link git should not carry: made here.)"""
        tmp = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, tmp)
        results = os.path.join(tmp, "raw")
        shutil.copytree(os.path.join(TOP, "tests", "fixtures", "ktrace", "stock-raw"), results)
        os.unlink(os.path.join(results, "trace", "kallsyms"))
        os.symlink("/dev/zero", os.path.join(results, "trace", "kallsyms"))
        p, left = self.explain(results, tmp)
        self.assertEqual(p.returncode, 65, p.stderr)
        self.assertIn("kallsyms: not a regular file or a directory", p.stderr)
        self.assertEqual(left, [])


if __name__ == "__main__":
    unittest.main()
