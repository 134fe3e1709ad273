#!/usr/bin/env bash
# Fuzz the admin endpoint (server/admin.c over evhttp) with clients on a
# real event loop, against a model of what it answers, with
# tests/fuzz/fuzz_admin.c: 4 s in the release pass, the seed corpus
# replayed in the ASan pass.
# timeout: 300
# lane: side
. "$(dirname "$0")/../lib.sh"
fuzz_test admin
