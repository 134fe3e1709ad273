#!/usr/bin/env bash
# Fuzz the stream relay's byte path (server/tcp.c) over a fake transport
# and an emulated epoll set with tests/fuzz/fuzz_tcp.c: 4 s in the
# release pass, the seed corpus replayed in the ASan pass.
# timeout: 300
# lane: side
. "$(dirname "$0")/../lib.sh"
fuzz_test tcp
