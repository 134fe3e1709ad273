#!/usr/bin/env bash
# Fuzz loadgen merge over many interval logs at once with
# tests/fuzz/fuzz_merge.c, which also holds every merge to memory and CPU
# time in proportion to its input: 4 s in the release pass, the seed
# corpus replayed in the ASan pass.
# timeout: 300
# lane: side
. "$(dirname "$0")/../lib.sh"
fuzz_test merge
