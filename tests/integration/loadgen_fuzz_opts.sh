#!/usr/bin/env bash
# Fuzz loadgen's command line and its value parsers (loadgen/opts.c, with
# lib/addr.c and rt_parse_cpus) with tests/fuzz/fuzz_opts.c: 4 s in the
# release pass, the seed corpus replayed in the ASan pass.
# timeout: 300
# lane: side
. "$(dirname "$0")/../lib.sh"
fuzz_test opts
