"""mk/dupes.py: what counts as a block that stands twice, and what not."""
import os
import tempfile
import unittest

from mk import dupes

BODY = [f"    total += step({k}, limit) * {k}" for k in range(12)]


class DupesTest(unittest.TestCase):
    def setUp(self):
        self.d = tempfile.TemporaryDirectory()
        self.addCleanup(self.d.cleanup)

    def file(self, name, lines):
        path = os.path.join(self.d.name, name)
        with open(path, "w", encoding="utf-8") as f:
            f.write("\n".join(lines) + "\n")
        return path

    def test_a_block_in_two_files_whole(self):
        a = self.file("a.py", ["def f():", "    total = 0"] + BODY + ["    return total"])
        b = self.file("b.py", ["import os", "", "def g():", "    total = 0"] + BODY + ["    return -1"])
        # "total = 0" and the body: 13 lines, the def and the return apart
        self.assertEqual(dupes.find([a, b]), [(a, 2, 14, b, 4, 16, 13)])

    def test_white_space_comments_and_imports_do_not_part_it(self):
        a = self.file("a.py", ["x = 1"] + BODY)
        spread = []
        for i, line in enumerate(BODY):
            spread += [line.replace(" * ", "  *   "), "", "# a comment", "import sys"] if i % 3 else [line]
        b = self.file("b.py", spread)
        self.assertEqual(len(dupes.find([a, b])), 1)
        self.assertEqual(dupes.find([a, b])[0][-1], 12)

    def test_shorter_blocks_one_file_and_other_files_do_not_count(self):
        a = self.file("a.py", BODY[:9] + ["y = 2"])
        b = self.file("b.py", BODY[:9] + ["z = 3"])
        self.assertEqual(dupes.find([a, b]), [])
        self.assertEqual(dupes.find([a, b], least=9)[0][-1], 9)
        twice = self.file("c.py", BODY + ["pass"] + BODY)
        self.assertEqual(dupes.find([twice]), [])
        notes = [self.file(f"{n}.md", BODY) for n in "de"]
        self.assertEqual(dupes.find(notes), [])

    def test_scripts_without_an_extension_and_c(self):
        sh = [f'echo "step {k}" >>"$log"' for k in range(11)]
        a = self.file("run", ["#!/bin/sh"] + sh)
        b = self.file("other.sh", ["set -eu"] + sh)
        self.assertEqual(len(dupes.find([a, b])), 1)
        c = [f"\tn += {k};" for k in range(11)]
        x = self.file("x.c", ["#include <stdio.h>", "/* one */", "int f(void)", "{"] + c)
        y = self.file("y.c", ["#include <stdlib.h>", "// two", "int g(void)", "{"] + c)
        self.assertEqual(dupes.find([x, y])[0][-1], 12)


if __name__ == "__main__":
    unittest.main()
