#!/bin/bash
# timeout: 7200
# lane: alone
# make demo-matrix with assertions, on request (make test-matrix): the demo
# on every kernel pair (the 6.12, 6.1 and 6.1.8-rt pairs, Debian 13's
# signed 6.16.12/6.17.13 and 6.18.12/7.3.4, the 7.3 line) with each
# waker, then lab/demo/tests/demo_matrix.py on its matrix.json: each demo's
# report, the kernels it booted with their ep->lock and throttle model,
# no kernel with the epoll change stalling, the rwlock pairs with the
# per-cfs_rq throttle FIXED with the AF_UNIX waker (6.12 with loopback UDP
# too), no 7.x kernel stalling, the quota period's timer traced on each,
# a sentence for each fix and what each protects on 7.x. Builds or
# fetches what the kernel cache lacks: on a fresh machine about an hour
# of builds and a minute of downloads (about 700 MB) before the twelve
# demos.
. "$(dirname "$0")/../lib.sh"
need_root "boots guests, builds kernels into ${RELAY_CACHE:-/var/cache/relay}"
"$top/mk/deps" build report demo kernel deploy >/dev/null || fail "mk/deps"
rc=0
"$top/lab/demo/matrix" --results "$TEST_TMP/results" >"$TEST_TMP/matrix.log" 2>&1 || rc=$?
tail -n 8 "$TEST_TMP/matrix.log"
m=$(find "$TEST_TMP/results" -path "*-demo-matrix/matrix.json" 2>/dev/null | head -n 1)
[ -n "$m" ] || fail "no matrix.json (lab/demo/matrix.py exited $rc)"
"$top/mk/py" lab.demo.tests.demo_matrix "$m" || fail "the matrix falls short (above; matrix.py exited $rc)"
[ "$rc" = 0 ] || fail "lab/demo/matrix.py exited $rc"
pass "six pairs, each demo with its report and the kernels it should boot, their locks and throttle models; no kernel with the epoll change stalling, none of 7.x; the rwlock pairs of the per-cfs_rq throttle FIXED with the AF_UNIX waker, 6.12 with loopback UDP too; the quota timer traced on each; what each fix protects"
