"""The hostile-input corpora's expect.tsv (tests/fixtures/hostile/*): a
header naming the columns and who wrote the file, then one case a line,
its fields tab-separated."""
import os


def write_expect(out, columns, rows, writer):
    """OUT/expect.tsv with COLUMNS (after "case") and ROWS, each (name,
    field, ...); WRITER is the module that made the corpus."""
    with open(os.path.join(out, "expect.tsv"), "w", encoding="utf-8") as f:
        f.write("# case\t" + "\t".join(columns) + f" (written by {writer})\n")
        f.writelines("\t".join(str(x) for x in row) + "\n" for row in rows)
