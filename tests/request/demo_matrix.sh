#!/bin/bash
# timeout: 7200
# lane: alone
# make demo-matrix with assertions, on request (make test-matrix): the demo
# on every kernel pair with each waker, then tests/pylib/demo_matrix.py on
# its matrix.json (each demo's report, the kernels it booted, no patched
# stall, every pair FIXED with the AF_UNIX waker and 6.12 with loopback UDP
# too). Builds or fetches what the kernel cache lacks: on a fresh machine
# about an hour of builds before the six demos.
. "$(dirname "$0")/../lib.sh"
need_root "boots guests, builds kernels into ${RELAY_CACHE:-/var/cache/relay}"
"$top/mk/deps" build report demo kernel deploy >/dev/null || fail "mk/deps"
rc=0
"$top/lab/demo/matrix" --results "$TEST_TMP/results" >"$TEST_TMP/matrix.log" 2>&1 || rc=$?
tail -n 8 "$TEST_TMP/matrix.log"
m=$(find "$TEST_TMP/results" -path "*-demo-matrix/matrix.json" 2>/dev/null | head -n 1)
[ -n "$m" ] || fail "no matrix.json (lab/demo/matrix.py exited $rc)"
pylib demo_matrix "$m" || fail "the matrix falls short (above; matrix.py exited $rc)"
[ "$rc" = 0 ] || fail "lab/demo/matrix.py exited $rc"
pass "three pairs, each demo with its report and the kernels it should boot; no patched stall; each pair FIXED with the AF_UNIX waker, 6.12 with loopback UDP too"
