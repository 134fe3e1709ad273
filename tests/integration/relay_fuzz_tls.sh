#!/usr/bin/env bash
# Fuzz relay's TLS byte path (server/sock.c's TLS operations, the contexts
# of server/tls.c) against a hostile peer with tests/fuzz/fuzz_tls.c: 4 s
# in the release pass, the seed corpus replayed in the ASan pass.
# timeout: 300
# lane: side
. "$(dirname "$0")/../lib.sh"
fuzz_test tls
