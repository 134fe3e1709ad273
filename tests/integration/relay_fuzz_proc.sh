#!/usr/bin/env bash
# Fuzz the /proc readers relay's real-time set-up and overload guard rest
# on (lib/proc.c: a status file's fields and capability set, a schedstat
# line's run delay) with tests/fuzz/fuzz_proc.c: 4 s in the release pass,
# the seed corpus replayed in the ASan pass.
# timeout: 300
# lane: side
. "$(dirname "$0")/../lib.sh"
fuzz_test proc
