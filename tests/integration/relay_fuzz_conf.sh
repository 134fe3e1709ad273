#!/usr/bin/env bash
# Fuzz relay's config parser (tests/fuzz/fuzz_conf.c): 4 s in the release
# pass, the seed corpus replayed in the ASan pass.
# timeout: 300
# lane: side
. "$(dirname "$0")/../lib.sh"
fuzz_test conf
