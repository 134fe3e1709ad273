"""Command-line conventions shared by render and summarize."""
import argparse
import sys


class Parser(argparse.ArgumentParser):
    """argparse, but a bad command line exits 64 (EX_USAGE) like every other
    program here, not argparse's 2."""

    def error(self, message):
        self.print_usage(sys.stderr)
        print(f"{self.prog}: {message}", file=sys.stderr)
        sys.exit(64)
