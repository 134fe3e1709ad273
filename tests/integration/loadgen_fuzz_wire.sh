#!/usr/bin/env bash
# Fuzz what loadgen does with the bytes a target sends back (loadgen/
# sender.c over wire.c, track.c, stream.c) with tests/fuzz/fuzz_wire.c:
# 4 s in the release pass, the seed corpus replayed in the ASan pass.
# timeout: 300
# lane: side
. "$(dirname "$0")/../lib.sh"
fuzz_test wire
