#!/usr/bin/env bash
# Fuzz the flow table as the datagram path drives it (server/flow.c, the
# calls of server/udp.c) against a model, with tests/fuzz/fuzz_flow.c:
# 4 s in the release pass, the seed corpus replayed in the ASan pass.
# timeout: 300
# lane: side
. "$(dirname "$0")/../lib.sh"
fuzz_test flow
