#!/usr/bin/env bash
# Fuzz the HdrHistogram interval-log reader behind loadgen merge
# (lib/hlog.c) with tests/fuzz/fuzz_hlog.c: 4 s in the release pass, the
# seed corpus replayed in the ASan pass.
# timeout: 300
# lane: side
. "$(dirname "$0")/../lib.sh"
fuzz_test hlog
